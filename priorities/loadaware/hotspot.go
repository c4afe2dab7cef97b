package loadaware

import (
	"context"
	"fmt"

	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// LoadHotSpotName is the plugin's name in configuration files.
const LoadHotSpotName = "LoadHotSpot"

// Reasons of LoadHotSpot's rejections.
const (
	ReasonCPUHotSpot    = "node(s) had CPU utilization above the threshold"
	ReasonMemoryHotSpot = "node(s) had memory utilization above the threshold"
)

// The metrics of LoadHotSpot, in its metricSet's order.
const (
	hotCPU = iota
	hotMem
)

// LoadHotSpot filters out nodes whose measured CPU or memory utilization,
// with the pods placed since the measurement, is above a threshold. Both
// thresholds are off by default. Without usable data nothing is filtered:
// an outage of Prometheus must not make pods unschedulable.
//
// Its rejections are retried like every unschedulable pod's: on the
// cluster events that move a pod or node, and at the latest by the
// unschedulable pool's periodic flush, by which time a refresh has given
// the node's new utilization.
type LoadHotSpot struct {
	args       LoadHotSpotArgs
	cpu        cpuPredictor
	set        *metricSet
	rejectCPU  *framework.Status
	rejectMem  *framework.Status
	cpuOn      bool
	memOn      bool
	cpuAbove   float64
	memAbove   float64
	queryCPU   string
	queryMem   string
	skipStatus *framework.Status
}

var (
	_ framework.PreFilterPlugin  = &LoadHotSpot{}
	_ framework.FilterPlugin     = &LoadHotSpot{}
	_ framework.BackgroundPlugin = &LoadHotSpot{}
	_ framework.PodSigner        = &LoadHotSpot{}
)

// NewLoadHotSpot builds the filter from args, which it defaults and
// validates itself. It does not contact Prometheus: Run does. The CPU
// query is TargetLoadPacking's, so with equal source args the two share
// it.
func NewLoadHotSpot(args *LoadHotSpotArgs, h framework.Handle, opts ...Option) (*LoadHotSpot, error) {
	if args == nil {
		args = &LoadHotSpotArgs{}
	}
	a := *args
	a.SetDefaults()
	if err := ValidateLoadHotSpotArgs(&a); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", LoadHotSpotName, err)
	}
	pl := &LoadHotSpot{
		args:       a,
		cpu:        cpuPredictor{defaultMilli: DefaultRequestsMilliCPU, multiplier: a.RequestsMultiplier()},
		rejectCPU:  framework.NewStatus(framework.Unschedulable, ReasonCPUHotSpot),
		rejectMem:  framework.NewStatus(framework.Unschedulable, ReasonMemoryHotSpot),
		cpuOn:      a.CPUUtilizationAbove > 0,
		memOn:      a.MemoryUtilizationAbove > 0,
		cpuAbove:   a.CPUUtilizationAbove,
		memAbove:   a.MemoryUtilizationAbove,
		queryCPU:   CPUQuery(a.NodeNameLabel, model.Duration(a.TimeRange.Duration)),
		queryMem:   MemoryQuery(a.NodeNameLabel),
		skipStatus: framework.NewStatus(framework.Skip),
	}
	// Only the metrics a threshold uses are queried; a filter with both
	// off queries nothing.
	var qs []query
	if pl.cpuOn {
		qs = append(qs, query{promql: pl.queryCPU, what: "CPU utilization"})
	} else {
		qs = append(qs, query{})
	}
	if pl.memOn {
		qs = append(qs, query{promql: pl.queryMem, what: "memory utilization"})
	} else {
		qs = append(qs, query{})
	}
	set, err := newMetricSet(LoadHotSpotName, &a.SourceArgs, h, opts, false, qs...)
	if err != nil {
		return nil, err
	}
	set.lag = a.TimeRange.Duration
	pl.set = set
	if h != nil {
		for i, m := range set.metrics {
			if m != nil {
				prommetric.RaiseOnPublish(m, h, LoadHotSpotName, i)
			}
		}
	}
	return pl, nil
}

// Name returns LoadHotSpotName.
func (*LoadHotSpot) Name() string { return LoadHotSpotName }

// Run refreshes the queries until ctx is done.
func (pl *LoadHotSpot) Run(ctx context.Context) { pl.set.run(ctx) }

// PreFilter pins the tables; Skip when both thresholds are off or there is
// no usable data: then no node is filtered.
func (pl *LoadHotSpot) PreFilter(_ context.Context, state *framework.CycleState, _ *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if (!pl.cpuOn && !pl.memOn) || pl.set.pin(state) == nil {
		return nil, pl.skipStatus
	}
	return nil, nil
}

// SignPod signs the pinned tables: Filter reads nothing of the pod (the
// pod's own load is not counted, only that of the pods placed before it).
func (pl *LoadHotSpot) SignPod(state *framework.CycleState, _ *v1.Pod, sig []byte) ([]byte, bool) {
	return pl.set.sign(state, sig)
}

// Filter rejects a node above a threshold.
func (pl *LoadHotSpot) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	p, _ := pl.set.pinned(state)
	if p == nil {
		return nil
	}
	cpu, mem, cpuOK, memOK := pl.utilization(p, ni)
	if cpuOK && cpu > pl.cpuAbove {
		return pl.rejectCPU
	}
	if memOK && mem > pl.memAbove {
		return pl.rejectMem
	}
	return nil
}

// utilization returns the node's CPU and memory utilization in percent,
// with the pods placed since each table, where that threshold is on and
// the node has data.
func (pl *LoadHotSpot) utilization(p *pinnedTables, ni *framework.NodeInfo) (cpu, mem float64, cpuOK, memOK bool) {
	capCPU, capMem := capacity(ni)
	if pl.cpuOn {
		if cpu, cpuOK = p.lookup(hotCPU, ni); cpuOK {
			cpu += percentOf(pl.cpu.recentMilliCPU(ni, p.since(hotCPU)), capCPU)
		}
	}
	if pl.memOn {
		if mem, memOK = p.lookup(hotMem, ni); memOK {
			mem += percentOf(recentMemory(ni, p.since(hotMem)), capMem)
		}
	}
	return cpu, mem, cpuOK, memOK
}

// Metrics returns the plugin's metrics, in the order of its queries (nil
// where the args switched one off): for `explain load` and tests.
func (pl *LoadHotSpot) Metrics() []*prommetric.Metric { return pl.set.Metrics() }
