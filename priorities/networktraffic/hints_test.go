package networktraffic

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

func TestEventsToRegister(t *testing.T) {
	off := newTestPlugin(t, "", nil)
	if evs, err := off.EventsToRegister(t.Context()); err != nil || len(evs) != 0 {
		t.Errorf("without filterAbove: %v, %v; want no events (it rejects nothing)", evs, err)
	}
	tp := newTestPlugin(t, "", func(a *Args) { a.FilterAbove = 1 })
	evs, err := tp.EventsToRegister(t.Context())
	if err != nil || len(evs) != 3 {
		t.Fatalf("with filterAbove: %v, %v; want a node event, a pod deletion and a new sample", evs, err)
	}
	tp.setSample(map[string]float64{"n": 10}) // at t0
	hint := evs[1].QueueingHintFn
	for _, tt := range []struct {
		name    string
		deleted any
		want    framework.QueueingHint
	}{
		{"assumed, counted", assumedPod("p", "n"), framework.Queue},
		{"bound after the sample", boundPod("p", "n", t0.Add(time.Second)), framework.Queue},
		{"bound before the sample", boundPod("p", "n", t0.Add(-time.Minute)), framework.QueueSkip},
		{"not a pod", 42, framework.Queue},
	} {
		if got, err := hint(zap.NewNop(), nil, tt.deleted, nil); err != nil || got != tt.want {
			t.Errorf("%s: hint = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

// A new sample of the plugin wakes the pods filterAbove refused when a
// node is at or under it.
func TestNewSampleHint(t *testing.T) {
	tp := newTestPlugin(t, "", func(a *Args) { a.FilterAbove = 100 })
	evs, err := tp.EventsToRegister(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hint := evs[2].QueueingHintFn
	if !evs[2].Event.Match(prommetric.NewTable) {
		t.Fatalf("third registration %v, want %v", evs[2].Event, prommetric.NewTable)
	}
	sample := func(plugin string, v map[string]float64) *prommetric.Published {
		return &prommetric.Published{Plugin: plugin, Table: &prommetric.Table{Values: v}}
	}
	for _, tt := range []struct {
		name string
		new  any
		want framework.QueueingHint
	}{
		{"every node above", sample(Name, map[string]float64{"a": 101, "b": 500}), framework.QueueSkip},
		{"a node at filterAbove", sample(Name, map[string]float64{"a": 100, "b": 500}), framework.Queue},
		{"another plugin's table", sample("LoadHotSpot", map[string]float64{"a": 1}), framework.QueueSkip},
		{"not a sample", 42, framework.Queue},
	} {
		if got, err := hint(zap.NewNop(), nil, nil, tt.new); err != nil || got != tt.want {
			t.Errorf("%s: hint = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}
