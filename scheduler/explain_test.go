package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// verdicts returns node → "plugin: reasons" ("" when feasible).
func verdicts(e *explain.Explanation) map[string]string {
	out := map[string]string{}
	for _, v := range e.Verdicts {
		if v.Rejected == nil {
			out[v.Node] = ""
			continue
		}
		out[v.Node] = v.Rejected.Plugin + ": " + strings.Join(v.Rejected.Reasons, "; ")
	}
	return out
}

func TestExplainPending(t *testing.T) {
	s := newTestScheduler(t, 0,
		frameworktest.MakeNode().Name("small").Capacity("1", "4Gi", 110).Obj(),
		frameworktest.MakeNode().Name("tainted").Capacity("8", "16Gi", 110).Taint("gpu", "true", v1.TaintEffectNoSchedule).Obj(),
		frameworktest.MakeNode().Name("cordoned").Capacity("8", "16Gi", 110).Unschedulable().Obj(),
		frameworktest.MakeNode().Name("busy").Capacity("4", "16Gi", 110).Obj(),
	)
	// busy has 3.5 of its 4 cpus taken by a pod of equal priority.
	s.Cache.AddPod(placed(frameworktest.MakePod().Name("hog").Req("3500m", "1Gi"), "busy"))
	pod := frameworktest.MakePod().Name("web").Req("2", "1Gi").Obj()

	e, err := s.Explain(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"small":    "NodeResourcesFit: Insufficient cpu",
		"tainted":  "TaintToleration: node(s) had untolerated taint {gpu: true}",
		"cordoned": "NodeUnschedulable: node(s) were unschedulable",
		"busy":     "NodeResourcesFit: Insufficient cpu",
	}
	if diff := cmp.Diff(want, verdicts(e)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	// small: 2 cpus of 1, never enough; busy: 2 - (4 - 3.5) = 1.5 cpu.
	for _, v := range e.Verdicts {
		switch v.Node {
		case "small":
			if v.Shortfall != nil {
				t.Errorf("small's shortfall %v, want none", v.Shortfall)
			}
		case "busy":
			if diff := cmp.Diff(map[string]string{"cpu": "1500m"}, v.Shortfall); diff != "" {
				t.Errorf("busy's shortfall (-want +got):\n%s", diff)
			}
		}
	}
	if e.Selected != "" || len(e.Best) != 0 {
		t.Errorf("selected %q, best %v for a pod that fits nowhere", e.Selected, e.Best)
	}
	// Equal priorities: nobody to evict.
	if e.Preemption == nil || e.Preemption.Node != "" || !strings.Contains(e.Preemption.Message, "No preemption victims") {
		t.Errorf("preemption: %+v", e.Preemption)
	}
	for _, part := range []string{"Fits nowhere: of 4 nodes", "2 nodes (NodeResourcesFit: Insufficient cpu)", "The closest is busy: freeing 1500m cpu"} {
		if !strings.Contains(e.Summary, part) {
			t.Errorf("summary lacks %q:\n%s", part, e.Summary)
		}
	}
	// The message is the one the cycle writes.
	_, schedErr := s.scheduleForTest(pod)
	if schedErr == nil || !strings.HasPrefix(e.Message, schedErr.Error()) {
		t.Errorf("message %q, the cycle says %v", e.Message, schedErr)
	}
}

func TestExplainPreemptionDryRun(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
	low := placed(frameworktest.MakePod().Name("low").Priority(1).Req("800m", ""), "n1")
	s.Cache.AddPod(low)
	pod := frameworktest.MakePod().Name("high").Priority(100).Req("500m", "").Obj()
	e, err := s.Explain(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	want := &explain.Preemption{Eligible: true, Node: "n1", Candidates: []explain.PreemptionCandidate{{Node: "n1", Victims: []string{"default/low"}}},
		Message: "preemption: found a potential placement for pod on node n1, preempting 1 victims"}
	if diff := cmp.Diff(want, e.Preemption); diff != "" {
		t.Errorf("preemption (-want +got):\n%s", diff)
	}
	// A dry run: nothing nominated, the victim still there.
	if s.nominations.len() != 0 || !s.Cache.HasPod(low.UID) {
		t.Errorf("the dry run preempted: %d nominations", s.nominations.len())
	}
	if !strings.Contains(e.Summary, "Preemption would evict 1 pod(s) on n1 (default/low)") {
		t.Errorf("summary: %s", e.Summary)
	}
}

func TestExplainScores(t *testing.T) {
	s := newTestScheduler(t, 0,
		frameworktest.MakeNode().Name("empty").Capacity("4", "16Gi", 110).Obj(),
		frameworktest.MakeNode().Name("half").Capacity("4", "16Gi", 110).Obj(),
	)
	s.Cache.AddPod(placed(frameworktest.MakePod().Name("x").Req("2", "8Gi"), "half"))
	pod := frameworktest.MakePod().Name("web").Req("1", "1Gi").Obj()
	e, err := s.Explain(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if e.Selected != "empty" || len(e.Best) != 1 || e.Verdicts[0].Node != "empty" {
		t.Fatalf("selected %q best %v first %q", e.Selected, e.Best, e.Verdicts[0].Node)
	}
	for _, v := range e.Verdicts {
		if !v.Feasible || len(v.Raw) != len(e.Scorers) || len(v.Normalized) != len(e.Scorers) {
			t.Fatalf("%s: %+v", v.Node, v)
		}
		var total int64
		for i, sc := range e.Scorers {
			total += sc.Weight * v.Normalized[i]
		}
		if total != v.Total {
			t.Errorf("%s: total %d, Σ weight × normalized %d", v.Node, v.Total, total)
		}
	}
	// LeastAllocated (NodeResourcesFit, weight 1): empty after the pod
	// has cpu (4-1)/4 = 75% and memory (16-1)/16 = 93.75% free: (75+93)/2
	// = 84; half: (4-3)/4 = 25%, (16-9)/16 = 43.75%: (25+43)/2 = 34.
	fit := -1
	for i, sc := range e.Scorers {
		if sc.Plugin == "NodeResourcesFit" {
			fit = i
		}
	}
	got := map[string]int64{e.Verdicts[0].Node: e.Verdicts[0].Raw[fit], e.Verdicts[1].Node: e.Verdicts[1].Raw[fit]}
	if diff := cmp.Diff(map[string]int64{"empty": 84, "half": 34}, got); diff != "" {
		t.Errorf("NodeResourcesFit raw scores (-want +got):\n%s", diff)
	}
}

func TestExplainBoundPod(t *testing.T) {
	// The pod takes the whole node: explained with itself counted, it
	// would not fit where it is.
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 1).Obj())
	pod := placed(frameworktest.MakePod().Name("web").Req("1", "1Gi"), "n1")
	s.Cache.AddPod(pod)
	e, err := s.Explain(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if e.BoundTo != "n1" || e.Selected != "n1" {
		t.Errorf("bound to %q, selected %q; verdicts %v", e.BoundTo, e.Selected, verdicts(e))
	}
}

// TestExplainAgreesWithCycle places random pods on random clusters, each
// with the cycle and with Explain on the same state, and requires the same
// answer: the node (the clusters are below 100 nodes, so the cycle scores
// every feasible node; ties are compared as sets) or the same message.
func TestExplainAgreesWithCycle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 20 {
		var nodes []*v1.Node
		for i := range 3 + rng.IntN(20) {
			w := frameworktest.MakeNode().Name(fmt.Sprintf("n%d", i)).
				Capacity(fmt.Sprint(1+rng.IntN(8)), fmt.Sprintf("%dGi", 1+rng.IntN(32)), 110).
				Label(v1.LabelTopologyZone, fmt.Sprintf("z%d", rng.IntN(3)))
			if rng.IntN(6) == 0 {
				w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
			}
			nodes = append(nodes, w.Obj())
		}
		s := newTestScheduler(t, 0, nodes...)
		for i := range 40 {
			pod := frameworktest.MakePod().Name(fmt.Sprintf("p%d-%d", round, i)).
				Req(fmt.Sprintf("%dm", 100+rng.IntN(2000)), fmt.Sprintf("%dMi", 64+rng.IntN(4096))).Obj()
			if rng.IntN(4) == 0 {
				pod.Spec.NodeSelector = map[string]string{v1.LabelTopologyZone: fmt.Sprintf("z%d", rng.IntN(3))}
			}
			e, err := s.Explain(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			node, err := s.scheduleForTest(pod)
			switch {
			case err != nil:
				if e.Selected != "" || !strings.HasPrefix(e.Message, strings.TrimSuffix(err.Error(), ".")) {
					t.Fatalf("round %d pod %d: the cycle says %v, explain selected %q: %q", round, i, err, e.Selected, e.Message)
				}
			case !contains(e.Best, node):
				t.Fatalf("round %d pod %d: the cycle chose %s, explain's best are %v", round, i, node, e.Best)
			}
		}
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// BenchmarkExplain explains one pod (the benchPods mix) on 5,000 nodes that
// run 5 pods each: every node filtered, every feasible node scored. The
// issue's target is under a second of CPU; ns/op is wall time on
// GOMAXPROCS cores, so CPU is at most ns/op × GOMAXPROCS.
func BenchmarkExplain(b *testing.B) {
	const n = 5000
	s := newTestScheduler(b, 0, benchNodes(n)...)
	for i, p := range benchPods(5 * n) {
		p.Name, p.UID = fmt.Sprintf("existing-%d", i), types.UID(fmt.Sprintf("existing-%d", i))
		p.Spec.NodeName = fmt.Sprintf("node-%05d", i%n)
		p.Spec.Containers[0].Ports = nil
		s.Cache.AddPod(p)
	}
	pods := benchPods(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		e, err := s.Explain(context.Background(), pods[i])
		if err != nil || len(e.Verdicts) != n {
			b.Fatalf("%v, %d verdicts", err, len(e.Verdicts))
		}
	}
}

// A pod that asks for more than a node has at all: freeing room there
// would not help, and no shortfall is given for it.
func TestExplainShortfallBeyondAllocatable(t *testing.T) {
	s := newTestScheduler(t, 0,
		frameworktest.MakeNode().Name("tiny").Capacity("1", "4Gi", 110).Obj(),
		frameworktest.MakeNode().Name("full").Capacity("4", "16Gi", 110).Obj(),
	)
	s.Cache.AddPod(placed(frameworktest.MakePod().Name("x").Req("3", "1Gi"), "full"))
	e, err := s.Explain(context.Background(), frameworktest.MakePod().Name("web").Req("2", "1Gi").Obj())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, v := range e.Verdicts {
		got[v.Node] = v.Shortfall
	}
	// full: 2 - (4 - 3) = 1 cpu short; tiny: 2 > 1, never enough.
	if diff := cmp.Diff(map[string]map[string]string{"tiny": nil, "full": {"cpu": "1"}}, got); diff != "" {
		t.Errorf("shortfalls (-want +got):\n%s", diff)
	}
}

// A pod whose node affinity names only a node that does not exist is
// rejected by NodeAffinity's PreFilter result, and explain says so.
func TestExplainPreFilterResultOfNoNode(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("a").Capacity("8", "16Gi", 110).Obj())
	pod := frameworktest.MakePod().Name("web").Req("100m", "64Mi").Obj()
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"ghost"}}}}},
	}}}
	e, err := s.Explain(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if e.PreFilter == nil || e.PreFilter.Plugin != "NodeAffinity" || !e.PreFilter.Unresolvable {
		t.Errorf("PreFilter rejection %+v, want NodeAffinity's, unresolvable", e.PreFilter)
	}
	if !strings.Contains(e.Message, "1 node(s) didn't satisfy plugin(s) [NodeAffinity]") {
		t.Errorf("message %q", e.Message)
	}
}

// Nodes a PreFilter result leaves out have verdicts of their own, as
// kube-scheduler's diagnosis counts them, and the summary adds up.
func TestExplainListsNodesPreFilterLeftOut(t *testing.T) {
	s := newTestScheduler(t, 0,
		frameworktest.MakeNode().Name("a").Capacity("8", "16Gi", 110).Obj(),
		frameworktest.MakeNode().Name("b").Capacity("8", "16Gi", 110).Obj(),
		frameworktest.MakeNode().Name("c").Capacity("8", "16Gi", 110).Obj())
	pod := frameworktest.MakePod().Name("web").Req("100m", "64Mi").Obj()
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{
			{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}},
			{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"ghost"}}}},
		},
	}}}
	e, err := s.Explain(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if e.Selected != "a" {
		t.Errorf("selected %q, want a", e.Selected)
	}
	got := map[string]string{}
	for _, v := range e.Verdicts {
		switch {
		case v.Feasible:
			got[v.Node] = "feasible"
		case v.Rejected != nil && v.Rejected.Unresolvable:
			got[v.Node] = v.Rejected.Plugin + ": " + strings.Join(v.Rejected.Reasons, "; ")
		default:
			got[v.Node] = fmt.Sprintf("%+v", v.Rejected)
		}
	}
	left := "NodeAffinity: node(s) didn't satisfy plugin(s) [NodeAffinity]"
	if diff := cmp.Diff(map[string]string{"a": "feasible", "b": left, "c": left}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(e.Summary, "The other 2: 2 nodes (NodeAffinity: node(s) didn't satisfy plugin(s) [NodeAffinity])") {
		t.Errorf("summary %q does not account for the 2 nodes left out", e.Summary)
	}
}
