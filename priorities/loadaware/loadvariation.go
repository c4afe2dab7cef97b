package loadaware

import (
	"context"
	"fmt"
	"math"

	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// LoadVariationRiskBalancingName is the plugin's name in configuration
// files.
const LoadVariationRiskBalancingName = "LoadVariationRiskBalancing"

// The metrics of LoadVariationRiskBalancing, in its metricSet's order.
const (
	cpuAvg = iota
	cpuStd
	memAvg
	memStd
)

// LoadVariationRiskBalancing scores nodes by risk (Trimaran): for CPU
// and for memory, the mean utilization over a window with the pod's
// request added, and the standard deviation over the window; the node's
// score is the lower of the two resources' (1 − (mean + margin ×
// stddev^(1/sensitivity)) / 2) × 100, so new pods go where both the load
// and its swings are low.
type LoadVariationRiskBalancing struct {
	args    LoadVariationRiskBalancingArgs
	missing int64
	set     *metricSet
}

var (
	_ framework.PreScorePlugin   = &LoadVariationRiskBalancing{}
	_ framework.ScorePlugin      = &LoadVariationRiskBalancing{}
	_ framework.BackgroundPlugin = &LoadVariationRiskBalancing{}
	_ framework.PodSigner        = &LoadVariationRiskBalancing{}
)

// NewLoadVariationRiskBalancing builds the plugin from args, which it
// defaults and validates itself. It does not contact Prometheus: Run does.
func NewLoadVariationRiskBalancing(args *LoadVariationRiskBalancingArgs, h framework.Handle, opts ...Option) (*LoadVariationRiskBalancing, error) {
	if args == nil {
		args = &LoadVariationRiskBalancingArgs{}
	}
	a := *args
	a.SetDefaults()
	if err := ValidateLoadVariationRiskBalancingArgs(&a); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", LoadVariationRiskBalancingName, err)
	}
	ca, cs, ma, mstd := VariationQueries(a.NodeNameLabel, model.Duration(a.Window.Duration), model.Duration(a.Resolution.Duration))
	set, err := newMetricSet(LoadVariationRiskBalancingName, &a.SourceArgs, h, opts, false,
		query{promql: ca, what: "mean CPU utilization"}, query{promql: cs, what: "CPU utilization deviation"},
		query{promql: ma, what: "mean memory utilization"}, query{promql: mstd, what: "memory utilization deviation"})
	if err != nil {
		return nil, err
	}
	set.lag = a.Resolution.Duration
	return &LoadVariationRiskBalancing{args: a, missing: missingScore(a.MissingMetricsPolicy), set: set}, nil
}

// Name returns LoadVariationRiskBalancingName.
func (*LoadVariationRiskBalancing) Name() string { return LoadVariationRiskBalancingName }

// Run refreshes the plugin's four queries until ctx is done.
func (pl *LoadVariationRiskBalancing) Run(ctx context.Context) { pl.set.run(ctx) }

// PreScore pins the tables; Skip when neither mean is usable.
func (pl *LoadVariationRiskBalancing) PreScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	p := pl.set.pin(state)
	if p == nil || (p.tables[cpuAvg] == nil && p.tables[memAvg] == nil) {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// SignPod signs the pinned tables and the pod's CPU and memory requests.
func (pl *LoadVariationRiskBalancing) SignPod(state *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	sig, ok := pl.set.sign(state, sig)
	if !ok {
		return sig, false
	}
	r := framework.FitRequests(pod)
	return framework.SignInts(sig, r.MilliCPU, r.Memory), true
}

// Score returns the node's risk score.
func (pl *LoadVariationRiskBalancing) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	p, _ := pl.set.pinned(state)
	if p == nil {
		return pl.missing, nil
	}
	s, ok := pl.score(p, ni, framework.FitRequests(pod))
	if !ok {
		return pl.missing, nil
	}
	return s, nil
}

// riskStats are one resource's numbers on a node, in one unit (millicores,
// bytes).
type riskStats struct {
	avg, std, recent, request, capacity float64
}

// stats returns the CPU and memory numbers of the node, and whether each
// resource has a mean.
func (pl *LoadVariationRiskBalancing) stats(p *pinnedTables, ni *framework.NodeInfo, req framework.Resource) (cpu, mem riskStats, cpuOK, memOK bool) {
	capCPU, capMem := capacity(ni)
	cpu = riskStats{request: float64(req.MilliCPU), capacity: capCPU}
	mem = riskStats{request: float64(req.Memory), capacity: capMem}
	var v float64
	if v, cpuOK = p.lookup(cpuAvg, ni); cpuOK {
		cpu.avg = v * capCPU / 100
		cpu.recent = prommetricRecentRequests(ni, p.since(cpuAvg), true)
		if s, ok := p.lookup(cpuStd, ni); ok {
			cpu.std = s * capCPU / 100
		}
	}
	if v, memOK = p.lookup(memAvg, ni); memOK {
		mem.avg = v * capMem / 100
		mem.recent = prommetricRecentRequests(ni, p.since(memAvg), false)
		if s, ok := p.lookup(memStd, ni); ok {
			mem.std = s * capMem / 100
		}
	}
	return cpu, mem, cpuOK, memOK
}

// score combines the resources as Trimaran does: the lower score when
// both have data, else the one that has.
func (pl *LoadVariationRiskBalancing) score(p *pinnedTables, ni *framework.NodeInfo, req framework.Resource) (int64, bool) {
	cpu, mem, cpuOK, memOK := pl.stats(p, ni, req)
	margin, sens := pl.args.SafeVarianceMargin, pl.args.SafeVarianceSensitivity
	var total float64
	switch {
	case cpuOK && memOK:
		total = min(riskScore(cpu, margin, sens), riskScore(mem, margin, sens))
	case cpuOK:
		total = riskScore(cpu, margin, sens)
	case memOK:
		total = riskScore(mem, margin, sens)
	default:
		return 0, false
	}
	return int64(math.Round(total)), true
}

// riskScore is Trimaran's risk arithmetic for one resource: mu is the mean
// use with the recent pods' and the pod's requests, as a fraction of
// capacity; sigma the standard deviation as a fraction, raised to
// 1/sensitivity, times margin; both clamped to [0, 1]; the score is
// (1 − (mu + sigma) / 2) × 100.
func riskScore(s riskStats, margin, sensitivity float64) float64 {
	if !(s.capacity > 0) {
		return float64(framework.MinNodeScore)
	}
	mu := clamp01((s.avg + s.recent + s.request) / s.capacity)
	sigma := clamp01(s.std / s.capacity)
	sigma = clamp01(math.Pow(sigma, 1/sensitivity) * margin)
	return (1 - (mu+sigma)/2) * float64(framework.MaxNodeScore)
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// ScoreExtensions returns nil: scores are already in [0, 100].
func (*LoadVariationRiskBalancing) ScoreExtensions() framework.ScoreExtensions { return nil }

// Metrics returns the plugin's metrics, in the order of its queries (nil
// where the args switched one off): for `explain load` and tests.
func (pl *LoadVariationRiskBalancing) Metrics() []*prommetric.Metric { return pl.set.Metrics() }
