package scheduler

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// stuckFilter blocks in Filter until released: a plugin that hangs.
type stuckFilter struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (*stuckFilter) Name() string { return "Stuck" }

func (f *stuckFilter) Filter(context.Context, *framework.CycleState, *v1.Pod, *framework.NodeInfo) *framework.Status {
	f.once.Do(func() { close(f.started) })
	<-f.release
	return nil
}

// LoopHealthy fails while a cycle has run past the bound, and while pods
// wait that the loop has not taken for that long; an idle loop, and a loop
// that does not run (a standby), are healthy.
func TestLoopHealthy(t *testing.T) {
	const bound = 5 * time.Minute
	clock := testingclock.NewFakeClock(time.Now())
	stuck := &stuckFilter{started: make(chan struct{}), release: make(chan struct{})}
	reg := registry.NewInTree()
	if err := reg.Register(framework.Registration{
		Name:   stuck.Name(),
		Points: []string{framework.PointFilter},
		New:    func(any, framework.Handle) ([]framework.Plugin, error) { return []framework.Plugin{stuck}, nil },
	}); err != nil {
		t.Fatal(err)
	}
	prof := registry.DefaultProfile("yardmaster")
	prof.Filter = append(prof.Filter, stuck.Name())
	node := frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj()
	pod := func(name string) *v1.Pod {
		return frameworktest.MakePod().Namespace("ns").Name(name).UID(name+"-uid").SchedulerName("yardmaster").Req("100m", "128Mi").Obj()
	}
	client := fake.NewClientset(node, pod("a"), pod("b"))
	s, err := New(Options{
		Client:   client,
		Binder:   binder.New(client, nil, nil),
		Clock:    clock,
		Registry: reg,
		Profiles: []framework.Profile{prof},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Cache.AddNode(node)
	later := func(d time.Duration) time.Time { return clock.Now().Add(d) }

	// A standby: pods wait, the loop does not run.
	s.Queue.Add(pod("a"))
	if err := s.LoopHealthy(later(time.Hour), bound); err != nil {
		t.Errorf("a loop that does not run: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	<-stuck.started
	s.Queue.Add(pod("b"))
	if err := s.LoopHealthy(later(bound-time.Second), bound); err != nil {
		t.Errorf("a cycle within the bound: %v", err)
	}
	err = s.LoopHealthy(later(bound+time.Second), bound)
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("a cycle past the bound: %v, want an error about the cycle", err)
	}

	close(stuck.release)
	waitFor(t, func() bool { return s.Scheduled() == 2 })
	if err := s.LoopHealthy(later(time.Hour), bound); err != nil {
		t.Errorf("an idle loop: %v", err)
	}
}

// A loop that takes no pod while pods wait in the active queue fails once
// the bound has passed since it last took one.
func TestLoopHealthyPodsNotTaken(t *testing.T) {
	const bound = time.Minute
	clock := testingclock.NewFakeClock(time.Now())
	s, err := New(Options{Clock: clock, Registry: registry.NewInTree(), Profiles: []framework.Profile{registry.DefaultProfile("yardmaster")}})
	if err != nil {
		t.Fatal(err)
	}
	// The loop started and then stopped taking pods (as a deadlock would
	// leave it), while a pod arrived.
	s.loop.started(clock.Now())
	s.Queue.Add(frameworktest.MakePod().Namespace("ns").Name("a").UID("a-uid").SchedulerName("yardmaster").Obj())
	if err := s.LoopHealthy(clock.Now().Add(bound), bound); err != nil {
		t.Errorf("within the bound: %v", err)
	}
	err = s.LoopHealthy(clock.Now().Add(bound+time.Second), bound)
	if err == nil || !strings.Contains(err.Error(), "1 pods wait") {
		t.Errorf("past the bound: %v, want an error about the waiting pod", err)
	}
	s.loop.stopped()
	if err := s.LoopHealthy(clock.Now().Add(time.Hour), bound); err != nil {
		t.Errorf("a stopped loop: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
