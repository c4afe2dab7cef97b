package loadaware

import (
	"testing"
	"time"

	"go.uber.org/zap"
	testclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
)

func TestLoadHotSpotHints(t *testing.T) {
	clk := testclock.NewFakeClock(t0)
	pl, err := NewLoadHotSpot(&framework.LoadHotSpotArgs{PrometheusSourceArgs: source("http://127.0.0.1:1"), CPUUtilizationAbove: 80}, nil, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	events, err := pl.EventsToRegister(t.Context())
	if err != nil || len(events) != 2 {
		t.Fatalf("EventsToRegister = %v, %v; want a node event and a pod deletion", events, err)
	}
	hint := events[1].QueueingHintFn
	table(pl.set.metrics[hotCPU], t0, 1, map[string]float64{"hot": 90})
	pod := assumed("waiting", "100m", "1Gi")
	for _, tt := range []struct {
		name    string
		deleted any
		want    framework.QueueingHint
	}{
		// Placed since the table, less its 60s window: its estimate leaves.
		{"placed since", assumed("gone", "1", "1Gi"), framework.Queue},
		{"bound 30s before the table", boundAt(assumed("gone", "1", "1Gi"), t0.Add(-30*time.Second)), framework.Queue},
		// In the measurement: only a new table can tell.
		{"bound long before", boundAt(assumed("gone", "1", "1Gi"), t0.Add(-time.Hour)), framework.QueueSkip},
		{"not a pod", "tombstone", framework.Queue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hint(zap.NewNop(), pod, tt.deleted, nil)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
