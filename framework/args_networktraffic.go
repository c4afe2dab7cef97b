package framework

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NetworkTrafficDirection selects the node_exporter counters NetworkTraffic
// adds up.
type NetworkTrafficDirection string

// The directions NetworkTraffic can measure.
const (
	DirectionReceive  NetworkTrafficDirection = "receive"
	DirectionTransmit NetworkTrafficDirection = "transmit"
	DirectionBoth     NetworkTrafficDirection = "both"
)

// MissingMetricsPolicy says how NetworkTraffic scores a node for which
// Prometheus has no usable value while other nodes have one.
type MissingMetricsPolicy string

// The missing-metrics policies.
const (
	// MissingMetricsNeutral scores the node in the middle of the range (50):
	// neither preferred nor avoided.
	MissingMetricsNeutral MissingMetricsPolicy = "neutral"
	// MissingMetricsLowest scores the node 0, as if it were the busiest.
	MissingMetricsLowest MissingMetricsPolicy = "lowest"
)

// Defaults of NetworkTrafficArgs.
const (
	// DefaultNetworkDeviceName matches the usual physical interfaces and
	// leaves out loopback, bridges, veths and tunnels, whose traffic is
	// counted again on the physical interface or never leaves the node.
	DefaultNetworkDeviceName = "eth0|ens.*|eno.*"
	DefaultNetworkTimeRange  = 60 * time.Second
	// DefaultNodeNameLabel is node_exporter's node_uname_info label that
	// holds the host name, which is the Node name in most clusters.
	DefaultNodeNameLabel                      = "nodename"
	DefaultNetworkTrafficRefreshInterval      = 15 * time.Second
	DefaultNetworkTrafficStaleAfter           = 2 * time.Minute
	DefaultNetworkTrafficTimeout              = 5 * time.Second
	DefaultNetworkTrafficDirection            = DirectionBoth
	DefaultNetworkTrafficMissingMetricsPolicy = MissingMetricsNeutral
)

// Lower bounds of the NetworkTraffic durations. A refresh faster than a
// second would hammer Prometheus for no gain (scrape intervals are seconds
// at best); a rate window under a second holds no two samples.
const (
	minNetworkTrafficRefreshInterval = time.Second
	minNetworkTimeRange              = time.Second
)

// labelNameRE is Prometheus's classic label name syntax. The node name label
// is written into the default query as an identifier, so only names that
// need no quoting are accepted.
var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Duration is a time.Duration written as a Go duration string ("60s",
// "1m30s") or, as older configurations do, a bare integer number of
// seconds (60, or "60").
type Duration struct {
	time.Duration
}

// UnmarshalJSON reads a duration string or an integer number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if v, err := time.ParseDuration(s); err == nil {
			d.Duration = v
			return nil
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return d.setSeconds(n)
		}
		return fmt.Errorf("invalid duration %q: want a duration such as \"60s\" or a whole number of seconds", s)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("invalid duration %s: want a duration such as \"60s\" or a whole number of seconds", b)
	}
	return d.setSeconds(n)
}

func (d *Duration) setSeconds(n int64) error {
	const maxSeconds = math.MaxInt64 / int64(time.Second)
	if n > maxSeconds || n < -maxSeconds {
		return fmt.Errorf("invalid duration: %d seconds is out of range", n)
	}
	d.Duration = time.Duration(n) * time.Second
	return nil
}

// MarshalJSON writes whole seconds as "60s" (not "1m0s"), anything else as
// time.Duration.String, so that the output reads back to the same value.
func (d Duration) MarshalJSON() ([]byte, error) {
	if d.Duration%time.Second == 0 {
		return json.Marshal(fmt.Sprintf("%ds", d.Duration/time.Second))
	}
	return json.Marshal(d.Duration.String())
}

// NetworkTrafficArgs are the arguments of NetworkTraffic, which scores nodes
// by the network traffic Prometheus measured on them.
//
// Three fields have a deprecated older name, accepted so that configurations
// written for the published NetworkTraffic examples load: ip
// (prometheusAddress), networkInterface (deviceName, as a literal device
// name) and timeRangeInSeconds (timeRange). SetDefaults moves them to the
// new names.
type NetworkTrafficArgs struct {
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
	TimeRange Duration `json:"timeRange"`
	// TimeRangeInSeconds is the deprecated name of TimeRange.
	TimeRangeInSeconds *int64 `json:"timeRangeInSeconds,omitempty"`
	// Direction is receive, transmit or both.
	Direction NetworkTrafficDirection `json:"direction,omitempty"`
	// NodeNameLabel is the label whose value is the Node name: the
	// node_uname_info label the default query joins on, or the label the
	// series of a custom Query carry.
	NodeNameLabel string `json:"nodeNameLabel,omitempty"`
	// Query, when set, replaces the default query: PromQL returning one
	// series per node, labelled with NodeNameLabel, valued in bytes/s.
	// DeviceName, Direction and TimeRange are then unused.
	Query string `json:"query,omitempty"`
	// RefreshInterval is how often Prometheus is queried.
	RefreshInterval Duration `json:"refreshInterval"`
	// StaleAfter is the age after which a result is no longer used.
	StaleAfter Duration `json:"staleAfter"`
	// Timeout bounds each query.
	Timeout Duration `json:"timeout"`
	// MaxBandwidth, in bytes/s, is the traffic that scores 0. Zero means
	// relative scoring: the busiest feasible node scores 0.
	MaxBandwidth float64 `json:"maxBandwidth"`
	// FilterAbove, in bytes/s, when above zero, also filters out nodes whose
	// traffic exceeds it.
	FilterAbove float64 `json:"filterAbove"`
	// MissingMetricsPolicy is neutral (score 50) or lowest (score 0).
	MissingMetricsPolicy MissingMetricsPolicy `json:"missingMetricsPolicy,omitempty"`
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

// DefaultNetworkTrafficArgs returns the defaults of every field.
// PrometheusAddress has none: it must be configured.
func DefaultNetworkTrafficArgs() *NetworkTrafficArgs {
	a := &NetworkTrafficArgs{}
	a.SetDefaults()
	return a
}

// SetDefaults moves the deprecated fields to their new names and fills the
// fields left empty or zero with their defaults. A deprecated field is left
// in place, for ValidateNetworkTrafficArgs to report, when its new name is
// set too or when its value is invalid.
func (a *NetworkTrafficArgs) SetDefaults() {
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
		a.DeviceName = DefaultNetworkDeviceName
	}
	if a.TimeRange.Duration == 0 && a.TimeRangeInSeconds == nil {
		a.TimeRange.Duration = DefaultNetworkTimeRange
	}
	if a.Direction == "" {
		a.Direction = DefaultNetworkTrafficDirection
	}
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

// ValidateNetworkTrafficArgs checks defaulted args. Errors are
// field.Errors with paths relative to the args ("timeRange").
func ValidateNetworkTrafficArgs(a *NetworkTrafficArgs) error {
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
		errs = append(errs, validatePrometheusAddress(a.PrometheusAddress, addrPath)...)
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
	trPath := field.NewPath("timeRange")
	switch tr := a.TimeRange.Duration; {
	case a.TimeRangeInSeconds != nil && tr == 0:
	case tr < minNetworkTimeRange:
		errs = append(errs, field.Invalid(trPath, tr.String(), fmt.Sprintf("must be at least %s", minNetworkTimeRange)))
	case tr%time.Millisecond != 0:
		errs = append(errs, field.Invalid(trPath, tr.String(), "must be a whole number of milliseconds (PromQL's resolution)"))
	}

	switch a.Direction {
	case DirectionReceive, DirectionTransmit, DirectionBoth:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("direction"), a.Direction,
			[]NetworkTrafficDirection{DirectionReceive, DirectionTransmit, DirectionBoth}))
	}

	if !labelNameRE.MatchString(a.NodeNameLabel) || strings.HasPrefix(a.NodeNameLabel, "__") {
		errs = append(errs, field.Invalid(field.NewPath("nodeNameLabel"), a.NodeNameLabel,
			"must be a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)"))
	}
	if a.Query != "" && strings.TrimSpace(a.Query) == "" {
		errs = append(errs, field.Invalid(field.NewPath("query"), a.Query, "must be PromQL or empty"))
	}

	refreshPath := field.NewPath("refreshInterval")
	if a.RefreshInterval.Duration < minNetworkTrafficRefreshInterval {
		errs = append(errs, field.Invalid(refreshPath, a.RefreshInterval.String(), fmt.Sprintf("must be at least %s", minNetworkTrafficRefreshInterval)))
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
	return errs.ToAggregate()
}

// validatePrometheusAddress accepts an absolute http or https URL. A
// password in the URL is never echoed back.
func validatePrometheusAddress(addr string, p *field.Path) field.ErrorList {
	u, err := url.Parse(addr)
	if err != nil {
		// A *url.Error quotes the whole URL, password included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return field.ErrorList{field.Invalid(p, "<unparsable>", fmt.Sprintf("not a URL: %v", err))}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return field.ErrorList{field.Invalid(p, u.Redacted(), "must be an http:// or https:// URL")}
	case u.Host == "":
		return field.ErrorList{field.Invalid(p, u.Redacted(), "must name a host")}
	case u.RawQuery != "" || u.Fragment != "":
		return field.ErrorList{field.Invalid(p, u.Redacted(), "must not have a query or fragment")}
	}
	return nil
}
