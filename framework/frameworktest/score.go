package frameworktest

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// RunScorer runs a scorer over nodes (without pods) as a cycle does:
// PreScore when pl has one, Score on every node, then NormalizeScore when
// pl's ScoreExtensions is not nil. It returns the raw and the normalized
// scores, in the order of nodes; nil, nil when PreScore skips. Any other
// status than success fails the test.
func RunScorer(t testing.TB, pl framework.ScorePlugin, pod *v1.Pod, nodes []*v1.Node) (raw, normalized framework.NodeScoreList) {
	t.Helper()
	ctx, state := context.Background(), framework.NewCycleState()
	infos := make([]*framework.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = framework.NewNodeInfo()
		infos[i].SetNode(n)
	}
	if ps, ok := pl.(framework.PreScorePlugin); ok {
		st := ps.PreScore(ctx, state, pod, infos)
		if st.IsSkip() {
			return nil, nil
		}
		if !st.IsSuccess() {
			t.Fatalf("%s PreScore: %v", pl.Name(), st.Message())
		}
	}
	for _, ni := range infos {
		s, st := pl.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("%s Score(%s): %v", pl.Name(), ni.Node().Name, st.Message())
		}
		raw = append(raw, framework.NodeScore{Name: ni.Node().Name, Score: s})
	}
	normalized = append(framework.NodeScoreList(nil), raw...)
	if ext := pl.ScoreExtensions(); ext != nil {
		if st := ext.NormalizeScore(ctx, state, pod, normalized); !st.IsSuccess() {
			t.Fatalf("%s NormalizeScore: %v", pl.Name(), st.Message())
		}
	}
	return raw, normalized
}
