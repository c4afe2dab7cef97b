package loadaware

import (
	"testing"
	"time"

	"go.uber.org/zap"
	testclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

func TestLoadHotSpotHints(t *testing.T) {
	clk := testclock.NewFakeClock(t0)
	pl, err := NewLoadHotSpot(&LoadHotSpotArgs{SourceArgs: source("http://127.0.0.1:1"), CPUUtilizationAbove: 80}, nil, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	events, err := pl.EventsToRegister(t.Context())
	if err != nil || len(events) != 3 {
		t.Fatalf("EventsToRegister = %v, %v; want a node event, a pod deletion and a new measurement", events, err)
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

// A new table of one of LoadHotSpot's metrics raises NodeMetrics; the
// pods it rejected are woken when the table has a node under that
// metric's threshold.
func TestLoadHotSpotNewMeasurement(t *testing.T) {
	clk := testclock.NewFakeClock(t0)
	h := frameworktest.NewHandle(nil)
	pl, err := NewLoadHotSpot(&LoadHotSpotArgs{SourceArgs: source("http://127.0.0.1:1"),
		CPUUtilizationAbove: 80, MemoryUtilizationAbove: 60}, h, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	table(pl.set.metrics[hotCPU], t0, 1, map[string]float64{"a": 90, "b": 85})
	table(pl.set.metrics[hotMem], t0, 1, map[string]float64{"a": 70})
	if got := h.Raised(); len(got) != 2 || got[0] != prommetric.NewTable || got[1] != prommetric.NewTable {
		t.Fatalf("raised %v, want two %v", got, prommetric.NewTable)
	}
	events, err := pl.EventsToRegister(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var hint framework.QueueingHintFn
	for _, e := range events {
		if e.Event.Match(prommetric.NewTable) {
			hint = e.QueueingHintFn
		}
	}
	if hint == nil {
		t.Fatal("NodeMetrics is not registered")
	}
	values := func(i int, v map[string]float64) *prommetric.Published {
		return &prommetric.Published{Plugin: LoadHotSpotName, Index: i, Table: &prommetric.Table{Values: v}}
	}
	for _, tt := range []struct {
		name string
		new  any
		want framework.QueueingHint
	}{
		{"every node still above the CPU threshold", values(hotCPU, map[string]float64{"a": 81, "b": 99}), framework.QueueSkip},
		{"a node at the CPU threshold", values(hotCPU, map[string]float64{"a": 80, "b": 99}), framework.Queue},
		{"memory judged by its own threshold", values(hotMem, map[string]float64{"a": 70}), framework.QueueSkip},
		{"a node under the memory threshold", values(hotMem, map[string]float64{"a": 70, "b": 30}), framework.Queue},
		{"another plugin's table", &prommetric.Published{Plugin: "NetworkTraffic", Table: &prommetric.Table{Values: map[string]float64{"a": 1}}}, framework.QueueSkip},
		{"not a measurement", "x", framework.Queue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hint(zap.NewNop(), assumed("waiting", "100m", "1Gi"), nil, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
