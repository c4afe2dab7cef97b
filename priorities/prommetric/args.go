package prommetric

// The argument types and checks every metric plugin shares: how a
// duration is written, where Prometheus is and how often it is asked
// (SourceArgs), what a node without data scores, and the checks of an
// address, a label name and a PromQL range. Each plugin's args (in its own
// folder) embed or repeat these fields and call these checks, so that a
// field means, defaults and is refused the same in every metric plugin.

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

// MissingMetricsPolicy says how a metric plugin scores a node for which
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

// Normalization says how a cycle's values map to scores (PrometheusScore's
// normalization; NetworkTraffic uses ratio or range).
type Normalization string

// The normalizations.
const (
	// NormalizationMinMax maps the smallest value among the feasible nodes
	// to one end of [0, 100] and the largest to the other.
	NormalizationMinMax Normalization = "minMax"
	// NormalizationRatio maps 0 to one end and the largest value to the
	// other (NetworkTraffic's relative scoring); values must not be
	// negative.
	NormalizationRatio Normalization = "ratio"
	// NormalizationRange maps the configured min and max to the ends,
	// values beyond them clamped: scores that do not depend on the other
	// nodes.
	NormalizationRange Normalization = "range"
)

// Defaults of the source fields every metric plugin has (NetworkTraffic's
// first, then SourceArgs').
const (
	// DefaultNodeNameLabel is node_exporter's node_uname_info label that
	// holds the host name, which is the Node name in most clusters.
	DefaultNodeNameLabel = "nodename"
	// DefaultRefreshInterval is how often Prometheus is asked.
	DefaultRefreshInterval = 15 * time.Second
	// DefaultStaleAfter is the age after which an answer is not used.
	DefaultStaleAfter = 2 * time.Minute
	// DefaultTimeout bounds each query.
	DefaultTimeout = 5 * time.Second
	// DefaultMissingMetricsPolicy scores a node without data as neither
	// preferred nor avoided.
	DefaultMissingMetricsPolicy = MissingMetricsNeutral
)

// Lower bounds of the metric plugins' durations. A refresh faster than a
// second would hammer Prometheus for no gain (scrape intervals are seconds
// at best); a rate window under a second holds no two samples.
const (
	MinRefreshInterval = time.Second
	MinTimeRange       = time.Second
)

// labelNameRE is Prometheus's classic label name syntax. The node name label
// is written into the default queries as an identifier, so only names that
// need no quoting are accepted.
var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// SourceArgs are the fields every metric plugin but NetworkTraffic (whose
// flat fields came first and are kept) shares: where Prometheus is and how
// often it is asked. Plugins whose arguments are equal here and that send
// the same query share one query per refresh.
type SourceArgs struct {
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

// SetDefaults fills the empty fields with the defaults above
// (NetworkTraffic's). A plugin's args that embed SourceArgs call it from
// their own SetDefaults.
func (a *SourceArgs) SetDefaults() {
	if a.NodeNameLabel == "" {
		a.NodeNameLabel = DefaultNodeNameLabel
	}
	if a.RefreshInterval.Duration == 0 {
		a.RefreshInterval.Duration = DefaultRefreshInterval
	}
	if a.StaleAfter.Duration == 0 {
		a.StaleAfter.Duration = DefaultStaleAfter
	}
	if a.Timeout.Duration == 0 {
		a.Timeout.Duration = DefaultTimeout
	}
	if a.MissingMetricsPolicy == "" {
		a.MissingMetricsPolicy = DefaultMissingMetricsPolicy
	}
}

// ValidateSource checks defaulted source args, as NetworkTraffic checks its
// own, with paths relative to the plugin's args; the plugin's ValidateArgs
// appends the checks of its other fields.
func (a *SourceArgs) ValidateSource() field.ErrorList {
	var errs field.ErrorList
	addrPath := field.NewPath("prometheusAddress")
	if a.PrometheusAddress == "" {
		errs = append(errs, field.Required(addrPath, "the URL of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090"))
	} else {
		errs = append(errs, ValidatePrometheusAddress(a.PrometheusAddress, addrPath)...)
	}
	errs = append(errs, ValidateLabelName(a.NodeNameLabel, field.NewPath("nodeNameLabel"))...)
	if a.RefreshInterval.Duration < MinRefreshInterval {
		errs = append(errs, field.Invalid(field.NewPath("refreshInterval"), a.RefreshInterval.String(), fmt.Sprintf("must be at least %s", MinRefreshInterval)))
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

// ValidatePrometheusAddress accepts an absolute http or https URL. A
// password in the URL is never echoed back.
func ValidatePrometheusAddress(addr string, p *field.Path) field.ErrorList {
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

// ValidateLabelName accepts a Prometheus label name that needs no quoting
// in a query and is not reserved (no leading "__").
func ValidateLabelName(name string, p *field.Path) field.ErrorList {
	if !labelNameRE.MatchString(name) || strings.HasPrefix(name, "__") {
		return field.ErrorList{field.Invalid(p, name,
			"must be a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)")}
	}
	return nil
}

// ValidateWindow checks a PromQL range: at least MinTimeRange, in whole
// milliseconds (PromQL's resolution).
func ValidateWindow(d Duration, p *field.Path) field.ErrorList {
	switch tr := d.Duration; {
	case tr < MinTimeRange:
		return field.ErrorList{field.Invalid(p, tr.String(), fmt.Sprintf("must be at least %s", MinTimeRange))}
	case tr%time.Millisecond != 0:
		return field.ErrorList{field.Invalid(p, tr.String(), "must be a whole number of milliseconds (PromQL's resolution)")}
	}
	return nil
}
