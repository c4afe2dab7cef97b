package loadaware

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// TargetLoadPackingName is the plugin's name in configuration files.
const TargetLoadPackingName = "TargetLoadPacking"

// TargetLoadPacking scores nodes by their measured CPU utilization with
// the pod added (Trimaran's best fit around a target): the score climbs
// from targetUtilization at an idle node to 100 at the target, then falls
// to 0 at full utilization, so pods pack onto nodes up to the target and
// spread once every node is past it.
type TargetLoadPacking struct {
	args    TargetLoadPackingArgs
	cpu     cpuPredictor
	target  float64
	missing int64
	set     *metricSet
}

var (
	_ framework.PreScorePlugin   = &TargetLoadPacking{}
	_ framework.ScorePlugin      = &TargetLoadPacking{}
	_ framework.BackgroundPlugin = &TargetLoadPacking{}
	_ framework.PodSigner        = &TargetLoadPacking{}
)

// NewTargetLoadPacking builds the plugin from args, which it defaults and
// validates itself. It does not contact Prometheus: Run does.
func NewTargetLoadPacking(args *TargetLoadPackingArgs, h framework.Handle, opts ...Option) (*TargetLoadPacking, error) {
	if args == nil {
		args = &TargetLoadPackingArgs{}
	}
	a := *args
	a.SetDefaults()
	if err := ValidateTargetLoadPackingArgs(&a); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", TargetLoadPackingName, err)
	}
	set, err := newMetricSet(TargetLoadPackingName, &a.SourceArgs, h, opts, false,
		query{promql: tlpQuery(&a), what: "CPU utilization"})
	if err != nil {
		return nil, err
	}
	set.lag = a.TimeRange.Duration
	q := a.DefaultRequests[v1.ResourceCPU]
	return &TargetLoadPacking{
		args:    a,
		cpu:     cpuPredictor{defaultMilli: q.MilliValue(), multiplier: a.RequestsMultiplier()},
		target:  float64(a.TargetUtilization),
		missing: missingScore(a.MissingMetricsPolicy),
		set:     set,
	}, nil
}

// tlpQuery is the args' own query, or CPUQuery.
func tlpQuery(a *TargetLoadPackingArgs) string {
	if a.Query != "" {
		return a.Query
	}
	return CPUQuery(a.NodeNameLabel, model.Duration(a.TimeRange.Duration))
}

// Name returns TargetLoadPackingName.
func (*TargetLoadPacking) Name() string { return TargetLoadPackingName }

// Run refreshes the plugin's query until ctx is done.
func (pl *TargetLoadPacking) Run(ctx context.Context) { pl.set.run(ctx) }

// PreScore pins the CPU table; Skip without a usable one (every node
// would score alike).
func (pl *TargetLoadPacking) PreScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	if pl.set.pin(state) == nil {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// SignPod signs the pinned table and the pod's predicted CPU, all Score
// reads besides the node.
func (pl *TargetLoadPacking) SignPod(state *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	sig, ok := pl.set.sign(state, sig)
	if !ok {
		return sig, false
	}
	return framework.SignInts(sig, int64(pl.cpu.predict(pod))), true
}

// Score returns Trimaran's score for the node's predicted utilization.
func (pl *TargetLoadPacking) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	p, _ := pl.set.pinned(state)
	if p == nil {
		return pl.missing, nil
	}
	util, ok := p.lookup(0, ni)
	if !ok {
		return pl.missing, nil
	}
	capMilli, _ := capacity(ni)
	recent := pl.cpu.recentMilliCPU(ni, p.since(0))
	return targetScore(util, recent, pl.cpu.predict(pod), capMilli, pl.target), nil
}

// targetScore is Trimaran's TargetLoadPacking arithmetic: with the
// predicted utilization u = utilization + 100 × (recent + pod) / capacity,
// the score is target + (100 − target) × u / target up to the target,
// target × (100 − u) / (100 − target) above it, and 0 above 100%.
func targetScore(utilPercent, recentMilli, podMilli, capMilli, target float64) int64 {
	if !(capMilli > 0) {
		return framework.MinNodeScore
	}
	u := utilPercent + percentOf(recentMilli+podMilli, capMilli)
	switch {
	case u > 100:
		return framework.MinNodeScore
	case u > target:
		return int64(math.Round(target * (100 - u) / (100 - target)))
	}
	return int64(math.Round((100-target)*u/target + target))
}

// ScoreExtensions returns nil: scores are already in [0, 100].
func (*TargetLoadPacking) ScoreExtensions() framework.ScoreExtensions { return nil }

// run runs every metric of the set until ctx is done.
func (ms *metricSet) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, m := range ms.metrics {
		if m == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Run(ctx)
		}()
	}
	wg.Wait()
}

// Metrics returns the plugin's metrics, in the order of its queries (nil
// where the args switched one off): for `explain load` and tests.
func (pl *TargetLoadPacking) Metrics() []*prommetric.Metric { return pl.set.Metrics() }
