package networktraffic

import (
	"cmp"
	"slices"
	"time"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// NodeBandwidth is one node's line of the debug view: what NetworkTraffic
// knows about the node and the score a cycle would give it.
type NodeBandwidth struct {
	Node string
	// HasData is false when the sample has no value for the node, or the
	// sample is missing or stale (see Stale); the score is then the
	// missingMetricsPolicy score.
	HasData bool
	// Measured is the node's traffic in the sample, in bytes/s.
	Measured float64
	// Recent is the estimate of the pods bound to the node since the
	// sample, in bytes/s.
	Recent float64
	// Bandwidth is Measured + Recent: what the node is scored by.
	Bandwidth float64
	// Age is the age of the sample; zero without one.
	Age time.Duration
	// Stale is true when there is no sample or it is older than staleAfter,
	// so that cycles do not use it (every node scores alike).
	Stale bool
	// Score is the normalized score among the nodes of the same view.
	Score int64
	// Filtered is true when filterAbove would filter the node out.
	Filtered bool
}

// Explain returns the debug view of the nodes (the snapshot's, say) as the
// plugin sees them now; nil nodes means every node of the current sample.
// Scores are normalized among the given nodes, as a cycle normalizes them
// among the feasible ones.
func (pl *NetworkTraffic) Explain(nodes []*framework.NodeInfo) []NodeBandwidth {
	return pl.scorer.explain(pl.metric.Load(), pl.metric.Now(), nodes)
}

// Explain returns the debug view for sample s at now, for args (defaulted
// and validated) — what `yardmaster explain bandwidth` prints after one
// Source.Fetch. nil nodes means every node of s, without pods, so without
// the pile-on estimate.
func Explain(args *Args, s *Sample, now time.Time, nodes []*framework.NodeInfo) []NodeBandwidth {
	sc := newScorer(args)
	return sc.explain(tableOf(s), now, nodes)
}

func (sc *scorer) explain(s *prommetric.Table, now time.Time, nodes []*framework.NodeInfo) []NodeBandwidth {
	type row struct {
		name string
		info *framework.NodeInfo
	}
	var rows []row
	if nodes == nil {
		if s != nil {
			for name := range s.Values {
				rows = append(rows, row{name: name})
			}
		}
	} else {
		for _, ni := range nodes {
			if n := ni.Node(); n != nil {
				rows = append(rows, row{name: n.Name, info: ni})
			}
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.name, b.name) })

	usable := sc.usable(s, now)
	var age time.Duration
	if s != nil {
		age = now.Sub(s.Time)
	}
	out := make([]NodeBandwidth, len(rows))
	scores := make(framework.NodeScoreList, len(rows))
	for i, r := range rows {
		nb := NodeBandwidth{Node: r.name, Age: age, Stale: !usable}
		scores[i] = framework.NodeScore{Name: r.name, Score: prommetric.MissingRaw}
		if usable {
			if m, ok := s.Values[r.name]; ok {
				bw, _ := sc.bandwidth(s, r.name, r.info)
				nb.HasData, nb.Measured, nb.Recent, nb.Bandwidth = true, m, bw-m, bw
				nb.Filtered = sc.above(bw)
				scores[i].Score = prommetric.RawScore(bw, 1)
			}
		}
		out[i] = nb
	}
	sc.normalize(scores)
	for i := range out {
		out[i].Score = scores[i].Score
	}
	return out
}
