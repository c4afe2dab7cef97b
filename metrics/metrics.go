// Package metrics defines yardmaster's Prometheus metrics under
// kube-scheduler's names, labels and buckets (v1.37,
// pkg/scheduler/metrics), so that dashboards and alerts written for
// kube-scheduler work unchanged. The help texts are kube-scheduler's
// without the "[ALPHA]", "[BETA]" or "[STABLE]" that component-base puts
// before them: yardmaster makes no promise of stability per metric.
//
// The model: one Metrics per scheduler, registered on a registry the caller
// owns (never the global default registry). The scheduler resolves what it
// records per cycle ahead of time — a Profile per scheduling profile, a
// PluginTimer per plugin and extension point — so that the scheduling loop
// never builds label sets or looks up a metric vector on its hot path. Label
// combinations that depend on an outcome (a status code) are resolved on
// first use and cached, so that /metrics shows only series that happened,
// as kube-scheduler's does.
//
// Plugin timings are sampled: the scheduler times each plugin in about one
// cycle in ten (SamplePercent), as kube-scheduler does, and never in the
// others; a per-node, per-plugin clock read on every cycle would cost more
// than some of the plugins it measures. Within a sampled cycle, the
// per-node Filter and Score calls are timed on one node in
// NodeSampleStride (the nodes taken rotate with the cycle's start), which
// keeps the distribution and divides its cost: timing every node made a
// sampled cycle three times as slow as another.
//
// Leader election reports through client-go's process-wide metrics
// provider; see LeaderElection.
package metrics

import (
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
)

// SchedulerSubsystem prefixes kube-scheduler's metric names.
const SchedulerSubsystem = "scheduler"

// SamplePercent is the share of scheduling cycles whose plugins are timed
// one by one (kube-scheduler's pluginMetricsSamplePercent).
const SamplePercent = 10

// NodeSampleStride is how many of a sampled cycle's per-node Filter and
// Score calls share one timing: the calls on nodes 0, NodeSampleStride,
// 2×NodeSampleStride... of the cycle are timed.
const NodeSampleStride = 8

// Results of a scheduling attempt, the result label.
const (
	ScheduledResult     = "scheduled"
	UnschedulableResult = "unschedulable"
	ErrorResult         = "error"
	// WaitingOnPreemptionResult is a pod group's attempt that did not
	// fit and whose preemption evicts victims for it.
	WaitingOnPreemptionResult = "waiting_on_preemption"
)

// ExtensionPoint is a point of the scheduling framework, the
// extension_point label.
type ExtensionPoint int

// The extension points yardmaster runs, spelled as kube-scheduler labels them.
const (
	PreFilter ExtensionPoint = iota
	Filter
	PostFilter
	PreScore
	Score
	ScoreExtensionNormalize
	Bind
	Reserve
	Unreserve
	Permit
	PreBindPreFlight
	PreBind
	PostBind
	numExtensionPoints
)

var extensionPointNames = [numExtensionPoints]string{
	PreFilter:               "PreFilter",
	Filter:                  "Filter",
	PostFilter:              "PostFilter",
	PreScore:                "PreScore",
	Score:                   "Score",
	ScoreExtensionNormalize: "ScoreExtensionNormalize",
	Bind:                    "Bind",
	Reserve:                 "Reserve",
	Unreserve:               "Unreserve",
	Permit:                  "Permit",
	PreBindPreFlight:        "PreBindPreFlight",
	PreBind:                 "PreBind",
	PostBind:                "PostBind",
}

// String returns the label value.
func (p ExtensionPoint) String() string {
	if p < 0 || p >= numExtensionPoints {
		return "Unknown"
	}
	return extensionPointNames[p]
}

// maxCodes bounds the status codes cached per series; a code beyond it (one
// added to framework later) is still recorded, through the vector.
const maxCodes = 8

// Metrics are one scheduler's metrics. Create with New, then Register. All
// methods are safe for concurrent use.
type Metrics struct {
	scheduleAttempts       *prometheus.CounterVec
	attemptDuration        *prometheus.HistogramVec
	algorithmDuration      prometheus.Histogram
	podSchedulingSLI       *prometheus.HistogramVec
	podSchedulingAttempts  prometheus.Histogram
	extensionPointDuration *prometheus.HistogramVec
	pluginDuration         *prometheus.HistogramVec
	queueIncomingPods      *prometheus.CounterVec
	queueIncomingEntities  *prometheus.CounterVec
	goroutines             *prometheus.GaugeVec
	bindingDuration        *prometheus.HistogramVec
	preemptionAttempts     prometheus.Counter
	preemptionVictims      prometheus.Histogram
	permitWaitDuration     *prometheus.HistogramVec
	// The pod group cycle's (kube-scheduler v1.37 with GenericWorkload).
	podGroupAttempts          *prometheus.CounterVec
	podGroupAttemptDuration   *prometheus.HistogramVec
	podGroupAlgorithmDuration prometheus.Histogram

	bindingGoroutines prometheus.Gauge
	bindingSuccess    prometheus.Observer
	bindingError      prometheus.Observer
	sli               [maxAttemptsLabel + 1]lazyObserver
	// incoming and incomingEntities cache
	// scheduler_queue_incoming_pods_total and
	// scheduler_queue_incoming_entities_total per queue and event (at
	// queue×numEvents+event); see PodQueued.
	incoming, incomingEntities []lazyCounter
	numEvents                  int
}

// maxLocations bounds the queues of the incoming caches. The queue has
// fewer; a value beyond is still counted, through the vector.
const maxLocations = 8

// EntityPod and EntityPodGroup are the type label of
// scheduler_queued_entities and scheduler_queue_incoming_entities_total:
// a pod of no pod group, and a pod group (kube-scheduler v1.37 with its
// GenericWorkload feature queues a group as one entity). yardmaster queues
// a group's members as pods and takes them together when one is popped
// (queue.TakeGroup): scheduler_queued_entities counts the groups with
// members in each part of the queue, and
// scheduler_queue_incoming_entities_total counts every pod as "pod".
const (
	EntityPod      = "pod"
	EntityPodGroup = "podgroup"
)

// maxAttemptsLabel caps the attempts label of the SLI histogram, as
// kube-scheduler does ("15+"), to bound its cardinality.
const maxAttemptsLabel = 15

// New returns a scheduler's metrics, not yet registered.
func New() *Metrics {
	m := &Metrics{
		scheduleAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "schedule_attempts_total",
			Help:      "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
		}, []string{"result", "profile"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "scheduling_attempt_duration_seconds",
			Help:      "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
			Buckets:   prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"result", "profile"}),
		algorithmDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "scheduling_algorithm_duration_seconds",
			Help:      "Scheduling algorithm latency in seconds",
			Buckets:   prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		podSchedulingSLI: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "pod_scheduling_sli_duration_seconds",
			Help:      "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
			// 10ms to ~88m.
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
		}, []string{"attempts"}),
		podSchedulingAttempts: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "pod_scheduling_attempts",
			Help:      "Number of attempts to successfully schedule a pod.",
			Buckets:   prometheus.ExponentialBuckets(1, 2, 5),
		}),
		extensionPointDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "framework_extension_point_duration_seconds",
			Help:      "Latency for running all plugins of a specific extension point.",
			// 0.1ms to ~200ms.
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12),
		}, []string{"extension_point", "status", "profile"}),
		pluginDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "plugin_execution_duration_seconds",
			Help:      "Duration for running a plugin at a specific extension point.",
			// 0.01ms to ~22ms, in steps of 1.5: plugin latency is small
			// and every step matters.
			Buckets: prometheus.ExponentialBuckets(0.00001, 1.5, 20),
		}, []string{"plugin", "extension_point", "status"}),
		queueIncomingPods: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "queue_incoming_pods_total",
			Help:      "Number of pods added to scheduling queues by event and queue type.",
		}, []string{"queue", "event"}),
		queueIncomingEntities: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "queue_incoming_entities_total",
			Help:      "Number of scheduling entities added to scheduling queues by event, queue type, and entity type. Entity types are either 'pod' (for individual pods that are not members of any podgroup) or 'podgroup'.",
		}, []string{"queue", "event", "type"}),
		goroutines: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "goroutines",
			Help:      "Number of running goroutines split by the work they do such as binding.",
		}, []string{"operation"}),
		// kube-scheduler times binding only as the Bind extension point,
		// whose buckets end at ~200ms; a Binding is an API call with
		// retries and takes longer under load, so this histogram has
		// scheduling_attempt_duration_seconds' range.
		bindingDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "yardmaster_binding_duration_seconds",
			Help:    "Latency of posting a pod's Binding, retries included, by result (success or error).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"result"}),
		preemptionAttempts: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "preemption_attempts_total",
			Help:      "Total preemption attempts in the cluster till now",
		}),
		preemptionVictims: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "preemption_victims",
			Help:      "Number of selected preemption victims for preemption initiated by a single pod",
			Buckets:   prometheus.ExponentialBuckets(1, 2, 7),
		}),
		permitWaitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "permit_wait_duration_seconds",
			Help:      "Duration of waiting on permit.",
			Buckets:   prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"result"}),
		podGroupAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "podgroup_schedule_attempts_total",
			Help:      "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group could not be scheduled, while 'error' means an internal scheduler problem.",
		}, []string{"result", "profile"}),
		podGroupAttemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "podgroup_scheduling_attempt_duration_seconds",
			Help:      "Pod group scheduling attempt latency in seconds",
			Buckets:   prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"result", "profile"}),
		podGroupAlgorithmDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: SchedulerSubsystem,
			Name:      "podgroup_scheduling_algorithm_duration_seconds",
			Help:      "Pod group scheduling algorithm latency in seconds",
			Buckets:   prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
	}
	m.numEvents = queue.NumEvents()
	m.incoming = make([]lazyCounter, maxLocations*m.numEvents)
	m.incomingEntities = make([]lazyCounter, maxLocations*m.numEvents)
	m.bindingGoroutines = m.goroutines.WithLabelValues("binding")
	m.bindingSuccess = m.bindingDuration.WithLabelValues("success")
	m.bindingError = m.bindingDuration.WithLabelValues("error")
	return m
}

// PendingPodsFunc reports what waits in each part of the queue, as
// queue.PriorityQueue.Census does.
type PendingPodsFunc func() queue.Census

// Register registers the metrics on reg, with scheduler_pending_pods and
// scheduler_queued_entities read from pending at each scrape. It fails if
// reg already has any of them.
func (m *Metrics) Register(reg prometheus.Registerer, pending PendingPodsFunc) error {
	cs := []prometheus.Collector{
		m.scheduleAttempts, m.attemptDuration, m.algorithmDuration,
		m.podSchedulingSLI, m.podSchedulingAttempts,
		m.extensionPointDuration, m.pluginDuration,
		m.queueIncomingPods, m.queueIncomingEntities, m.goroutines, m.bindingDuration,
		m.preemptionAttempts, m.preemptionVictims, m.permitWaitDuration,
		m.podGroupAttempts, m.podGroupAttemptDuration, m.podGroupAlgorithmDuration,
	}
	if pending != nil {
		cs = append(cs, newPendingPodsCollector(pending))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// PreemptionAttempted counts a preemption attempt: every pod that fits
// nowhere in a profile that preempts, as kube-scheduler counts them.
func (m *Metrics) PreemptionAttempted() { m.preemptionAttempts.Inc() }

// PreemptionVictims records how many victims a preemption chose.
func (m *Metrics) PreemptionVictims(n int) { m.preemptionVictims.Observe(float64(n)) }

// PodQueued counts a pod entering queue because of event
// (scheduler_queue_incoming_pods_total). It implements queue.Metrics: the
// queue calls it with its lock held, so it takes no lock once the series is
// resolved, only atomics.
func (m *Metrics) PodQueued(q queue.Location, event queue.Event) {
	m.count(m.queueIncomingPods, m.incoming, q, event, nil)
}

// EntityQueued counts a pod entering queue as an entity of type "pod"
// (scheduler_queue_incoming_entities_total), when the queue says that
// kube-scheduler counts the move (queue.EntityMetrics).
func (m *Metrics) EntityQueued(q queue.Location, event queue.Event) {
	m.count(m.queueIncomingEntities, m.incomingEntities, q, event, []string{EntityPod})
}

// count increments vec's series for queue q and event, and extra labels,
// resolved once in cache.
func (m *Metrics) count(vec *prometheus.CounterVec, cache []lazyCounter, q queue.Location, event queue.Event, extra []string) {
	labels := func() []string { return append([]string{incomingQueue(q), event.String()}, extra...) }
	if q < 0 || int(q) >= maxLocations || int(event) >= m.numEvents {
		vec.WithLabelValues(labels()...).Inc()
		return
	}
	l := &cache[int(q)*m.numEvents+int(event)]
	c := l.load()
	if c == nil {
		c = l.store(vec.WithLabelValues(labels()...))
	}
	c.Inc()
}

// incomingQueue is the queue label of the incoming counters:
// kube-scheduler holds gated pods in its unschedulable pool
// (unschedulableEntities) and counts them arriving there under
// "unschedulable"; scheduler_pending_pods tells them apart.
func incomingQueue(q queue.Location) string {
	if q == queue.GatedPods {
		return queue.UnschedulablePods.String()
	}
	return q.String()
}

var (
	_ queue.Metrics       = (*Metrics)(nil)
	_ queue.EntityMetrics = (*Metrics)(nil)
)

// SchedulingAlgorithmDuration records how long a cycle took to pick a node
// or find that none fits (scheduler_scheduling_algorithm_duration_seconds).
func (m *Metrics) SchedulingAlgorithmDuration(d time.Duration) {
	m.algorithmDuration.Observe(d.Seconds())
}

// PodGroupAlgorithmDuration records how long a group cycle took to place
// its members or find that the group does not fit, before its members'
// Permit and bindings (scheduler_podgroup_scheduling_algorithm_duration_seconds).
func (m *Metrics) PodGroupAlgorithmDuration(d time.Duration) {
	m.podGroupAlgorithmDuration.Observe(d.Seconds())
}

// PodBound records a pod bound after attempts cycles, sinceFirst after it
// first became ready to schedule (scheduler_pod_scheduling_sli_duration_seconds,
// scheduler_pod_scheduling_attempts). A zero sinceFirst, from a pod whose
// first attempt time is unknown, records only the attempts.
func (m *Metrics) PodBound(attempts int, sinceFirst time.Duration) {
	m.podSchedulingAttempts.Observe(float64(attempts))
	if sinceFirst <= 0 {
		return
	}
	a := min(max(attempts, 0), maxAttemptsLabel)
	o := m.sli[a].load()
	if o == nil {
		label := strconv.Itoa(a)
		if a == maxAttemptsLabel {
			label += "+"
		}
		o = m.sli[a].store(m.podSchedulingSLI.WithLabelValues(label))
	}
	o.Observe(sinceFirst.Seconds())
}

// PermitWaited records how long a pod waited on Permit and how the wait
// ended (scheduler_permit_wait_duration_seconds, result = the status code).
func (m *Metrics) PermitWaited(code framework.Code, d time.Duration) {
	m.permitWaitDuration.WithLabelValues(code.String()).Observe(d.Seconds())
}

// BindingStarted counts a binding goroutine (scheduler_goroutines
// {operation="binding"}); call BindingDone when it ends.
func (m *Metrics) BindingStarted() { m.bindingGoroutines.Inc() }

// BindingDone ends what BindingStarted began and records how long the
// Binding took (yardmaster_binding_duration_seconds).
func (m *Metrics) BindingDone(d time.Duration, err error) {
	m.bindingGoroutines.Dec()
	if err != nil {
		m.bindingError.Observe(d.Seconds())
		return
	}
	m.bindingSuccess.Observe(d.Seconds())
}

// Profile returns the recorder of one scheduling profile's attempts and
// extension points.
func (m *Metrics) Profile(name string) *Profile {
	p := &Profile{m: m, name: name}
	p.attempts[scheduled] = m.scheduleAttempts.WithLabelValues(ScheduledResult, name)
	p.attempts[unschedulable] = m.scheduleAttempts.WithLabelValues(UnschedulableResult, name)
	p.attempts[schedulingError] = m.scheduleAttempts.WithLabelValues(ErrorResult, name)
	p.durations[scheduled] = m.attemptDuration.WithLabelValues(ScheduledResult, name)
	p.durations[unschedulable] = m.attemptDuration.WithLabelValues(UnschedulableResult, name)
	p.durations[schedulingError] = m.attemptDuration.WithLabelValues(ErrorResult, name)
	return p
}

// PluginTimer returns the recorder of one plugin's duration at one
// extension point (scheduler_plugin_execution_duration_seconds).
func (m *Metrics) PluginTimer(plugin string, point ExtensionPoint) *PluginTimer {
	return &PluginTimer{vec: m.pluginDuration, plugin: plugin, point: point.String()}
}

const (
	scheduled = iota
	unschedulable
	schedulingError
	numResults
)

// Profile records the attempts and extension points of one profile. The
// attempt series exist from the start (at zero), so that a rate over them
// is defined before the first pod arrives.
type Profile struct {
	m         *Metrics
	name      string
	attempts  [numResults]prometheus.Counter
	durations [numResults]prometheus.Observer
	// groupAttempts and groupDurations are parallel to podGroupResults.
	groupAttempts  [len(podGroupResults)]lazyCounter
	groupDurations [len(podGroupResults)]lazyObserver
	points         [numExtensionPoints][maxCodes]lazyObserver
}

// PodScheduled records an attempt that bound its pod, d after the cycle
// began.
func (p *Profile) PodScheduled(d time.Duration) { p.attempt(scheduled, d) }

// PodUnschedulable records an attempt that found no node for its pod.
func (p *Profile) PodUnschedulable(d time.Duration) { p.attempt(unschedulable, d) }

// PodScheduleError records an attempt that failed with an error, a failed
// Binding included.
func (p *Profile) PodScheduleError(d time.Duration) { p.attempt(schedulingError, d) }

func (p *Profile) attempt(result int, d time.Duration) {
	p.attempts[result].Inc()
	p.durations[result].Observe(d.Seconds())
}

// PodGroupAttempt records a pod group's attempt, one per group cycle,
// with its result (ScheduledResult, UnschedulableResult,
// WaitingOnPreemptionResult or ErrorResult), d after the cycle began
// (scheduler_podgroup_schedule_attempts_total and
// scheduler_podgroup_scheduling_attempt_duration_seconds). Each member's
// own attempt is recorded as well, as PodScheduled and the others, as
// kube-scheduler does. The series appear with the first group, as
// kube-scheduler registers them only with its GenericWorkload feature.
func (p *Profile) PodGroupAttempt(result string, d time.Duration) {
	i := slices.Index(podGroupResults[:], result)
	if i < 0 {
		p.m.podGroupAttempts.WithLabelValues(result, p.name).Inc()
		p.m.podGroupAttemptDuration.WithLabelValues(result, p.name).Observe(d.Seconds())
		return
	}
	l := &p.groupAttempts[i]
	c := l.load()
	if c == nil {
		c = l.store(p.m.podGroupAttempts.WithLabelValues(result, p.name))
	}
	c.Inc()
	o := p.groupDurations[i].load()
	if o == nil {
		o = p.groupDurations[i].store(p.m.podGroupAttemptDuration.WithLabelValues(result, p.name))
	}
	o.Observe(d.Seconds())
}

// podGroupResults are the results of a pod group's attempt, by index in
// a Profile's lazy series.
var podGroupResults = [...]string{ScheduledResult, UnschedulableResult, WaitingOnPreemptionResult, ErrorResult}

// ExtensionPoint records how long all of the profile's plugins at point
// took in one cycle, with the point's outcome
// (scheduler_framework_extension_point_duration_seconds).
func (p *Profile) ExtensionPoint(point ExtensionPoint, code framework.Code, d time.Duration) {
	if point < 0 || point >= numExtensionPoints || code < 0 || int(code) >= maxCodes {
		p.m.extensionPointDuration.WithLabelValues(point.String(), code.String(), p.name).Observe(d.Seconds())
		return
	}
	l := &p.points[point][code]
	o := l.load()
	if o == nil {
		o = l.store(p.m.extensionPointDuration.WithLabelValues(point.String(), code.String(), p.name))
	}
	o.Observe(d.Seconds())
}

// PluginTimer records one plugin's durations at one extension point. Safe
// for concurrent use, lock-free once a status code has been seen.
type PluginTimer struct {
	vec           *prometheus.HistogramVec
	plugin, point string
	byCode        [maxCodes]lazyObserver
}

// Observe records one call of the plugin that returned code and took d.
func (t *PluginTimer) Observe(code framework.Code, d time.Duration) {
	if code < 0 || int(code) >= maxCodes {
		t.vec.WithLabelValues(t.plugin, t.point, code.String()).Observe(d.Seconds())
		return
	}
	l := &t.byCode[code]
	o := l.load()
	if o == nil {
		o = l.store(t.vec.WithLabelValues(t.plugin, t.point, code.String()))
	}
	o.Observe(d.Seconds())
}

// lazyObserver is a histogram series resolved on first use: load returns
// nil until store. Two goroutines may resolve it at once; both get the same
// series from the vector. The label values are built only on a miss, so a
// hit allocates nothing.
type lazyObserver struct {
	p atomic.Pointer[prometheus.Observer]
}

func (l *lazyObserver) load() prometheus.Observer {
	if o := l.p.Load(); o != nil {
		return *o
	}
	return nil
}

func (l *lazyObserver) store(o prometheus.Observer) prometheus.Observer {
	l.p.Store(&o)
	return o
}

// lazyCounter is lazyObserver for a counter.
type lazyCounter struct {
	p atomic.Pointer[prometheus.Counter]
}

func (l *lazyCounter) load() prometheus.Counter {
	if c := l.p.Load(); c != nil {
		return *c
	}
	return nil
}

func (l *lazyCounter) store(c prometheus.Counter) prometheus.Counter {
	l.p.Store(&c)
	return c
}

// pendingPodsCollector is scheduler_pending_pods, read from the queue at
// scrape time: the queue keeps no gauge up to date on every transition.
// kube-scheduler v1.37 also reports "incomplete" and "pending", the pods
// of pod groups waiting for their PodGroup object or for their group's
// attempt to end, which it keeps outside its queues. yardmaster holds the
// first in its gated pods (GangScheduling's PreEnqueue) and reports them
// as "incomplete"; it has no second (a group's members are taken in one
// cycle), so that one is always 0.
// With it, scheduler_queued_entities (kube-scheduler v1.37), from the same
// read of the queue: type "pod" for the pods of no group, "podgroup" for
// the groups with members there. kube-scheduler shows a series once an
// entity of its kind entered that queue, yardmaster from the start.
type pendingPodsCollector struct {
	desc    *prometheus.Desc
	queued  *prometheus.Desc
	pending PendingPodsFunc
}

func newPendingPodsCollector(pending PendingPodsFunc) *pendingPodsCollector {
	return &pendingPodsCollector{
		desc: prometheus.NewDesc(prometheus.BuildFQName("", SchedulerSubsystem, "pending_pods"),
			"Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated; 'incomplete' means number of pods in incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods.",
			[]string{"queue"}, nil),
		queued: prometheus.NewDesc(prometheus.BuildFQName("", SchedulerSubsystem, "queued_entities"),
			"Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual pods that are not members of any podgroup) by the queue type. 'active' means number of entities in activeQ; 'backoff' means number of entities in backoffQ; 'unschedulable' means number of entities in unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable entities that the scheduler never attempted to schedule because they are gated.",
			[]string{"queue", "type"}, nil),
		pending: pending,
	}
}

func (c *pendingPodsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.queued
}

func (c *pendingPodsCollector) Collect(ch chan<- prometheus.Metric) {
	census := c.pending()
	for _, l := range []queue.Location{queue.ActiveQ, queue.BackoffQ, queue.UnschedulablePods, queue.GatedPods} {
		name := l.String()
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(census.Pods[l]), name)
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(census.Pods[l]-census.Members[l]), name, EntityPod)
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(census.Groups[l]), name, EntityPodGroup)
	}
	// kube-scheduler v1.37's series for pods outside its queues.
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(census.Incomplete), "incomplete")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 0, "pending")
}
