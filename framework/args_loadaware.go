package framework

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PrometheusSourceArgs are the fields every metric plugin but
// NetworkTraffic (whose flat fields came first and are kept) shares: where
// Prometheus is and how often it is asked. Plugins whose arguments are
// equal here and that send the same query share one query per refresh.
type PrometheusSourceArgs struct {
	// PrometheusAddress is the base URL of the Prometheus HTTP API, e.g.
	// http://prometheus.monitoring:9090.
	PrometheusAddress string `json:"prometheusAddress,omitempty"`
	// NodeNameLabel is the label whose value is the Node name: the
	// node_uname_info label the built-in queries join on, or the label the
	// series of a custom query carry.
	NodeNameLabel string `json:"nodeNameLabel,omitempty"`
	// RefreshInterval is how often Prometheus is queried.
	RefreshInterval Duration `json:"refreshInterval"`
	// StaleAfter is the age after which a result is no longer used.
	StaleAfter Duration `json:"staleAfter"`
	// Timeout bounds each query.
	Timeout Duration `json:"timeout"`
	// MissingMetricsPolicy is neutral (score 50) or lowest (score 0) for a
	// node the answer has no value for while others have one.
	MissingMetricsPolicy MissingMetricsPolicy `json:"missingMetricsPolicy,omitempty"`
	// BearerTokenFile, when set, is read before every query and sent as
	// "Authorization: Bearer <token>".
	BearerTokenFile string `json:"bearerTokenFile,omitempty"`
	// TLSCAFile is a PEM bundle of the CAs that sign Prometheus's
	// certificate; the system roots when empty.
	TLSCAFile string `json:"tlsCAFile,omitempty"`
	// InsecureSkipVerify turns off certificate verification.
	InsecureSkipVerify bool `json:"insecureSkipVerify"`
}

// setDefaults fills the empty fields with NetworkTraffic's defaults.
func (a *PrometheusSourceArgs) setDefaults() {
	if a.NodeNameLabel == "" {
		a.NodeNameLabel = DefaultNodeNameLabel
	}
	if a.RefreshInterval.Duration == 0 {
		a.RefreshInterval.Duration = DefaultNetworkTrafficRefreshInterval
	}
	if a.StaleAfter.Duration == 0 {
		a.StaleAfter.Duration = DefaultNetworkTrafficStaleAfter
	}
	if a.Timeout.Duration == 0 {
		a.Timeout.Duration = DefaultNetworkTrafficTimeout
	}
	if a.MissingMetricsPolicy == "" {
		a.MissingMetricsPolicy = DefaultNetworkTrafficMissingMetricsPolicy
	}
}

// validate checks defaulted source args, as NetworkTraffic checks its own.
func (a *PrometheusSourceArgs) validate() field.ErrorList {
	var errs field.ErrorList
	addrPath := field.NewPath("prometheusAddress")
	if a.PrometheusAddress == "" {
		errs = append(errs, field.Required(addrPath, "the URL of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090"))
	} else {
		errs = append(errs, validatePrometheusAddress(a.PrometheusAddress, addrPath)...)
	}
	if !labelNameRE.MatchString(a.NodeNameLabel) || strings.HasPrefix(a.NodeNameLabel, "__") {
		errs = append(errs, field.Invalid(field.NewPath("nodeNameLabel"), a.NodeNameLabel,
			"must be a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)"))
	}
	if a.RefreshInterval.Duration < minNetworkTrafficRefreshInterval {
		errs = append(errs, field.Invalid(field.NewPath("refreshInterval"), a.RefreshInterval.String(), fmt.Sprintf("must be at least %s", minNetworkTrafficRefreshInterval)))
	}
	if a.StaleAfter.Duration <= a.RefreshInterval.Duration {
		errs = append(errs, field.Invalid(field.NewPath("staleAfter"), a.StaleAfter.String(),
			"must be longer than refreshInterval ("+a.RefreshInterval.String()+"), or every result goes stale before the next one arrives"))
	}
	if a.Timeout.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("timeout"), a.Timeout.String(), "must be positive"))
	}
	switch a.MissingMetricsPolicy {
	case MissingMetricsNeutral, MissingMetricsLowest:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("missingMetricsPolicy"), a.MissingMetricsPolicy,
			[]MissingMetricsPolicy{MissingMetricsNeutral, MissingMetricsLowest}))
	}
	if a.TLSCAFile != "" && strings.HasPrefix(a.PrometheusAddress, "http://") {
		errs = append(errs, field.Invalid(field.NewPath("tlsCAFile"), a.TLSCAFile, "is only used with an https prometheusAddress"))
	}
	if a.BearerTokenFile != "" && strings.HasPrefix(a.PrometheusAddress, "http://") {
		errs = append(errs, field.Invalid(field.NewPath("bearerTokenFile"), a.BearerTokenFile,
			"is only sent to an https prometheusAddress: over http anyone on the path could read the token"))
	}
	return errs
}

// validateWindow checks a PromQL range: at least a second, in whole
// milliseconds.
func validateWindow(d Duration, p *field.Path) field.ErrorList {
	switch tr := d.Duration; {
	case tr < minNetworkTimeRange:
		return field.ErrorList{field.Invalid(p, tr.String(), fmt.Sprintf("must be at least %s", minNetworkTimeRange))}
	case tr%time.Millisecond != 0:
		return field.ErrorList{field.Invalid(p, tr.String(), "must be a whole number of milliseconds (PromQL's resolution)")}
	}
	return nil
}

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

// PromDirection says which end of a PrometheusScore query's values is best.
type PromDirection string

// The directions.
const (
	HigherIsBetter PromDirection = "higherIsBetter"
	LowerIsBetter  PromDirection = "lowerIsBetter"
)

// PromNormalization says how PrometheusScore maps a cycle's values to
// scores.
type PromNormalization string

// The normalizations.
const (
	// NormalizationMinMax maps the smallest value among the feasible nodes
	// to one end of [0, 100] and the largest to the other.
	NormalizationMinMax PromNormalization = "minMax"
	// NormalizationRatio maps 0 to one end and the largest value to the
	// other (NetworkTraffic's relative scoring); values must not be
	// negative.
	NormalizationRatio PromNormalization = "ratio"
	// NormalizationRange maps the configured min and max to the ends,
	// values beyond them clamped: scores that do not depend on the other
	// nodes.
	NormalizationRange PromNormalization = "range"
)

// PrometheusScoreArgs are the arguments of PrometheusScore, which scores
// nodes by any PromQL query returning one value per node.
type PrometheusScoreArgs struct {
	PrometheusSourceArgs `json:",inline"`
	// Query is PromQL returning one series per node, labelled with
	// nodeNameLabel. Required.
	Query string `json:"query"`
	// Direction is higherIsBetter or lowerIsBetter.
	Direction PromDirection `json:"direction,omitempty"`
	// Normalization is minMax, ratio or range.
	Normalization PromNormalization `json:"normalization,omitempty"`
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
	DefaultPromNormalization = NormalizationMinMax
)

// SetDefaults fills the fields left empty.
func (a *PrometheusScoreArgs) SetDefaults() {
	a.setDefaults()
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
	errs := a.validate()
	if strings.TrimSpace(a.Query) == "" {
		errs = append(errs, field.Required(field.NewPath("query"), "PromQL returning one series per node, labelled with nodeNameLabel"))
	}
	switch a.Direction {
	case HigherIsBetter, LowerIsBetter:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("direction"), a.Direction, []PromDirection{HigherIsBetter, LowerIsBetter}))
	}
	switch a.Normalization {
	case NormalizationMinMax, NormalizationRatio:
		for _, f := range []struct {
			name string
			v    *float64
		}{{"min", a.Min}, {"max", a.Max}} {
			if f.v != nil {
				errs = append(errs, field.Forbidden(field.NewPath(f.name), "only used with normalization range"))
			}
		}
	case NormalizationRange:
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
			[]PromNormalization{NormalizationMinMax, NormalizationRatio, NormalizationRange}))
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
	PrometheusSourceArgs `json:",inline"`
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
	TimeRange Duration `json:"timeRange"`
	// Query, when set, replaces the built-in query: PromQL returning each
	// node's CPU utilization in percent.
	Query string `json:"query,omitempty"`
}

// SetDefaults fills the fields left empty with Trimaran's defaults.
func (a *TargetLoadPackingArgs) SetDefaults() {
	a.setDefaults()
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
	errs := a.validate()
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
	errs = append(errs, validateWindow(a.TimeRange, field.NewPath("timeRange"))...)
	errs = append(errs, validateQuery(a.Query, field.NewPath("query"))...)
	return errs.ToAggregate()
}

// LoadVariationRiskBalancingArgs are the arguments of
// LoadVariationRiskBalancing, which balances the risk (mean plus standard
// deviation of CPU and memory utilization over a window) among nodes
// (scheduler-plugins' Trimaran).
type LoadVariationRiskBalancingArgs struct {
	PrometheusSourceArgs `json:",inline"`
	// SafeVarianceMargin multiplies the standard deviation.
	SafeVarianceMargin float64 `json:"safeVarianceMargin"`
	// SafeVarianceSensitivity is the root taken of the standard deviation
	// (as a fraction of capacity) before the margin: above 1 it weighs
	// small variations more.
	SafeVarianceSensitivity float64 `json:"safeVarianceSensitivity"`
	// Window is the span the mean and standard deviation are taken over.
	Window Duration `json:"window"`
	// Resolution is the step of the subqueries over Window and the window
	// of the rate() over the CPU counters.
	Resolution Duration `json:"resolution"`
}

// SetDefaults fills the fields left empty with Trimaran's defaults.
func (a *LoadVariationRiskBalancingArgs) SetDefaults() {
	a.setDefaults()
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
	errs := a.validate()
	errs = append(errs, validateNonNegative(field.NewPath("safeVarianceMargin"), a.SafeVarianceMargin, "a number")...)
	if !(a.SafeVarianceSensitivity > 0) || math.IsInf(a.SafeVarianceSensitivity, 0) {
		errs = append(errs, field.Invalid(field.NewPath("safeVarianceSensitivity"), a.SafeVarianceSensitivity, "must be a number above 0"))
	}
	errs = append(errs, validateWindow(a.Window, field.NewPath("window"))...)
	errs = append(errs, validateWindow(a.Resolution, field.NewPath("resolution"))...)
	if a.Resolution.Duration > a.Window.Duration {
		errs = append(errs, field.Invalid(field.NewPath("resolution"), a.Resolution.String(), "must not be longer than window ("+a.Window.String()+")"))
	}
	return errs.ToAggregate()
}

// LoadHotSpotArgs are the arguments of LoadHotSpot, a filter that refuses
// nodes whose measured utilization (with the pods placed since) is above
// a threshold. Both thresholds are 0, off, by default.
type LoadHotSpotArgs struct {
	PrometheusSourceArgs `json:",inline"`
	// CPUUtilizationAbove, in percent, refuses nodes whose CPU utilization
	// exceeds it; 0 is off.
	CPUUtilizationAbove float64 `json:"cpuUtilizationAbove"`
	// MemoryUtilizationAbove, in percent, refuses nodes whose memory
	// utilization exceeds it; 0 is off.
	MemoryUtilizationAbove float64 `json:"memoryUtilizationAbove"`
	// TimeRange is the window of the rate() over the CPU counters.
	TimeRange Duration `json:"timeRange"`
	// DefaultRequestsMultiplier is TargetLoadPacking's: how a recently
	// placed pod's CPU request is turned into its expected use.
	DefaultRequestsMultiplier string `json:"defaultRequestsMultiplier,omitempty"`
}

// SetDefaults fills the fields left empty.
func (a *LoadHotSpotArgs) SetDefaults() {
	a.setDefaults()
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
	errs := a.validate()
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
	errs = append(errs, validateWindow(a.TimeRange, field.NewPath("timeRange"))...)
	return errs.ToAggregate()
}
