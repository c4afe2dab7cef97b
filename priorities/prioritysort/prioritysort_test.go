package prioritysort

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

func TestLess(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	queued := func(priority *int32, at time.Time) *framework.QueuedPodInfo {
		return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(&v1.Pod{Spec: v1.PodSpec{Priority: priority}}), Timestamp: at}
	}
	high, low, zero := int32(10), int32(-1), int32(0)
	tests := []struct {
		name string
		a, b *framework.QueuedPodInfo
		want bool
	}{
		{"higher priority first", queued(&high, t0.Add(time.Hour)), queued(&zero, t0), true},
		{"lower priority after", queued(&low, t0), queued(&zero, t0.Add(time.Hour)), false},
		{"no priority counts as 0: earlier first", queued(nil, t0), queued(&zero, t0.Add(time.Second)), true},
		{"same priority, later after", queued(&high, t0.Add(time.Second)), queued(&high, t0), false},
		{"equal: neither first", queued(&high, t0), queued(&high, t0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (PrioritySort{}).Less(tc.a, tc.b); got != tc.want {
				t.Errorf("Less = %v, want %v", got, tc.want)
			}
		})
	}
}
