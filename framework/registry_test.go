package framework

import (
	"strings"
	"testing"
)

func TestRegisterSteps(t *testing.T) {
	tests := []struct {
		name string
		r    Registration
		err  string // empty: registered
	}{
		{"a preFilter step of a filter", Registration{Name: "a", Points: []string{PointFilter}, Steps: map[string]string{PointPreFilter: PointFilter}}, ""},
		{"a step at a point that adds up", Registration{Name: "b", Points: []string{PointPreScore}, Steps: map[string]string{PointScore: PointPreScore}}, "only preFilter and preScore"},
		{"a step where the plugin is configured", Registration{Name: "c", Points: []string{PointPreFilter, PointFilter}, Steps: map[string]string{PointPreFilter: PointFilter}}, "where it is configured"},
		{"a step serving nothing", Registration{Name: "d", Points: []string{PointFilter}, Steps: map[string]string{PointPreScore: PointScore}}, "does not implement"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Registry{}.Register(tc.r)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("Register: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("Register = %v, want an error containing %q", err, tc.err)
			}
		})
	}
}
