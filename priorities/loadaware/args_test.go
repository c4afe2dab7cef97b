package loadaware

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldsOf returns the field paths of a validation error.
func fieldsOf(err error) []string {
	if err == nil {
		return nil
	}
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return []string{"<not an aggregate>"}
	}
	var out []string
	for _, e := range agg.Errors() {
		var fe *field.Error
		if errors.As(e, &fe) {
			out = append(out, fe.Field)
		}
	}
	return out
}

func TestTargetLoadPackingArgsDefaults(t *testing.T) {
	a := &TargetLoadPackingArgs{SourceArgs: prommetric.SourceArgs{PrometheusAddress: "http://p:9090"}}
	a.SetDefaults()
	if a.TargetUtilization != 40 || a.DefaultRequestsMultiplier != "1.5" || a.RequestsMultiplier() != 1.5 {
		t.Errorf("defaults %d %q, want Trimaran's 40 and \"1.5\"", a.TargetUtilization, a.DefaultRequestsMultiplier)
	}
	if q := a.DefaultRequests[v1.ResourceCPU]; q.MilliValue() != 1000 {
		t.Errorf("defaultRequests.cpu = %v, want 1000m", q.String())
	}
	if err := ValidateTargetLoadPackingArgs(a); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
	// SetDefaults never writes into a map another copy shares.
	shared := v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}
	b := &TargetLoadPackingArgs{DefaultRequests: shared}
	b.SetDefaults()
	if _, ok := shared[v1.ResourceCPU]; ok {
		t.Errorf("SetDefaults wrote into the decoded map")
	}
}

func TestValidateLoadArgs(t *testing.T) {
	src := prommetric.SourceArgs{PrometheusAddress: "http://p:9090"}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		err  func() error
		want []string
	}{
		{"score: valid", func() error {
			a := &PrometheusScoreArgs{SourceArgs: src, Query: "up"}
			a.SetDefaults()
			return ValidatePrometheusScoreArgs(a)
		}, nil},
		{"score: no address, no query, bad direction", func() error {
			a := &PrometheusScoreArgs{Direction: "up"}
			a.SetDefaults()
			return ValidatePrometheusScoreArgs(a)
		}, []string{"prometheusAddress", "query", "direction"}},
		{"score: range without max, min on minMax", func() error {
			a := &PrometheusScoreArgs{SourceArgs: src, Query: "up", Normalization: prommetric.NormalizationRange, Min: f(0)}
			a.SetDefaults()
			if err := ValidatePrometheusScoreArgs(a); err != nil {
				return err
			}
			return nil
		}, []string{"max"}},
		{"score: max not above min", func() error {
			a := &PrometheusScoreArgs{SourceArgs: src, Query: "up", Normalization: prommetric.NormalizationRange, Min: f(1), Max: f(1)}
			a.SetDefaults()
			return ValidatePrometheusScoreArgs(a)
		}, []string{"max"}},
		{"packing: target, multiplier, requests, staleAfter", func() error {
			a := &TargetLoadPackingArgs{SourceArgs: src, TargetUtilization: 100, DefaultRequestsMultiplier: "0.5",
				DefaultRequests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}}
			a.StaleAfter.Duration = 1
			a.SetDefaults()
			return ValidateTargetLoadPackingArgs(a)
		}, []string{"staleAfter", "targetUtilization", "defaultRequests[memory]", "defaultRequestsMultiplier"}},
		{"risk: negative margin, zero-length resolution ok by default, resolution over window", func() error {
			a := &LoadVariationRiskBalancingArgs{SourceArgs: src, SafeVarianceMargin: -1}
			a.Resolution.Duration = 2 * DefaultLoadVariationWindow
			a.SetDefaults()
			return ValidateLoadVariationRiskBalancingArgs(a)
		}, []string{"safeVarianceMargin", "resolution"}},
		{"hot spot: threshold over 100, label", func() error {
			a := &LoadHotSpotArgs{SourceArgs: src, CPUUtilizationAbove: 120}
			a.NodeNameLabel = "__name__"
			a.SetDefaults()
			return ValidateLoadHotSpotArgs(a)
		}, []string{"nodeNameLabel", "cpuUtilizationAbove"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fieldsOf(tt.err())); diff != "" {
				t.Errorf("error fields (-want +got):\n%s", diff)
			}
		})
	}
}
