package tainttoleration_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/tainttoleration"
)

func TestTaintTolerationScore(t *testing.T) {
	const soft = v1.TaintEffectPreferNoSchedule
	nodes := []*v1.Node{
		frameworktest.MakeNode().Name("n1").Obj(),
		frameworktest.MakeNode().Name("n2").Taint("soft-a", "", soft).Obj(),
		frameworktest.MakeNode().Name("n3").Taint("soft-b", "", soft).Obj(),
		frameworktest.MakeNode().Name("n4").Taint("soft-b", "", soft).Taint("soft-c", "x", soft).Taint("soft-d", "", soft).Obj(),
		frameworktest.MakeNode().Name("n5").Taint("hard", "", v1.TaintEffectNoSchedule).Taint("soft-d", "", soft).Obj(),
	}
	tests := []struct {
		name           string
		pod            *v1.Pod
		wantRaw        framework.NodeScoreList
		wantNormalized framework.NodeScoreList
	}{
		{
			name: "counts untolerated PreferNoSchedule taints, reversed",
			pod: frameworktest.MakePod().
				Toleration("soft-a", v1.TolerationOpExists, "", soft).
				// A NoSchedule toleration does not tolerate a PreferNoSchedule taint.
				Toleration("soft-b", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).
				// An empty effect tolerates every effect.
				Toleration("soft-c", v1.TolerationOpEqual, "x", "").Obj(),
			wantRaw: framework.NodeScoreList{
				{Name: "n1", Score: 0}, {Name: "n2", Score: 0}, {Name: "n3", Score: 1},
				{Name: "n4", Score: 1 + 0 + 1}, // soft-b, soft-d
				{Name: "n5", Score: 1},         // soft-d; the NoSchedule taint is the filter's
			},
			wantNormalized: framework.NodeScoreList{
				{Name: "n1", Score: 100 - 100*0/2}, {Name: "n2", Score: 100 - 100*0/2}, // 100, 100
				{Name: "n3", Score: 100 - 100*1/2}, {Name: "n4", Score: 100 - 100*2/2}, // 50, 0
				{Name: "n5", Score: 100 - 100*1/2}, // 50
			},
		},
		{
			name: "no tolerations",
			pod:  frameworktest.MakePod().Obj(),
			wantRaw: framework.NodeScoreList{
				{Name: "n1", Score: 0}, {Name: "n2", Score: 1}, {Name: "n3", Score: 1}, {Name: "n4", Score: 3}, {Name: "n5", Score: 1},
			},
			wantNormalized: framework.NodeScoreList{
				{Name: "n1", Score: 100 - 100*0/3}, {Name: "n2", Score: 100 - 100*1/3}, // 100, 67
				{Name: "n3", Score: 100 - 100*1/3}, {Name: "n4", Score: 100 - 100*3/3}, // 67, 0
				{Name: "n5", Score: 100 - 100*1/3}, // 67
			},
		},
		{
			name: "everything tolerated: all nodes get the maximum",
			pod:  frameworktest.MakePod().Toleration("", v1.TolerationOpExists, "", "").Obj(),
			wantRaw: framework.NodeScoreList{
				{Name: "n1"}, {Name: "n2"}, {Name: "n3"}, {Name: "n4"}, {Name: "n5"},
			},
			wantNormalized: framework.NodeScoreList{
				{Name: "n1", Score: 100}, {Name: "n2", Score: 100}, {Name: "n3", Score: 100}, {Name: "n4", Score: 100}, {Name: "n5", Score: 100},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, normalized := frameworktest.RunScorer(t, tainttoleration.NewScorer(), tc.pod, nodes)
			if diff := cmp.Diff(tc.wantRaw, raw); diff != "" {
				t.Errorf("raw scores (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNormalized, normalized); diff != "" {
				t.Errorf("normalized scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaintTolerationScoreWithoutPreScoreIsAnError(t *testing.T) {
	ni := frameworktest.NodeInfoOf(frameworktest.MakeNode().Name("n1").Obj())
	_, st := tainttoleration.NewScorer().Score(context.Background(), framework.NewCycleState(), frameworktest.MakePod().Obj(), ni)
	if st.Code() != framework.Error {
		t.Errorf("Score code = %v, want Error", st.Code())
	}
}

func softTaintedCluster(n int) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, n)
	for i := range out {
		out[i] = frameworktest.NodeInfoOf(frameworktest.MakeNode().Name(fmt.Sprintf("node-%d", i)).
			Taint("example.com/soft", fmt.Sprintf("v%d", i%2), v1.TaintEffectPreferNoSchedule).
			Taint("example.com/hard", "", v1.TaintEffectNoSchedule).
			Taint("example.com/other", "", v1.TaintEffectPreferNoSchedule).Obj())
	}
	return out
}

func TestTaintTolerationScoreDoesNotAllocate(t *testing.T) {
	nodes := softTaintedCluster(100)
	pod := frameworktest.MakePod().Toleration("example.com/soft", v1.TolerationOpEqual, "v0", "").Obj()
	pl, state, ctx := tainttoleration.NewScorer(), framework.NewCycleState(), context.Background()
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

func BenchmarkTaintTolerationScore(b *testing.B) {
	nodes := softTaintedCluster(5000)
	pod := frameworktest.MakePod().Toleration("example.com/soft", v1.TolerationOpEqual, "v0", "").Obj()
	pl, state, ctx := tainttoleration.NewScorer(), framework.NewCycleState(), context.Background()
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
func TestTaintTolerationScorerSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	cases := []frameworktest.SignCase{
		{Name: "replica", A: base().Obj(), B: replica, Same: true},
		{Name: "toleration", A: base().Obj(), B: base().Toleration("spot", v1.TolerationOpExists, "", v1.TaintEffectPreferNoSchedule).Obj()},
	}
	pl := tainttoleration.NewScorer()
	frameworktest.CheckSigning(t, pl, cases)
	// What the signatures are for: pods signed alike get the same
	// scores, on nodes that score the pods of the cases apart.
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Label("zone", "a").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("spot").Capacity("8", "8Gi", 110).Taint("spot", "", v1.TaintEffectPreferNoSchedule).Obj(),
	}, nil)
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
}
