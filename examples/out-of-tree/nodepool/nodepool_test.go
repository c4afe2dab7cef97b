package nodepool

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

const (
	pool = DefaultPoolLabel
	cost = DefaultCostLabel
)

func TestFilter(t *testing.T) {
	snapshot := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("team-a").Label(pool, "team-a").Obj(),
		frameworktest.MakeNode().Name("general").Label(pool, "general").Obj(),
		frameworktest.MakeNode().Name("none").Obj(),
	}, nil)
	teamA := frameworktest.MakePod().Name("web").Label(pool, "team-a").Obj()
	plain := frameworktest.MakePod().Name("plain").Obj()
	for _, tc := range []struct {
		name string
		args *Args
		pod  *v1.Pod
		node string
		want *framework.Status
	}{
		{"same pool", NewArgs(), teamA, "team-a", nil},
		{"other pool", NewArgs(), teamA, "general", statusNotInPool},
		{"node in no pool", NewArgs(), teamA, "none", statusNotInPool},
		{"no label: the default pool", NewArgs(), plain, "general", nil},
		{"no label, another pool", NewArgs(), plain, "team-a", statusNotInPool},
		{"empty label: the default pool", NewArgs(), frameworktest.MakePod().Label(pool, "").Obj(), "general", nil},
		{"no label, no default pool: any node", &Args{PoolLabel: pool, CostLabel: cost}, plain, "none", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := New(tc.args)
			ni, err := snapshot.Get(tc.node)
			if err != nil {
				t.Fatal(err)
			}
			state := framework.NewCycleState()
			_, s := pl.PreFilter(context.Background(), state, tc.pod, snapshot.List())
			var got *framework.Status
			switch {
			case s.IsSkip(): // Filter is not called: the pod fits
			case s.IsSuccess():
				got = pl.Filter(context.Background(), state, tc.pod, ni)
			default:
				t.Fatalf("PreFilter: %v", s)
			}
			if diff := cmp.Diff(tc.want.Reasons(), got.Reasons()); diff != "" || got.Code() != tc.want.Code() {
				t.Errorf("Filter: %v, want %v (-want +got reasons):\n%s", got, tc.want, diff)
			}
			// A profile that lists NodePool at filter only: Filter finds
			// the pool itself, and answers the same.
			if alone := pl.Filter(context.Background(), framework.NewCycleState(), tc.pod, ni); alone.Code() != got.Code() {
				t.Errorf("Filter without PreFilter: %v, want %v", alone, got)
			}
		})
	}
}

// A pod in no pool, when there is no default pool, is never filtered.
func TestPreFilterSkips(t *testing.T) {
	pl := New(&Args{PoolLabel: pool, CostLabel: cost})
	plain := frameworktest.MakePod().Name("plain").Obj()
	if _, s := pl.PreFilter(context.Background(), framework.NewCycleState(), plain, nil); !s.IsSkip() {
		t.Errorf("PreFilter for a pod in no pool: %v, want Skip", s)
	}
	teamA := frameworktest.MakePod().Name("web").Label(pool, "team-a").Obj()
	if _, s := pl.PreFilter(context.Background(), framework.NewCycleState(), teamA, nil); !s.IsSuccess() {
		t.Errorf("PreFilter for a pod of team-a: %v, want Success", s)
	}
}

func TestScore(t *testing.T) {
	pl := New(NewArgs())
	for _, tc := range []struct {
		name string
		node *v1.Node
		want int64
	}{
		{"cost", frameworktest.MakeNode().Label(cost, "25").Obj(), 25},
		{"free", frameworktest.MakeNode().Label(cost, "0").Obj(), 0},
		{"no cost label", frameworktest.MakeNode().Obj(), unknownCost},
		{"not a number", frameworktest.MakeNode().Label(cost, "cheap").Obj(), unknownCost},
		{"negative", frameworktest.MakeNode().Label(cost, "-5").Obj(), unknownCost},
		{"beyond 32 bits", frameworktest.MakeNode().Label(cost, "2147483648").Obj(), unknownCost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ni := framework.NewNodeInfo()
			ni.SetNode(tc.node)
			got, s := pl.Score(context.Background(), framework.NewCycleState(), frameworktest.MakePod().Obj(), ni)
			if !s.IsSuccess() || got != tc.want {
				t.Errorf("Score = %d, %v; want %d", got, s, tc.want)
			}
		})
	}
}

func TestNormalizeScore(t *testing.T) {
	for _, tc := range []struct {
		name      string
		raw, want []int64
	}{
		// Costs 10 to 30: 100 × (30 − c) / 20.
		{"spread", []int64{10, 20, 30, 25}, []int64{100, 50, 0, 25}},
		// Costs 10 and 40: 100 × (40 − c) / 30 = 100, 0; unknown 0.
		{"unknown cost", []int64{10, unknownCost, 40}, []int64{100, 0, 0}},
		{"all alike", []int64{7, 7}, []int64{100, 100}},
		{"none known", []int64{unknownCost, unknownCost}, []int64{0, 0}},
		// 100 × (2147483647 − 0) fits in an int64.
		{"largest cost", []int64{0, 1<<31 - 1}, []int64{100, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scores := make(framework.NodeScoreList, len(tc.raw))
			for i, r := range tc.raw {
				scores[i] = framework.NodeScore{Name: string(rune('a' + i)), Score: r}
			}
			if s := New(NewArgs()).NormalizeScore(context.Background(), nil, nil, scores); !s.IsSuccess() {
				t.Fatal(s)
			}
			got := make([]int64, len(scores))
			for i, s := range scores {
				got[i] = s.Score
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Pods sign alike when they are of one pool, whatever else differs; and
// pods that sign alike get the same answers on every node, which is
// what the scheduler relies on when it reuses them.
func TestSignPod(t *testing.T) {
	pl := New(NewArgs())
	web := frameworktest.MakePod().Name("web").Label(pool, "team-a").Req("500m", "1Gi").Obj()
	replica := frameworktest.MakePod().Name("web-2").Label(pool, "team-a").Label("app", "web").Req("2", "").Obj()
	db := frameworktest.MakePod().Name("db").Label(pool, "team-b").Req("500m", "1Gi").Obj()
	plain := frameworktest.MakePod().Name("plain").Obj()
	general := frameworktest.MakePod().Name("general").Label(pool, "general").Obj()
	frameworktest.CheckSigning(t, pl, []frameworktest.SignCase{
		{Name: "requests and other labels", A: web, B: replica, Same: true},
		{Name: "pool", A: web, B: db, Same: false},
		{Name: "no label is the default pool", A: plain, B: general, Same: true},
	})

	snapshot := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("a-1").Label(pool, "team-a").Label(cost, "10").Obj(),
		frameworktest.MakeNode().Name("a-2").Label(pool, "team-a").Label(cost, "30").Obj(),
		frameworktest.MakeNode().Name("b").Label(pool, "team-b").Obj(),
		frameworktest.MakeNode().Name("general").Label(pool, "general").Label(cost, "5").Obj(),
		frameworktest.MakeNode().Name("none").Obj(),
	}, nil)
	frameworktest.CheckKeptAnswers(t, pl, snapshot, []*v1.Pod{web, replica, db, plain, general})
}
