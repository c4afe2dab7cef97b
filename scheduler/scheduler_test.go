package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

func newTestScheduler(t testing.TB, pct int32, nodes ...*v1.Node) *Scheduler {
	t.Helper()
	s, err := New(Options{
		Registry:                 registry.NewInTree(),
		Profiles:                 []framework.Profile{registry.DefaultProfile("yardmaster")},
		PercentageOfNodesToScore: pct,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		s.Cache.AddNode(n)
	}
	return s
}

// schedule runs one cycle's decision for pod and assumes it, as scheduleOne
// does, without binding.
func (s *Scheduler) scheduleForTest(pod *v1.Pod) (string, error) {
	s.Cache.UpdateSnapshot(s.snapshot)
	res, err := s.schedulePod(context.Background(), s.profiles[pod.Spec.SchedulerName], framework.NewCycleState(), pod)
	if err != nil {
		return "", err
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = res.node
	if err := s.Cache.AssumePod(assumed); err != nil {
		return "", err
	}
	s.nominations.forget(pod.UID)
	return res.node, nil
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		nodes int
		pct   int32
		want  int
	}{
		{nodes: 10, want: 10},    // below 100 nodes: all
		{nodes: 100, want: 100},  // 50-0=50% of 100 = 50 → floor of 100
		{nodes: 1000, want: 420}, // 50-1000/125 = 42% → 420
		{nodes: 5000, want: 500}, // 50-40 = 10% → 500
		{nodes: 6000, want: 300}, // 50-48 = 2% → raised to 5% → 300
		{nodes: 1000, pct: 30, want: 300},
		{nodes: 1000, pct: 1, want: 100}, // 10 → floor of 100
		{nodes: 1000, pct: 100, want: 1000},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d nodes %d%%", tc.nodes, tc.pct), func(t *testing.T) {
			s := &Scheduler{percentageOfNodesToScore: tc.pct}
			if got := s.numFeasibleNodesToFind(&profile{}, tc.nodes); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestFitErrorMessage(t *testing.T) {
	f := &FitError{NumAllNodes: 5, ReasonCounts: map[string]int{
		"Insufficient cpu":                     3,
		"node(s) were unschedulable":           1,
		"Insufficient memory":                  3,
		"node(s) had untolerated taint {a: b}": 1,
	}}
	want := "0/5 nodes are available: 1 node(s) had untolerated taint {a: b}, 1 node(s) were unschedulable, 3 Insufficient cpu, 3 Insufficient memory."
	if got := f.Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestScheduleSpreadsAndFills(t *testing.T) {
	s := newTestScheduler(t, 0,
		frameworktest.MakeNode().Name("a").Capacity("2", "4Gi", 110).Obj(),
		frameworktest.MakeNode().Name("b").Capacity("2", "4Gi", 110).Obj(),
	)
	count := map[string]int{}
	for i := range 4 {
		node, err := s.scheduleForTest(frameworktest.MakePod().Name(fmt.Sprintf("p%d", i)).Req("1", "1Gi").Obj())
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		count[node]++
	}
	// LeastAllocated + BalancedAllocation alternate the nodes: 2 each.
	if count["a"] != 2 || count["b"] != 2 {
		t.Errorf("placement %v, want 2 per node", count)
	}
	_, err := s.scheduleForTest(frameworktest.MakePod().Name("extra").Req("1", "").Obj())
	var fitErr *FitError
	if !errors.As(err, &fitErr) {
		t.Fatalf("got %v, want a FitError", err)
	}
	if want := "0/2 nodes are available: 2 Insufficient cpu."; fitErr.Error() != want {
		t.Errorf("got %q, want %q", fitErr.Error(), want)
	}
}

func TestScheduleNoNodes(t *testing.T) {
	s := newTestScheduler(t, 0)
	if _, err := s.scheduleForTest(frameworktest.MakePod().Name("p").Obj()); !errors.Is(err, ErrNoNodesAvailable) {
		t.Errorf("got %v, want ErrNoNodesAvailable", err)
	}
}

func TestScheduleNodeNamePinned(t *testing.T) {
	var nodes []*v1.Node
	for i := range 200 {
		nodes = append(nodes, frameworktest.MakeNode().Name(fmt.Sprintf("n%03d", i)).Capacity("4", "8Gi", 110).Obj())
	}
	s := newTestScheduler(t, 0, nodes...)
	got, err := s.scheduleForTest(frameworktest.MakePod().Name("p").Node("n150").Obj())
	if err != nil || got != "n150" {
		t.Errorf("got %q, %v; want n150", got, err)
	}
}

// The rotating start index lets every node be considered across cycles
// even when each cycle stops after a fraction of them.
func TestRotatingStartCoversAllNodes(t *testing.T) {
	var nodes []*v1.Node
	for i := range 1000 {
		nodes = append(nodes, frameworktest.MakeNode().Name(fmt.Sprintf("n%04d", i)).Capacity("32", "256Gi", 110).Obj())
	}
	s := newTestScheduler(t, 0, nodes...)
	used := map[string]int{}
	for i := range 3000 {
		node, err := s.scheduleForTest(frameworktest.MakePod().Name(fmt.Sprintf("p%d", i)).Req("1", "1Gi").Obj())
		if err != nil {
			t.Fatal(err)
		}
		used[node]++
	}
	// Each cycle scores 420 of the 1000 nodes, starting where the last one
	// stopped. LeastAllocated on 32 cpu moves by one point per 320m, so
	// 1-cpu pods are told apart one by one: 3000 pods must land 3 per node,
	// give or take the ties broken inside each window.
	if len(used) != 1000 {
		t.Errorf("3000 pods used %d distinct nodes, want all 1000", len(used))
	}
	for n, c := range used {
		if c > 4 {
			t.Errorf("node %s got %d pods, want about 3", n, c)
		}
	}
}

func TestDuplicateProfile(t *testing.T) {
	_, err := New(Options{
		Registry: registry.NewInTree(),
		Profiles: []framework.Profile{registry.DefaultProfile("x"), registry.DefaultProfile("x")},
	})
	if err == nil {
		t.Error("duplicate profile accepted")
	}
}

// When no node fits, every node is reported with the first filter in
// configured order that rejects it, as kube-scheduler reports it, however
// the nodes were spread over the workers.
func TestFilterReasonsFollowConfiguredOrder(t *testing.T) {
	var nodes []*v1.Node
	for i := range 600 {
		cpu := "4"
		if i%3 == 1 {
			cpu = "1" // too small: NodeResourcesFit, ahead of InterPodAffinity
		}
		w := frameworktest.MakeNode().Name(fmt.Sprintf("n%03d", i)).Capacity(cpu, "8Gi", 110)
		if i%5 == 2 {
			w.Taint("dedicated", "db", v1.TaintEffectNoSchedule) // TaintToleration, ahead of both
		}
		nodes = append(nodes, w.Obj())
	}
	s := newTestScheduler(t, 0, nodes...)
	for _, n := range nodes {
		s.Cache.AddPod(frameworktest.MakePod().Name("web-"+n.Name).Label("app", "web").Node(n.Name).Obj())
	}
	want := map[string]int{}
	for i := range nodes {
		switch {
		case i%5 == 2:
			want["node(s) had untolerated taint(s)"]++
		case i%3 == 1:
			want["Insufficient cpu"]++
		default:
			want["node(s) didn't match pod anti-affinity rules"]++
		}
	}
	for i := range 5 {
		pod := frameworktest.MakePod().Name(fmt.Sprintf("web-%d", i)).Label("app", "web").Req("2", "1Gi").
			RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj()
		_, err := s.scheduleForTest(pod)
		var fitErr *FitError
		if !errors.As(err, &fitErr) {
			t.Fatalf("got %v, want a FitError", err)
		}
		if diff := cmp.Diff(want, fitErr.ReasonCounts); diff != "" {
			t.Fatalf("cycle %d: reasons (-want +got):\n%s", i, diff)
		}
	}
}

// Nodes that a PreFilter result leaves out count as rejected by the
// plugin that narrowed the list, as kube-scheduler counts its absent
// nodes; a name in the result that no node has counts for nothing.
func TestPreFilterResultLeavesOutNodes(t *testing.T) {
	nodes := []*v1.Node{
		frameworktest.MakeNode().Name("a").Capacity("2", "4Gi", 110).Obj(),
		frameworktest.MakeNode().Name("b").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("c").Capacity("8", "16Gi", 110).Label("tier", "silver").Obj(),
	}
	named := func(names ...string) *frameworktest.NodeSelectorTermWrapper {
		return frameworktest.MakeNodeSelectorTerm().Field("metadata.name", v1.NodeSelectorOpIn, names...)
	}
	const absent = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
	for _, tc := range []struct {
		name string
		term v1.NodeSelectorTerm
		want map[string]int
	}{{
		name: "a name no node has",
		term: named("ghost").Obj(),
		want: map[string]int{absent: 3},
	}, {
		// c is filtered and fails; a and b are left out.
		name: "a node that fails Filter",
		term: named("c", "ghost").In("tier", "gold").Obj(),
		want: map[string]int{absent: 2, "node(s) didn't match Pod's node affinity/selector": 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestScheduler(t, 0, nodes...)
			_, err := s.scheduleForTest(frameworktest.MakePod().Name("p").Req("100m", "64Mi").RequiredNodeAffinity(tc.term).Obj())
			var fitErr *FitError
			if !errors.As(err, &fitErr) {
				t.Fatalf("got %v, want a FitError", err)
			}
			if diff := cmp.Diff(tc.want, fitErr.ReasonCounts); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if !fitErr.Plugins.Has("NodeAffinity") || !fitErr.Unresolvable {
				t.Errorf("plugins %v, unresolvable %v; want NodeAffinity, true", sets.List(fitErr.Plugins), fitErr.Unresolvable)
			}
		})
	}
}

// A nominated node is tried first whatever the PreFilter results name, as
// kube-scheduler's evaluateNominatedNode does: it runs the filters on the
// node before the results narrow the list. Here NodeAffinity's Filter is
// disabled and its PreFilter, still run, names only the pod's matchFields
// nodes: n1, or a node that does not exist; the pod is nominated to n2,
// where every filter that runs passes, so it goes there.
func TestNominatedNodeTriedOutsidePreFilterResult(t *testing.T) {
	prof := registry.DefaultProfile("yardmaster")
	prof.Filter = slices.DeleteFunc(slices.Clone(prof.Filter), func(n string) bool { return n == nodeaffinity.Name })
	for _, named := range []string{"n1", "ghost"} {
		t.Run(named, func(t *testing.T) {
			s, err := New(Options{Registry: registry.NewInTree(), Profiles: []framework.Profile{prof}})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"n1", "n2"} {
				s.Cache.AddNode(frameworktest.MakeNode().Name(n).Capacity("4", "8Gi", 110).Obj())
			}
			pod := frameworktest.MakePod().Name("p").Req("1", "1Gi").
				RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().Field("metadata.name", v1.NodeSelectorOpIn, named).Obj()).Obj()
			pod.Status.NominatedNodeName = "n2"
			if got, err := s.scheduleForTest(pod); err != nil || got != "n2" {
				t.Errorf("got %q, %v; want n2, the nominated node", got, err)
			}
		})
	}
}
