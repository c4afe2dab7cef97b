package binder

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unique"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	eventsclient "k8s.io/client-go/kubernetes/typed/events/v1"
)

// Sizing of the FailedScheduling-event writer.
const (
	// failureWorkers is how many FailedScheduling writes may be in flight.
	failureWorkers = 16
	// failureSeriesMax bounds the pods the writer keeps a series for
	// (about 150 bytes each); an event for a pod beyond it is dropped and
	// counted.
	failureSeriesMax = 1 << 18
	// failureSeriesFinish is how long a series stays open after its last
	// occurrence, as in client-go's events broadcaster: the next failure
	// after it starts a new event.
	failureSeriesFinish = 6 * time.Minute
)

// FailureEvents writes the Warning "FailedScheduling" events, with the
// meaning client-go's events recorder gives them (kube-scheduler's): the
// first failure of a pod, at a given resourceVersion, creates an event;
// later ones within six minutes of the last add to its series (count and
// lastObservedTime), and the note stays the first one's. A change of the
// pod (its resourceVersion; the PodScheduled condition written with a new
// message is one) starts a new event.
//
// Why not the recorder: it keeps a deep copy of every event for six
// minutes and posts each from a goroutine of its own the moment it is
// made. When a pool of twenty thousand pods that fit nowhere is tried, as
// this scheduler does in seconds, that is twenty thousand goroutines
// waiting for the event client's slots with two copies of an event each:
// about a third of the process's peak memory. Here a pod's series is a
// small record (its note interned: pods turned away for the same reasons
// share one), queued at most once however often the pod fails before it
// is written, and written by a fixed set of workers: a pod that fails
// three times while its event waits gets one create with count 3, where
// the recorder makes a create and two patches.
type FailureEvents struct {
	create     func(context.Context, *eventsv1.Event) error
	patch      func(ctx context.Context, namespace, name string, body []byte) error
	controller string // reportingController
	instance   string // reportingInstance
	logger     *zap.Logger
	now        func() time.Time

	workers      int
	retryBackoff time.Duration
	finish       time.Duration

	mu sync.Mutex
	// ready is signalled when queue gains an entry or closing is set.
	ready   *sync.Cond
	series  map[types.UID]*failureSeries
	queue   []*failureSeries // FIFO; each series at most once
	closing bool

	startOnce sync.Once
	wg        sync.WaitGroup
	written   atomic.Int64
	dropped   atomic.Int64
	stopSweep chan struct{}
	// cancel aborts requests in flight when Stop runs out of time.
	ctx    context.Context
	cancel context.CancelFunc
}

// failureSeries is one pod's current FailedScheduling event.
type failureSeries struct {
	namespace, name, resourceVersion string
	uid                              types.UID
	note                             unique.Handle[string]
	first, last                      time.Time
	// count is how often the pod failed in this series; written how many
	// of those the API server has (0: the event is not created yet).
	count, written int32
	// queued: in the writer's queue; inFlight: being written. Never both.
	queued, inFlight bool
}

// NewFailureEvents returns a writer that posts through client as
// reportingController controller and reportingInstance instance. Start it
// with Start and end it with Stop.
func NewFailureEvents(client eventsclient.EventsV1Interface, controller, instance string, logger *zap.Logger) *FailureEvents {
	if logger == nil {
		logger = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &FailureEvents{
		// Through the REST client, for the reason given in
		// NewScheduledEvents: nothing reads what the server returns.
		create: func(ctx context.Context, ev *eventsv1.Event) error {
			return client.RESTClient().Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Error()
		},
		patch: func(ctx context.Context, namespace, name string, body []byte) error {
			return client.RESTClient().Patch(types.StrategicMergePatchType).Namespace(namespace).
				Resource("events").Name(name).Body(body).Do(ctx).Error()
		},
		controller: controller, instance: instance, logger: logger,
		now:     time.Now,
		workers: failureWorkers, retryBackoff: eventRetryBackoff, finish: failureSeriesFinish,
		series:    map[types.UID]*failureSeries{},
		stopSweep: make(chan struct{}),
		ctx:       ctx, cancel: cancel,
	}
	e.ready = sync.NewCond(&e.mu)
	return e
}

// Start starts the workers and the sweep of finished series. Events
// recorded before wait in the queue.
func (e *FailureEvents) Start() {
	e.startOnce.Do(func() {
		e.wg.Add(e.workers + 1)
		for range e.workers {
			go e.work()
		}
		go e.sweep()
	})
}

// Record counts one failure of pod with note (cut to fit, see
// TruncateNote). It never blocks on the API server.
func (e *FailureEvents) Record(pod *v1.Pod, note string) {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		e.drop(1)
		return
	}
	s := e.series[pod.UID]
	if s == nil || s.resourceVersion != pod.ResourceVersion || now.Sub(s.last) > e.finish {
		if s == nil && len(e.series) >= failureSeriesMax {
			e.drop(1)
			return
		}
		s = &failureSeries{
			namespace: pod.Namespace, name: pod.Name, resourceVersion: pod.ResourceVersion, uid: pod.UID,
			note:  unique.Make(TruncateNote(note)),
			first: now, last: now, count: 1,
		}
		e.series[pod.UID] = s
	} else {
		s.count++
		s.last = now
	}
	if !s.queued && !s.inFlight {
		s.queued = true
		e.queue = append(e.queue, s)
		e.ready.Signal()
	}
}

// Forget drops the pod's series: it is bound or gone, and a later failure
// (a Binding that failed) starts a new event.
func (e *FailureEvents) Forget(uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.series, uid)
}

// Written returns how many creates and patches were accepted; Dropped how
// many failures will not be written (too many pods, stopped, or refused).
func (e *FailureEvents) Written() int64 { return e.written.Load() }

// Dropped returns how many failures were not written.
func (e *FailureEvents) Dropped() int64 { return e.dropped.Load() }

// Queued returns how many pods' events wait to be written.
func (e *FailureEvents) Queued() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queue)
}

// drop counts n failures that will not be written, and says so in the log
// the first time and then once per thousand.
func (e *FailureEvents) drop(n int64) {
	total := e.dropped.Add(n)
	if (total-n)/1000 != total/1000 || total == n {
		e.logger.Warn("FailedScheduling events dropped: too many pods, or the writer stopped",
			zap.Int64("dropped", total))
	}
}

// Stop stops taking failures and writes those queued until ctx is done;
// what is left then is dropped. It returns when every worker has.
func (e *FailureEvents) Stop(ctx context.Context) {
	e.mu.Lock()
	if !e.closing {
		e.closing = true
		close(e.stopSweep)
	}
	e.ready.Broadcast()
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		e.cancel()
		<-done
	}
	e.cancel()
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.queue); n > 0 { // Stop without Start
		e.drop(int64(n))
		e.queue = nil
	}
}

// work writes queued series until Stop, then what is queued, and returns.
func (e *FailureEvents) work() {
	defer e.wg.Done()
	for {
		e.mu.Lock()
		for len(e.queue) == 0 && !e.closing {
			e.ready.Wait()
		}
		if len(e.queue) == 0 {
			e.mu.Unlock()
			return
		}
		s := e.queue[0]
		e.queue[0] = nil
		e.queue = e.queue[1:]
		s.queued, s.inFlight = false, true
		snap := *s
		e.mu.Unlock()

		e.write(&snap)

		e.mu.Lock()
		s.inFlight = false
		s.written = snap.count
		if s.count > s.written && e.series[s.uid] == s {
			s.queued = true
			e.queue = append(e.queue, s)
		}
		e.mu.Unlock()
	}
}

// write brings the API server's event up to s: creates it, or patches
// its series (creating it again if it was deleted meanwhile, as client-go
// does).
func (e *FailureEvents) write(s *failureSeries) {
	ev := e.event(s)
	var err error
	if s.written > 0 {
		err = retryTransient(e.ctx, e.retryBackoff, func(ctx context.Context) error {
			return e.patch(ctx, ev.Namespace, ev.Name, seriesPatch(ev.Series))
		})
		if apierrors.IsNotFound(err) {
			s.written = 0
		}
	}
	if s.written == 0 {
		err = retryTransient(e.ctx, e.retryBackoff, func(ctx context.Context) error { return e.create(ctx, ev) })
	}
	countWrite(err, ev, &e.written, &e.dropped, e.logger)
}

// event builds the object client-go's recorder would, with the series of
// s when it has more than one failure.
func (e *FailureEvents) event(s *failureSeries) *eventsv1.Event {
	ev := podEvent(e.controller, e.instance, s.namespace, s.name, s.resourceVersion, s.uid, s.first)
	ev.Action, ev.Reason, ev.Type = "Scheduling", ReasonFailedScheduling, v1.EventTypeWarning
	ev.Note = s.note.Value()
	if s.count > 1 {
		ev.Series = &eventsv1.EventSeries{Count: s.count, LastObservedTime: metav1.NewMicroTime(s.last)}
	}
	return ev
}

// seriesPatch is the strategic merge patch client-go sends for a series:
// the series alone.
func seriesPatch(series *eventsv1.EventSeries) []byte {
	body, err := json.Marshal(map[string]any{"series": series})
	if err != nil {
		panic(fmt.Sprintf("marshal an event series: %v", err)) // plain data: cannot happen
	}
	return body
}

// sweep drops the series that finished (no failure for e.finish) and are
// not being written, every half of e.finish, until Stop.
func (e *FailureEvents) sweep() {
	defer e.wg.Done()
	tick := time.NewTicker(e.finish / 2)
	defer tick.Stop()
	for {
		select {
		case <-e.stopSweep:
			return
		case <-tick.C:
		}
		now := e.now()
		e.mu.Lock()
		for uid, s := range e.series {
			if !s.queued && !s.inFlight && now.Sub(s.last) > e.finish {
				delete(e.series, uid)
			}
		}
		e.mu.Unlock()
	}
}

// retryTransient calls do until it succeeds, fails for good (see
// IsTransient), has been tried eventAttempts times, or ctx is done,
// doubling the wait between tries from backoff. Each try gets
// eventTimeout.
func retryTransient(ctx context.Context, backoff time.Duration, do func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		tctx, cancel := context.WithTimeout(ctx, eventTimeout)
		err := do(tctx)
		cancel()
		if err == nil || !IsTransient(err) || attempt >= eventAttempts || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}
