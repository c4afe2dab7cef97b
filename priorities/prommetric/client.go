package prommetric

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
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// maxResponseBytes bounds one answer from Prometheus. A series per node is
// a couple of hundred bytes, so this is far beyond any cluster; it keeps a
// misbehaving endpoint from filling the scheduler's memory.
const maxResponseBytes = 64 << 20

// MaxSeries bounds the series of one answer that are kept: a series per
// node, and no cluster has this many nodes. An answer with more (a query
// that lost its aggregation, say) is refused rather than held.
const MaxSeries = 100_000

// Errors of Query besides those of the HTTP API.
var (
	// ErrNoSeries means the query ran but returned no series that names a
	// node with a usable value: a wrong label or matcher, a broken join,
	// or node_exporter not scraped.
	ErrNoSeries = errors.New("query returned no usable series")
	// ErrBadResult means the answer is not an instant vector.
	ErrBadResult = errors.New("query result is not an instant vector")
	// ErrTooManySeries means the answer had more than the series kept.
	ErrTooManySeries = errors.New("query returned too many series")
	// errResponseTooLarge means the answer exceeded maxResponseBytes.
	errResponseTooLarge = fmt.Errorf("response larger than %d bytes", maxResponseBytes)
)

// Connection says how to reach one Prometheus. It is comparable: the Pool
// keys clients and metrics by it.
type Connection struct {
	// Address is the base URL of the HTTP API (validated: http or https).
	Address string
	// BearerTokenFile, when set, is read before every query.
	BearerTokenFile string
	// TLSCAFile is a PEM bundle of the CAs of Prometheus's certificate.
	TLSCAFile string
	// InsecureSkipVerify turns off certificate verification.
	InsecureSkipVerify bool
}

// Client runs instant queries against one Prometheus.
type Client struct {
	api       promv1.API
	transport *http.Transport
	address   string
}

// NewClient builds the client for c: address, TLS and bearer token. It
// does not contact Prometheus. It fails when the CA file cannot be read:
// that is configuration, not an outage.
func NewClient(c Connection) (*Client, error) {
	u, err := url.Parse(c.Address)
	if err != nil {
		return nil, fmt.Errorf("prometheusAddress: %w", err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if c.TLSCAFile != "" || c.InsecureSkipVerify {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.InsecureSkipVerify} //nolint:gosec // the user asked for it
		if c.TLSCAFile != "" {
			pem, err := os.ReadFile(c.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("tlsCAFile: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("tlsCAFile %q: no PEM certificate in it", c.TLSCAFile)
			}
			cfg.RootCAs = pool
		}
		transport.TLSClientConfig = cfg
	}
	var rt http.RoundTripper = limitRoundTripper{next: transport}
	if c.BearerTokenFile != "" {
		rt = &bearerTokenRoundTripper{file: c.BearerTokenFile, scheme: u.Scheme, host: u.Host, next: rt}
	}
	client, err := api.NewClient(api.Config{Address: c.Address, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("prometheusAddress: %w", err)
	}
	return &Client{api: promv1.NewAPI(client), transport: transport, address: u.Redacted()}, nil
}

// Address returns Prometheus's address with any password redacted.
func (c *Client) Address() string { return c.address }

// Close releases the client's idle connections.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// Query runs query once, bounded by timeout, and returns its value per
// node (the value of label) as of now, keeping at most limit series.
// Series without the label, with a NaN or infinite value, or (unless
// allowNegative) a negative one are dropped and counted; of duplicate
// series for one node the larger value is kept. An answer with no usable
// series is ErrNoSeries, one that is not a vector ErrBadResult.
func (c *Client) Query(ctx context.Context, query string, label model.LabelName, timeout time.Duration, limit int, allowNegative bool, now time.Time) (*Table, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, warnings, _, err := c.api.Query(ctx, query, time.Time{}, promv1.WithTimeout(timeout))
	if err != nil {
		return nil, fmt.Errorf("query Prometheus at %s: %w", c.address, err)
	}
	t, err := decodeVector(v, label, limit, allowNegative)
	if err != nil {
		return nil, fmt.Errorf("query Prometheus at %s: %w", c.address, err)
	}
	t.Time, t.Since = now, BindTimeResolution(now)
	t.Warnings = warnings
	return t, nil
}

// decodeVector turns an instant vector into a Table without a time.
func decodeVector(v model.Value, label model.LabelName, limit int, allowNegative bool) (*Table, error) {
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
	t := &Table{Values: make(map[string]float64, len(vec)), Series: len(vec)}
	for _, smp := range vec {
		node := string(smp.Metric[label])
		if node == "" {
			t.Unlabelled++
			continue
		}
		x := float64(smp.Value)
		if math.IsNaN(x) || math.IsInf(x, 0) || (x < 0 && !allowNegative) {
			t.Invalid++
			continue
		}
		if old, dup := t.Values[node]; dup {
			t.Duplicates++
			x = max(old, x)
		}
		t.Values[node] = x
	}
	if len(t.Values) == 0 {
		what := "a NaN, infinite or negative value"
		if allowNegative {
			what = "a NaN or infinite value"
		}
		return nil, fmt.Errorf("%w (%d series: %d without label %q, %d with %s)",
			ErrNoSeries, t.Series, t.Unlabelled, label, t.Invalid, what)
	}
	t.index()
	return t, nil
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
