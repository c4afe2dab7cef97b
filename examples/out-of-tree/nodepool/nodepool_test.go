package nodepool

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

const (
	pool = DefaultPoolLabel
	cost = DefaultCostLabel
)

// makePod returns a pod with labels given as key, value, ...
func makePod(name string, labels ...string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: pairs(labels)}}
}

// makeNode returns a node's NodeInfo, with labels given as key, value, ...
func makeNode(name string, labels ...string) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: pairs(labels)}})
	return ni
}

func pairs(kv []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestFilter(t *testing.T) {
	teamA := makeNode("a", pool, "team-a")
	general := makeNode("general", pool, "general")
	none := makeNode("none")
	for _, tc := range []struct {
		name string
		args *Args
		pod  *v1.Pod
		node *framework.NodeInfo
		want *framework.Status
	}{
		{"same pool", NewArgs(), makePod("p", pool, "team-a"), teamA, nil},
		{"other pool", NewArgs(), makePod("p", pool, "team-a"), general, statusNotInPool},
		{"node in no pool", NewArgs(), makePod("p", pool, "team-a"), none, statusNotInPool},
		{"no label: the default pool", NewArgs(), makePod("p"), general, nil},
		{"no label, another pool", NewArgs(), makePod("p"), teamA, statusNotInPool},
		{"empty label: the default pool", NewArgs(), makePod("p", pool, ""), general, nil},
		{"no label, no default pool: any node", &Args{PoolLabel: pool, CostLabel: cost}, makePod("p"), none, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := New(tc.args)
			state := framework.NewCycleState()
			_, s := pl.PreFilter(context.Background(), state, tc.pod, nil)
			if s.IsSkip() {
				if tc.want != nil {
					t.Fatalf("PreFilter skipped the pod, want Filter to say %v", tc.want)
				}
				return
			}
			if !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			got := pl.Filter(context.Background(), state, tc.pod, tc.node)
			if diff := cmp.Diff(tc.want.Reasons(), got.Reasons()); diff != "" || got.Code() != tc.want.Code() {
				t.Errorf("Filter: %v, want %v (-want +got reasons):\n%s", got, tc.want, diff)
			}
			// A profile that lists NodePool at filter only: Filter finds
			// the pool itself, and answers the same.
			alone := pl.Filter(context.Background(), framework.NewCycleState(), tc.pod, tc.node)
			if alone.Code() != got.Code() {
				t.Errorf("Filter without PreFilter: %v, want %v", alone, got)
			}
		})
	}
}

// A pod in no pool, when there is no default pool, is never filtered.
func TestPreFilterSkips(t *testing.T) {
	pl := New(&Args{PoolLabel: pool, CostLabel: cost})
	if _, s := pl.PreFilter(context.Background(), framework.NewCycleState(), makePod("p"), nil); !s.IsSkip() {
		t.Errorf("PreFilter for a pod in no pool: %v, want Skip", s)
	}
	if _, s := pl.PreFilter(context.Background(), framework.NewCycleState(), makePod("p", pool, "team-a"), nil); !s.IsSuccess() {
		t.Errorf("PreFilter for a pod of team-a: %v, want Success", s)
	}
}

func TestScore(t *testing.T) {
	pl := New(NewArgs())
	for _, tc := range []struct {
		name string
		node *framework.NodeInfo
		want int64
	}{
		{"cost", makeNode("n", cost, "25"), 25},
		{"free", makeNode("n", cost, "0"), 0},
		{"no cost label", makeNode("n"), unknownCost},
		{"not a number", makeNode("n", cost, "cheap"), unknownCost},
		{"negative", makeNode("n", cost, "-5"), unknownCost},
		{"beyond 32 bits", makeNode("n", cost, "2147483648"), unknownCost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, s := pl.Score(context.Background(), framework.NewCycleState(), makePod("p"), tc.node)
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
		// Costs 10 and 40, unknown: 100 × (40 − c) / 30 = 100, 0; unknown 0.
		{"unknown cost", []int64{10, unknownCost, 40}, []int64{100, 0, 0}},
		{"all alike", []int64{7, 7}, []int64{100, 100}},
		{"none known", []int64{unknownCost, unknownCost}, []int64{0, 0}},
		// 100 × (2147483647 − 0) / 2147483647 fits in int64.
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
