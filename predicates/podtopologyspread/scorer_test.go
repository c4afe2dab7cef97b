package podtopologyspread_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
)

const ptsZone = v1.LabelTopologyZone

func ptsSoft(maxSkew int32, key string) *frameworktest.SpreadConstraintWrapper {
	return frameworktest.MakeSpreadConstraint(maxSkew, key, v1.ScheduleAnyway)
}

// ptsCluster has zone a (a1, a2), zone b (b1), zone c (c1) and x1 without
// a zone, and app=web pods on a1, a2 and b1: per zone a=2, b=1, c=0.
func ptsCluster() ([]*v1.Node, []*v1.Pod) {
	nodes := []*v1.Node{
		frameworktest.MakeNode().Name("a1").Label(ptsZone, "a").Obj(),
		frameworktest.MakeNode().Name("a2").Label(ptsZone, "a").Obj(),
		frameworktest.MakeNode().Name("b1").Label(ptsZone, "b").Obj(),
		frameworktest.MakeNode().Name("c1").Label(ptsZone, "c").Obj(),
		frameworktest.MakeNode().Name("x1").Obj(),
	}
	pods := []*v1.Pod{
		frameworktest.MakePod().Name("web-a1").Label("app", "web").Node("a1").Obj(),
		frameworktest.MakePod().Name("web-a2").Label("app", "web").Node("a2").Obj(),
		frameworktest.MakePod().Name("web-b1").Label("app", "web").Node("b1").Obj(),
	}
	return nodes, pods
}

func ptsWebPod() *frameworktest.PodWrapper {
	return frameworktest.MakePod().Name("new").Label("app", "web")
}

// ptsScores are scores by node name.
type ptsScores map[string]int64

// runSpreadScorer runs PreScore over the feasible nodes (all when nil),
// Score on each and NormalizeScore; skipped is set when PreScore skips.
func runSpreadScorer(t *testing.T, args *podtopologyspread.Args, pod *v1.Pod, nodes []*v1.Node, pods []*v1.Pod, feasibleNames []string, objects ...runtime.Object) (raw, normalized ptsScores, skipped bool) {
	t.Helper()
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, pods)).AddObjects(objects...)
	ts, err := podtopologyspread.NewSpread(args, h)
	if err != nil {
		t.Fatal(err)
	}
	pl := podtopologyspread.NewScorer(ts, h)
	var feasible []*framework.NodeInfo
	for _, ni := range h.Lister.List() {
		if feasibleNames == nil || slices.Contains(feasibleNames, ni.Node().Name) {
			feasible = append(feasible, ni)
		}
	}
	ctx, state := context.Background(), framework.NewCycleState()
	st := pl.PreScore(ctx, state, pod, feasible)
	if st.IsSkip() {
		return nil, nil, true
	}
	if !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st.Message())
	}
	var list framework.NodeScoreList
	raw = ptsScores{}
	for _, ni := range feasible {
		s, st := pl.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Node().Name, st.Message())
		}
		raw[ni.Node().Name] = s
		list = append(list, framework.NodeScore{Name: ni.Node().Name, Score: s})
	}
	if st := pl.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st.Message())
	}
	normalized = ptsScores{}
	for _, s := range list {
		normalized[s.Name] = s.Score
	}
	return raw, normalized, false
}

func TestPodTopologySpreadScore(t *testing.T) {
	taintA2 := func(nodes []*v1.Node) []*v1.Node {
		nodes[1].Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
		return nodes
	}
	tests := []struct {
		name           string
		args           *podtopologyspread.Args // nil: System defaults
		pod            *v1.Pod
		nodes          func([]*v1.Node) []*v1.Node
		feasible       []string // nil: every node
		objects        []runtime.Object
		wantSkip       bool
		wantRaw        ptsScores
		wantNormalized ptsScores
	}{
		{name: "no constraints, no owner: skip", pod: ptsWebPod().Obj(), wantSkip: true},
		{name: "only DoNotSchedule constraints: skip",
			pod:      ptsWebPod().SpreadConstraint(frameworktest.MakeSpreadConstraint(1, ptsZone, v1.DoNotSchedule).MatchLabels("app", "web").Obj()).Obj(),
			wantSkip: true},
		{
			// x1 lacks the zone: ignored. Domains a, b, c → weight
			// ln(3+2) = 1.609; raw = matching × 1.609 + (1-1):
			// a 2 × 1.609 = 3.22 → 3, b 1.609 → 2, c 0.
			// Normalized 100 × (max 3 + min 0 - raw) / 3: a 0, b 33, c 100.
			name:           "zone maxSkew 1",
			pod:            ptsWebPod().SpreadConstraint(ptsSoft(1, ptsZone).MatchLabels("app", "web").Obj()).Obj(),
			wantRaw:        ptsScores{"a1": 3, "a2": 3, "b1": 2, "c1": 0, "x1": 0},
			wantNormalized: ptsScores{"a1": 0, "a2": 0, "b1": 33, "c1": 100, "x1": 0},
		},
		{
			// zone: weight ln 5 = 1.609, + (2-1); hostname: 4 scored
			// nodes → weight ln 6 = 1.792, + 0.
			// a1: 2×1.609+1 + 1×1.792 = 6.01 → 6; b1: 1.609+1 + 1.792 =
			// 4.40 → 4; c1: 0+1 + 0 = 1.
			// Normalized 100 × (6 + 1 - raw) / 6: a 16, b 50, c 100.
			name: "zone and hostname",
			pod: ptsWebPod().SpreadConstraint(ptsSoft(2, ptsZone).MatchLabels("app", "web").Obj()).
				SpreadConstraint(ptsSoft(1, v1.LabelHostname).MatchLabels("app", "web").Obj()).Obj(),
			wantRaw:        ptsScores{"a1": 6, "a2": 6, "b1": 4, "c1": 1, "x1": 0},
			wantNormalized: ptsScores{"a1": 16, "a2": 16, "b1": 50, "c1": 100, "x1": 0},
		},
		{
			// System defaults from the Service; x1 is not ignored: it is in
			// the "" zone. zone: domains a, b, c, "" → ln 6 = 1.792, +
			// (5-1); hostname: 5 nodes → ln 7 = 1.946, + (3-1).
			// a1: 1×1.946+2 + 2×1.792+4 = 11.53 → 12; b1: 3.946 + 5.792 =
			// 9.74 → 10; c1: 2 + 4 = 6; x1: 2 (no zone label, no zone term).
			// Normalized 100 × (12 + 2 - raw) / 12: a 16, b 33, c 66, x 100.
			name:           "System defaults with a Service",
			pod:            ptsWebPod().Obj(),
			objects:        []runtime.Object{ptsService("web", map[string]string{"app": "web"})},
			wantRaw:        ptsScores{"a1": 12, "a2": 12, "b1": 10, "c1": 6, "x1": 2},
			wantNormalized: ptsScores{"a1": 16, "a2": 16, "b1": 33, "c1": 66, "x1": 100},
		},
		{
			// List defaults require every key: x1 is ignored. As "zone
			// maxSkew 1".
			name: "List defaults with a Service",
			args: &podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{
				ptsSoft(1, ptsZone).Obj(),
			}},
			pod:            ptsWebPod().Obj(),
			objects:        []runtime.Object{ptsService("web", map[string]string{"app": "web"})},
			wantRaw:        ptsScores{"a1": 3, "a2": 3, "b1": 2, "c1": 0, "x1": 0},
			wantNormalized: ptsScores{"a1": 0, "a2": 0, "b1": 33, "c1": 100, "x1": 0},
		},
		{
			// Only a1 and b1 are feasible: domains a, b → ln 4 = 1.386;
			// zone a still counts a2's pod. a1 2×1.386 = 2.77 → 3, b1 1.39
			// → 1. Normalized 100 × (3 + 1 - raw) / 3: a1 33, b1 100.
			name:           "domains of the feasible nodes only",
			pod:            ptsWebPod().SpreadConstraint(ptsSoft(1, ptsZone).MatchLabels("app", "web").Obj()).Obj(),
			feasible:       []string{"a1", "b1"},
			wantRaw:        ptsScores{"a1": 3, "b1": 1},
			wantNormalized: ptsScores{"a1": 33, "b1": 100},
		},
		{
			// Honor: a2's taint drops its pod from zone a → a=1. a1 1.609
			// → 2, b1 2, c1 0; normalized 100 × (2 - raw) / 2.
			name:           "nodeTaintsPolicy Honor",
			pod:            ptsWebPod().SpreadConstraint(ptsSoft(1, ptsZone).MatchLabels("app", "web").NodeTaintsPolicy(v1.NodeInclusionPolicyHonor).Obj()).Obj(),
			nodes:          taintA2,
			feasible:       []string{"a1", "b1", "c1"},
			wantRaw:        ptsScores{"a1": 2, "b1": 2, "c1": 0},
			wantNormalized: ptsScores{"a1": 0, "b1": 0, "c1": 100},
		},
		{
			// Ignore (default): a=2 again. a1 3, b1 2, c1 0.
			name:           "nodeTaintsPolicy Ignore",
			pod:            ptsWebPod().SpreadConstraint(ptsSoft(1, ptsZone).MatchLabels("app", "web").Obj()).Obj(),
			nodes:          taintA2,
			feasible:       []string{"a1", "b1", "c1"},
			wantRaw:        ptsScores{"a1": 3, "b1": 2, "c1": 0},
			wantNormalized: ptsScores{"a1": 0, "b1": 33, "c1": 100},
		},
		{
			// Honor (default): zone a fails the pod's affinity and is not
			// counted, though a1 is (wrongly) offered as feasible: a=0.
			name: "nodeAffinityPolicy Honor",
			pod: ptsWebPod().RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().In(ptsZone, "b", "c").Obj()).
				SpreadConstraint(ptsSoft(1, ptsZone).MatchLabels("app", "web").Obj()).Obj(),
			feasible:       []string{"a1", "b1", "c1"},
			wantRaw:        ptsScores{"a1": 0, "b1": 2, "c1": 0},
			wantNormalized: ptsScores{"a1": 100, "b1": 0, "c1": 100},
		},
		{
			// Nothing matches: every raw score is 0 → MaxNodeScore, except
			// the ignored x1.
			name:           "no matching pods",
			pod:            ptsWebPod().SpreadConstraint(ptsSoft(1, ptsZone).MatchLabels("app", "db").Obj()).Obj(),
			wantRaw:        ptsScores{"a1": 0, "a2": 0, "b1": 0, "c1": 0, "x1": 0},
			wantNormalized: ptsScores{"a1": 100, "a2": 100, "b1": 100, "c1": 100, "x1": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes, pods := ptsCluster()
			if tc.nodes != nil {
				nodes = tc.nodes(nodes)
			}
			args := tc.args
			if args == nil {
				args = podtopologyspread.DefaultArgs()
			}
			raw, normalized, skipped := runSpreadScorer(t, args, tc.pod, nodes, pods, tc.feasible, tc.objects...)
			if skipped != tc.wantSkip {
				t.Fatalf("skipped = %v, want %v", skipped, tc.wantSkip)
			}
			if diff := cmp.Diff(tc.wantRaw, raw); diff != "" {
				t.Errorf("raw scores (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNormalized, normalized); diff != "" {
				t.Errorf("normalized scores (-want +got):\n%s", diff)
			}
		})
	}
}

func ptsService(name string, selector map[string]string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: v1.ServiceSpec{Selector: selector}}
}

// ptsBenchCluster has n nodes in 3 zones and one pod per node, every other
// one app=web.
func ptsBenchCluster(n int) ([]*v1.Node, []*v1.Pod) {
	nodes := make([]*v1.Node, n)
	pods := make([]*v1.Pod, n)
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		nodes[i] = frameworktest.MakeNode().Name(name).Label(ptsZone, fmt.Sprintf("zone-%d", i%3)).Obj()
		app := "web"
		if i%2 == 1 {
			app = "db"
		}
		pods[i] = frameworktest.MakePod().Name(fmt.Sprintf("pod-%d", i)).Label("app", app).Node(name).Obj()
	}
	return nodes, pods
}

func TestPodTopologySpreadScoreDoesNotAllocate(t *testing.T) {
	nodes, pods := ptsBenchCluster(300)
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, pods))
	ts, err := podtopologyspread.NewSpread(podtopologyspread.DefaultArgs(), h)
	if err != nil {
		t.Fatal(err)
	}
	pl := podtopologyspread.NewScorer(ts, h)
	pod := ptsWebPod().SpreadConstraint(ptsSoft(1, ptsZone).MatchLabels("app", "web").Obj()).
		SpreadConstraint(ptsSoft(1, v1.LabelHostname).MatchLabels("app", "web").Obj()).Obj()
	state := framework.NewCycleState()
	if st := pl.PreScore(context.Background(), state, pod, h.Lister.List()); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st.Message())
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, ni := range h.Lister.List() {
			if _, st := pl.Score(context.Background(), state, pod, ni); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Score allocates %v times per 300 nodes, want 0", allocs)
	}
}

// BenchmarkPodTopologySpreadScore is PreScore and Score of a pod spread
// over zones and hosts, with 5,000 feasible nodes and 5,000 pods.
func BenchmarkPodTopologySpreadScore(b *testing.B) {
	nodes, pods := ptsBenchCluster(5000)
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, pods))
	ts, err := podtopologyspread.NewSpread(podtopologyspread.DefaultArgs(), h)
	if err != nil {
		b.Fatal(err)
	}
	pl := podtopologyspread.NewScorer(ts, h)
	pod := ptsWebPod().SpreadConstraint(ptsSoft(1, ptsZone).MatchLabels("app", "web").Obj()).
		SpreadConstraint(ptsSoft(1, v1.LabelHostname).MatchLabels("app", "web").Obj()).Obj()
	ctx, infos := context.Background(), h.Lister.List()
	b.ReportAllocs()
	for b.Loop() {
		state := framework.NewCycleState()
		if st := pl.PreScore(ctx, state, pod, infos); !st.IsSuccess() {
			b.Fatal(st.Message())
		}
		for _, ni := range infos {
			if _, st := pl.Score(ctx, state, pod, ni); !st.IsSuccess() {
				b.Fatal(st.Message())
			}
		}
	}
}
