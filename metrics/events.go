package metrics

import "github.com/prometheus/client_golang/prometheus"

// EventQueue is what an event writer reports (see binder.ScheduledEvents
// and binder.FailureEvents): how many events wait and how many were
// dropped.
type EventQueue interface {
	Queued() int
	Dropped() int64
}

// RegisterScheduledEvents registers, on reg, the gauge
// yardmaster_scheduled_events_queued and the counter
// yardmaster_scheduled_events_dropped_total, both read from q when scraped.
// kube-scheduler writes its events through client-go's recorder, which
// reports neither.
func RegisterScheduledEvents(reg prometheus.Registerer, q EventQueue) error {
	return registerEventQueue(reg, q, "scheduled",
		"Scheduled events waiting to be written; they yield to Bindings in flight.",
		"Scheduled events not written: the queue was full, the API server refused them, or the scheduler stopped first.")
}

// RegisterFailureEvents registers, on reg, the gauge
// yardmaster_failedscheduling_events_queued and the counter
// yardmaster_failedscheduling_events_dropped_total, read from q.
func RegisterFailureEvents(reg prometheus.Registerer, q EventQueue) error {
	return registerEventQueue(reg, q, "failedscheduling",
		"Pods whose FailedScheduling event (or its series) waits to be written.",
		"Scheduling failures not written as events: too many pods, the API server refused them, or the scheduler stopped first.")
}

func registerEventQueue(reg prometheus.Registerer, q EventQueue, kind, queuedHelp, droppedHelp string) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "yardmaster_" + kind + "_events_queued",
			Help: queuedHelp,
		}, func() float64 { return float64(q.Queued()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "yardmaster_" + kind + "_events_dropped_total",
			Help: droppedHelp,
		}, func() float64 { return float64(q.Dropped()) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// StatusPatchQueue is the binder's writer of pods' status patches.
type StatusPatchQueue interface {
	StatusPatchesQueued() int
	StatusPatchesDropped() int64
}

// RegisterStatusPatches registers the gauges of q's backlog and drops.
func RegisterStatusPatches(reg prometheus.Registerer, q StatusPatchQueue) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "yardmaster_status_patches_queued",
			Help: "Pod status patches (PodScheduled condition, nominated node) waiting to be written.",
		}, func() float64 { return float64(q.StatusPatchesQueued()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "yardmaster_status_patches_dropped_total",
			Help: "Pod status patches not written because too many were waiting.",
		}, func() float64 { return float64(q.StatusPatchesDropped()) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
