package cycletest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest/cycletest"
)

// Two plugins as an outside module writes them: a filter that rejects the
// nodes labelled avoid=true, and a scorer that prefers the nodes labelled
// preferred=true.

const (
	avoidName     = "AvoidNode"
	preferName    = "PreferLabel"
	reasonAvoided = "node(s) avoided"
)

var statusAvoided = framework.NewStatus(framework.UnschedulableAndUnresolvable, reasonAvoided)

type avoidNode struct{}

var _ framework.FilterPlugin = avoidNode{}

func (avoidNode) Name() string { return avoidName }

func (avoidNode) Filter(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	if ni.Node().Labels["avoid"] == "true" {
		return statusAvoided
	}
	return nil
}

type preferLabel struct{}

var _ framework.ScorePlugin = preferLabel{}

func (preferLabel) Name() string { return preferName }

func (preferLabel) Score(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	if ni.Node().Labels["preferred"] == "true" {
		return framework.MaxNodeScore, nil
	}
	return framework.MinNodeScore, nil
}

func (preferLabel) ScoreExtensions() framework.ScoreExtensions { return nil }

func plugins() []framework.Registration {
	return []framework.Registration{
		{Name: avoidName, Points: []string{framework.PointFilter},
			New: func(any, framework.Handle) ([]framework.Plugin, error) { return []framework.Plugin{avoidNode{}}, nil }},
		{Name: preferName, Points: []string{framework.PointScore},
			New: func(any, framework.Handle) ([]framework.Plugin, error) { return []framework.Plugin{preferLabel{}}, nil }},
	}
}

// big is avoided though preferred and roomy; small-preferred and small
// are alike but for the label.
func nodes() []*v1.Node {
	return []*v1.Node{
		frameworktest.MakeNode().Name("big").Label("avoid", "true").Label("preferred", "true").Capacity("16", "32Gi", 110).Obj(),
		frameworktest.MakeNode().Name("small-preferred").Label("preferred", "true").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("small").Capacity("4", "8Gi", 110).Obj(),
	}
}

func TestSchedule(t *testing.T) {
	opts := cycletest.Options{Plugins: plugins(), Nodes: nodes()}
	pod := func(name, cpu string) *v1.Pod { return frameworktest.MakePod().Name(name).Req(cpu, "1Gi").Obj() }

	// With the built-in plugins: the two small nodes tie on every built-in
	// scorer, and PreferLabel's 100 (weight 1) decides.
	got := cycletest.Schedule(t, opts, pod("web", "1"))
	if got[0].Node != "small-preferred" {
		t.Errorf("web went to %q (%s), want small-preferred", got[0].Node, got[0].Message)
	}

	// 8 cpus fit only on big, which AvoidNode rejects; NodeResourcesFit
	// rejects the small ones first, unresolvably: 8 is more than their
	// 4 allocatable, which no eviction frees.
	got = cycletest.Schedule(t, opts, pod("huge", "8"))
	wantRejected := map[string]explain.Rejection{
		"big":             {Plugin: avoidName, Reasons: []string{reasonAvoided}, Unresolvable: true},
		"small-preferred": {Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient cpu"}, Unresolvable: true},
		"small":           {Plugin: "NodeResourcesFit", Reasons: []string{"Insufficient cpu"}, Unresolvable: true},
	}
	if got[0].Node != "" {
		t.Errorf("huge went to %q, want nowhere", got[0].Node)
	}
	if diff := cmp.Diff(wantRejected, got[0].Rejected); diff != "" {
		t.Errorf("rejections (-want +got):\n%s", diff)
	}
	if want := "0/3 nodes are available: 1 node(s) avoided, 2 Insufficient cpu."; !strings.HasPrefix(got[0].Message, want) {
		t.Errorf("message %q, want it to start with %q", got[0].Message, want)
	}

	// Placed one after the other, each assumed before the next: the
	// third 3-cpu pod finds both small nodes full.
	got = cycletest.Schedule(t, opts, pod("a", "3"), pod("b", "3"), pod("c", "3"))
	var placed []string
	for _, r := range got {
		placed = append(placed, r.Node)
	}
	if diff := cmp.Diff([]string{"small-preferred", "small", ""}, placed); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}
}

// A configuration file decides the profile: here the plugins under test
// alone, PreferLabel weighted.
func TestScheduleConfig(t *testing.T) {
	opts := cycletest.Options{
		Plugins: plugins(),
		Config: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: only-mine
  plugins:
    multiPoint:
      enabled:
      - name: PrioritySort
      - name: DefaultBinder
      - name: AvoidNode
      - name: PreferLabel
        weight: 5
      disabled:
      - name: "*"
`,
		Nodes: nodes(),
	}
	// No NodeResourcesFit: 64 cpus fit the small preferred node.
	got := cycletest.Schedule(t, opts, frameworktest.MakePod().Name("web").Req("64", "").Obj())
	if got[0].Node != "small-preferred" {
		t.Fatalf("web went to %q (%s), want small-preferred", got[0].Node, got[0].Message)
	}
	e := got[0].Explanation
	if e.Profile != "only-mine" {
		t.Errorf("profile %q, want only-mine (the pod's schedulerName names none)", e.Profile)
	}
	if diff := cmp.Diff([]explain.Scorer{{Plugin: preferName, Weight: 5}}, e.Scorers); diff != "" {
		t.Errorf("scorers (-want +got):\n%s", diff)
	}
	if e.Verdicts[0].Total != 5*framework.MaxNodeScore {
		t.Errorf("total %d, want 5 × %d", e.Verdicts[0].Total, framework.MaxNodeScore)
	}
}

// Pods already on a node take room there.
func TestScheduleExistingPods(t *testing.T) {
	opts := cycletest.Options{
		Plugins: plugins(),
		Nodes:   nodes(),
		Pods:    []*v1.Pod{frameworktest.MakePod().Name("old").Req("3", "").Node("small-preferred").Obj()},
	}
	got := cycletest.Schedule(t, opts, frameworktest.MakePod().Name("web").Req("2", "").Obj())
	if got[0].Node != "small" {
		t.Errorf("web went to %q (%s), want small: small-preferred has 1 cpu left", got[0].Node, got[0].Message)
	}
}
