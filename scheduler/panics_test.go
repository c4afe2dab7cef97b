package scheduler

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// panicky is a plugin at every extension point that panics at one of
// them, for pods labelled panic=yes (at Filter and Score, on one node).
type panicky struct{ at string }

const panickyNode = "n0150"

func (p *panicky) Name() string { return "Panicky" }

func (p *panicky) maybe(point string, pod *v1.Pod, node string) {
	if p.at == point && pod.Labels["panic"] == "yes" && (node == "" || node == panickyNode) {
		var nodes []string
		_ = nodes[len(node)] // a runtime error, as a real bug would be
	}
}

func (p *panicky) PreEnqueue(_ context.Context, pod *v1.Pod) *framework.Status {
	p.maybe("PreEnqueue", pod, "")
	return nil
}

func (p *panicky) PreFilter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	p.maybe("PreFilter", pod, "")
	return nil, nil
}

func (p *panicky) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	p.maybe("Filter", pod, ni.NodeName())
	return nil
}

func (p *panicky) PreScore(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	p.maybe("PreScore", pod, "")
	return nil
}

func (p *panicky) Score(_ context.Context, _ *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	p.maybe("Score", pod, ni.NodeName())
	return 0, nil
}

func (p *panicky) ScoreExtensions() framework.ScoreExtensions { return nil }

func (p *panicky) Reserve(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) *framework.Status {
	p.maybe("Reserve", pod, "")
	return nil
}

func (p *panicky) Unreserve(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) {
	p.maybe("Unreserve", pod, "")
}

func (p *panicky) Permit(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) (*framework.Status, time.Duration) {
	p.maybe("Permit", pod, "")
	return nil, 0
}

func (p *panicky) PreBindPreFlight(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) *framework.Status {
	p.maybe("PreBindPreFlight", pod, "")
	return nil
}

func (p *panicky) PreBind(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) *framework.Status {
	p.maybe("PreBind", pod, "")
	return nil
}

func (p *panicky) PostBind(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) {
	p.maybe("PostBind", pod, "")
}

// A plugin that panics, at any extension point and on any goroutine
// (Filter and Score run on the Parallelizer's workers), fails the attempt
// of the pod it was working on with an error event that names it, and
// backs the pod off; the scheduler goes on and binds the other pods.
func TestPluginPanicFailsOnlyItsPod(t *testing.T) {
	// Several workers filter and score, whatever the machine.
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(4))
	tests := []struct {
		at string
		// bound says the panicking pod is bound all the same (the panic
		// came after its Binding, or lets it through).
		bound bool
	}{
		{at: "PreEnqueue", bound: true},
		{at: "PreFilter"},
		{at: "Filter"},
		{at: "PreScore"},
		{at: "Score"},
		{at: "Reserve"},
		{at: "Permit"},
		{at: "PreBindPreFlight"},
		{at: "PreBind"},
		{at: "PostBind", bound: true},
	}
	for _, tc := range tests {
		t.Run(tc.at, func(t *testing.T) {
			reg := registry.NewInTree()
			pl := &panicky{at: tc.at}
			if err := reg.Register(framework.Registration{
				Name: pl.Name(),
				Points: []string{framework.PointPreEnqueue, framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore,
					framework.PointReserve, framework.PointPermit, framework.PointPreBind, framework.PointPostBind},
				New: func(any, framework.Handle) ([]framework.Plugin, error) { return []framework.Plugin{pl}, nil },
			}); err != nil {
				t.Fatal(err)
			}
			prof := registry.DefaultProfile("yardmaster")
			prof.PreEnqueue = append(prof.PreEnqueue, pl.Name())
			prof.PreFilter = append(prof.PreFilter, pl.Name())
			prof.Filter = append(prof.Filter, pl.Name())
			prof.PreScore = append(prof.PreScore, pl.Name())
			prof.Score = append(prof.Score, framework.WeightedPlugin{Name: pl.Name(), Weight: 1})
			prof.Reserve = append(prof.Reserve, pl.Name())
			prof.Permit = append(prof.Permit, pl.Name())
			prof.PreBind = append(prof.PreBind, pl.Name())
			prof.PostBind = append(prof.PostBind, pl.Name())

			var bound atomic.Int32
			client := fake.NewClientset()
			client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
				if action.GetSubresource() != "binding" {
					return false, nil, nil
				}
				bound.Add(1)
				return true, nil, nil
			})
			rec := events.NewFakeRecorder(100)
			s, err := New(Options{
				Client:   client,
				Binder:   binder.New(client, rec, nil),
				Registry: reg,
				Profiles: []framework.Profile{prof},
				// All nodes are filtered and scored, the panicking one
				// among them.
				PercentageOfNodesToScore: 100,
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 300 {
				s.Cache.AddNode(frameworktest.MakeNode().Name(fmt.Sprintf("n%04d", i)).Capacity("4", "8Gi", 110).Obj())
			}
			bad := frameworktest.MakePod().Name("bad").Label("panic", "yes").Req("100m", "").Obj()
			good := frameworktest.MakePod().Name("good").Req("100m", "").Obj()
			s.Queue.Add(bad)
			s.Queue.Add(good)
			stop := runScheduler(t, s)
			want := int32(1)
			if tc.bound {
				want = 2
			}
			poll(t, "the pods bound", func() bool { return bound.Load() >= want })
			if !tc.bound {
				poll(t, "the panicking pod backing off", func() bool { return s.Queue.Locate(bad.UID) == queue.BackoffQ })
			}
			stop()
			s.binder.Wait()
			if got := bound.Load(); got != want {
				t.Errorf("%d pods bound, want %d", got, want)
			}
			if tc.bound {
				return
			}
			var failed []string
			for len(rec.Events) > 0 {
				if e := <-rec.Events; strings.Contains(e, "FailedScheduling") {
					failed = append(failed, e)
				}
			}
			wantMsg := fmt.Sprintf(`running %s plugin "Panicky": panic: runtime error: index out of range`, tc.at)
			if len(failed) == 0 || !strings.Contains(failed[0], wantMsg) {
				t.Errorf("events %q, want a FailedScheduling saying %q", failed, wantMsg)
			}
			if _, _, assumed := s.Cache.Counts(); assumed > 1 {
				t.Errorf("%d pods assumed, want only the good one", assumed)
			}
		})
	}
}
