package networktraffic

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/yardmaster-io/yardmaster/framework"
)

func TestEventsToRegister(t *testing.T) {
	off := newTestPlugin(t, "", nil)
	if evs, err := off.EventsToRegister(t.Context()); err != nil || len(evs) != 0 {
		t.Errorf("without filterAbove: %v, %v; want no events (it rejects nothing)", evs, err)
	}
	tp := newTestPlugin(t, "", func(a *framework.NetworkTrafficArgs) { a.FilterAbove = 1 })
	evs, err := tp.EventsToRegister(t.Context())
	if err != nil || len(evs) != 2 {
		t.Fatalf("with filterAbove: %v, %v; want a node event and a pod deletion", evs, err)
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
