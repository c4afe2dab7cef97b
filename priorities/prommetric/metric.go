package prommetric

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"go.uber.org/zap"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Spec is one metric: a query on one Prometheus, and how it is refreshed.
// It is comparable: the Pool shares one Metric among equal Specs.
type Spec struct {
	Connection
	// Query is PromQL returning one series per node, labelled with Label.
	Query string
	// Label is the label whose value is the Node name.
	Label string
	// RefreshInterval is how often the query runs.
	RefreshInterval time.Duration
	// StaleAfter is the age after which a table is no longer used.
	StaleAfter time.Duration
	// Timeout bounds each query.
	Timeout time.Duration
	// AllowNegative keeps negative values (a generic query may return
	// them); NetworkTraffic's and the load queries' are never negative.
	AllowNegative bool
}

// Options are what a Metric needs beyond its Spec.
type Options struct {
	// Clock times refreshes and ages tables; the real clock when nil.
	Clock clock.WithTicker
	// Logger logs failure streaks; none when nil.
	Logger *zap.Logger
	// Registerer takes the query instruments; a private registry when nil.
	Registerer prometheus.Registerer
	// What names the data in log lines: "network traffic", "CPU
	// utilization".
	What string
}

// Metric is one query refreshed in the background, its last answer
// published for the scheduling cycles to read without a lock.
type Metric struct {
	spec   Spec
	client *Client
	clock  clock.WithTicker
	logger *zap.Logger
	inst   *instruments
	what   string
	// maxSeries is MaxSeries; tests lower it.
	maxSeries int

	// current is the last table Prometheus answered: written by Run's
	// goroutine, read by scheduling cycles, never locked.
	current atomic.Pointer[Table]
	// published are called with the previous and the new table whenever
	// one is published (OnPublish).
	publishMu sync.Mutex
	published []func(old, new *Table)
	// running is set while a Run loop queries: the plugins sharing the
	// metric each call Run, and only the first one queries.
	running atomic.Bool

	// Owned by the running loop: the sequence of tables, the failure
	// streak, for logging once per streak.
	seq          uint64
	failures     int
	failingSince time.Time
	staleLogged  bool
	received     bool
}

// NewMetric builds a Metric on client for spec (validated). It does not
// contact Prometheus: Run does.
func NewMetric(spec Spec, client *Client, o Options) (*Metric, error) {
	m := &Metric{spec: spec, client: client, clock: o.Clock, logger: o.Logger, what: o.What, maxSeries: MaxSeries}
	if m.clock == nil {
		m.clock = clock.RealClock{}
	}
	if m.logger == nil {
		m.logger = zap.NewNop()
	}
	if m.what == "" {
		m.what = "metric"
	}
	reg := o.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	inst, err := newInstruments(reg, m.dataAge)
	if err != nil {
		return nil, err
	}
	m.inst = inst
	return m, nil
}

// Spec returns the metric's spec.
func (m *Metric) Spec() Spec { return m.spec }

// Query returns the PromQL the metric runs.
func (m *Metric) Query() string { return m.spec.Query }

// Address returns Prometheus's address with any password redacted.
func (m *Metric) Address() string { return m.client.Address() }

// Client returns the metric's client.
func (m *Metric) Client() *Client { return m.client }

// SetMaxSeries lowers the series an answer may have; for tests.
func (m *Metric) SetMaxSeries(n int) { m.maxSeries = n }

// Load returns the last published table, nil before the first answer.
func (m *Metric) Load() *Table { return m.current.Load() }

// Store publishes t as if Prometheus had answered it (tests, tools).
func (m *Metric) Store(t *Table) {
	if t.bySlot == nil && t.Values != nil {
		t.index()
	}
	m.publish(t)
}

// OnPublish has f called with the previous table (nil at first) and the
// new one each time the metric publishes one, on the refreshing goroutine:
// f must not block. A plugin tells the scheduler of a new measurement
// this way (framework.Handle.RaiseEvent).
func (m *Metric) OnPublish(f func(old, new *Table)) {
	m.publishMu.Lock()
	defer m.publishMu.Unlock()
	m.published = append(m.published, f)
}

// NewTable is the event a metric plugin raises when one of its metrics
// publishes a table (RaiseOnPublish).
var NewTable = framework.ClusterEvent{Resource: framework.NodeMetrics, ActionType: framework.Update}

// Published is the new object of a NewTable event: which plugin's metric
// (its index among the plugin's queries) and the table.
type Published struct {
	Plugin string
	Index  int
	Table  *Table
}

// RaiseOnPublish has h told of every table m publishes, as a NewTable
// event naming plugin and index: the pods the plugin rejected may pass
// with the new measurement.
func RaiseOnPublish(m *Metric, h framework.Handle, plugin string, index int) {
	m.OnPublish(func(old, new *Table) {
		h.RaiseEvent(NewTable, old, &Published{Plugin: plugin, Index: index, Table: new})
	})
}

// PublishedBy returns the table of a NewTable event's new object when
// plugin published it; ok is false when the object is not a *Published
// (then a hint queues the pod: never strand one).
func PublishedBy(newObj any, plugin string) (p *Published, mine, ok bool) {
	p, ok = newObj.(*Published)
	if !ok || p.Table == nil {
		return nil, false, false
	}
	return p, p.Plugin == plugin, true
}

// publish makes t the current table and tells OnPublish's functions.
func (m *Metric) publish(t *Table) {
	old := m.current.Swap(t)
	m.publishMu.Lock()
	fs := m.published
	m.publishMu.Unlock()
	for _, f := range fs {
		f(old, t)
	}
}

// Usable reports whether t exists and is not older than staleAfter at now.
func (m *Metric) Usable(t *Table, now time.Time) bool {
	return t != nil && now.Sub(t.Time) <= m.spec.StaleAfter
}

// Pin returns the current table when it is usable now, else nil.
func (m *Metric) Pin() *Table {
	t := m.current.Load()
	if !m.Usable(t, m.clock.Now()) {
		return nil
	}
	return t
}

// Now returns the metric's clock's time.
func (m *Metric) Now() time.Time { return m.clock.Now() }

// Fetch runs the query once, at now, without publishing the answer: what
// the explain commands print.
func (m *Metric) Fetch(ctx context.Context, now time.Time) (*Table, error) {
	return m.client.Query(ctx, m.spec.Query, model.LabelName(m.spec.Label), m.spec.Timeout, m.maxSeries, m.spec.AllowNegative, now)
}

// Run queries Prometheus at once and then every refreshInterval until ctx
// is done. Each answer replaces the table the cycles read; a failure keeps
// the previous one, which ages out after staleAfter. When another caller
// (a plugin sharing the metric) is already running the loop, Run only
// waits for ctx: the query runs once per refresh however many read it.
func (m *Metric) Run(ctx context.Context) {
	if !m.running.CompareAndSwap(false, true) {
		<-ctx.Done()
		return
	}
	defer m.running.Store(false)
	defer m.client.Close()
	t := m.clock.NewTicker(m.spec.RefreshInterval)
	defer t.Stop()
	m.logger.Info("querying Prometheus for "+m.what,
		zap.String("prometheus", m.client.Address()), zap.String("query", m.spec.Query),
		zap.Duration("refreshInterval", m.spec.RefreshInterval))
	for {
		m.Refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Refresh runs one query and publishes its answer. Only one goroutine may
// call it at a time (Run's, or a test's).
func (m *Metric) Refresh(ctx context.Context) {
	start := m.clock.Now()
	t, err := m.Fetch(ctx, start)
	if ctx.Err() != nil {
		return // shutting down: not Prometheus's failure
	}
	m.inst.queryDuration.Observe(m.clock.Since(start).Seconds())
	if err != nil {
		m.inst.queryErrors.Inc()
		m.failed(start, err)
		return
	}
	m.seq++
	t.Seq = m.seq
	m.succeeded(t)
	m.publish(t)
}

// failed logs the first failure of a streak as a warning, and once more
// when the data the cycles use goes stale; the others only at debug level.
func (m *Metric) failed(now time.Time, err error) {
	m.failures++
	if m.failures == 1 {
		m.failingSince = now
		m.logger.Warn("Prometheus query failed; scoring with the last "+m.what+" data until it is older than staleAfter, then every node alike",
			zap.String("prometheus", m.client.Address()), zap.Duration("staleAfter", m.spec.StaleAfter), zap.Error(err))
	} else {
		m.logger.Debug("Prometheus query failed again", zap.Int("failures", m.failures), zap.Error(err))
	}
	// Before the first answer there is no data to go stale: the first
	// failure's line says it all.
	if cur := m.current.Load(); cur != nil && !m.staleLogged && !m.Usable(cur, now) {
		m.staleLogged = true
		m.logger.Warn(m.what+" data is older than staleAfter; every node scores alike until Prometheus answers",
			zap.Duration("staleAfter", m.spec.StaleAfter), zap.Duration("failingFor", now.Sub(m.failingSince)))
	}
}

// succeeded logs the end of a failure streak, and the first answer.
func (m *Metric) succeeded(t *Table) {
	if m.failures > 0 {
		m.logger.Info("Prometheus query succeeded again",
			zap.Int("failedQueries", m.failures), zap.Duration("failingFor", t.Time.Sub(m.failingSince)), zap.Int("nodes", len(t.Values)))
	} else if !m.received {
		m.logger.Info(m.what+" data received", zap.Int("nodes", len(t.Values)))
	}
	m.failures, m.staleLogged, m.received = 0, false, true
	if t.Invalid+t.Unlabelled+t.Duplicates > 0 || len(t.Warnings) > 0 {
		m.logger.Debug("Prometheus answer had unusable series",
			zap.Int("series", t.Series), zap.Int("invalid", t.Invalid), zap.Int("unlabelled", t.Unlabelled),
			zap.Int("duplicates", t.Duplicates), zap.Strings("warnings", t.Warnings))
	}
}

// dataAge is the age of the current table in seconds, +Inf without one.
func (m *Metric) dataAge() float64 {
	t := m.current.Load()
	if t == nil {
		return math.Inf(1)
	}
	return m.clock.Since(t.Time).Seconds()
}
