package binder

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	eventsclient "k8s.io/client-go/kubernetes/typed/events/v1"
)

// Sizing of the Scheduled-event writer.
const (
	// eventWorkers is how many Scheduled events may be in flight.
	eventWorkers = 16
	// eventMaxHold is how long an event may be held back while pods wait
	// to be scheduled or bound (see ScheduledEvents); past it, it is
	// written anyway.
	eventMaxHold = 10 * time.Second
	// eventQueue bounds the events waiting to be written (about 100 bytes
	// each); beyond it new ones are dropped and counted. It holds more
	// than eventMaxHold of Bindings at the rates this scheduler reaches.
	eventQueue = 16384
	// eventBusyPoll is how often a held event looks again.
	eventBusyPoll = 10 * time.Millisecond

	eventAttempts     = 3
	eventRetryBackoff = 500 * time.Millisecond
	eventTimeout      = 30 * time.Second
)

// ScheduledEvents writes the Normal "Scheduled" event of every bound pod, as
// kube-scheduler does (events.k8s.io/v1, reason Scheduled, action Binding,
// "Successfully assigned <ns>/<pod> to <node>"), and the Normal
// "Preempted" event of every preemption victim (RecordPreempted), from a
// bounded FIFO served by a few workers.
//
// Why not client-go's events recorder, which still writes the other
// events: on the API server a Scheduled event costs about as much as the
// Binding before it (managed fields, storage, the response), and the
// recorder posts every event from its own goroutine the moment it is made.
// During a backlog drain that gives half of the API server to events while
// pods wait for their Bindings. Here Bindings go first: while pods wait to
// be scheduled or bound (the scheduler is behind), the next event waits,
// until it is eventMaxHold (10 s) old; otherwise sixteen are posted at a
// time. A scheduler that keeps up with its pods writes each event at once;
// a drain of a few thousand pods is placed first and its events are
// written in the seconds after it; in a longer one they trail the Bindings
// by 10 s and keep pace with them. An event carries the time of its
// binding (eventTime and its name), not the time it was written, so
// `kubectl describe pod` reads the same either way.
type ScheduledEvents struct {
	create     func(context.Context, *eventsv1.Event) error
	controller string // reportingController
	instance   string // reportingInstance
	logger     *zap.Logger
	// busy reports whether pods wait to be scheduled or bound.
	busy func() bool

	workers      int
	maxHold      time.Duration
	retryBackoff time.Duration
	// holding is held by the one worker whose event is held back, so
	// that one timer polls, not sixteen.
	holding   sync.Mutex
	queue     chan scheduledEvent
	startOnce sync.Once
	wg        sync.WaitGroup
	written   atomic.Int64
	dropped   atomic.Int64
	// closing is closed by Stop: workers then drain the queue and return.
	closing   chan struct{}
	closeOnce sync.Once
	// cancel aborts requests in flight when Stop runs out of time.
	ctx    context.Context
	cancel context.CancelFunc
}

// scheduledEvent is what an event is made from: a pod reference, the node
// and the time of the binding; for a Preempted event, the victim, the
// node, the time of its deletion and the preemptor.
type scheduledEvent struct {
	namespace, name, resourceVersion string
	uid                              types.UID
	node                             string
	at                               time.Time
	preemptor                        *v1.ObjectReference
}

// NewScheduledEvents returns a writer that posts through client as
// reportingController controller and reportingInstance instance, holding
// events back while busy reports true (nil: never). Start it with Start and
// end it with Stop.
func NewScheduledEvents(client eventsclient.EventsV1Interface, controller, instance string, busy func() bool, logger *zap.Logger) *ScheduledEvents {
	if logger == nil {
		logger = zap.NewNop()
	}
	if busy == nil {
		busy = func() bool { return false }
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &ScheduledEvents{
		// Posted through the REST client rather than Events().Create,
		// which encodes empty CreateOptions into the URL and decodes the
		// Event the API server returns, for nobody to read: a third of the
		// client's CPU per event in a drain's profile.
		create: func(ctx context.Context, ev *eventsv1.Event) error {
			return client.RESTClient().Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Error()
		},
		controller: controller, instance: instance, logger: logger,
		busy:    busy,
		workers: eventWorkers, maxHold: eventMaxHold,
		retryBackoff: eventRetryBackoff,
		queue:        make(chan scheduledEvent, eventQueue),
		closing:      make(chan struct{}),
		ctx:          ctx, cancel: cancel,
	}
}

// Start starts the workers. Events recorded before wait in the queue.
func (e *ScheduledEvents) Start() {
	e.startOnce.Do(func() {
		e.wg.Add(e.workers)
		for range e.workers {
			go e.work()
		}
	})
}

// Record queues the Scheduled event of pod, bound to node now. It never
// blocks: with the queue full the event is dropped and counted.
func (e *ScheduledEvents) Record(pod *v1.Pod, node string) {
	e.queueEvent(scheduledEvent{
		namespace: pod.Namespace, name: pod.Name, resourceVersion: pod.ResourceVersion,
		uid: pod.UID, node: node, at: time.Now(),
	})
}

// RecordPreempted queues the Normal "Preempted" event of victim, deleted
// now to make room for preemptor on node, as kube-scheduler writes it.
// It waits like a Scheduled event: a preemption's Binding goes first.
func (e *ScheduledEvents) RecordPreempted(victim, preemptor *v1.Pod, node string) {
	e.queueEvent(scheduledEvent{
		namespace: victim.Namespace, name: victim.Name, resourceVersion: victim.ResourceVersion,
		uid: victim.UID, node: node, at: time.Now(),
		preemptor: &v1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: preemptor.Namespace, Name: preemptor.Name,
			UID: preemptor.UID, ResourceVersion: preemptor.ResourceVersion,
		},
	})
}

func (e *ScheduledEvents) queueEvent(ev scheduledEvent) {
	select {
	case <-e.closing:
		e.drop(1)
		return
	default:
	}
	select {
	case e.queue <- ev:
	default:
		e.drop(1)
	}
}

// drop counts n events that will not be written, and says so in the log
// the first time and then once per thousand.
func (e *ScheduledEvents) drop(n int64) {
	total := e.dropped.Add(n)
	if (total-n)/1000 != total/1000 || total == n {
		e.logger.Warn("Scheduled events dropped: the queue was full or the writer stopped",
			zap.Int64("dropped", total), zap.Int("queue", cap(e.queue)))
	}
}

// Written returns how many events were posted; Dropped how many were not
// (queue full, stopped, or rejected by the API server).
func (e *ScheduledEvents) Written() int64 { return e.written.Load() }

// Queued returns how many events wait to be written.
func (e *ScheduledEvents) Queued() int { return len(e.queue) }

// Dropped returns how many events were not posted.
func (e *ScheduledEvents) Dropped() int64 { return e.dropped.Load() }

// Stop stops taking events and writes those queued until ctx is done;
// what is left then is dropped. It returns when every worker has. Stop
// without Start drops the queue.
func (e *ScheduledEvents) Stop(ctx context.Context) {
	e.closeOnce.Do(func() { close(e.closing) })
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		e.cancel()
		<-done
	}
	e.cancel()
	if n := len(e.queue); n > 0 {
		e.drop(int64(n))
	}
}

// work writes events until Stop, each once the scheduler is not busy or
// once it is maxHold old.
func (e *ScheduledEvents) work() {
	defer e.wg.Done()
	for {
		select {
		case ev := <-e.queue:
			e.hold(ev)
			e.write(ev)
		case <-e.closing:
			e.drain()
			return
		}
	}
}

// hold waits while the scheduler is busy, until ev is maxHold old or Stop
// is called. The workers hold one at a time: the one holding has the
// oldest event, and the others, whose events are younger, wait behind it.
func (e *ScheduledEvents) hold(ev scheduledEvent) {
	if !e.busy() {
		return
	}
	e.holding.Lock()
	defer e.holding.Unlock()
	var poll *time.Timer
	for e.busy() {
		wait := e.maxHold - time.Since(ev.at)
		if wait <= 0 {
			return
		}
		wait = min(wait, eventBusyPoll)
		if poll == nil {
			poll = time.NewTimer(wait)
		} else {
			poll.Reset(wait)
		}
		select {
		case <-e.closing:
			return
		case <-poll.C:
		}
	}
}

// drain writes what is queued, unless Stop runs out of time.
func (e *ScheduledEvents) drain() {
	for e.ctx.Err() == nil {
		select {
		case ev := <-e.queue:
			e.write(ev)
		default:
			return
		}
	}
}

// write posts one event, retrying transient errors a few times.
func (e *ScheduledEvents) write(ev scheduledEvent) {
	obj := e.event(ev)
	err := retryTransient(e.ctx, e.retryBackoff, func(ctx context.Context) error { return e.create(ctx, obj) })
	countWrite(err, obj, &e.written, &e.dropped, e.logger)
}

// countWrite counts how writing ev ended: written when err is nil or says
// the event exists already; dropped otherwise, with a warning unless the
// namespace is gone or going (nobody will read the event).
func countWrite(err error, ev *eventsv1.Event, written, dropped *atomic.Int64, logger *zap.Logger) {
	switch {
	case err == nil || apierrors.IsAlreadyExists(err):
		written.Add(1)
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause):
		dropped.Add(1)
	default:
		dropped.Add(1)
		logger.Warn("could not write the "+ev.Reason+" event",
			zap.String("pod", ev.Namespace+"/"+ev.Regarding.Name), zap.Error(err))
	}
}

// event builds the object client-go's events recorder would: the name is
// the pod's and the binding (or deletion) time in hex nanoseconds.
func (e *ScheduledEvents) event(ev scheduledEvent) *eventsv1.Event {
	obj := podEvent(e.controller, e.instance, ev.namespace, ev.name, ev.resourceVersion, ev.uid, ev.at)
	if ev.preemptor != nil {
		obj.Action, obj.Reason = "Preempting", ReasonPreempted
		obj.Related = ev.preemptor
		obj.Note = fmt.Sprintf("Preempted by pod %v on node %v", ev.preemptor.UID, ev.node)
		return obj
	}
	obj.Action, obj.Reason = "Binding", ReasonScheduled
	obj.Note = fmt.Sprintf("Successfully assigned %s/%s to %s", ev.namespace, ev.name, ev.node)
	return obj
}

// podEvent is what every event this package writes about a pod shares,
// as client-go's recorder builds it: regarding the pod at resourceVersion
// rv, of type Normal, named after the pod and at (hex nanoseconds), at
// eventTime at. The caller sets action, reason and note.
func podEvent(controller, instance, namespace, name, rv string, uid types.UID, at time.Time) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", name, at.UnixNano()),
			Namespace: namespace,
		},
		EventTime:           metav1.NewMicroTime(at),
		ReportingController: controller,
		ReportingInstance:   instance,
		Regarding: v1.ObjectReference{
			Kind: "Pod", APIVersion: "v1",
			Namespace: namespace, Name: name, UID: uid, ResourceVersion: rv,
		},
		Type: v1.EventTypeNormal,
	}
}
