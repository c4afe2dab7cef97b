package interpodaffinity_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
)

// ipaScores builds n1..n4's scores.
func ipaScores(n1, n2, n3, n4 int64) framework.NodeScoreList {
	return framework.NodeScoreList{{Name: "n1", Score: n1}, {Name: "n2", Score: n2}, {Name: "n3", Score: n3}, {Name: "n4", Score: n4}}
}

// runInterPodAffinityScorer runs PreScore, Score on every node (in name
// order) and NormalizeScore. skipped reports a Skip from PreScore.
func runInterPodAffinityScorer(t testing.TB, args *interpodaffinity.Args, pod *v1.Pod, pods []*v1.Pod, nss ...*v1.Namespace) (raw, normalized framework.NodeScoreList, skipped bool) {
	t.Helper()
	nodes := frameworktest.AffinityCluster()
	snap := frameworktest.NewSnapshot(nodes, pods)
	pl, err := interpodaffinity.NewScorer(args, frameworktest.NewHandle(snap, nss...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, state := context.Background(), framework.NewCycleState()
	infos := make([]*framework.NodeInfo, len(nodes))
	for i, n := range nodes {
		if infos[i], err = snap.Get(n.Name); err != nil {
			t.Fatal(err)
		}
	}
	st := pl.PreScore(ctx, state, pod, infos)
	if st.IsSkip() {
		return nil, nil, true
	}
	if !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st.Message())
	}
	for _, ni := range infos {
		s, st := pl.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Node().Name, st.Message())
		}
		raw = append(raw, framework.NodeScore{Name: ni.Node().Name, Score: s})
	}
	normalized = append(framework.NodeScoreList(nil), raw...)
	if st := pl.ScoreExtensions().NormalizeScore(ctx, state, pod, normalized); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st.Message())
	}
	return raw, normalized, false
}

func ipaWeight(w int32) *interpodaffinity.Args {
	return &interpodaffinity.Args{HardPodAffinityWeight: &w}
}

func TestInterPodAffinityScore(t *testing.T) {
	prodNS := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	namespaces := []*v1.Namespace{
		frameworktest.Namespace("default"),
		frameworktest.Namespace("prod-ns", "env", "prod"),
		frameworktest.Namespace("dev-ns", "env", "dev"),
	}
	tests := []struct {
		name           string
		args           *interpodaffinity.Args
		pod            *v1.Pod
		pods           []*v1.Pod
		wantSkip       bool
		wantRaw        framework.NodeScoreList
		wantNormalized framework.NodeScoreList
	}{
		{
			name:     "no terms anywhere: skip",
			pod:      frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods:     []*v1.Pod{frameworktest.PodOn("n1", "default", "db", "app", "db").Obj()},
			wantSkip: true,
		},
		{
			// db on n1 scores zone z1 +5.
			name:           "preferred affinity: the zone of a matching pod",
			pod:            frameworktest.IncomingPod("default", "app", "web").PreferredPodAffinity(5, ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).Obj(),
			pods:           []*v1.Pod{frameworktest.PodOn("n1", "default", "db", "app", "db").Obj()},
			wantRaw:        ipaScores(5, 5, 0, 0),
			wantNormalized: ipaScores(100*(5-0)/5, 100*(5-0)/5, 0, 0),
		},
		{
			// web on n1 scores host n1 −10; min −10, max 0.
			name:           "preferred anti-affinity: negative raw scores, min-max normalized",
			pod:            frameworktest.IncomingPod("default", "app", "web").PreferredPodAntiAffinity(10, ipaTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj(),
			pods:           []*v1.Pod{frameworktest.PodOn("n1", "default", "web-0", "app", "web").Obj()},
			wantRaw:        ipaScores(-10, 0, 0, 0),
			wantNormalized: ipaScores(100*(-10+10)/10, 100*(0+10)/10, 100*(0+10)/10, 100*(0+10)/10),
		},
		{
			// db on n1 and n3: zones z1 and z2 +8 each, hosts n1 and n3 −3.
			// min 0 (n4), max 8 (n2): n1 = 100 × 5/8 = 62.5 → 62.
			name: "multiple terms: affinity by zone, anti-affinity by host",
			pod: frameworktest.IncomingPod("default", "app", "web").
				PreferredPodAffinity(8, ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).
				PreferredPodAntiAffinity(3, ipaTerm(v1.LabelHostname).MatchLabel("app", "db").Obj()).Obj(),
			pods:           []*v1.Pod{frameworktest.PodOn("n1", "default", "db-0", "app", "db").Obj(), frameworktest.PodOn("n3", "default", "db-1", "app", "db").Obj()},
			wantRaw:        ipaScores(8-3, 8, 8-3, 0),
			wantNormalized: ipaScores(62, 100, 62, 0),
		},
		{
			// Every matching pod adds: two db pods in z1 make 2 × 4.
			name:           "preferred affinity counts every matching pod",
			pod:            frameworktest.IncomingPod("default", "app", "web").PreferredPodAffinity(4, ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).Obj(),
			pods:           []*v1.Pod{frameworktest.PodOn("n1", "default", "db-0", "app", "db").Obj(), frameworktest.PodOn("n2", "default", "db-1", "app", "db").Obj(), frameworktest.PodOn("n3", "default", "db-2", "app", "db").Obj()},
			wantRaw:        ipaScores(2*4, 2*4, 4, 0),
			wantNormalized: ipaScores(100, 100, 100*4/8, 0),
		},
		{
			// The existing pod on n3 requires pods like the incoming one in
			// its zone: z2 gains hardPodAffinityWeight 1.
			name: "existing pod's required affinity, default hardPodAffinityWeight",
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "default", "db", "app", "db").RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantRaw:        ipaScores(0, 0, 1, 0),
			wantNormalized: ipaScores(0, 0, 100, 0),
		},
		{
			name: "hardPodAffinityWeight 0 turns it off",
			args: ipaWeight(0),
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "default", "db", "app", "db").RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantSkip: true,
		},
		{
			// n1's pod: required affinity zone z1 +7, preferred
			// anti-affinity host n1 −2. min 0, max 7: n1 = 100 × 5/7 = 71.
			name: "hardPodAffinityWeight 7 with an existing pod's preferred anti-affinity",
			args: ipaWeight(7),
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "db", "app", "db").
					RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).
					PreferredPodAntiAffinity(2, ipaTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantRaw:        ipaScores(7-2, 7, 0, 0),
			wantNormalized: ipaScores(71, 100, 0, 0),
		},
		{
			// The existing pod's namespaceSelector reads the incoming
			// pod's namespace labels.
			name: "existing pod's preferred affinity with namespaceSelector: selected",
			pod:  frameworktest.IncomingPod("prod-ns", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "default", "db", "app", "db").
					PreferredPodAffinity(4, ipaTerm(ipaZone).MatchLabel("app", "web").NamespaceSelector(prodNS).Obj()).Obj(),
			},
			wantRaw:        ipaScores(0, 0, 4, 0),
			wantNormalized: ipaScores(0, 0, 100, 0),
		},
		{
			name: "existing pod's preferred affinity with namespaceSelector: not selected",
			pod:  frameworktest.IncomingPod("dev-ns", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "default", "db", "app", "db").
					PreferredPodAffinity(4, ipaTerm(ipaZone).MatchLabel("app", "web").NamespaceSelector(prodNS).Obj()).Obj(),
			},
			wantSkip: true,
		},
		{
			name: "incoming pod's namespaceSelector resolved through the lister",
			pod: frameworktest.IncomingPod("default", "app", "web").
				PreferredPodAffinity(6, ipaTerm(ipaZone).MatchLabel("app", "db").NamespaceSelector(prodNS).Obj()).Obj(),
			pods:           []*v1.Pod{frameworktest.PodOn("n1", "dev-ns", "db", "app", "db").Obj(), frameworktest.PodOn("n3", "prod-ns", "db", "app", "db").Obj()},
			wantRaw:        ipaScores(0, 0, 6, 0),
			wantNormalized: ipaScores(0, 0, 100, 0),
		},
		{
			// "env notin (prod)" selects default and dev-ns: only the db
			// pod on n1 counts, 6 for z1. kube-scheduler v1.36 matched
			// the selector against no labels once it had listed the
			// namespaces, so prod-ns's pod counted too (6 for z2); v1.37
			// keeps to the namespaces listed.
			name: "incoming pod's NotIn namespaceSelector: only the namespaces it selects",
			pod: frameworktest.IncomingPod("default", "app", "web").
				PreferredPodAffinity(6, ipaTerm(ipaZone).MatchLabel("app", "db").NamespaceSelector(&metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}},
				}).Obj()).Obj(),
			pods:           []*v1.Pod{frameworktest.PodOn("n1", "dev-ns", "db", "app", "db").Obj(), frameworktest.PodOn("n3", "prod-ns", "db", "app", "db").Obj()},
			wantRaw:        ipaScores(6, 6, 0, 0),
			wantNormalized: ipaScores(100, 100, 0, 0),
		},
		{
			// matchLabelKeys [version] adds "version in (v2)".
			name: "matchLabelKeys on a preferred term",
			pod: frameworktest.IncomingPod("default", "app", "web", "version", "v2").
				PreferredPodAffinity(5, ipaTerm(ipaZone).MatchLabel("app", "web").MatchLabelKeys("version").Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "web-v1", "app", "web", "version", "v1").Obj(),
				frameworktest.PodOn("n3", "default", "web-v2", "app", "web", "version", "v2").Obj(),
			},
			wantRaw:        ipaScores(0, 0, 5, 0),
			wantNormalized: ipaScores(0, 0, 100, 0),
		},
		{
			name:     "topology key on no node: skip",
			pod:      frameworktest.IncomingPod("default", "app", "web").PreferredPodAffinity(5, ipaTerm("rack").MatchLabel("app", "db").Obj()).Obj(),
			pods:     []*v1.Pod{frameworktest.PodOn("n1", "default", "db", "app", "db").Obj()},
			wantSkip: true,
		},
		{
			// z1: +5 − 5 = 0. The matched terms keep PreScore from
			// skipping, as in kube-scheduler; every node ties at 0.
			name: "terms that cancel out still score",
			pod: frameworktest.IncomingPod("default", "app", "web").
				PreferredPodAffinity(5, ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).
				PreferredPodAntiAffinity(5, ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).Obj(),
			pods:           []*v1.Pod{frameworktest.PodOn("n1", "default", "db", "app", "db").Obj()},
			wantRaw:        ipaScores(0, 0, 0, 0),
			wantNormalized: ipaScores(0, 0, 0, 0),
		},
		{
			// The same for an existing pod's terms: z1 gains 5 and loses 5.
			name: "an existing pod's terms that cancel out still score",
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "db", "app", "db").
					PreferredPodAffinity(5, ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).
					PreferredPodAntiAffinity(5, ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantRaw:        ipaScores(0, 0, 0, 0),
			wantNormalized: ipaScores(0, 0, 0, 0),
		},
		{
			// n4 is in no zone: the existing pod's term matches, but its
			// node is in no domain of the term's key.
			name: "an existing pod's term on a key its node lacks: skip",
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n4", "default", "db", "app", "db").PreferredPodAffinity(5, ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantSkip: true,
		},
		{
			name: "IgnorePreferredTermsOfExistingPods: a pod without preferred terms is not scored",
			args: &interpodaffinity.Args{IgnorePreferredTermsOfExistingPods: true},
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "default", "db", "app", "db").PreferredPodAffinity(4, ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantSkip: true,
		},
		{
			// z1 +3 from the pod's own term, z2 +4 from the existing pod's.
			name: "IgnorePreferredTermsOfExistingPods: a pod with preferred terms weighs both",
			args: &interpodaffinity.Args{IgnorePreferredTermsOfExistingPods: true},
			pod:  frameworktest.IncomingPod("default", "app", "web").PreferredPodAffinity(3, ipaTerm(ipaZone).MatchLabel("app", "cache").Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "cache", "app", "cache").Obj(),
				frameworktest.PodOn("n3", "default", "db", "app", "db").PreferredPodAffinity(4, ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantRaw:        ipaScores(3, 3, 4, 0),
			wantNormalized: ipaScores(100*3/4, 100*3/4, 100, 0),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args == nil {
				args = interpodaffinity.DefaultArgs()
			}
			raw, normalized, skipped := runInterPodAffinityScorer(t, args, tc.pod, tc.pods, namespaces...)
			if skipped != tc.wantSkip {
				t.Fatalf("PreScore skipped = %v, want %v", skipped, tc.wantSkip)
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

func TestInterPodAffinityScoreInvalidTermIsAnError(t *testing.T) {
	snap := frameworktest.NewSnapshot(frameworktest.AffinityCluster(), nil)
	pl, err := interpodaffinity.NewScorer(nil, frameworktest.NewHandle(snap))
	if err != nil {
		t.Fatal(err)
	}
	pod := frameworktest.IncomingPod("default").PreferredPodAffinity(1, ipaTerm(ipaZone).In("service", "{{.bad-value.}}").Obj()).Obj()
	st := pl.PreScore(context.Background(), framework.NewCycleState(), pod, snap.List())
	if st.Code() != framework.Error {
		t.Errorf("PreScore = %v %q, want Error", st.Code(), st.Message())
	}
}

func TestValidateArgs(t *testing.T) {
	for _, tc := range []struct {
		args    *interpodaffinity.Args
		wantErr string
	}{
		{args: nil},
		{args: &interpodaffinity.Args{}},
		{args: ipaWeight(0)},
		{args: ipaWeight(100)},
		{args: ipaWeight(-1), wantErr: "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"},
		{args: ipaWeight(101), wantErr: "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
	} {
		err := interpodaffinity.ValidateArgs(tc.args)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("ValidateArgs(%v) = %q, want %q", tc.args, got, tc.wantErr)
		}
		_, err = interpodaffinity.NewScorer(tc.args, frameworktest.NewHandle(frameworktest.NewSnapshot(nil, nil)))
		if (err != nil) != (tc.wantErr != "") {
			t.Errorf("NewScorer(%v) error = %v, want error %v", tc.args, err, tc.wantErr != "")
		}
	}
}

func TestArgsDefaults(t *testing.T) {
	if got := *interpodaffinity.DefaultArgs().HardPodAffinityWeight; got != 1 {
		t.Errorf("default weight = %d, want 1", got)
	}
	a := &interpodaffinity.Args{}
	a.SetDefaults()
	if a.HardPodAffinityWeight == nil || *a.HardPodAffinityWeight != 1 {
		t.Errorf("SetDefaults left weight %v, want 1", a.HardPodAffinityWeight)
	}
	a = ipaWeight(0)
	a.SetDefaults()
	if *a.HardPodAffinityWeight != 0 {
		t.Errorf("SetDefaults changed an explicit 0 to %d", *a.HardPodAffinityWeight)
	}
}

// Score looks a few labels up per node: no allocation.
func TestInterPodAffinityScoreDoesNotAllocate(t *testing.T) {
	pod := frameworktest.IncomingPod("default", "app", "web").
		PreferredPodAffinity(8, ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).
		PreferredPodAntiAffinity(3, ipaTerm(v1.LabelHostname).MatchLabel("app", "db").Obj()).Obj()
	snap := frameworktest.NewSnapshot(frameworktest.AffinityCluster(), []*v1.Pod{frameworktest.PodOn("n1", "default", "db", "app", "db").Obj()})
	pl, err := interpodaffinity.NewScorer(nil, frameworktest.NewHandle(snap))
	if err != nil {
		t.Fatal(err)
	}
	ctx, state := context.Background(), framework.NewCycleState()
	if st := pl.PreScore(ctx, state, pod, snap.List()); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	n1, _ := snap.Get("n1")
	if n := testing.AllocsPerRun(100, func() { pl.Score(ctx, state, pod, n1) }); n != 0 {
		t.Errorf("Score allocates %v times", n)
	}
}

// BenchmarkInterPodAffinityPreScore is one cycle's PreScore over 5,000
// nodes with a pod each, 10% of them with preferred affinity, for a pod
// with preferred terms of its own (so every pod is looked at).
func BenchmarkInterPodAffinityPreScore(b *testing.B) {
	const n = 5000
	nodes := make([]*v1.Node, n)
	pods := make([]*v1.Pod, n)
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		nodes[i] = frameworktest.MakeNode().Name(name).Label(ipaZone, fmt.Sprintf("zone-%d", i%10)).Obj()
		p := frameworktest.PodOn(name, "default", fmt.Sprintf("pod-%d", i), "app", fmt.Sprintf("a%d", i%7))
		if i%10 == 0 {
			p.PreferredPodAffinity(10, ipaTerm(ipaZone).MatchLabel("app", "a1").Obj())
		}
		pods[i] = p.Obj()
	}
	snap := frameworktest.NewSnapshot(nodes, pods)
	pl, err := interpodaffinity.NewScorer(nil, frameworktest.NewHandle(snap))
	if err != nil {
		b.Fatal(err)
	}
	pod := frameworktest.IncomingPod("default", "app", "a1").
		PreferredPodAffinity(5, ipaTerm(ipaZone).MatchLabel("app", "a2").Obj()).
		PreferredPodAntiAffinity(5, ipaTerm(v1.LabelHostname).MatchLabel("app", "a1").Obj()).Obj()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if st := pl.PreScore(ctx, framework.NewCycleState(), pod, snap.List()); !st.IsSuccess() {
			b.Fatal(st.Message())
		}
	}
}
