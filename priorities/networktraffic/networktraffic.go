package networktraffic

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
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

// missingRaw is the raw score of a node without usable data. Raw scores
// are otherwise bandwidths, which are never negative.
const missingRaw int64 = -1

// maxRaw caps raw scores at 2^53 bytes/s, where float64 still holds every
// integer, so that raw scores convert back exactly.
const maxRaw int64 = 1 << 53

// Option configures a NetworkTraffic beyond its arguments.
type Option func(*NetworkTraffic)

// WithClock sets the clock that times refreshes and ages samples; tests use
// a fake one.
func WithClock(c clock.WithTicker) Option {
	return func(pl *NetworkTraffic) { pl.clock = c }
}

// NetworkTraffic scores nodes by their network traffic as Prometheus last
// reported it: the quietest node scores MaxNodeScore. With filterAbove it
// also filters out nodes above that traffic.
type NetworkTraffic struct {
	args    framework.NetworkTrafficArgs
	scorer  scorer
	source  *Source
	clock   clock.WithTicker
	logger  *zap.Logger
	metrics *metrics

	// current is the last sample Prometheus answered: written by Run's
	// goroutine, read by scheduling cycles, never locked.
	current atomic.Pointer[Sample]

	// Owned by Run's goroutine: the failure streak, for logging once per
	// streak.
	failures     int
	failingSince time.Time
	staleLogged  bool
	received     bool
}

var (
	_ framework.PreFilterPlugin  = &NetworkTraffic{}
	_ framework.FilterPlugin     = &NetworkTraffic{}
	_ framework.PreScorePlugin   = &NetworkTraffic{}
	_ framework.ScorePlugin      = &NetworkTraffic{}
	_ framework.ScoreExtensions  = &NetworkTraffic{}
	_ framework.BackgroundPlugin = &NetworkTraffic{}
)

// New builds the plugin from args, which it defaults and validates itself.
// It registers its metrics on h.MetricsRegisterer() and logs to
// h.Logger(); a nil h means neither (for tools such as the CLI). It does
// not contact Prometheus: Run does.
func New(args *framework.NetworkTrafficArgs, h framework.Handle, opts ...Option) (*NetworkTraffic, error) {
	if args == nil {
		args = &framework.NetworkTrafficArgs{}
	}
	a := *args
	a.SetDefaults()
	if err := framework.ValidateNetworkTrafficArgs(&a); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	src, err := NewSource(&a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	pl := &NetworkTraffic{
		args:   a,
		scorer: newScorer(&a),
		source: src,
		clock:  clock.RealClock{},
		logger: zap.NewNop(),
	}
	for _, o := range opts {
		o(pl)
	}
	var reg prometheus.Registerer = prometheus.NewRegistry()
	if h != nil {
		pl.logger = h.Logger().With(zap.String("plugin", Name))
		reg = h.MetricsRegisterer()
	}
	if pl.metrics, err = newMetrics(reg, pl.dataAge); err != nil {
		return nil, err
	}
	return pl, nil
}

// Name returns Name.
func (*NetworkTraffic) Name() string { return Name }

// Source returns the plugin's Prometheus source.
func (pl *NetworkTraffic) Source() *Source { return pl.source }

// Run queries Prometheus at once and then every refreshInterval until ctx
// is done. Each answer replaces the sample the cycles read; a failure keeps
// the previous one, which ages out after staleAfter.
func (pl *NetworkTraffic) Run(ctx context.Context) {
	defer pl.source.Close()
	t := pl.clock.NewTicker(pl.args.RefreshInterval.Duration)
	defer t.Stop()
	pl.logger.Info("querying Prometheus for network traffic",
		zap.String("prometheus", pl.source.Address()), zap.String("query", pl.source.Query()),
		zap.Duration("refreshInterval", pl.args.RefreshInterval.Duration))
	for {
		pl.refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// refresh runs one query and publishes its answer.
func (pl *NetworkTraffic) refresh(ctx context.Context) {
	start := pl.clock.Now()
	s, err := pl.source.Fetch(ctx, start)
	if ctx.Err() != nil {
		return // shutting down: not Prometheus's failure
	}
	pl.metrics.queryDuration.Observe(pl.clock.Since(start).Seconds())
	if err != nil {
		pl.metrics.queryErrors.Inc()
		pl.failed(start, err)
		return
	}
	pl.current.Store(s)
	pl.succeeded(s)
}

// failed logs the first failure of a streak as a warning, and once more
// when the data the cycles use goes stale; the others only at debug level.
func (pl *NetworkTraffic) failed(now time.Time, err error) {
	pl.failures++
	if pl.failures == 1 {
		pl.failingSince = now
		pl.logger.Warn("Prometheus query failed; scoring with the last network traffic data until it is older than staleAfter, then every node alike",
			zap.String("prometheus", pl.source.Address()), zap.Duration("staleAfter", pl.args.StaleAfter.Duration), zap.Error(err))
	} else {
		pl.logger.Debug("Prometheus query failed again", zap.Int("failures", pl.failures), zap.Error(err))
	}
	// Before the first answer there is no data to go stale: the first
	// failure's line says it all.
	if cur := pl.current.Load(); cur != nil && !pl.staleLogged && !pl.scorer.usable(cur, now) {
		pl.staleLogged = true
		pl.logger.Warn("network traffic data is older than staleAfter; every node scores alike until Prometheus answers",
			zap.Duration("staleAfter", pl.args.StaleAfter.Duration), zap.Duration("failingFor", now.Sub(pl.failingSince)))
	}
}

// succeeded logs the end of a failure streak, and the first answer.
func (pl *NetworkTraffic) succeeded(s *Sample) {
	if pl.failures > 0 {
		pl.logger.Info("Prometheus query succeeded again",
			zap.Int("failedQueries", pl.failures), zap.Duration("failingFor", s.Time.Sub(pl.failingSince)), zap.Int("nodes", len(s.Bandwidth)))
	} else if !pl.received {
		pl.logger.Info("network traffic data received", zap.Int("nodes", len(s.Bandwidth)))
	}
	pl.failures, pl.staleLogged, pl.received = 0, false, true
	if s.Invalid+s.Unlabelled+s.Duplicates > 0 || len(s.Warnings) > 0 {
		pl.logger.Debug("Prometheus answer had unusable series",
			zap.Int("series", s.Series), zap.Int("invalid", s.Invalid), zap.Int("unlabelled", s.Unlabelled),
			zap.Int("duplicates", s.Duplicates), zap.Strings("warnings", s.Warnings))
	}
}

// dataAge is the age of the current sample in seconds, +Inf without one.
func (pl *NetworkTraffic) dataAge() float64 {
	s := pl.current.Load()
	if s == nil {
		return math.Inf(1)
	}
	return pl.clock.Since(s.Time).Seconds()
}

// cycleState pins one sample for a whole cycle, so that a refresh in the
// middle of it cannot score some nodes by one sample and some by another.
type cycleState struct{ sample *Sample }

// Clone returns c: it is never mutated.
func (c *cycleState) Clone() framework.StateData { return c }

// pin returns the sample the cycle uses: the one pinned in state, else the
// current one if it is not stale, else nil.
func (pl *NetworkTraffic) pin(state *framework.CycleState) *Sample {
	// Without PreFilter and PreScore in the profile the Read misses on
	// every node and the current sample is loaded each time; that is the
	// price of such a profile, not of the plugin.
	if d, err := state.Read(stateKey); err == nil {
		if c, ok := d.(*cycleState); ok {
			return c.sample
		}
	}
	s := pl.current.Load()
	if !pl.scorer.usable(s, pl.clock.Now()) {
		return nil
	}
	return s
}

// PreFilter pins the sample for Filter. It skips when filterAbove is off or
// there is no usable sample: without data no node is filtered.
func (pl *NetworkTraffic) PreFilter(_ context.Context, state *framework.CycleState, _ *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if pl.args.FilterAbove <= 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := pl.pin(state)
	if s == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, &cycleState{sample: s})
	return nil, nil
}

// Filter rejects a node whose traffic, with the pods bound since the
// sample, exceeds filterAbove. A node without data passes: an outage of
// Prometheus must not make pods unschedulable.
func (pl *NetworkTraffic) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if pl.args.FilterAbove <= 0 {
		return nil
	}
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	s := pl.pin(state)
	if s == nil {
		return nil
	}
	bw, ok := pl.scorer.bandwidth(s, node.Name, nodeInfo)
	if ok && pl.scorer.above(bw) {
		return framework.NewStatus(framework.Unschedulable, ReasonTrafficAboveThreshold)
	}
	return nil
}

// PreScore pins the sample for Score. It skips when there is no usable
// sample or it has no feasible node: every node would score the same.
func (pl *NetworkTraffic) PreScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, feasible []*framework.NodeInfo) *framework.Status {
	s := pl.pin(state)
	if s == nil {
		return framework.NewStatus(framework.Skip)
	}
	for _, ni := range feasible {
		if n := ni.Node(); n != nil {
			if _, ok := s.Bandwidth[n.Name]; ok {
				state.Write(stateKey, &cycleState{sample: s})
				return nil
			}
		}
	}
	return framework.NewStatus(framework.Skip)
}

// Score returns the node's traffic in bytes/s, with the estimate of the
// pods bound since the sample, or -1 when there is no data for it;
// NormalizeScore turns that into a score.
func (pl *NetworkTraffic) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	s := pl.pin(state)
	if s == nil {
		return missingRaw, nil
	}
	bw, ok := pl.scorer.bandwidth(s, node.Name, nodeInfo)
	if !ok {
		return missingRaw, nil
	}
	return rawScore(bw), nil
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

// rawScore rounds a bandwidth to a raw score.
func rawScore(bw float64) int64 {
	if bw >= float64(maxRaw) {
		return maxRaw
	}
	return int64(math.Round(bw))
}
