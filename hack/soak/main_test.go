package main

import (
	"testing"
	"time"
)

func TestFlatness(t *testing.T) {
	run := func(goroutines, heap func(i int) float64) []sample {
		var s []sample
		for i := range 12 {
			s = append(s, sample{elapsed: time.Duration(i) * time.Minute, goroutines: goroutines(i), heap: heap(i)})
		}
		return s
	}
	flat := func(v float64) func(int) float64 {
		return func(i int) float64 {
			if i < 2 {
				return v / 2 // warm-up
			}
			return v
		}
	}
	growing := func(i int) float64 { return 100 + 20*float64(i) }
	if got := flatness(run(flat(300), flat(50<<20)), 0.25); len(got) != 0 {
		t.Errorf("flat after warm-up: %v", got)
	}
	if got := flatness(run(growing, flat(50<<20)), 0.25); len(got) != 1 {
		t.Errorf("goroutines growing: %v, want one failure", got)
	}
	if got := flatness(run(flat(300), growing), 0.25); len(got) != 1 {
		t.Errorf("heap growing: %v, want one failure", got)
	}
	if got := flatness(run(flat(300), flat(1))[:3], 0.25); len(got) != 1 {
		t.Errorf("too few samples: %v, want one failure", got)
	}
}
