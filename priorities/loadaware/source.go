package loadaware

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// neutralScore is the missingMetricsPolicy "neutral" score.
const neutralScore = (framework.MinNodeScore + framework.MaxNodeScore) / 2

// Option configures a plugin beyond its arguments.
type Option func(*options)

type options struct {
	clock clock.WithTicker
	pool  *prommetric.Pool
}

// WithClock sets the clock that times refreshes and ages tables.
func WithClock(c clock.WithTicker) Option { return func(o *options) { o.clock = c } }

// WithPool shares the plugin's queries with the other metric plugins of
// the pool: one query per refresh however many plugins send it.
func WithPool(p *prommetric.Pool) Option { return func(o *options) { o.pool = p } }

// metricSet is the metrics of one plugin, pinned together per cycle.
type metricSet struct {
	metrics []*prommetric.Metric
	key     framework.StateKey
	// lag is how long before a table's time a pod may have been bound and
	// still not be in it: the query's window (a rate() over the last
	// minute holds a pod started 30s ago at half its use, a new pod takes
	// a while to start working at all). Trimaran counts pods bound within
	// its metrics' 60-second reporting interval the same way.
	lag time.Duration
	// last is the tables the last cycle pinned: reused while no metric
	// has a new table, so that a cycle pins without allocating.
	last atomic.Pointer[pinnedTables]
}

// newMetricSet gets one metric per query from the pool; an empty query
// leaves its place nil.
func newMetricSet(name string, a *prommetric.SourceArgs, h framework.Handle, opts []Option, allowNegative bool, queries ...query) (*metricSet, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	ms := &metricSet{key: framework.StateKey("PreScore" + name)}
	for _, q := range queries {
		if q.promql == "" {
			ms.metrics = append(ms.metrics, nil) // a metric the args switched off
			continue
		}
		mo := prommetric.Options{Clock: o.clock, What: q.what}
		if h != nil {
			mo.Logger = h.Logger().With(zap.String("plugin", name))
			mo.Registerer = h.MetricsRegisterer()
		}
		m, err := o.pool.Metric(spec(a, q.promql, allowNegative), mo)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		ms.metrics = append(ms.metrics, m)
	}
	return ms, nil
}

// query is one PromQL query of a plugin and what it measures.
type query struct {
	promql string
	what   string
}

// spec is the shared source's Spec for a query.
func spec(a *prommetric.SourceArgs, q string, allowNegative bool) prommetric.Spec {
	return prommetric.Spec{
		Connection: prommetric.Connection{
			Address:            a.PrometheusAddress,
			BearerTokenFile:    a.BearerTokenFile,
			TLSCAFile:          a.TLSCAFile,
			InsecureSkipVerify: a.InsecureSkipVerify,
		},
		Query:           q,
		Label:           a.NodeNameLabel,
		RefreshInterval: a.RefreshInterval.Duration,
		StaleAfter:      a.StaleAfter.Duration,
		Timeout:         a.Timeout.Duration,
		AllowNegative:   allowNegative,
	}
}

// missingScore is the missingMetricsPolicy's score.
func missingScore(p prommetric.MissingMetricsPolicy) int64 {
	if p == prommetric.MissingMetricsLowest {
		return framework.MinNodeScore
	}
	return neutralScore
}

// pinnedTables are one cycle's tables, one per metric (nil where the
// metric has no usable table), so that a refresh in the middle of a cycle
// cannot score some nodes by one table and some by another.
type pinnedTables struct {
	tables []*prommetric.Table
	lag    time.Duration
}

// since is the time from which pods placed count against metric i's
// table: its time less the set's lag.
func (p *pinnedTables) since(i int) time.Time { return p.tables[i].Since.Add(-p.lag) }

// Clone returns p: it is never mutated.
func (p *pinnedTables) Clone() framework.StateData { return p }

// current returns every metric's usable table (nil where none is).
func (ms *metricSet) current() *pinnedTables {
	if last := ms.last.Load(); last != nil {
		same := true
		for i, m := range ms.metrics {
			if m != nil && m.Pin() != last.tables[i] {
				same = false
				break
			}
		}
		if same {
			return last
		}
	}
	p := &pinnedTables{tables: make([]*prommetric.Table, len(ms.metrics)), lag: ms.lag}
	for i, m := range ms.metrics {
		if m != nil {
			p.tables[i] = m.Pin()
		}
	}
	ms.last.Store(p)
	return p
}

// anyUsable reports whether some metric has a usable table.
func (p *pinnedTables) anyUsable() bool {
	for _, t := range p.tables {
		if t != nil {
			return true
		}
	}
	return false
}

// pin writes the current tables in state and returns them; nil when none
// is usable.
func (ms *metricSet) pin(state *framework.CycleState) *pinnedTables {
	p := ms.current()
	if !p.anyUsable() {
		return nil
	}
	state.Write(ms.key, p)
	return p
}

// pinned returns the tables the cycle pinned, else the current ones (a
// profile without the pre-step), else nil.
func (ms *metricSet) pinned(state *framework.CycleState) (*pinnedTables, bool) {
	if d, err := state.Read(ms.key); err == nil {
		if p, ok := d.(*pinnedTables); ok {
			return p, true
		}
	}
	p := ms.current()
	if !p.anyUsable() {
		return nil, false
	}
	return p, false
}

// sign appends the sequence numbers of the pinned tables; false without
// tables pinned by the pre-step (answers could then mix two tables).
func (ms *metricSet) sign(state *framework.CycleState, sig []byte) ([]byte, bool) {
	p, ok := ms.pinned(state)
	if !ok {
		return sig, false
	}
	for _, t := range p.tables {
		var seq uint64
		if t != nil {
			seq = t.Seq
		}
		sig = binary.AppendUvarint(sig, seq)
	}
	return sig, true
}

// lookup returns metric i's value for the node.
func (p *pinnedTables) lookup(i int, ni *framework.NodeInfo) (float64, bool) {
	t := p.tables[i]
	if t == nil {
		return 0, false
	}
	return t.Lookup(ni)
}

// Metrics returns the set's metrics, nil where the args switched one off.
func (ms *metricSet) Metrics() []*prommetric.Metric { return ms.metrics }
