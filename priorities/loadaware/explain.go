package loadaware

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// NodeLoad is one node's line of the debug view of a load plugin: what
// each of its metrics says of the node, what the pods placed since the
// answer add, and the score (or filter verdict) a cycle would give it.
type NodeLoad struct {
	Node string
	// Values are each metric's value for the node, NaN where the table
	// has none (or the metric is off or stale).
	Values []float64
	// Added are, per metric, the estimate of the pods placed on the node
	// since the table, in the metric's unit.
	Added []float64
	// Score is the normalized score among the nodes of the same view; -1
	// for a filter.
	Score int64
	// Rejected is a filter's reason for refusing the node, "" when it
	// passes (or for a scorer).
	Rejected string
}

// Explainer is a load plugin's debug view: `yardmaster explain load` and
// the demo print it.
type Explainer interface {
	framework.Plugin
	// Metrics returns the plugin's metrics in order (nil where off).
	Metrics() []*prommetric.Metric
	// MetricNames names them, in the same order.
	MetricNames() []string
	// Explain returns a line per node (NodeInfos with their pods, so that
	// the estimate of the pods placed since is included) for pod, computed
	// by the plugin's own extension points on its current tables.
	Explain(ctx context.Context, nodes []*framework.NodeInfo, pod *v1.Pod) []NodeLoad
}

var (
	_ Explainer = &TargetLoadPacking{}
	_ Explainer = &LoadVariationRiskBalancing{}
	_ Explainer = &PrometheusScore{}
	_ Explainer = &LoadHotSpot{}
)

// explainRows fills Values and Added; added returns metric i's estimate
// for a node.
func explainRows(ms *metricSet, nodes []*framework.NodeInfo, added func(p *pinnedTables, i int, ni *framework.NodeInfo) float64) []NodeLoad {
	p := ms.current()
	out := make([]NodeLoad, len(nodes))
	for j, ni := range nodes {
		r := NodeLoad{Node: ni.NodeName(), Score: -1}
		for i := range ms.metrics {
			v, ok := p.lookup(i, ni)
			if !ok {
				r.Values, r.Added = append(r.Values, math.NaN()), append(r.Added, 0)
				continue
			}
			r.Values, r.Added = append(r.Values, v), append(r.Added, added(p, i, ni))
		}
		out[j] = r
	}
	return out
}

// explainScores runs a scorer's PreScore, Score and NormalizeScore over
// nodes, as a cycle does, into rows; every node scores the same (0) when
// PreScore skips.
func explainScores(ctx context.Context, pl framework.ScorePlugin, pre framework.PreScorePlugin, nodes []*framework.NodeInfo, pod *v1.Pod, rows []NodeLoad) {
	state := framework.NewCycleState()
	if st := pre.PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		for i := range rows {
			rows[i].Score = 0
		}
		return
	}
	scores := make(framework.NodeScoreList, len(nodes))
	for i, ni := range nodes {
		s, _ := pl.Score(ctx, state, pod, ni)
		scores[i] = framework.NodeScore{Name: ni.NodeName(), Score: s}
	}
	if ext := pl.ScoreExtensions(); ext != nil {
		ext.NormalizeScore(ctx, state, pod, scores)
	}
	for i := range rows {
		rows[i].Score = scores[i].Score
	}
}

// MetricNames names TargetLoadPacking's metric.
func (*TargetLoadPacking) MetricNames() []string { return []string{"cpu%"} }

// Explain is TargetLoadPacking's debug view.
func (pl *TargetLoadPacking) Explain(ctx context.Context, nodes []*framework.NodeInfo, pod *v1.Pod) []NodeLoad {
	rows := explainRows(pl.set, nodes, func(p *pinnedTables, _ int, ni *framework.NodeInfo) float64 {
		c, _ := capacity(ni)
		return percentOf(pl.cpu.recentMilliCPU(ni, p.since(0)), c)
	})
	explainScores(ctx, pl, pl, nodes, pod, rows)
	return rows
}

// MetricNames names LoadVariationRiskBalancing's metrics.
func (*LoadVariationRiskBalancing) MetricNames() []string {
	return []string{"cpu% mean", "cpu% stddev", "memory% mean", "memory% stddev"}
}

// Explain is LoadVariationRiskBalancing's debug view.
func (pl *LoadVariationRiskBalancing) Explain(ctx context.Context, nodes []*framework.NodeInfo, pod *v1.Pod) []NodeLoad {
	rows := explainRows(pl.set, nodes, func(p *pinnedTables, i int, ni *framework.NodeInfo) float64 {
		c, m := capacity(ni)
		switch i {
		case cpuAvg:
			return percentOf(prommetricRecentRequests(ni, p.since(i), true), c)
		case memAvg:
			return percentOf(prommetricRecentRequests(ni, p.since(i), false), m)
		}
		return 0
	})
	explainScores(ctx, pl, pl, nodes, pod, rows)
	return rows
}

// MetricNames names PrometheusScore's metric.
func (*PrometheusScore) MetricNames() []string { return []string{"value"} }

// Explain is PrometheusScore's debug view.
func (pl *PrometheusScore) Explain(ctx context.Context, nodes []*framework.NodeInfo, pod *v1.Pod) []NodeLoad {
	rows := explainRows(pl.set, nodes, func(p *pinnedTables, _ int, ni *framework.NodeInfo) float64 {
		if pl.estimate == 0 {
			return 0
		}
		return prommetric.Recent(ni, p.since(0), func(*framework.PodInfo) float64 { return pl.estimate })
	})
	explainScores(ctx, pl, pl, nodes, pod, rows)
	return rows
}

// MetricNames names LoadHotSpot's metrics.
func (*LoadHotSpot) MetricNames() []string { return []string{"cpu%", "memory%"} }

// Explain is LoadHotSpot's debug view: each node's verdict.
func (pl *LoadHotSpot) Explain(ctx context.Context, nodes []*framework.NodeInfo, pod *v1.Pod) []NodeLoad {
	rows := explainRows(pl.set, nodes, func(p *pinnedTables, i int, ni *framework.NodeInfo) float64 {
		c, m := capacity(ni)
		if i == hotCPU {
			return percentOf(pl.cpu.recentMilliCPU(ni, p.since(i)), c)
		}
		return percentOf(recentMemory(ni, p.since(i)), m)
	})
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, nodes); st.IsSuccess() {
		for i, ni := range nodes {
			if st := pl.Filter(ctx, state, pod, ni); st != nil {
				rows[i].Rejected = st.Message()
			}
		}
	}
	return rows
}
