package networktraffic

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/yardmaster-io/yardmaster/framework"
)

// node_exporter's metrics the default query reads.
const (
	receiveBytesMetric  = "node_network_receive_bytes_total"
	transmitBytesMetric = "node_network_transmit_bytes_total"
	unameInfoMetric     = "node_uname_info"
)

// maxResponseBytes bounds one answer from Prometheus. A series per node is
// a couple of hundred bytes, so this is far beyond any cluster; it keeps a
// misbehaving endpoint from filling the scheduler's memory.
const maxResponseBytes = 64 << 20

// maxSeries bounds the series of one answer that are kept: a series per
// node, and no cluster has this many nodes. An answer with more (a query
// that lost its aggregation, say) is refused rather than held.
const maxSeries = 100_000

// Errors of Fetch besides those of the HTTP API.
var (
	// ErrNoSeries means the query ran but returned no series that names a
	// node with a usable value: a wrong deviceName or nodeNameLabel, a
	// broken join, or node_exporter not scraped.
	ErrNoSeries = errors.New("query returned no usable series")
	// ErrBadResult means the answer is not an instant vector.
	ErrBadResult = errors.New("query result is not an instant vector")
	// ErrTooManySeries means the answer had more than maxSeries series.
	ErrTooManySeries = errors.New("query returned too many series")
	// errResponseTooLarge means the answer exceeded maxResponseBytes.
	errResponseTooLarge = fmt.Errorf("response larger than %d bytes", maxResponseBytes)
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
	// times; see bindTimeResolution.
	since time.Time
}

// Source queries Prometheus for the traffic of all nodes at once.
type Source struct {
	api       promv1.API
	transport *http.Transport
	query     string
	label     model.LabelName
	timeout   time.Duration
	address   string
	// maxSeries is maxSeries; tests lower it.
	maxSeries int
}

// NewSource builds the client for args (defaulted and validated): address,
// TLS and bearer token. It does not contact Prometheus. It fails when the
// CA file cannot be read: that is configuration, not an outage.
func NewSource(args *framework.NetworkTrafficArgs) (*Source, error) {
	u, err := url.Parse(args.PrometheusAddress)
	if err != nil {
		return nil, fmt.Errorf("prometheusAddress: %w", err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if args.TLSCAFile != "" || args.InsecureSkipVerify {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: args.InsecureSkipVerify} //nolint:gosec // the user asked for it
		if args.TLSCAFile != "" {
			pem, err := os.ReadFile(args.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("tlsCAFile: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("tlsCAFile %q: no PEM certificate in it", args.TLSCAFile)
			}
			cfg.RootCAs = pool
		}
		transport.TLSClientConfig = cfg
	}
	var rt http.RoundTripper = limitRoundTripper{next: transport}
	if args.BearerTokenFile != "" {
		rt = &bearerTokenRoundTripper{file: args.BearerTokenFile, scheme: u.Scheme, host: u.Host, next: rt}
	}
	client, err := api.NewClient(api.Config{Address: args.PrometheusAddress, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("prometheusAddress: %w", err)
	}
	return &Source{
		api:       promv1.NewAPI(client),
		transport: transport,
		query:     Query(args),
		label:     model.LabelName(args.NodeNameLabel),
		timeout:   args.Timeout.Duration,
		address:   u.Redacted(),
		maxSeries: maxSeries,
	}, nil
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
func Query(args *framework.NetworkTrafficArgs) string {
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
	case framework.DirectionReceive:
		traffic = perTarget(receiveBytesMetric)
	case framework.DirectionTransmit:
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
func (s *Source) Address() string { return s.address }

// Fetch runs the query once, bounded by the configured timeout, and
// returns the traffic per node as of now. Series without the node label,
// with a NaN, infinite or negative value are dropped and counted; of
// duplicate series for one node the larger value is kept. An answer with no
// usable series is ErrNoSeries, one that is not a vector ErrBadResult.
func (s *Source) Fetch(ctx context.Context, now time.Time) (*Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	v, warnings, _, err := s.api.Query(ctx, s.query, time.Time{}, promv1.WithTimeout(s.timeout))
	if err != nil {
		return nil, fmt.Errorf("query Prometheus at %s: %w", s.address, err)
	}
	smp, err := decodeVector(v, s.label, s.maxSeries)
	if err != nil {
		return nil, fmt.Errorf("query Prometheus at %s: %w", s.address, err)
	}
	smp.Time, smp.since = now, bindTimeResolution(now)
	smp.Warnings = warnings
	return smp, nil
}

// Close releases the source's idle connections.
func (s *Source) Close() { s.transport.CloseIdleConnections() }

// decodeVector turns an instant vector into a Sample without a time.
func decodeVector(v model.Value, label model.LabelName, limit int) (*Sample, error) {
	vec, ok := v.(model.Vector)
	if !ok {
		typ := "nothing"
		if v != nil {
			typ = "a " + v.Type().String()
		}
		return nil, fmt.Errorf("%w: got %s", ErrBadResult, typ)
	}
	if len(vec) > limit {
		return nil, fmt.Errorf("%w: %d series, more than the %d kept (one per node is expected)", ErrTooManySeries, len(vec), limit)
	}
	s := &Sample{Bandwidth: make(map[string]float64, len(vec)), Series: len(vec)}
	for _, smp := range vec {
		node := string(smp.Metric[label])
		if node == "" {
			s.Unlabelled++
			continue
		}
		bw := float64(smp.Value)
		if math.IsNaN(bw) || math.IsInf(bw, 0) || bw < 0 {
			s.Invalid++
			continue
		}
		if old, dup := s.Bandwidth[node]; dup {
			s.Duplicates++
			bw = max(old, bw)
		}
		s.Bandwidth[node] = bw
	}
	if len(s.Bandwidth) == 0 {
		return nil, fmt.Errorf("%w (%d series: %d without label %q, %d with a NaN, infinite or negative value)",
			ErrNoSeries, s.Series, s.Unlabelled, label, s.Invalid)
	}
	return s, nil
}

// bearerTokenRoundTripper reads the token file before every request, so a
// rotated token (a projected service account token, say) is picked up
// without a restart. A query runs every refreshInterval, so the read costs
// nothing worth caching. The token goes only to the configured scheme and
// host: a redirect to another host, or from https to http, is followed
// without it (the RoundTripper sees every request the client's redirects
// make, so it must decide, not net/http).
type bearerTokenRoundTripper struct {
	file         string
	scheme, host string
	next         http.RoundTripper
}

func (rt *bearerTokenRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != rt.scheme || req.URL.Host != rt.host {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
		return rt.next.RoundTrip(req)
	}
	b, err := os.ReadFile(rt.file)
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("bearerTokenFile: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		closeBody(req)
		return nil, fmt.Errorf("bearerTokenFile %q is empty", rt.file)
	}
	req = req.Clone(req.Context()) // a RoundTripper must not modify the request
	req.Header.Set("Authorization", "Bearer "+token)
	return rt.next.RoundTrip(req)
}

// closeBody honours the RoundTripper contract of closing the body on error.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// limitRoundTripper caps response bodies at maxResponseBytes.
type limitRoundTripper struct{ next http.RoundTripper }

func (rt limitRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: maxResponseBytes}
	return resp, nil
}

// limitedBody fails a read that goes past left bytes.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	// Read at most one byte past the limit: enough to tell a body of
	// exactly the limit from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errResponseTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
