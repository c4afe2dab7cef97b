package scheduler

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// stepPlugin is a plugin at every point of the binding cycle that records
// its calls ("A.Reserve", "A.Unreserve", ...) in a shared log and fails
// or waits where told.
type stepPlugin struct {
	name string
	log  *callLog
	// The outcome of each point; nil is Success.
	reserve, permit, preBind, bind *framework.Status
	// permitWait is the timeout when permit is Wait.
	permitWait time.Duration
	// preBindSkip makes PreBindPreFlight Skip.
	preBindSkip bool
	// preBindBlock makes PreBind wait for its context to end.
	preBindBlock bool
	// preBindStarted is closed when PreBind starts.
	preBindStarted chan struct{}
}

type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	l.calls = append(l.calls, s)
	l.mu.Unlock()
}

func (l *callLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

func (p *stepPlugin) Name() string { return p.name }

func (p *stepPlugin) Reserve(_ context.Context, _ *framework.CycleState, _ *v1.Pod, node string) *framework.Status {
	p.log.add(p.name + ".Reserve")
	return p.reserve
}

func (p *stepPlugin) Unreserve(_ context.Context, _ *framework.CycleState, _ *v1.Pod, _ string) {
	p.log.add(p.name + ".Unreserve")
}

func (p *stepPlugin) Permit(_ context.Context, _ *framework.CycleState, _ *v1.Pod, _ string) (*framework.Status, time.Duration) {
	p.log.add(p.name + ".Permit")
	return p.permit, p.permitWait
}

func (p *stepPlugin) PreBindPreFlight(_ context.Context, _ *framework.CycleState, _ *v1.Pod, _ string) *framework.Status {
	if p.preBindSkip {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

func (p *stepPlugin) PreBind(ctx context.Context, _ *framework.CycleState, _ *v1.Pod, _ string) *framework.Status {
	p.log.add(p.name + ".PreBind")
	if p.preBindStarted != nil {
		close(p.preBindStarted)
	}
	if p.preBindBlock {
		<-ctx.Done()
		return framework.AsStatus(context.Cause(ctx))
	}
	return p.preBind
}

func (p *stepPlugin) Bind(_ context.Context, _ *framework.CycleState, _ *v1.Pod, _ string) *framework.Status {
	p.log.add(p.name + ".Bind")
	return p.bind
}

func (p *stepPlugin) PostBind(_ context.Context, _ *framework.CycleState, _ *v1.Pod, _ string) {
	p.log.add(p.name + ".PostBind")
}

// bindingTest is a scheduler with two step plugins, A and B, at every
// point of the binding cycle, over a fake API that holds the pod and the
// node.
type bindingTest struct {
	t      *testing.T
	s      *Scheduler
	client *fake.Clientset
	log    *callLog
	a, b   *stepPlugin
	clock  *testingclock.FakeClock
	pod    *v1.Pod
	// bindErr, when set, fails every Binding.
	bindErr error
	// onBind, when set, answers each Binding instead: nil binds.
	onBind func(b *v1.Binding) error
	bound  []string
	events *events.FakeRecorder
}

func newBindingTest(t *testing.T, setup func(a, b *stepPlugin)) *bindingTest {
	t.Helper()
	return newBindingTestBinders(t, setup, nil)
}

// newBindingTestBinders is newBindingTest with the profile's bind
// plugins; nil keeps the default (DefaultBinder).
func newBindingTestBinders(t *testing.T, setup func(a, b *stepPlugin), binders []string) *bindingTest {
	t.Helper()
	bt := &bindingTest{t: t, log: &callLog{}, clock: testingclock.NewFakeClock(time.Now())}
	bt.a = &stepPlugin{name: "A", log: bt.log}
	bt.b = &stepPlugin{name: "B", log: bt.log}
	if setup != nil {
		setup(bt.a, bt.b)
	}
	node := frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj()
	bt.pod = frameworktest.MakePod().Namespace("ns").Name("p").UID("p-uid").SchedulerName("yardmaster").Req("1", "1Gi").Obj()
	bt.client = fake.NewClientset(node, bt.pod)
	var mu sync.Mutex
	bt.client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		mu.Lock()
		defer mu.Unlock()
		if bt.bindErr != nil {
			return true, nil, bt.bindErr
		}
		if bt.onBind != nil {
			if err := bt.onBind(b); err != nil {
				return true, nil, err
			}
		}
		bt.bound = append(bt.bound, b.Name+"->"+b.Target.Name)
		return true, b, nil
	})

	reg := registry.NewInTree()
	for _, p := range []*stepPlugin{bt.a, bt.b} {
		if err := reg.Register(framework.Registration{
			Name:   p.name,
			Points: []string{framework.PointReserve, framework.PointPermit, framework.PointPreBind, framework.PointBind, framework.PointPostBind},
			New:    func(any, framework.Handle) ([]framework.Plugin, error) { return []framework.Plugin{p}, nil },
		}); err != nil {
			t.Fatal(err)
		}
	}
	prof := registry.DefaultProfile("yardmaster")
	prof.Reserve = append(prof.Reserve, "A", "B")
	prof.Permit = append(prof.Permit, "A", "B")
	prof.PreBind = append(prof.PreBind, "A", "B")
	prof.PostBind = append(prof.PostBind, "A", "B")
	if binders != nil {
		prof.Bind = binders
	}
	bt.events = events.NewFakeRecorder(100)
	s, err := New(Options{
		Client:          bt.client,
		Binder:          binder.New(bt.client, bt.events, nil),
		Clock:           bt.clock,
		Registry:        reg,
		Profiles:        []framework.Profile{prof},
		BindGracePeriod: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Cache.AddNode(node)
	bt.s = s
	return bt
}

// run schedules the pod once and waits for its binding cycle to end
// (after, when set, runs while it is under way).
func (bt *bindingTest) run(after func()) {
	bt.t.Helper()
	s := bt.s
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.bindWorker()
	}()
	s.Queue.Add(bt.pod)
	s.scheduleOne(context.Background())
	if after != nil {
		after()
	}
	s.bindWG.Wait()
	close(s.bindJobs)
	<-done
	s.binder.Wait()
}

// check requires the calls, and that nothing is left assumed or waiting.
func (bt *bindingTest) check(want []string) {
	bt.t.Helper()
	if diff := cmp.Diff(want, bt.log.get()); diff != "" {
		bt.t.Errorf("calls (-want +got):\n%s", diff)
	}
	if _, _, assumed := bt.s.Cache.Counts(); assumed != 0 && bt.s.Scheduled() == 0 {
		bt.t.Errorf("%d pods still assumed after a failed binding cycle", assumed)
	}
	if bt.s.waiting.get(bt.pod.UID) != nil {
		bt.t.Errorf("the pod still waits on Permit")
	}
}

// requeued requires the pod back in the queue at loc, with a
// PodScheduled=False condition whose message contains msg.
func (bt *bindingTest) requeued(loc queue.Location, msg string) {
	bt.t.Helper()
	if got := bt.s.Queue.Locate(bt.pod.UID); got != loc {
		bt.t.Errorf("pod in %v, want %v", got, loc)
	}
	p, err := bt.client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		bt.t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			if !strings.Contains(c.Message, msg) {
				bt.t.Errorf("condition message %q, want it to contain %q", c.Message, msg)
			}
			return
		}
	}
	bt.t.Errorf("no PodScheduled=False condition; want one saying %q", msg)
}

var unreserveBoth = []string{"B.Unreserve", "A.Unreserve"}

func TestBindingCycleSuccess(t *testing.T) {
	bt := newBindingTest(t, func(a, b *stepPlugin) { b.preBindSkip = true })
	bt.run(nil)
	bt.check([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind", "A.PostBind", "B.PostBind"})
	if want := []string{"p->n1"}; !slices.Equal(bt.bound, want) {
		t.Errorf("bindings %v, want %v", bt.bound, want)
	}
	if _, _, assumed := bt.s.Cache.Counts(); assumed != 1 {
		t.Errorf("%d assumed pods, want the bound pod assumed until the informer confirms it", assumed)
	}
	// A has PreBind work: the node was nominated before it ran.
	p, err := bt.client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.NominatedNodeName != "n1" {
		t.Errorf("nominatedNodeName %q, want n1 written before PreBind", p.Status.NominatedNodeName)
	}
}

// A pod without PreBind work or a wait is bound without a nomination
// written first: one request, the Binding.
func TestBindingCycleWithoutWorkNominatesNothing(t *testing.T) {
	bt := newBindingTest(t, func(a, b *stepPlugin) { a.preBindSkip, b.preBindSkip = true, true })
	bt.run(nil)
	for _, a := range bt.client.Actions() {
		if a.GetVerb() == "patch" {
			t.Errorf("unexpected %s of %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		}
	}
}

// Every failure after Reserve runs every Unreserve in reverse order,
// forgets the assumed pod and requeues the pod with a reason.
func TestBindingCycleFailures(t *testing.T) {
	reject := framework.NewStatus(framework.Unschedulable, "no room for it")
	failure := framework.AsStatus(errors.New("disk on fire"))
	tests := []struct {
		name    string
		setup   func(a, b *stepPlugin)
		bindErr error
		calls   []string
		loc     queue.Location
		msg     string
	}{{
		name:  "Reserve rejects",
		setup: func(a, b *stepPlugin) { b.reserve = reject },
		calls: append([]string{"A.Reserve", "B.Reserve"}, unreserveBoth...),
		loc:   queue.UnschedulablePods,
		msg:   "0/1 nodes are available: 1 no room for it.",
	}, {
		name:  "Reserve fails",
		setup: func(a, b *stepPlugin) { a.reserve = failure },
		calls: append([]string{"A.Reserve"}, unreserveBoth...),
		loc:   queue.BackoffQ,
		msg:   `running Reserve plugin "A": disk on fire`,
	}, {
		name:  "Permit rejects",
		setup: func(a, b *stepPlugin) { a.permit = reject },
		calls: append([]string{"A.Reserve", "B.Reserve", "A.Permit"}, unreserveBoth...),
		loc:   queue.UnschedulablePods,
		msg:   "0/1 nodes are available: 1 no room for it.",
	}, {
		name:  "PreBind fails",
		setup: func(a, b *stepPlugin) { b.preBind = failure },
		calls: append([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind", "B.PreBind"}, unreserveBoth...),
		loc:   queue.BackoffQ,
		msg:   `running PreBind plugin "B": disk on fire`,
	}, {
		name:  "PreBind rejects",
		setup: func(a, b *stepPlugin) { a.preBind = reject },
		calls: append([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind"}, unreserveBoth...),
		// As kube-scheduler: retried after backoff, not parked, since
		// no event is tied to a rejection after Permit.
		loc: queue.BackoffQ,
		msg: "no room for it",
	}, {
		name:    "Binding refused",
		bindErr: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("not allowed")),
		calls:   append([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind", "B.PreBind"}, unreserveBoth...),
		loc:     queue.BackoffQ,
		msg:     "not allowed",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bt := newBindingTest(t, tc.setup)
			bt.bindErr = tc.bindErr
			bt.run(nil)
			bt.check(tc.calls)
			bt.requeued(tc.loc, tc.msg)
			if len(bt.bound) != 0 {
				t.Errorf("bound %v after a failure", bt.bound)
			}
		})
	}
}

// A pod waiting on Permit keeps its reservation until every waiting
// plugin allows it; a rejection or a timeout ends the wait.
func TestBindingCycleWaitOnPermit(t *testing.T) {
	wait := framework.NewStatus(framework.Wait)
	t.Run("allowed", func(t *testing.T) {
		bt := newBindingTest(t, func(a, b *stepPlugin) {
			a.permit, a.permitWait = wait, time.Minute
			b.permit, b.permitWait = wait, time.Minute
		})
		bt.run(func() {
			wp := handle{bt.s}.GetWaitingPod(bt.pod.UID)
			if wp == nil {
				t.Fatal("the pod does not wait on Permit")
			}
			if _, _, assumed := bt.s.Cache.Counts(); assumed != 1 {
				t.Errorf("%d assumed pods while waiting, want 1: a waiting pod keeps its reservation", assumed)
			}
			wp.Allow("A")
			if got := wp.GetPendingPlugins(); !slices.Equal(got, []string{"B"}) {
				t.Errorf("pending %v, want [B]", got)
			}
			wp.Allow("B")
		})
		bt.check([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind", "B.PreBind", "A.PostBind", "B.PostBind"})
		if len(bt.bound) != 1 {
			t.Errorf("bindings %v, want one", bt.bound)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		bt := newBindingTest(t, func(a, b *stepPlugin) { a.permit, a.permitWait = wait, time.Minute })
		bt.run(func() {
			handle{bt.s}.IterateOverWaitingPods(func(wp framework.WaitingPod) { wp.Reject("A", "the group gave up") })
		})
		bt.check(append([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit"}, unreserveBoth...))
		bt.requeued(queue.UnschedulablePods, "0/1 nodes are available: 1 the group gave up.")
	})
	t.Run("timed out", func(t *testing.T) {
		bt := newBindingTest(t, func(a, b *stepPlugin) { b.permit, b.permitWait = wait, 30*time.Second })
		bt.run(func() {
			for !bt.clock.HasWaiters() {
				time.Sleep(time.Millisecond)
			}
			bt.clock.Step(31 * time.Second)
		})
		bt.check(append([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit"}, unreserveBoth...))
		bt.requeued(queue.UnschedulablePods, "rejected due to timeout after waiting 30s at plugin B")
	})
}

// A pod deleted while its PreBind runs ends its binding cycle quietly:
// Unreserve, no Binding, no requeue.
func TestBindingCyclePodDeletedInPreBind(t *testing.T) {
	started := make(chan struct{})
	bt := newBindingTest(t, func(a, b *stepPlugin) { a.preBindBlock, a.preBindStarted = true, started })
	bt.run(func() {
		<-started
		bt.s.deletePod(bt.pod)
	})
	bt.check(append([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind"}, unreserveBoth...))
	if loc := bt.s.Queue.Locate(bt.pod.UID); loc != queue.Nowhere {
		t.Errorf("deleted pod in %v, want it gone", loc)
	}
	if len(bt.bound) != 0 {
		t.Errorf("bound %v", bt.bound)
	}
}

// Pods without PreBind work or a wait on Permit go to the bind workers;
// the others get a goroutine of their own, so a PreBind that waits on the
// API never holds up a plain Binding.
func TestSlowPreBindDoesNotHoldUpOthers(t *testing.T) {
	started := make(chan struct{})
	bt := newBindingTest(t, func(a, b *stepPlugin) { a.preBindBlock, a.preBindStarted = true, started })
	s := bt.s
	go s.bindWorker() // a single worker
	s.Queue.Add(bt.pod)
	s.scheduleOne(context.Background())
	<-started
	// The second pod has no PreBind work: it must be bound while the
	// first still blocks in PreBind.
	bt.a.preBindSkip, bt.b.preBindSkip = true, true
	second := frameworktest.MakePod().Namespace("ns").Name("q").UID("q-uid").SchedulerName("yardmaster").Req("1", "1Gi").Obj()
	if _, err := bt.client.CoreV1().Pods("ns").Create(context.Background(), second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Queue.Add(second)
	s.scheduleOne(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for s.Scheduled() < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.Scheduled(); got != 1 {
		t.Fatalf("%d pods bound while another blocked in PreBind, want 1", got)
	}
	s.Abort()
	s.bindWG.Wait()
	close(s.bindJobs)
	if want := []string{"q->n1"}; !slices.Equal(bt.bound, want) {
		t.Errorf("bindings %v, want %v", bt.bound, want)
	}
}

// The profile's bind plugins run in order until one does not Skip;
// DefaultBinder posts the Binding.
func TestBindPlugins(t *testing.T) {
	prefix := []string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind", "B.PreBind"}
	tests := []struct {
		name     string
		setup    func(a, b *stepPlugin)
		binders  []string
		calls    []string
		bindings []string
		loc      queue.Location // where the pod is after a failure
	}{{
		name:     "A skips: DefaultBinder binds",
		setup:    func(a, b *stepPlugin) { a.bind = framework.NewStatus(framework.Skip) },
		binders:  []string{"A", "DefaultBinder"},
		calls:    append(slices.Clone(prefix), "A.Bind", "A.PostBind", "B.PostBind"),
		bindings: []string{"p->n1"},
	}, {
		name:    "A binds: DefaultBinder is not asked",
		binders: []string{"A", "DefaultBinder"},
		calls:   append(slices.Clone(prefix), "A.Bind", "A.PostBind", "B.PostBind"),
	}, {
		name:     "DefaultBinder first: A is not asked",
		binders:  []string{"DefaultBinder", "A"},
		calls:    append(slices.Clone(prefix), "A.PostBind", "B.PostBind"),
		bindings: []string{"p->n1"},
	}, {
		name:    "A fails: the binding cycle fails",
		setup:   func(a, b *stepPlugin) { a.bind = framework.AsStatus(errors.New("remote cluster down")) },
		binders: []string{"A", "DefaultBinder"},
		calls:   append(slices.Clone(prefix), append([]string{"A.Bind"}, unreserveBoth...)...),
		loc:     queue.BackoffQ,
	}, {
		name: "every bind plugin skips: the binding cycle fails",
		setup: func(a, b *stepPlugin) {
			a.bind, b.bind = framework.NewStatus(framework.Skip), framework.NewStatus(framework.Skip)
		},
		binders: []string{"A", "B"},
		calls:   append(slices.Clone(prefix), append([]string{"A.Bind", "B.Bind"}, unreserveBoth...)...),
		loc:     queue.BackoffQ,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bt := newBindingTestBinders(t, tc.setup, tc.binders)
			bt.run(nil)
			bt.check(tc.calls)
			if !slices.Equal(bt.bound, tc.bindings) {
				t.Errorf("bindings %v, want %v", bt.bound, tc.bindings)
			}
			if tc.loc != 0 {
				if got := bt.s.Queue.Locate(bt.pod.UID); got != tc.loc {
					t.Errorf("pod in %v, want %v", got, tc.loc)
				}
			} else if bt.s.Scheduled() != 1 {
				t.Errorf("scheduled %d, want 1", bt.s.Scheduled())
			}
		})
	}
}
