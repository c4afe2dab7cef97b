package nodeaffinity_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
)

// newNodeAffinity returns the scorer with args (nil: no added affinity).
func newNodeAffinity(t testing.TB, args *nodeaffinity.Args) *nodeaffinity.Scorer {
	t.Helper()
	pl, err := nodeaffinity.NewScorer(args)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// addedPreferred is NodeAffinityArgs whose addedAffinity prefers nodes in
// zone a with weight 3.
func addedPreferred() *nodeaffinity.Args {
	return &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 3, Preference: nsTerm().In("zone", "a").Obj()}},
	}}
}

func TestNodeAffinityScore(t *testing.T) {
	nodes := []*v1.Node{
		frameworktest.MakeNode().Name("n1").Label("zone", "a").Label("disk", "ssd").Label("cores", "16").Obj(),
		frameworktest.MakeNode().Name("n2").Label("zone", "a").Label("cores", "4").Obj(),
		frameworktest.MakeNode().Name("n3").Label("disk", "ssd").Obj(),
		frameworktest.MakeNode().Name("n4").Obj(),
	}
	tests := []struct {
		name string
		// args configure the plugin; nil adds nothing.
		args           *nodeaffinity.Args
		pod            *v1.Pod
		wantRaw        framework.NodeScoreList
		wantNormalized framework.NodeScoreList
	}{
		{name: "no affinity: skipped", pod: frameworktest.MakePod().Obj()},
		{
			// The profile's preferred term scores for a pod with none.
			name:           "added preferred affinity only",
			args:           addedPreferred(),
			pod:            frameworktest.MakePod().Obj(),
			wantRaw:        framework.NodeScoreList{{Name: "n1", Score: 3}, {Name: "n2", Score: 3}, {Name: "n3"}, {Name: "n4"}},
			wantNormalized: framework.NodeScoreList{{Name: "n1", Score: 100}, {Name: "n2", Score: 100}, {Name: "n3"}, {Name: "n4"}},
		},
		{
			// n1: 3 (zone a) + 5 (ssd); n2: 3; n3: 5.
			name:    "added preferred terms score beside the pod's",
			args:    addedPreferred(),
			pod:     frameworktest.MakePod().PreferredNodeAffinity(5, nsTerm().In("disk", "ssd").Obj()).Obj(),
			wantRaw: framework.NodeScoreList{{Name: "n1", Score: 3 + 5}, {Name: "n2", Score: 3}, {Name: "n3", Score: 5}, {Name: "n4"}},
			wantNormalized: framework.NodeScoreList{
				{Name: "n1", Score: 100 * 8 / 8}, {Name: "n2", Score: 100 * 3 / 8}, // 100, 37
				{Name: "n3", Score: 100 * 5 / 8}, {Name: "n4"}, // 62, 0
			},
		},
		{
			// Required added terms are the filter's: the scorer skips.
			name: "added required affinity only: skipped",
			args: &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{nsTerm().In("zone", "a").Obj()}},
			}},
			pod: frameworktest.MakePod().Obj(),
		},
		{name: "only required affinity: skipped", pod: frameworktest.MakePod().RequiredNodeAffinity(nsTerm().In("zone", "a").Obj()).Obj()},
		{name: "only empty preferred terms: skipped", pod: frameworktest.MakePod().PreferredNodeAffinity(10, nsTerm().Obj()).Obj()},
		{
			name: "sum of matching weights",
			pod: frameworktest.MakePod().
				PreferredNodeAffinity(2, nsTerm().In("zone", "a").Obj()).
				PreferredNodeAffinity(5, nsTerm().In("disk", "ssd").Obj()).
				PreferredNodeAffinity(8, nsTerm().Gt("cores", "8").Obj()).Obj(),
			wantRaw: framework.NodeScoreList{
				{Name: "n1", Score: 2 + 5 + 8}, {Name: "n2", Score: 2}, {Name: "n3", Score: 5}, {Name: "n4", Score: 0},
			},
			wantNormalized: framework.NodeScoreList{
				{Name: "n1", Score: 100 * 15 / 15}, {Name: "n2", Score: 100 * 2 / 15}, // 100, 13
				{Name: "n3", Score: 100 * 5 / 15}, {Name: "n4", Score: 0}, // 33, 0
			},
		},
		{
			name: "requirements of a term ANDed, terms summed, name fields count",
			pod: frameworktest.MakePod().
				PreferredNodeAffinity(30, nsTerm().In("zone", "a").Exists("disk").Obj()).
				PreferredNodeAffinity(10, nsTerm().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n4").Obj()).
				PreferredNodeAffinity(20, nsTerm().DoesNotExist("zone").Obj()).Obj(),
			wantRaw: framework.NodeScoreList{
				{Name: "n1", Score: 30}, {Name: "n2", Score: 0}, {Name: "n3", Score: 20}, {Name: "n4", Score: 10 + 20},
			},
			wantNormalized: framework.NodeScoreList{
				{Name: "n1", Score: 100 * 30 / 30}, {Name: "n2", Score: 0},
				{Name: "n3", Score: 100 * 20 / 30}, {Name: "n4", Score: 100 * 30 / 30}, // 100, 0, 66, 100
			},
		},
		{
			name:           "no node matches: all zero",
			pod:            frameworktest.MakePod().PreferredNodeAffinity(50, nsTerm().In("zone", "z").Obj()).Obj(),
			wantRaw:        framework.NodeScoreList{{Name: "n1"}, {Name: "n2"}, {Name: "n3"}, {Name: "n4"}},
			wantNormalized: framework.NodeScoreList{{Name: "n1"}, {Name: "n2"}, {Name: "n3"}, {Name: "n4"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, normalized := frameworktest.RunScorer(t, newNodeAffinity(t, tc.args), tc.pod, nodes)
			if diff := cmp.Diff(tc.wantRaw, raw); diff != "" {
				t.Errorf("raw scores (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNormalized, normalized); diff != "" {
				t.Errorf("normalized scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeAffinityScoreInvalidPreferredTermIsAnError(t *testing.T) {
	pod := frameworktest.MakePod().Name("p").PreferredNodeAffinity(10, nsTerm().Gt("cores", "many").Obj()).Obj()
	st := newNodeAffinity(t, nil).PreScore(context.Background(), framework.NewCycleState(), pod, nil)
	if st.Code() != framework.Error {
		t.Fatalf("PreScore code = %v, want Error", st.Code())
	}
	want := `preferred node affinity of pod default/p: [0].matchExpressions[0].values[0]: Invalid value: "many": for 'Gt', 'Lt' operators, the value must be an integer`
	if diff := cmp.Diff(want, st.Message()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

func TestNodeAffinityScoreWithoutPreScore(t *testing.T) {
	pod := frameworktest.MakePod().PreferredNodeAffinity(7, nsTerm().In("zone", "a").Obj()).Obj()
	ni := frameworktest.NodeInfoOf(frameworktest.MakeNode().Name("n1").Label("zone", "a").Obj())
	got, st := newNodeAffinity(t, nil).Score(context.Background(), framework.NewCycleState(), pod, ni)
	if !st.IsSuccess() || got != 7 {
		t.Errorf("Score = %d, %v; want 7, success", got, st.Message())
	}
	// With the profile's term (weight 3, zone a) added: 7 + 3.
	got, st = newNodeAffinity(t, addedPreferred()).Score(context.Background(), framework.NewCycleState(), pod, ni)
	if !st.IsSuccess() || got != 7+3 {
		t.Errorf("Score with added affinity = %d, %v; want 10, success", got, st.Message())
	}
}

func TestNewNodeAffinityScorerInvalidAddedTerm(t *testing.T) {
	args := &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 1, Preference: nsTerm().Gt("cores", "many").Obj()}},
	}}
	_, err := nodeaffinity.NewScorer(args)
	want := `parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: [0].matchExpressions[0].values[0]: Invalid value: "many": for 'Gt', 'Lt' operators, the value must be an integer`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestNodeAffinityScorerName(t *testing.T) {
	if got := newNodeAffinity(t, nil).Name(); got != "NodeAffinity" {
		t.Errorf("Name() = %q", got)
	}
}

func affinityCluster(n int) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, n)
	for i := range out {
		out[i] = frameworktest.NodeInfoOf(frameworktest.MakeNode().Name(fmt.Sprintf("node-%d", i)).
			Label("topology.kubernetes.io/zone", fmt.Sprintf("zone-%d", i%3)).
			Label("example.com/cores", strconv.Itoa(4<<(i%4))).Obj())
	}
	return out
}

func affinityPod() *v1.Pod {
	return frameworktest.MakePod().Name("p").
		PreferredNodeAffinity(10, nsTerm().In("topology.kubernetes.io/zone", "zone-0").Obj()).
		PreferredNodeAffinity(40, nsTerm().Gt("example.com/cores", "8").Obj()).
		PreferredNodeAffinity(5, nsTerm().NotIn("topology.kubernetes.io/zone", "zone-2").DoesNotExist("example.com/gpu").Obj()).Obj()
}

func TestNodeAffinityScoreDoesNotAllocate(t *testing.T) {
	nodes, pod := affinityCluster(100), affinityPod()
	pl, state, ctx := newNodeAffinity(t, nil), framework.NewCycleState(), context.Background()
	if st := pl.PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st.Message())
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, ni := range nodes {
			pl.Score(ctx, state, pod, ni)
		}
	})
	if allocs != 0 {
		t.Errorf("Score allocates %v times per 100 nodes, want 0", allocs)
	}
}

func BenchmarkNodeAffinityScore(b *testing.B) {
	nodes, pod := affinityCluster(5000), affinityPod()
	pl, state, ctx := newNodeAffinity(b, nil), framework.NewCycleState(), context.Background()
	if st := pl.PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		b.Fatalf("PreScore: %v", st.Message())
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range nodes {
			pl.Score(ctx, state, pod, ni)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
}

// The scorer signs everything it reads of a pod, and only that: see
// framework.PodSigner.
func TestNodeAffinityScorerSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi")
	}
	zone := func(weight int32, zone string) *v1.Pod {
		return base().PreferredNodeAffinity(weight, frameworktest.MakeNodeSelectorTerm().In("zone", zone).Obj()).Obj()
	}
	cases := []frameworktest.SignCase{
		{Name: "replica", A: zone(10, "a"), B: func() *v1.Pod { p := zone(10, "a"); p.Name = "b"; return p }(), Same: true},
		{Name: "weight", A: zone(10, "a"), B: zone(20, "a")},
		{Name: "term", A: zone(10, "a"), B: zone(10, "b")},
		{Name: "nodeSelector is the filter's", A: zone(10, "a"), B: func() *v1.Pod { p := zone(10, "a"); p.Spec.NodeSelector = map[string]string{"disk": "ssd"}; return p }(), Same: true},
	}
	pl := newNodeAffinity(t, nil)
	frameworktest.CheckSigning(t, pl, cases)
	// What the signatures are for: pods signed alike get the same
	// scores, on nodes that score the pods of the cases apart.
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Label("zone", "a").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("n2").Label("zone", "b").Capacity("2", "16Gi", 110).Obj(),
		frameworktest.MakeNode().Name("n3").Capacity("8", "8Gi", 110).Obj(),
	}, nil)
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
}
