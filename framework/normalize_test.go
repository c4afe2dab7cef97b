package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nodeScores names raw scores n1, n2, … in order.
func nodeScores(scores ...int64) NodeScoreList {
	out := make(NodeScoreList, len(scores))
	for i, s := range scores {
		out[i] = NodeScore{Name: "n" + string(rune('1'+i)), Score: s}
	}
	return out
}

func TestDefaultNormalizeScore(t *testing.T) {
	tests := []struct {
		name        string
		maxPriority int64
		reverse     bool
		scores      NodeScoreList
		want        NodeScoreList
	}{
		{name: "no nodes", maxPriority: 100, scores: nodeScores(), want: nodeScores()},
		{name: "all zero stay zero", maxPriority: 100, scores: nodeScores(0, 0), want: nodeScores(0, 0)},
		{name: "all zero reversed all get the maximum", maxPriority: 100, reverse: true, scores: nodeScores(0, 0), want: nodeScores(100, 100)},
		{name: "scaled by the maximum, truncated", maxPriority: 100, scores: nodeScores(1, 2, 3, 0),
			want: nodeScores(100*1/3, 100*2/3, 100*3/3, 0)}, // 33, 66, 100, 0
		{name: "reversed", maxPriority: 100, reverse: true, scores: nodeScores(1, 2, 3, 0),
			want: nodeScores(100-100*1/3, 100-100*2/3, 100-100*3/3, 100-0)}, // 67, 34, 0, 100
		{name: "other maximum priority", maxPriority: 10, scores: nodeScores(5, 20, 7),
			want: nodeScores(10*5/20, 10*20/20, 10*7/20)}, // 2, 10, 3
		{name: "single node", maxPriority: 100, scores: nodeScores(42), want: nodeScores(100)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			DefaultNormalizeScore(tc.maxPriority, tc.reverse, tc.scores)
			if diff := cmp.Diff(tc.want, tc.scores); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}
