package binder

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// eventStore stands in for the API server's events: creates add (or fail
// with AlreadyExists), patches merge a series into a stored event (or fail
// with NotFound), and gate, when set, holds every request until closed.
type eventStore struct {
	mu      sync.Mutex
	events  map[string]*eventsv1.Event
	creates int
	patches int
	gate    chan struct{}
}

func newEventStore() *eventStore { return &eventStore{events: map[string]*eventsv1.Event{}} }

func (s *eventStore) wait(ctx context.Context) error {
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *eventStore) create(ctx context.Context, ev *eventsv1.Event) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creates++
	if _, ok := s.events[ev.Name]; ok {
		return apierrors.NewAlreadyExists(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, ev.Name)
	}
	s.events[ev.Name] = ev.DeepCopy()
	return nil
}

func (s *eventStore) patch(ctx context.Context, _, name string, body []byte) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.patches++
	ev, ok := s.events[name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, name)
	}
	var p struct {
		Series *eventsv1.EventSeries `json:"series"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Series == nil {
		return fmt.Errorf("patch %s: not a series: %s", name, body)
	}
	ev.Series = p.Series
	return nil
}

func (s *eventStore) snapshot() (evs []*eventsv1.Event, creates, patches int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.events {
		evs = append(evs, ev.DeepCopy())
	}
	return evs, s.creates, s.patches
}

// fakeClock is a settable time source.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newTestFailureEvents(s *eventStore, clock *fakeClock) *FailureEvents {
	w := NewFailureEvents(fake.NewClientset().EventsV1(), "yardmaster", "yardmaster-host", nil)
	w.create, w.patch = s.create, s.patch
	w.retryBackoff = time.Millisecond
	if clock != nil {
		w.now = clock.Now
	}
	return w
}

func stopWriter(t *testing.T, w *FailureEvents) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.Stop(ctx)
}

// onlyEvent returns the one stored event, failing otherwise.
func onlyEvent(t *testing.T, s *eventStore) *eventsv1.Event {
	t.Helper()
	evs, _, _ := s.snapshot()
	if len(evs) != 1 {
		t.Fatalf("%d events stored, want 1: %v", len(evs), evs)
	}
	return evs[0]
}

// Failures recorded while the pod's event waits are one write: the
// create carries the series.
func TestFailureEventsCoalesce(t *testing.T) {
	s := newEventStore()
	w := newTestFailureEvents(s, nil)
	pod := frameworktest.MakePod().Name("p").Obj()
	pod.UID, pod.ResourceVersion = "uid-p", "7"
	for i := range 3 {
		w.Record(pod, fmt.Sprintf("0/%d nodes are available", i+1))
	}
	if q := w.Queued(); q != 1 {
		t.Errorf("Queued = %d, want 1 (one pod)", q)
	}
	w.Start()
	stopWriter(t, w)
	ev := onlyEvent(t, s)
	_, creates, patches := s.snapshot()
	switch {
	case creates != 1 || patches != 0:
		t.Errorf("%d creates and %d patches, want one create", creates, patches)
	case ev.Series == nil || ev.Series.Count != 3:
		t.Errorf("series %+v, want count 3", ev.Series)
	case ev.Note != "0/1 nodes are available":
		t.Errorf("note %q, want the first failure's", ev.Note)
	case ev.Reason != ReasonFailedScheduling || ev.Action != "Scheduling" || ev.Regarding.UID != "uid-p" || ev.Regarding.ResourceVersion != "7":
		t.Errorf("event %+v is not the pod's FailedScheduling event", ev)
	}
	if w.Written() != 1 || w.Dropped() != 0 {
		t.Errorf("written %d dropped %d, want 1 and 0", w.Written(), w.Dropped())
	}
}

// A failure while the pod's create is in flight becomes a patch of its
// series once the create returns.
func TestFailureEventsPatchSeriesAfterCreate(t *testing.T) {
	s := newEventStore()
	s.gate = make(chan struct{})
	w := newTestFailureEvents(s, nil)
	w.Start()
	defer stopWriter(t, w)
	pod := frameworktest.MakePod().Name("p").Obj()
	pod.UID, pod.ResourceVersion = "uid-p", "7"
	w.Record(pod, "first")
	eventually(t, "the create in flight", func() bool { return w.Queued() == 0 })
	w.Record(pod, "second")
	w.Record(pod, "third")
	close(s.gate)
	eventually(t, "two writes", func() bool { return w.Written() == 2 })
	ev := onlyEvent(t, s)
	if _, creates, patches := s.snapshot(); creates != 1 || patches != 1 || ev.Series == nil || ev.Series.Count != 3 || ev.Note != "first" {
		t.Errorf("%d creates, %d patches, series %+v, note %q; want one of each, count 3, the first note", creates, patches, ev.Series, ev.Note)
	}
}

// A new resourceVersion, six minutes without failure, or a pod forgotten
// start a new event; an event deleted meanwhile is created again with its
// series.
func TestFailureEventsNewSeries(t *testing.T) {
	s := newEventStore()
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	w := newTestFailureEvents(s, clock)
	w.Start()
	defer stopWriter(t, w)
	pod := frameworktest.MakePod().Name("p").Obj()
	pod.UID, pod.ResourceVersion = "uid-p", "7"
	writes := func(n int64) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d writes", n), func() bool { return w.Written() == n })
	}
	count := func() int {
		evs, _, _ := s.snapshot()
		return len(evs)
	}

	w.Record(pod, "a")
	writes(1)
	clock.Step(failureSeriesFinish - time.Second)
	w.Record(pod, "a")
	writes(2)
	if n := count(); n != 1 {
		t.Fatalf("%d events within the series' six minutes, want 1", n)
	}
	clock.Step(failureSeriesFinish + time.Second)
	w.Record(pod, "a")
	writes(3)
	if n := count(); n != 2 {
		t.Fatalf("%d events after six quiet minutes, want 2", n)
	}
	clock.Step(time.Second)
	pod.ResourceVersion = "8"
	w.Record(pod, "a")
	writes(4)
	if n := count(); n != 3 {
		t.Fatalf("%d events after the pod changed, want 3", n)
	}
	clock.Step(time.Second)
	w.Forget(pod.UID)
	w.Record(pod, "a")
	writes(5)
	if n := count(); n != 4 {
		t.Fatalf("%d events after the pod was forgotten, want 4", n)
	}

	// The current event is deleted (TTL); the next failure patches,
	// finds nothing, and creates it with its series.
	clock.Step(time.Second)
	name := fmt.Sprintf("p.%x", clock.Now().Add(-time.Second).UnixNano())
	s.mu.Lock()
	if _, ok := s.events[name]; !ok {
		s.mu.Unlock()
		t.Fatalf("no event %s", name)
	}
	delete(s.events, name)
	s.mu.Unlock()
	w.Record(pod, "a")
	writes(6)
	s.mu.Lock()
	ev := s.events[name]
	s.mu.Unlock()
	if ev == nil || ev.Series == nil || ev.Series.Count != 2 {
		t.Errorf("event %s after deletion: %+v, want it again with count 2", name, ev)
	}
}

// The writer keeps at most failureWorkers writes in flight, however many
// pods fail at once, and Stop without Start drops what is queued.
func TestFailureEventsBounded(t *testing.T) {
	s := newEventStore()
	s.gate = make(chan struct{})
	w := newTestFailureEvents(s, nil)
	var inFlight, maxSeen int
	var mu sync.Mutex
	create := w.create
	w.create = func(ctx context.Context, ev *eventsv1.Event) error {
		mu.Lock()
		inFlight++
		maxSeen = max(maxSeen, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		return create(ctx, ev)
	}
	w.Start()
	const pods = 200
	for i := range pods {
		pod := frameworktest.MakePod().Name(fmt.Sprintf("p%d", i)).Obj()
		pod.UID = types.UID(fmt.Sprintf("uid-%d", i))
		w.Record(pod, "0/3 nodes are available")
	}
	eventually(t, "the workers busy", func() bool { mu.Lock(); defer mu.Unlock(); return inFlight == failureWorkers })
	close(s.gate)
	stopWriter(t, w)
	if evs, _, _ := s.snapshot(); len(evs) != pods || maxSeen != failureWorkers {
		t.Errorf("%d events, at most %d in flight; want %d and %d", len(evs), maxSeen, pods, failureWorkers)
	}

	idle := newTestFailureEvents(newEventStore(), nil)
	idle.Record(frameworktest.MakePod().Name("q").Obj(), "x")
	stopWriter(t, idle)
	if idle.Dropped() != 1 || idle.Written() != 0 {
		t.Errorf("Stop without Start: written %d dropped %d, want 0 and 1", idle.Written(), idle.Dropped())
	}
	idle.Record(frameworktest.MakePod().Name("r").Obj(), "x")
	if idle.Dropped() != 2 {
		t.Errorf("Record after Stop: dropped %d, want 2", idle.Dropped())
	}
}
