package binder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// gatedSink stands in for the API server: every create waits at the gate
// until released, and the sink records the most creates it saw at once.
type gatedSink struct {
	gate     chan struct{}
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	mu       sync.Mutex
	got      []*eventsv1.Event
}

func newGatedSink() *gatedSink { return &gatedSink{gate: make(chan struct{})} }

func (s *gatedSink) create(ctx context.Context, ev *eventsv1.Event) error {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxSeen.Load()
		if n <= m || s.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-s.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, ev)
	return nil
}

func (s *gatedSink) events() []*eventsv1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*eventsv1.Event(nil), s.got...)
}

// eventually polls cond for up to five seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newTestWriter(sink func(context.Context, *eventsv1.Event) error, busy func() bool) *ScheduledEvents {
	e := NewScheduledEvents(fake.NewClientset().EventsV1(), "yardmaster", "yardmaster-host", busy, nil)
	e.create = sink
	e.retryBackoff = time.Millisecond
	return e
}

func TestScheduledEventsWaitWhileBusy(t *testing.T) {
	sink := newGatedSink()
	close(sink.gate)
	var busy atomic.Bool
	busy.Store(true)
	e := newTestWriter(sink.create, busy.Load)
	e.maxHold = time.Hour
	const n = 40
	for i := range n {
		e.Record(frameworktest.MakePod().Namespace("ns").Name(fmt.Sprintf("p%d", i)).Obj(), "n1")
	}
	e.Start()

	// While the scheduler is busy no event is posted.
	time.Sleep(10 * eventBusyPoll)
	if got := sink.maxSeen.Load(); got != 0 {
		t.Fatalf("%d events posted while busy, want none", got)
	}

	// Once none is, they all are.
	busy.Store(false)
	eventually(t, "every event written", func() bool { return e.Written() == n })
	e.Stop(context.Background())
	if e.Dropped() != 0 {
		t.Errorf("dropped %d", e.Dropped())
	}
}

func TestScheduledEventsHeldAtMost(t *testing.T) {
	sink := newGatedSink()
	close(sink.gate)
	// The scheduler is always busy: events still go out once they are
	// maxHold old.
	e := newTestWriter(sink.create, func() bool { return true })
	e.maxHold = 100 * time.Millisecond
	e.Start()
	start := time.Now()
	const n = 20
	for i := range n {
		e.Record(frameworktest.MakePod().Namespace("ns").Name(fmt.Sprintf("p%d", i)).Obj(), "n1")
	}
	eventually(t, "every event written", func() bool { return e.Written() == n })
	if held := time.Since(start); held < e.maxHold {
		t.Errorf("events written after %v while busy, want at least %v", held, e.maxHold)
	}
	e.Stop(context.Background())
}

func TestScheduledEventsStopWhileHeld(t *testing.T) {
	sink := newGatedSink()
	close(sink.gate)
	e := newTestWriter(sink.create, func() bool { return true })
	e.maxHold = time.Hour
	e.Start()
	const n = 30
	for i := range n {
		e.Record(frameworktest.MakePod().Namespace("ns").Name(fmt.Sprintf("p%d", i)).Obj(), "n1")
	}
	// Stop writes what is queued or held, without waiting for the hold.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Stop(ctx)
	if e.Written() != n || e.Dropped() != 0 {
		t.Errorf("written %d, dropped %d; want %d, 0", e.Written(), e.Dropped(), n)
	}
}

func TestScheduledEventsObject(t *testing.T) {
	sink := newGatedSink()
	close(sink.gate)
	e := newTestWriter(sink.create, nil)
	e.Start()
	pod := frameworktest.MakePod().Namespace("shop").Name("web-0").Obj()
	pod.UID, pod.ResourceVersion = "uid-1", "42"
	before := time.Now()
	e.Record(pod, "node-a")
	e.Stop(context.Background())

	got := sink.events()
	if len(got) != 1 {
		t.Fatalf("%d events written, want 1", len(got))
	}
	ev := got[0]
	at := ev.EventTime.Time
	if at.Before(before) || at.After(time.Now()) {
		t.Errorf("eventTime %v, want the time of Record", at)
	}
	// As client-go's recorder names it: the pod and the time in hex ns.
	want := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("web-0.%x", ev.EventTime.UnixNano()), Namespace: "shop"},
		EventTime:           ev.EventTime,
		ReportingController: "yardmaster",
		ReportingInstance:   "yardmaster-host",
		Action:              "Binding",
		Reason:              "Scheduled",
		Regarding:           v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: "web-0", UID: "uid-1", ResourceVersion: "42"},
		Note:                "Successfully assigned shop/web-0 to node-a",
		Type:                v1.EventTypeNormal,
	}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
}

func TestScheduledEventsDrops(t *testing.T) {
	sink := newGatedSink()
	close(sink.gate)
	e := newTestWriter(sink.create, nil)
	e.queue = make(chan scheduledEvent, 3)
	for i := range 5 {
		e.Record(frameworktest.MakePod().Namespace("ns").Name(fmt.Sprintf("p%d", i)).Obj(), "n1")
	}
	if got := e.Dropped(); got != 2 {
		t.Errorf("dropped %d with the queue full, want 2", got)
	}
	e.Start()
	e.Stop(context.Background())
	if e.Written() != 3 {
		t.Errorf("written %d, want the 3 queued", e.Written())
	}
	e.Record(frameworktest.MakePod().Namespace("ns").Name("late").Obj(), "n1")
	if e.Dropped() != 3 || e.Written() != 3 {
		t.Errorf("after Stop: written %d dropped %d, want 3 and 3", e.Written(), e.Dropped())
	}
}

func TestScheduledEventsStopGivesUp(t *testing.T) {
	sink := newGatedSink() // never opened: every create hangs
	e := newTestWriter(sink.create, nil)
	e.Start()
	for i := range 30 {
		e.Record(frameworktest.MakePod().Namespace("ns").Name(fmt.Sprintf("p%d", i)).Obj(), "n1")
	}
	eventually(t, "creates in flight", func() bool { return sink.inFlight.Load() == eventWorkers })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	e.Stop(ctx)
	if e.Written() != 0 || e.Dropped() != 30 {
		t.Errorf("written %d dropped %d, want 0 and 30", e.Written(), e.Dropped())
	}
}

func TestScheduledEventsErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	tests := []struct {
		name             string
		errs             []error
		calls            int
		written, dropped int64
	}{
		{"already exists counts as written", []error{apierrors.NewAlreadyExists(gr, "x")}, 1, 1, 0},
		{"transient, then success", []error{apierrors.NewServiceUnavailable("busy")}, 2, 1, 0},
		{"transient every time", []error{apierrors.NewServiceUnavailable("a"), apierrors.NewServiceUnavailable("b"), apierrors.NewServiceUnavailable("c")}, eventAttempts, 0, 1},
		{"invalid is not retried", []error{apierrors.NewBadRequest("no")}, 1, 0, 1},
		{"namespace gone", []error{apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ns")}, 1, 0, 1},
		{"other error is not retried", []error{errors.New("boom")}, 1, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			e := newTestWriter(func(context.Context, *eventsv1.Event) error {
				i := int(calls.Add(1)) - 1
				if i < len(tc.errs) {
					return tc.errs[i]
				}
				return nil
			}, nil)
			e.write(scheduledEvent{namespace: "ns", name: "p", node: "n", at: time.Now()})
			if int(calls.Load()) != tc.calls || e.Written() != tc.written || e.Dropped() != tc.dropped {
				t.Errorf("calls %d written %d dropped %d, want %d %d %d",
					calls.Load(), e.Written(), e.Dropped(), tc.calls, tc.written, tc.dropped)
			}
		})
	}
}

// A victim's Preempted event is the object kube-scheduler's recorder
// writes: regarding the victim, related to the preemptor.
func TestScheduledEventsPreempted(t *testing.T) {
	sink := newGatedSink()
	close(sink.gate)
	e := newTestWriter(sink.create, nil)
	e.Start()
	victim := frameworktest.MakePod().Name("victim").UID("uid-v").Obj()
	victim.ResourceVersion = "5"
	preemptor := frameworktest.MakePod().Name("big").UID("uid-p").Obj()
	e.RecordPreempted(victim, preemptor, "n1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Stop(ctx)
	got := sink.events()
	if len(got) != 1 {
		t.Fatalf("%d events, want 1", len(got))
	}
	ev := got[0]
	want := "Preempted by pod uid-p on node n1"
	switch {
	case ev.Reason != ReasonPreempted || ev.Action != "Preempting" || ev.Type != v1.EventTypeNormal || ev.Note != want:
		t.Errorf("event %s/%s %s %q, want Normal Preempted/Preempting %q", ev.Reason, ev.Action, ev.Type, ev.Note, want)
	case ev.Regarding.UID != "uid-v" || ev.Regarding.ResourceVersion != "5" || ev.Related == nil || ev.Related.UID != "uid-p":
		t.Errorf("regarding %+v related %+v, want the victim and the preemptor", ev.Regarding, ev.Related)
	}
}
