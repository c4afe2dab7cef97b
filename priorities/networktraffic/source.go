package networktraffic

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// node_exporter's metrics the default query reads.
const (
	receiveBytesMetric  = "node_network_receive_bytes_total"
	transmitBytesMetric = "node_network_transmit_bytes_total"
	unameInfoMetric     = "node_uname_info"
)

// Errors of Fetch besides those of the HTTP API: prommetric's, which every
// metric plugin shares.
var (
	// ErrNoSeries means the query ran but returned no series that names a
	// node with a usable value: a wrong deviceName or nodeNameLabel, a
	// broken join, or node_exporter not scraped.
	ErrNoSeries = prommetric.ErrNoSeries
	// ErrBadResult means the answer is not an instant vector.
	ErrBadResult = prommetric.ErrBadResult
	// ErrTooManySeries means the answer had more than maxSeries series.
	ErrTooManySeries = prommetric.ErrTooManySeries
)

// Sample is one answer of Prometheus: the traffic of every node it knows,
// in bytes/s, as of Time.
type Sample struct {
	// Time is when the query was sent; pods bound from then on are not in
	// the traffic yet.
	Time time.Time
	// Bandwidth maps node names to bytes/s. It is never written after Fetch
	// returns, so any number of cycles may read it at once.
	Bandwidth map[string]float64
	// Series is how many series the answer held; the three counts below are
	// the ones that did not make it into Bandwidth as they were.
	Series int
	// Invalid counts series whose value was NaN, ±Inf or negative.
	Invalid int
	// Unlabelled counts series without the node name label.
	Unlabelled int
	// Duplicates counts series for a node already seen; the larger value is
	// kept, so one node_exporter scraped twice is not counted twice.
	Duplicates int
	// Warnings are the warnings Prometheus returned with the answer.
	Warnings []string

	// since is Time rounded down to the resolution of the API's bind
	// times; see prommetric.BindTimeResolution.
	since time.Time
}

// sampleOf is the Sample view of a table.
func sampleOf(t *prommetric.Table) *Sample {
	if t == nil {
		return nil
	}
	return &Sample{Time: t.Time, Bandwidth: t.Values, Series: t.Series, Invalid: t.Invalid,
		Unlabelled: t.Unlabelled, Duplicates: t.Duplicates, Warnings: t.Warnings, since: t.Since}
}

// tableOf is the table of a sample, for the scorer.
func tableOf(s *Sample) *prommetric.Table {
	if s == nil {
		return nil
	}
	since := s.since
	if since.IsZero() {
		since = prommetric.BindTimeResolution(s.Time)
	}
	return &prommetric.Table{Time: s.Time, Since: since, Values: s.Bandwidth, Series: s.Series, Invalid: s.Invalid,
		Unlabelled: s.Unlabelled, Duplicates: s.Duplicates, Warnings: s.Warnings}
}

// Source queries Prometheus for the traffic of all nodes at once: the
// shared prommetric client with NetworkTraffic's query.
type Source struct {
	client  *prommetric.Client
	query   string
	label   model.LabelName
	timeout time.Duration
	// maxSeries is prommetric.MaxSeries; tests lower it.
	maxSeries int
}

// spec is the prommetric Spec of args (defaulted and validated).
func spec(args *Args) prommetric.Spec {
	return prommetric.Spec{
		Connection: prommetric.Connection{
			Address:            args.PrometheusAddress,
			BearerTokenFile:    args.BearerTokenFile,
			TLSCAFile:          args.TLSCAFile,
			InsecureSkipVerify: args.InsecureSkipVerify,
		},
		Query:           Query(args),
		Label:           args.NodeNameLabel,
		RefreshInterval: args.RefreshInterval.Duration,
		StaleAfter:      args.StaleAfter.Duration,
		Timeout:         args.Timeout.Duration,
	}
}

// NewSource builds the client for args (defaulted and validated): address,
// TLS and bearer token. It does not contact Prometheus. It fails when the
// CA file cannot be read: that is configuration, not an outage.
func NewSource(args *Args) (*Source, error) {
	c, err := prommetric.NewClient(spec(args).Connection)
	if err != nil {
		return nil, err
	}
	return &Source{client: c, query: Query(args), label: model.LabelName(args.NodeNameLabel),
		timeout: args.Timeout.Duration, maxSeries: prommetric.MaxSeries}, nil
}

// Query returns the PromQL that args (defaulted and validated) run: their
// own Query, or the rate over TimeRange of node_exporter's byte counters of
// the devices DeviceName matches, summed per scrape target and joined to
// the node name through node_uname_info:
//
//	sum by (nodename) (
//	  (  sum by (instance, job) (rate(node_network_receive_bytes_total{device=~"eth0"}[1m]))
//	   + sum by (instance, job) (rate(node_network_transmit_bytes_total{device=~"eth0"}[1m])))
//	  * on (instance, job) group_left (nodename) node_uname_info)
//
// Each direction is summed per target before the two are added, so that
// the sum matches one-to-one on (instance, job) whatever other labels the
// counters carry, and the join is many-to-one onto the target's single
// node_uname_info series. With NodeNameLabel "instance" (scrape configs
// that relabel the instance to the node name) there is nothing to join,
// and PromQL could not group_left a label it matches on: the counters are
// summed by instance directly.
//
// DeviceName goes in as a quoted PromQL string (PromQL strings follow Go's
// escaping rules, so strconv.Quote cannot be broken out of); the label name
// and the range are validated syntax.
func Query(args *Args) string {
	if args.Query != "" {
		return args.Query
	}
	device := strconv.Quote(args.DeviceName)
	window := model.Duration(args.TimeRange.Duration).String()
	groupBy := "instance, job"
	if args.NodeNameLabel == "instance" {
		groupBy = "instance"
	}
	perTarget := func(metric string) string {
		return fmt.Sprintf("sum by (%s) (rate(%s{device=~%s}[%s]))", groupBy, metric, device, window)
	}
	var traffic string
	switch args.Direction {
	case DirectionReceive:
		traffic = perTarget(receiveBytesMetric)
	case DirectionTransmit:
		traffic = perTarget(transmitBytesMetric)
	default:
		traffic = "(" + perTarget(receiveBytesMetric) + " + " + perTarget(transmitBytesMetric) + ")"
	}
	if args.NodeNameLabel == "instance" {
		return traffic
	}
	return fmt.Sprintf("sum by (%s) (%s * on (instance, job) group_left (%s) %s)",
		args.NodeNameLabel, traffic, args.NodeNameLabel, unameInfoMetric)
}

// Query returns the PromQL the source runs.
func (s *Source) Query() string { return s.query }

// Address returns Prometheus's address with any password redacted.
func (s *Source) Address() string { return s.client.Address() }

// Fetch runs the query once, bounded by the configured timeout, and
// returns the traffic per node as of now. Series without the node label,
// with a NaN, infinite or negative value are dropped and counted; of
// duplicate series for one node the larger value is kept. An answer with no
// usable series is ErrNoSeries, one that is not a vector ErrBadResult.
func (s *Source) Fetch(ctx context.Context, now time.Time) (*Sample, error) {
	t, err := s.client.Query(ctx, s.query, s.label, s.timeout, s.maxSeries, false, now)
	if err != nil {
		return nil, err
	}
	return sampleOf(t), nil
}

// Close releases the source's idle connections.
func (s *Source) Close() { s.client.Close() }
