package loadaware

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// PrometheusScoreName is the plugin's name in configuration files.
const PrometheusScoreName = "PrometheusScore"

// valueScale turns a query's values into raw scores with three decimals
// kept: utilizations are fractions or percentages, and rounding them to
// whole numbers would tie nodes that differ.
const valueScale = 1000

// PrometheusScore scores nodes by a PromQL query that returns one value
// per node: Score returns the node's value (with podEstimate for each pod
// placed since the answer) and NormalizeScore maps the cycle's values to
// [0, 100] by the configured direction and normalization. NetworkTraffic
// is this plugin with its traffic query, lower is better and ratio.
type PrometheusScore struct {
	args     PrometheusScoreArgs
	norm     prommetric.Normalizer
	estimate float64
	set      *metricSet
}

var (
	_ framework.PreScorePlugin   = &PrometheusScore{}
	_ framework.ScorePlugin      = &PrometheusScore{}
	_ framework.ScoreExtensions  = &PrometheusScore{}
	_ framework.BackgroundPlugin = &PrometheusScore{}
	_ framework.PodSigner        = &PrometheusScore{}
)

// NewPrometheusScore builds the plugin from args, which it defaults and
// validates itself. It does not contact Prometheus: Run does.
func NewPrometheusScore(args *PrometheusScoreArgs, h framework.Handle, opts ...Option) (*PrometheusScore, error) {
	if args == nil {
		args = &PrometheusScoreArgs{}
	}
	a := *args
	a.SetDefaults()
	if err := ValidatePrometheusScoreArgs(&a); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", PrometheusScoreName, err)
	}
	set, err := newMetricSet(PrometheusScoreName, &a.SourceArgs, h, opts, true, query{promql: a.Query, what: "query"})
	if err != nil {
		return nil, err
	}
	norm := prommetric.Normalizer{
		HigherIsBetter: a.Direction == HigherIsBetter,
		Normalization:  a.Normalization,
		MissingScore:   missingScore(a.MissingMetricsPolicy),
	}
	if a.Normalization == prommetric.NormalizationRange {
		norm.Min, norm.Max = float64(prommetric.RawScore(*a.Min, valueScale)), float64(prommetric.RawScore(*a.Max, valueScale))
	}
	return &PrometheusScore{args: a, norm: norm, estimate: a.PodEstimate, set: set}, nil
}

// Name returns PrometheusScoreName.
func (*PrometheusScore) Name() string { return PrometheusScoreName }

// Run refreshes the query until ctx is done.
func (pl *PrometheusScore) Run(ctx context.Context) { pl.set.run(ctx) }

// PreScore pins the table; Skip without a usable one.
func (pl *PrometheusScore) PreScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	if pl.set.pin(state) == nil {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// SignPod signs the pinned table: Score reads nothing of the pod.
func (pl *PrometheusScore) SignPod(state *framework.CycleState, _ *v1.Pod, sig []byte) ([]byte, bool) {
	return pl.set.sign(state, sig)
}

// Score returns the node's value, with the pods placed since, as a raw
// score, or MissingRaw without one.
func (pl *PrometheusScore) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	p, _ := pl.set.pinned(state)
	if p == nil {
		return prommetric.MissingRaw, nil
	}
	v, ok := pl.value(p, ni)
	if !ok {
		return prommetric.MissingRaw, nil
	}
	return prommetric.RawScore(v, valueScale), nil
}

// value is the node's value plus podEstimate per pod placed since.
func (pl *PrometheusScore) value(p *pinnedTables, ni *framework.NodeInfo) (float64, bool) {
	v, ok := p.lookup(0, ni)
	if !ok {
		return 0, false
	}
	if pl.estimate != 0 {
		v += prommetric.Recent(ni, p.since(0), func(*framework.PodInfo) float64 { return pl.estimate })
	}
	return v, true
}

// ScoreExtensions returns the plugin: values need normalizing.
func (pl *PrometheusScore) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps the values to scores.
func (pl *PrometheusScore) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	pl.norm.Normalize(scores)
	return nil
}

// Metrics returns the plugin's metrics, in the order of its queries (nil
// where the args switched one off): for `explain load` and tests.
func (pl *PrometheusScore) Metrics() []*prommetric.Metric { return pl.set.Metrics() }
