package metrics

import "github.com/prometheus/client_golang/prometheus"

// EventQueue is what the Scheduled-event writer reports (see
// binder.ScheduledEvents): how many events wait and how many were dropped.
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
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "yardmaster_scheduled_events_queued",
			Help: "Scheduled events waiting to be written; they yield to Bindings in flight.",
		}, func() float64 { return float64(q.Queued()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "yardmaster_scheduled_events_dropped_total",
			Help: "Scheduled events not written: the queue was full, the API server refused them, or the scheduler stopped first.",
		}, func() float64 { return float64(q.Dropped()) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
