package loadaware

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// The arguments of the load-aware plugins, one type each, all embedding
// prommetric.SourceArgs (where Prometheus is, how often it is asked):
// types, Trimaran's defaults where it has them, and validation of
// defaulted args, with field paths relative to the args.

// PromDirection says which end of a PrometheusScore query's values is best.
type PromDirection string

// The directions.
const (
	HigherIsBetter PromDirection = "higherIsBetter"
	LowerIsBetter  PromDirection = "lowerIsBetter"
)

// PrometheusScoreArgs are the arguments of PrometheusScore, which scores
// nodes by any PromQL query returning one value per node.
type PrometheusScoreArgs struct {
	prommetric.SourceArgs `json:",inline"`
	// Query is PromQL returning one series per node, labelled with
	// nodeNameLabel. Required.
	Query string `json:"query"`
	// Direction is higherIsBetter or lowerIsBetter.
	Direction PromDirection `json:"direction,omitempty"`
	// Normalization is minMax, ratio or range.
	Normalization prommetric.Normalization `json:"normalization,omitempty"`
	// Min and Max bound the values for normalization range.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// PodEstimate, in the query's unit, is added to a node's value for
	// every pod bound to it since the answer, until the next one.
	PodEstimate float64 `json:"podEstimate"`
}

// Defaults of PrometheusScoreArgs.
const (
	DefaultPromDirection     = LowerIsBetter
	DefaultPromNormalization = prommetric.NormalizationMinMax
)

// SetDefaults fills the fields left empty.
func (a *PrometheusScoreArgs) SetDefaults() {
	a.SourceArgs.SetDefaults()
	if a.Direction == "" {
		a.Direction = DefaultPromDirection
	}
	if a.Normalization == "" {
		a.Normalization = DefaultPromNormalization
	}
}

// ValidatePrometheusScoreArgs checks defaulted args; errors are
// field.Errors with paths relative to the args.
func ValidatePrometheusScoreArgs(a *PrometheusScoreArgs) error {
	errs := a.ValidateSource()
	if strings.TrimSpace(a.Query) == "" {
		errs = append(errs, field.Required(field.NewPath("query"), "PromQL returning one series per node, labelled with nodeNameLabel"))
	}
	switch a.Direction {
	case HigherIsBetter, LowerIsBetter:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("direction"), a.Direction, []PromDirection{HigherIsBetter, LowerIsBetter}))
	}
	switch a.Normalization {
	case prommetric.NormalizationMinMax, prommetric.NormalizationRatio:
		for _, f := range []struct {
			name string
			v    *float64
		}{{"min", a.Min}, {"max", a.Max}} {
			if f.v != nil {
				errs = append(errs, field.Forbidden(field.NewPath(f.name), "only used with normalization range"))
			}
		}
	case prommetric.NormalizationRange:
		switch {
		case a.Min == nil:
			errs = append(errs, field.Required(field.NewPath("min"), "the value that scores one end of the range"))
		case a.Max == nil:
			errs = append(errs, field.Required(field.NewPath("max"), "the value that scores the other end of the range"))
		case !(*a.Max > *a.Min) || math.IsInf(*a.Max, 0) || math.IsInf(*a.Min, 0):
			errs = append(errs, field.Invalid(field.NewPath("max"), *a.Max, fmt.Sprintf("must be finite and above min (%v)", *a.Min)))
		}
	default:
		errs = append(errs, field.NotSupported(field.NewPath("normalization"), a.Normalization,
			[]prommetric.Normalization{prommetric.NormalizationMinMax, prommetric.NormalizationRatio, prommetric.NormalizationRange}))
	}
	if math.IsNaN(a.PodEstimate) || math.IsInf(a.PodEstimate, 0) {
		errs = append(errs, field.Invalid(field.NewPath("podEstimate"), a.PodEstimate, "must be a finite number"))
	}
	return errs.ToAggregate()
}

// Defaults of the load plugins' arguments: Trimaran's where it has them.
const (
	DefaultTargetUtilization          int64 = 40
	DefaultRequestsMilliCPU           int64 = 1000
	DefaultRequestsMultiplier               = "1.5"
	DefaultSafeVarianceMargin               = 1.0
	DefaultSafeVarianceSensitivity          = 1.0
	DefaultLoadRateWindow                   = time.Minute
	DefaultLoadVariationWindow              = 15 * time.Minute
	DefaultLoadVariationResolution          = time.Minute
	DefaultLoadRefreshInterval              = 15 * time.Second
	DefaultLoadHotSpotCPUPercentAbove       = 0.0
)

// TargetLoadPackingArgs are the arguments of TargetLoadPacking, which
// packs pods onto nodes until their measured CPU utilization reaches
// targetUtilization, then spreads them (scheduler-plugins' Trimaran).
type TargetLoadPackingArgs struct {
	prommetric.SourceArgs `json:",inline"`
	// TargetUtilization is the CPU utilization, in percent, to pack nodes
	// up to.
	TargetUtilization int64 `json:"targetUtilization"`
	// DefaultRequests is the CPU a container without requests or limits is
	// expected to use.
	DefaultRequests v1.ResourceList `json:"defaultRequests,omitempty"`
	// DefaultRequestsMultiplier multiplies the CPU request of a container
	// without a CPU limit, as a decimal string ("1.5").
	DefaultRequestsMultiplier string `json:"defaultRequestsMultiplier,omitempty"`
	// TimeRange is the window of the rate() over node_exporter's CPU
	// counters.
	TimeRange prommetric.Duration `json:"timeRange"`
	// Query, when set, replaces the built-in query: PromQL returning each
	// node's CPU utilization in percent.
	Query string `json:"query,omitempty"`
}

// SetDefaults fills the fields left empty with Trimaran's defaults.
func (a *TargetLoadPackingArgs) SetDefaults() {
	a.SourceArgs.SetDefaults()
	if a.TargetUtilization == 0 {
		a.TargetUtilization = DefaultTargetUtilization
	}
	if _, ok := a.DefaultRequests[v1.ResourceCPU]; !ok {
		// A new map: the one decoded may be shared with a copy of the args.
		rl := make(v1.ResourceList, len(a.DefaultRequests)+1)
		for k, v := range a.DefaultRequests {
			rl[k] = v
		}
		rl[v1.ResourceCPU] = *resource.NewMilliQuantity(DefaultRequestsMilliCPU, resource.DecimalSI)
		a.DefaultRequests = rl
	}
	if a.DefaultRequestsMultiplier == "" {
		a.DefaultRequestsMultiplier = DefaultRequestsMultiplier
	}
	if a.TimeRange.Duration == 0 {
		a.TimeRange.Duration = DefaultLoadRateWindow
	}
}

// RequestsMultiplier returns DefaultRequestsMultiplier as a number; valid
// args always parse.
func (a *TargetLoadPackingArgs) RequestsMultiplier() float64 {
	f, _ := strconv.ParseFloat(a.DefaultRequestsMultiplier, 64)
	return f
}

// ValidateTargetLoadPackingArgs checks defaulted args.
func ValidateTargetLoadPackingArgs(a *TargetLoadPackingArgs) error {
	errs := a.ValidateSource()
	if a.TargetUtilization <= 0 || a.TargetUtilization >= 100 {
		errs = append(errs, field.Invalid(field.NewPath("targetUtilization"), a.TargetUtilization, "must be a percentage above 0 and below 100"))
	}
	for name, q := range a.DefaultRequests {
		p := field.NewPath("defaultRequests").Key(string(name))
		if name != v1.ResourceCPU {
			errs = append(errs, field.NotSupported(p, name, []v1.ResourceName{v1.ResourceCPU}))
		} else if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must not be negative"))
		}
	}
	if f, err := strconv.ParseFloat(a.DefaultRequestsMultiplier, 64); err != nil || f < 1 || math.IsInf(f, 0) {
		errs = append(errs, field.Invalid(field.NewPath("defaultRequestsMultiplier"), a.DefaultRequestsMultiplier, "must be a decimal number, 1 or more"))
	}
	errs = append(errs, prommetric.ValidateWindow(a.TimeRange, field.NewPath("timeRange"))...)
	errs = append(errs, validateQuery(a.Query, field.NewPath("query"))...)
	return errs.ToAggregate()
}

// LoadVariationRiskBalancingArgs are the arguments of
// LoadVariationRiskBalancing, which balances the risk (mean plus standard
// deviation of CPU and memory utilization over a window) among nodes
// (scheduler-plugins' Trimaran).
type LoadVariationRiskBalancingArgs struct {
	prommetric.SourceArgs `json:",inline"`
	// SafeVarianceMargin multiplies the standard deviation.
	SafeVarianceMargin float64 `json:"safeVarianceMargin"`
	// SafeVarianceSensitivity is the root taken of the standard deviation
	// (as a fraction of capacity) before the margin: above 1 it weighs
	// small variations more.
	SafeVarianceSensitivity float64 `json:"safeVarianceSensitivity"`
	// Window is the span the mean and standard deviation are taken over.
	Window prommetric.Duration `json:"window"`
	// Resolution is the step of the subqueries over Window and the window
	// of the rate() over the CPU counters.
	Resolution prommetric.Duration `json:"resolution"`
}

// SetDefaults fills the fields left empty with Trimaran's defaults.
func (a *LoadVariationRiskBalancingArgs) SetDefaults() {
	a.SourceArgs.SetDefaults()
	if a.SafeVarianceMargin == 0 {
		a.SafeVarianceMargin = DefaultSafeVarianceMargin
	}
	if a.SafeVarianceSensitivity == 0 {
		a.SafeVarianceSensitivity = DefaultSafeVarianceSensitivity
	}
	if a.Window.Duration == 0 {
		a.Window.Duration = DefaultLoadVariationWindow
	}
	if a.Resolution.Duration == 0 {
		a.Resolution.Duration = DefaultLoadVariationResolution
	}
}

// ValidateLoadVariationRiskBalancingArgs checks defaulted args.
func ValidateLoadVariationRiskBalancingArgs(a *LoadVariationRiskBalancingArgs) error {
	errs := a.ValidateSource()
	errs = append(errs, validateNonNegative(field.NewPath("safeVarianceMargin"), a.SafeVarianceMargin, "a number")...)
	if !(a.SafeVarianceSensitivity > 0) || math.IsInf(a.SafeVarianceSensitivity, 0) {
		errs = append(errs, field.Invalid(field.NewPath("safeVarianceSensitivity"), a.SafeVarianceSensitivity, "must be a number above 0"))
	}
	errs = append(errs, prommetric.ValidateWindow(a.Window, field.NewPath("window"))...)
	errs = append(errs, prommetric.ValidateWindow(a.Resolution, field.NewPath("resolution"))...)
	if a.Resolution.Duration > a.Window.Duration {
		errs = append(errs, field.Invalid(field.NewPath("resolution"), a.Resolution.String(), "must not be longer than window ("+a.Window.String()+")"))
	}
	return errs.ToAggregate()
}

// LoadHotSpotArgs are the arguments of LoadHotSpot, a filter that refuses
// nodes whose measured utilization (with the pods placed since) is above
// a threshold. Both thresholds are 0, off, by default.
type LoadHotSpotArgs struct {
	prommetric.SourceArgs `json:",inline"`
	// CPUUtilizationAbove, in percent, refuses nodes whose CPU utilization
	// exceeds it; 0 is off.
	CPUUtilizationAbove float64 `json:"cpuUtilizationAbove"`
	// MemoryUtilizationAbove, in percent, refuses nodes whose memory
	// utilization exceeds it; 0 is off.
	MemoryUtilizationAbove float64 `json:"memoryUtilizationAbove"`
	// TimeRange is the window of the rate() over the CPU counters.
	TimeRange prommetric.Duration `json:"timeRange"`
	// DefaultRequestsMultiplier is TargetLoadPacking's: how a recently
	// placed pod's CPU request is turned into its expected use.
	DefaultRequestsMultiplier string `json:"defaultRequestsMultiplier,omitempty"`
}

// SetDefaults fills the fields left empty.
func (a *LoadHotSpotArgs) SetDefaults() {
	a.SourceArgs.SetDefaults()
	if a.TimeRange.Duration == 0 {
		a.TimeRange.Duration = DefaultLoadRateWindow
	}
	if a.DefaultRequestsMultiplier == "" {
		a.DefaultRequestsMultiplier = DefaultRequestsMultiplier
	}
}

// RequestsMultiplier returns DefaultRequestsMultiplier as a number.
func (a *LoadHotSpotArgs) RequestsMultiplier() float64 {
	f, _ := strconv.ParseFloat(a.DefaultRequestsMultiplier, 64)
	return f
}

// ValidateLoadHotSpotArgs checks defaulted args.
func ValidateLoadHotSpotArgs(a *LoadHotSpotArgs) error {
	errs := a.ValidateSource()
	for _, f := range []struct {
		name string
		v    float64
	}{{"cpuUtilizationAbove", a.CPUUtilizationAbove}, {"memoryUtilizationAbove", a.MemoryUtilizationAbove}} {
		if f.v < 0 || f.v > 100 || math.IsNaN(f.v) {
			errs = append(errs, field.Invalid(field.NewPath(f.name), f.v, "must be a percentage from 0 (off) to 100"))
		}
	}
	if f, err := strconv.ParseFloat(a.DefaultRequestsMultiplier, 64); err != nil || f < 1 || math.IsInf(f, 0) {
		errs = append(errs, field.Invalid(field.NewPath("defaultRequestsMultiplier"), a.DefaultRequestsMultiplier, "must be a decimal number, 1 or more"))
	}
	errs = append(errs, prommetric.ValidateWindow(a.TimeRange, field.NewPath("timeRange"))...)
	return errs.ToAggregate()
}

// Every load-aware args type defaults itself, as framework.NewRegistration
// expects of args whose NewArgs is empty.
var (
	_ framework.ArgsDefaulter = (*PrometheusScoreArgs)(nil)
	_ framework.ArgsDefaulter = (*TargetLoadPackingArgs)(nil)
	_ framework.ArgsDefaulter = (*LoadVariationRiskBalancingArgs)(nil)
	_ framework.ArgsDefaulter = (*LoadHotSpotArgs)(nil)
)

// validateQuery checks an optional custom query.
func validateQuery(q string, p *field.Path) field.ErrorList {
	if q != "" && strings.TrimSpace(q) == "" {
		return field.ErrorList{field.Invalid(p, q, "must be PromQL or empty")}
	}
	return nil
}

// validateNonNegative checks float fields that must be finite and ≥ 0.
func validateNonNegative(p *field.Path, v float64, unit string) field.ErrorList {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return field.ErrorList{field.Invalid(p, v, "must be "+unit+", 0 or more")}
	}
	return nil
}
