package framework

import (
	"errors"
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

type testArgs struct {
	Limit   int
	Default int
}

func (a *testArgs) SetDefaults() {
	if a.Default == 0 {
		a.Default = 7
	}
}

type testPlugin struct{ args *testArgs }

func (testPlugin) Name() string { return "T" }

func TestNewRegistration(t *testing.T) {
	r := NewRegistration("T", []string{PointFilter},
		func() *testArgs { return &testArgs{Limit: 3} },
		func(a *testArgs) error {
			if a.Default != 7 {
				t.Errorf("validate saw Default %d, want the defaulted 7", a.Default)
			}
			if a.Limit < 0 {
				return errors.New("limit: must not be negative")
			}
			return nil
		},
		func(a *testArgs, _ Handle) ([]Plugin, error) { return []Plugin{testPlugin{a}}, nil })
	args := r.NewArgs().(*testArgs)
	if args.Limit != 3 {
		t.Errorf("NewArgs = %+v, want the defaults", args)
	}
	if err := r.ValidateArgs(args); err != nil {
		t.Errorf("ValidateArgs(defaults) = %v", err)
	}
	if args.Default != 0 {
		t.Errorf("ValidateArgs changed its argument: %+v", args)
	}
	if err := r.ValidateArgs(&testArgs{Limit: -1}); err == nil {
		t.Error("ValidateArgs accepted a negative limit")
	}
	if err := r.ValidateArgs(&struct{}{}); err == nil || !strings.Contains(err.Error(), "args of type") {
		t.Errorf("ValidateArgs(another type) = %v", err)
	}
	ps, err := r.New(args, nil)
	if err != nil || len(ps) != 1 || ps[0].(testPlugin).args != args {
		t.Errorf("New = %v, %v", ps, err)
	}
	if _, err := r.New(&struct{}{}, nil); err == nil {
		t.Error("New accepted args of another type")
	}
}
