package framework

import (
	"fmt"
	"testing"
)

func TestShapeAt(t *testing.T) {
	// Scaled by MaxNodeScore/MaxShapeScore: (10,20) (50,100) (60,40).
	shape := NewShape([]UtilizationShapePoint{{Utilization: 10, Score: 2}, {Utilization: 50, Score: 10}, {Utilization: 60, Score: 4}})
	tests := []struct {
		p    int64
		want int64
	}{
		{p: 0, want: 20},   // before the first point: flat
		{p: 10, want: 20},  // on it
		{p: 30, want: 60},  // 20 + 80*20/40
		{p: 33, want: 66},  // 20 + 80*23/40 = 20 + 46
		{p: 50, want: 100}, // on the peak
		{p: 55, want: 70},  // 100 + (-60)*5/10
		{p: 57, want: 58},  // 100 + (-60)*7/10 = 100 - 42
		{p: 100, want: 40}, // after the last point: flat
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.p), func(t *testing.T) {
			if got := shape.At(tt.p); got != tt.want {
				t.Errorf("At(%d) = %d, want %d", tt.p, got, tt.want)
			}
		})
	}
}
