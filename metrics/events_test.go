package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

type fakeEventQueue struct {
	queued  int
	dropped int64
}

func (q *fakeEventQueue) Queued() int    { return q.queued }
func (q *fakeEventQueue) Dropped() int64 { return q.dropped }

func TestScheduledEventsMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	q := &fakeEventQueue{queued: 7, dropped: 2}
	if err := RegisterScheduledEvents(reg, q); err != nil {
		t.Fatal(err)
	}
	compareText(t, reg, "yardmaster_scheduled_events_queued", `
# HELP yardmaster_scheduled_events_queued Scheduled events waiting to be written; they yield to Bindings in flight.
# TYPE yardmaster_scheduled_events_queued gauge
yardmaster_scheduled_events_queued 7
`)
	q.dropped = 5
	compareText(t, reg, "yardmaster_scheduled_events_dropped_total", `
# HELP yardmaster_scheduled_events_dropped_total Scheduled events not written: the queue was full, the API server refused them, or the scheduler stopped first.
# TYPE yardmaster_scheduled_events_dropped_total counter
yardmaster_scheduled_events_dropped_total 5
`)
}
