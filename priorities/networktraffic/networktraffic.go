package networktraffic

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/prometheus/common/model"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// Name is the plugin's name in configuration files.
const Name = "NetworkTraffic"

// BandwidthAnnotation on a pod overrides podBandwidthEstimate for it: the
// bytes/s it is expected to add to its node, as a Kubernetes quantity
// ("12500000", "12.5M", "10Mi").
const BandwidthAnnotation = "yardmaster.io/bandwidth"

// ReasonTrafficAboveThreshold is Filter's reason for a node whose traffic
// exceeds filterAbove.
const ReasonTrafficAboveThreshold = "node(s) had network traffic above the threshold"

// stateKey is where PreFilter or PreScore pins the cycle's sample.
const stateKey framework.StateKey = "PreScore" + Name

// neutralScore is the missingMetricsPolicy "neutral" score: the middle of
// [MinNodeScore, MaxNodeScore].
const neutralScore = (framework.MinNodeScore + framework.MaxNodeScore) / 2

// Option configures a NetworkTraffic beyond its arguments.
type Option func(*options)

type options struct {
	clock clock.WithTicker
	pool  *prommetric.Pool
}

// WithClock sets the clock that times refreshes and ages samples; tests use
// a fake one.
func WithClock(c clock.WithTicker) Option {
	return func(o *options) { o.clock = c }
}

// WithPool shares the plugin's query with the other metric plugins of the
// pool (the registry's): plugins that send the same query to the same
// Prometheus share one query per refresh.
func WithPool(p *prommetric.Pool) Option {
	return func(o *options) { o.pool = p }
}

// NetworkTraffic scores nodes by their network traffic as Prometheus last
// reported it: the quietest node scores MaxNodeScore. With filterAbove it
// also filters out nodes above that traffic.
type NetworkTraffic struct {
	args   Args
	scorer scorer
	// metric is the shared source: the query, its refresh loop and its
	// last answer, which cycles read through an atomic pointer.
	metric *prommetric.Metric
	source *Source
}

var (
	_ framework.PreFilterPlugin  = &NetworkTraffic{}
	_ framework.FilterPlugin     = &NetworkTraffic{}
	_ framework.PreScorePlugin   = &NetworkTraffic{}
	_ framework.ScorePlugin      = &NetworkTraffic{}
	_ framework.ScoreExtensions  = &NetworkTraffic{}
	_ framework.BackgroundPlugin = &NetworkTraffic{}
	_ framework.PodSigner        = &NetworkTraffic{}
)

// New builds the plugin from args, which it defaults and validates itself.
// It registers its metrics on h.MetricsRegisterer() and logs to
// h.Logger(); a nil h means neither (for tools such as the CLI). It does
// not contact Prometheus: Run does.
func New(args *Args, h framework.Handle, opts ...Option) (*NetworkTraffic, error) {
	if args == nil {
		args = &Args{}
	}
	a := *args
	a.SetDefaults()
	if err := ValidateArgs(&a); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	var o options
	for _, f := range opts {
		f(&o)
	}
	mo := prommetric.Options{Clock: o.clock, What: "network traffic"}
	if h != nil {
		mo.Logger = h.Logger().With(zap.String("plugin", Name))
		mo.Registerer = h.MetricsRegisterer()
	}
	m, err := o.pool.Metric(spec(&a), mo)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if h != nil && a.FilterAbove > 0 {
		prommetric.RaiseOnPublish(m, h, Name, 0)
	}
	src := &Source{client: m.Client(), query: m.Query(), label: model.LabelName(a.NodeNameLabel), timeout: a.Timeout.Duration, maxSeries: prommetric.MaxSeries}
	return &NetworkTraffic{args: a, scorer: newScorer(&a), metric: m, source: src}, nil
}

// Name returns Name.
func (*NetworkTraffic) Name() string { return Name }

// Source returns the plugin's Prometheus source.
func (pl *NetworkTraffic) Source() *Source { return pl.source }

// Metric returns the plugin's shared metric.
func (pl *NetworkTraffic) Metric() *prommetric.Metric { return pl.metric }

// Run queries Prometheus at once and then every refreshInterval until ctx
// is done (once for all the plugins that share the query). Each answer
// replaces the sample the cycles read; a failure keeps the previous one,
// which ages out after staleAfter.
func (pl *NetworkTraffic) Run(ctx context.Context) { pl.metric.Run(ctx) }

// refresh runs one query and publishes its answer.
func (pl *NetworkTraffic) refresh(ctx context.Context) { pl.metric.Refresh(ctx) }

// cycleState pins one table for a whole cycle, so that a refresh in the
// middle of it cannot score some nodes by one table and some by another.
type cycleState struct{ table *prommetric.Table }

// Clone returns c: it is never mutated.
func (c *cycleState) Clone() framework.StateData { return c }

// pinned returns the table PreFilter or PreScore pinned in state.
func pinned(state *framework.CycleState) (*prommetric.Table, bool) {
	if d, err := state.Read(stateKey); err == nil {
		if c, ok := d.(*cycleState); ok {
			return c.table, true
		}
	}
	return nil, false
}

// pin returns the table the cycle uses: the one pinned in state, else the
// current one if it is not stale, else nil.
func (pl *NetworkTraffic) pin(state *framework.CycleState) *prommetric.Table {
	// Without PreFilter and PreScore in the profile the Read misses on
	// every node and the current table is loaded each time; that is the
	// price of such a profile, not of the plugin.
	if t, ok := pinned(state); ok {
		return t
	}
	return pl.metric.Pin()
}

// PreFilter pins the sample for Filter. It skips when filterAbove is off or
// there is no usable sample: without data no node is filtered.
func (pl *NetworkTraffic) PreFilter(_ context.Context, state *framework.CycleState, _ *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if pl.args.FilterAbove <= 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	t := pl.pin(state)
	if t == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, &cycleState{table: t})
	return nil, nil
}

// Filter rejects a node whose traffic, with the pods bound since the
// sample, exceeds filterAbove. A node without data passes: an outage of
// Prometheus must not make pods unschedulable.
func (pl *NetworkTraffic) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if pl.args.FilterAbove <= 0 {
		return nil
	}
	if nodeInfo.Node() == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	t := pl.pin(state)
	if t == nil {
		return nil
	}
	bw, ok := pl.scorer.bandwidth(t, nodeInfo.NodeName(), nodeInfo)
	if ok && pl.scorer.above(bw) {
		return framework.NewStatus(framework.Unschedulable, ReasonTrafficAboveThreshold)
	}
	return nil
}

// PreScore pins the sample for Score. It skips when there is no usable
// sample or it has no feasible node: every node would score the same.
func (pl *NetworkTraffic) PreScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, feasible []*framework.NodeInfo) *framework.Status {
	t := pl.pin(state)
	if t == nil {
		return framework.NewStatus(framework.Skip)
	}
	for _, ni := range feasible {
		if ni.Node() != nil {
			if _, ok := t.Lookup(ni); ok {
				state.Write(stateKey, &cycleState{table: t})
				return nil
			}
		}
	}
	return framework.NewStatus(framework.Skip)
}

// SignPod signs the table the cycle pinned: Filter and Score read nothing
// of the pod, and everything else they read (the node's pods, for the
// pile-on estimate) is the node's. Without a pinned table (a profile
// without PreFilter and PreScore) answers could come from two tables, and
// are not kept.
func (pl *NetworkTraffic) SignPod(state *framework.CycleState, _ *v1.Pod, sig []byte) ([]byte, bool) {
	t, ok := pinned(state)
	if !ok || t == nil {
		return sig, false
	}
	return binary.AppendUvarint(sig, t.Seq), true
}

// Score returns the node's traffic in bytes/s, with the estimate of the
// pods bound since the sample, or prommetric.MissingRaw when there is no
// data for it; NormalizeScore turns that into a score.
func (pl *NetworkTraffic) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	if nodeInfo.Node() == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	t := pl.pin(state)
	if t == nil {
		return prommetric.MissingRaw, nil
	}
	bw, ok := pl.scorer.bandwidth(t, nodeInfo.NodeName(), nodeInfo)
	if !ok {
		return prommetric.MissingRaw, nil
	}
	return prommetric.RawScore(bw, 1), nil
}

// ScoreExtensions returns the plugin: traffic needs normalizing.
func (pl *NetworkTraffic) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps traffic to 100 − 100 × bw / maxBW, clamped to
// [0, 100], where maxBW is maxBandwidth or else the busiest feasible
// node's traffic; nodes without data get the missingMetricsPolicy score.
func (pl *NetworkTraffic) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	pl.scorer.normalize(scores)
	return nil
}
