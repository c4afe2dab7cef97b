package networktraffic

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// Direction selects the node_exporter counters NetworkTraffic adds up.
type Direction string

// The directions NetworkTraffic can measure.
const (
	DirectionReceive  Direction = "receive"
	DirectionTransmit Direction = "transmit"
	DirectionBoth     Direction = "both"
)

// Defaults of Args; the source fields' (node name label, refresh
// interval, staleAfter, timeout, missing-metrics policy) are prommetric's.
const (
	// DefaultDeviceName matches the usual physical interfaces and leaves
	// out loopback, bridges, veths and tunnels, whose traffic is counted
	// again on the physical interface or never leaves the node.
	DefaultDeviceName = "eth0|ens.*|eno.*"
	// DefaultTimeRange is the window of the rate() over the byte counters.
	DefaultTimeRange = 60 * time.Second
	// DefaultDirection adds up both directions.
	DefaultDirection = DirectionBoth
)

// Args are the arguments of NetworkTraffic, which scores nodes
// by the network traffic Prometheus measured on them.
//
// Three fields have a deprecated older name, accepted so that configurations
// written for the published NetworkTraffic examples load: ip
// (prometheusAddress), networkInterface (deviceName, as a literal device
// name) and timeRangeInSeconds (timeRange). SetDefaults moves them to the
// new names.
type Args struct {
	// PrometheusAddress is the base URL of the Prometheus HTTP API, e.g.
	// http://prometheus.monitoring:9090.
	PrometheusAddress string `json:"prometheusAddress,omitempty"`
	// IP is the deprecated name of PrometheusAddress; "http://" is assumed
	// when it has no scheme.
	IP string `json:"ip,omitempty"`
	// DeviceName is a regular expression (RE2, fully anchored, as in a
	// PromQL =~ matcher) on node_exporter's device label.
	DeviceName string `json:"deviceName,omitempty"`
	// NetworkInterface is the deprecated name of DeviceName: a literal
	// device name, not a regular expression.
	NetworkInterface string `json:"networkInterface,omitempty"`
	// TimeRange is the window of the rate() over the byte counters.
	TimeRange prommetric.Duration `json:"timeRange"`
	// TimeRangeInSeconds is the deprecated name of TimeRange.
	TimeRangeInSeconds *int64 `json:"timeRangeInSeconds,omitempty"`
	// Direction is receive, transmit or both.
	Direction Direction `json:"direction,omitempty"`
	// NodeNameLabel is the label whose value is the Node name: the
	// node_uname_info label the default query joins on, or the label the
	// series of a custom Query carry.
	NodeNameLabel string `json:"nodeNameLabel,omitempty"`
	// Query, when set, replaces the default query: PromQL returning one
	// series per node, labelled with NodeNameLabel, valued in bytes/s.
	// DeviceName, Direction and TimeRange are then unused.
	Query string `json:"query,omitempty"`
	// RefreshInterval is how often Prometheus is queried.
	RefreshInterval prommetric.Duration `json:"refreshInterval"`
	// StaleAfter is the age after which a result is no longer used.
	StaleAfter prommetric.Duration `json:"staleAfter"`
	// Timeout bounds each query.
	Timeout prommetric.Duration `json:"timeout"`
	// MaxBandwidth, in bytes/s, is the traffic that scores 0. Zero means
	// relative scoring: the busiest feasible node scores 0.
	MaxBandwidth float64 `json:"maxBandwidth"`
	// FilterAbove, in bytes/s, when above zero, also filters out nodes whose
	// traffic exceeds it.
	FilterAbove float64 `json:"filterAbove"`
	// MissingMetricsPolicy is neutral (score 50) or lowest (score 0).
	MissingMetricsPolicy prommetric.MissingMetricsPolicy `json:"missingMetricsPolicy,omitempty"`
	// PodBandwidthEstimate, in bytes/s, is added to a node's traffic for
	// every pod bound to it since the sample was taken, until the next
	// sample; a pod's yardmaster.io/bandwidth annotation overrides it.
	PodBandwidthEstimate float64 `json:"podBandwidthEstimate"`
	// BearerTokenFile, when set, is read before every query and sent as
	// "Authorization: Bearer <token>".
	BearerTokenFile string `json:"bearerTokenFile,omitempty"`
	// TLSCAFile is a PEM bundle of the CAs that sign Prometheus's
	// certificate; the system roots when empty.
	TLSCAFile string `json:"tlsCAFile,omitempty"`
	// InsecureSkipVerify turns off certificate verification.
	InsecureSkipVerify bool `json:"insecureSkipVerify"`
}

// DefaultArgs returns the defaults of every field.
// PrometheusAddress has none: it must be configured.
func DefaultArgs() *Args {
	a := &Args{}
	a.SetDefaults()
	return a
}

// SetDefaults moves the deprecated fields to their new names and fills the
// fields left empty or zero with their defaults. A deprecated field is left
// in place, for ValidateArgs to report, when its new name is
// set too or when its value is invalid.
func (a *Args) SetDefaults() {
	if a.IP != "" && a.PrometheusAddress == "" {
		a.PrometheusAddress = a.IP
		if !strings.Contains(a.PrometheusAddress, "://") {
			a.PrometheusAddress = "http://" + a.PrometheusAddress
		}
		a.IP = ""
	}
	if a.NetworkInterface != "" && a.DeviceName == "" {
		a.DeviceName = regexp.QuoteMeta(a.NetworkInterface)
		a.NetworkInterface = ""
	}
	if a.TimeRangeInSeconds != nil && a.TimeRange.Duration == 0 && *a.TimeRangeInSeconds > 0 &&
		*a.TimeRangeInSeconds <= math.MaxInt64/int64(time.Second) {
		a.TimeRange.Duration = time.Duration(*a.TimeRangeInSeconds) * time.Second
		a.TimeRangeInSeconds = nil
	}
	if a.DeviceName == "" && a.NetworkInterface == "" {
		a.DeviceName = DefaultDeviceName
	}
	if a.TimeRange.Duration == 0 && a.TimeRangeInSeconds == nil {
		a.TimeRange.Duration = DefaultTimeRange
	}
	if a.Direction == "" {
		a.Direction = DefaultDirection
	}
	if a.NodeNameLabel == "" {
		a.NodeNameLabel = prommetric.DefaultNodeNameLabel
	}
	if a.RefreshInterval.Duration == 0 {
		a.RefreshInterval.Duration = prommetric.DefaultRefreshInterval
	}
	if a.StaleAfter.Duration == 0 {
		a.StaleAfter.Duration = prommetric.DefaultStaleAfter
	}
	if a.Timeout.Duration == 0 {
		a.Timeout.Duration = prommetric.DefaultTimeout
	}
	if a.MissingMetricsPolicy == "" {
		a.MissingMetricsPolicy = prommetric.DefaultMissingMetricsPolicy
	}
}

// ValidateArgs checks defaulted args. Errors are
// field.Errors with paths relative to the args ("timeRange").
func ValidateArgs(a *Args) error {
	var errs field.ErrorList

	addrPath := field.NewPath("prometheusAddress")
	if a.IP != "" {
		errs = append(errs, field.Forbidden(field.NewPath("ip"), "deprecated name of prometheusAddress; set only prometheusAddress"))
	}
	if a.PrometheusAddress == "" {
		if a.IP == "" {
			errs = append(errs, field.Required(addrPath, "the URL of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090"))
		}
	} else {
		errs = append(errs, prommetric.ValidatePrometheusAddress(a.PrometheusAddress, addrPath)...)
	}

	if a.NetworkInterface != "" {
		errs = append(errs, field.Forbidden(field.NewPath("networkInterface"), "deprecated name of deviceName; set only deviceName"))
	}
	devPath := field.NewPath("deviceName")
	if a.Query == "" {
		if a.DeviceName == "" {
			errs = append(errs, field.Required(devPath, "a regular expression on node_exporter's device label"))
		} else if _, err := regexp.Compile("^(?:" + a.DeviceName + ")$"); err != nil {
			errs = append(errs, field.Invalid(devPath, a.DeviceName, fmt.Sprintf("not a regular expression: %v", err)))
		}
	}

	if a.TimeRangeInSeconds != nil {
		p := field.NewPath("timeRangeInSeconds")
		if a.TimeRange.Duration != 0 {
			errs = append(errs, field.Forbidden(p, "deprecated name of timeRange; set only timeRange"))
		} else {
			errs = append(errs, field.Invalid(p, *a.TimeRangeInSeconds, "must be a positive number of seconds (deprecated: use timeRange)"))
		}
	}
	// An invalid timeRangeInSeconds, left in place, is reported above.
	if a.TimeRangeInSeconds == nil || a.TimeRange.Duration != 0 {
		errs = append(errs, prommetric.ValidateWindow(a.TimeRange, field.NewPath("timeRange"))...)
	}

	switch a.Direction {
	case DirectionReceive, DirectionTransmit, DirectionBoth:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("direction"), a.Direction,
			[]Direction{DirectionReceive, DirectionTransmit, DirectionBoth}))
	}

	errs = append(errs, prommetric.ValidateLabelName(a.NodeNameLabel, field.NewPath("nodeNameLabel"))...)
	if a.Query != "" && strings.TrimSpace(a.Query) == "" {
		errs = append(errs, field.Invalid(field.NewPath("query"), a.Query, "must be PromQL or empty"))
	}

	refreshPath := field.NewPath("refreshInterval")
	if a.RefreshInterval.Duration < prommetric.MinRefreshInterval {
		errs = append(errs, field.Invalid(refreshPath, a.RefreshInterval.String(), fmt.Sprintf("must be at least %s", prommetric.MinRefreshInterval)))
	}
	if a.StaleAfter.Duration <= a.RefreshInterval.Duration {
		errs = append(errs, field.Invalid(field.NewPath("staleAfter"), a.StaleAfter.String(),
			"must be longer than refreshInterval ("+a.RefreshInterval.String()+"), or every result goes stale before the next one arrives"))
	}
	if a.Timeout.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("timeout"), a.Timeout.String(), "must be positive"))
	}

	for _, f := range []struct {
		name string
		v    float64
	}{{"maxBandwidth", a.MaxBandwidth}, {"filterAbove", a.FilterAbove}, {"podBandwidthEstimate", a.PodBandwidthEstimate}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			errs = append(errs, field.Invalid(field.NewPath(f.name), f.v, "must be a number of bytes per second, 0 or more"))
		}
	}

	switch a.MissingMetricsPolicy {
	case prommetric.MissingMetricsNeutral, prommetric.MissingMetricsLowest:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("missingMetricsPolicy"), a.MissingMetricsPolicy,
			[]prommetric.MissingMetricsPolicy{prommetric.MissingMetricsNeutral, prommetric.MissingMetricsLowest}))
	}

	if a.TLSCAFile != "" && strings.HasPrefix(a.PrometheusAddress, "http://") {
		errs = append(errs, field.Invalid(field.NewPath("tlsCAFile"), a.TLSCAFile, "is only used with an https prometheusAddress"))
	}
	if a.BearerTokenFile != "" && strings.HasPrefix(a.PrometheusAddress, "http://") {
		errs = append(errs, field.Invalid(field.NewPath("bearerTokenFile"), a.BearerTokenFile,
			"is only sent to an https prometheusAddress: over http anyone on the path could read the token"))
	}
	return errs.ToAggregate()
}

var _ framework.ArgsDefaulter = (*Args)(nil)
