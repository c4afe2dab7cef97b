package networktraffic

import (
	"strings"
	"testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

func TestRegistration(t *testing.T) {
	reg := framework.Registry{}
	if err := reg.Register(Registration(nil)); err != nil {
		t.Fatal(err)
	}
	r, ok := reg[Name]
	if !ok {
		t.Fatalf("no %s registration", Name)
	}
	for _, p := range []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore} {
		if !r.Implements(p) {
			t.Errorf("%s does not implement %s", r.Name, p)
		}
	}

	// Decoded args are defaulted before validation; the published
	// examples' names are accepted.
	args := r.NewArgs().(*Args)
	args.PrometheusAddress = "http://prometheus-k8s.monitoring:9090"
	args.NetworkInterface = "ens192"
	args.TimeRangeInSeconds = new(int64(60))
	if err := r.ValidateArgs(args); err != nil {
		t.Errorf("ValidateArgs: %v", err)
	}
	if err := r.ValidateArgs(r.NewArgs()); err == nil || !strings.Contains(err.Error(), "prometheusAddress") {
		t.Errorf("ValidateArgs without an address: %v", err)
	}
	if err := r.ValidateArgs(&struct{}{}); err == nil {
		t.Error("ValidateArgs accepted another plugin's args")
	}

	parts, err := r.New(args, frameworktest.NewHandle(frameworktest.NewSnapshot(nil, nil)))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if len(parts) != 1 {
		t.Fatalf("New returned %d parts", len(parts))
	}
	pl := parts[0]
	defer pl.(*NetworkTraffic).Source().Close()
	for name, ok := range map[string]bool{
		"PreFilterPlugin":  is[framework.PreFilterPlugin](pl),
		"FilterPlugin":     is[framework.FilterPlugin](pl),
		"PreScorePlugin":   is[framework.PreScorePlugin](pl),
		"ScorePlugin":      is[framework.ScorePlugin](pl),
		"BackgroundPlugin": is[framework.BackgroundPlugin](pl),
	} {
		if !ok {
			t.Errorf("the plugin is not a %s", name)
		}
	}
	if _, err := r.New(r.NewArgs(), frameworktest.NewHandle(frameworktest.NewSnapshot(nil, nil))); err == nil {
		t.Error("New without an address succeeded")
	}
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}
