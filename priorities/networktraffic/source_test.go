package networktraffic

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

func defaultedArgs(address string, mutate func(*Args)) *Args {
	a := &Args{PrometheusAddress: address}
	if mutate != nil {
		mutate(a)
	}
	a.SetDefaults()
	return a
}

func TestQuery(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Args)
		want   string
	}{
		{
			name: "defaults: both directions, summed per target, joined to nodename",
			want: `sum by (nodename) ((` +
				`sum by (instance, job) (rate(node_network_receive_bytes_total{device=~"eth0|ens.*|eno.*"}[1m])) + ` +
				`sum by (instance, job) (rate(node_network_transmit_bytes_total{device=~"eth0|ens.*|eno.*"}[1m]))` +
				`) * on (instance, job) group_left (nodename) node_uname_info)`,
		},
		{
			name: "receive, 90s, own label",
			mutate: func(a *Args) {
				a.Direction = DirectionReceive
				a.TimeRange.Duration = 90 * time.Second
				a.NodeNameLabel = "node"
				a.DeviceName = "bond0"
			},
			want: `sum by (node) (sum by (instance, job) (rate(node_network_receive_bytes_total{device=~"bond0"}[1m30s])) * on (instance, job) group_left (node) node_uname_info)`,
		},
		{
			name: "transmit",
			mutate: func(a *Args) {
				a.Direction = DirectionTransmit
				a.TimeRange.Duration = 1500 * time.Millisecond
			},
			want: `sum by (nodename) (sum by (instance, job) (rate(node_network_transmit_bytes_total{device=~"eth0|ens.*|eno.*"}[1s500ms])) * on (instance, job) group_left (nodename) node_uname_info)`,
		},
		{
			name:   "instance relabelled to the node name: no join",
			mutate: func(a *Args) { a.NodeNameLabel = "instance" },
			want: `(` +
				`sum by (instance) (rate(node_network_receive_bytes_total{device=~"eth0|ens.*|eno.*"}[1m])) + ` +
				`sum by (instance) (rate(node_network_transmit_bytes_total{device=~"eth0|ens.*|eno.*"}[1m]))` +
				`)`,
		},
		{
			name: "instance, one direction",
			mutate: func(a *Args) {
				a.NodeNameLabel, a.Direction = "instance", DirectionReceive
			},
			want: `sum by (instance) (rate(node_network_receive_bytes_total{device=~"eth0|ens.*|eno.*"}[1m]))`,
		},
		{
			name:   "own query is used as written",
			mutate: func(a *Args) { a.Query = `sum by (nodename) (my_traffic)` },
			want:   `sum by (nodename) (my_traffic)`,
		},
		{
			name:   "networkInterface is a literal name",
			mutate: func(a *Args) { a.NetworkInterface = "eth0.100" },
			want: `sum by (nodename) ((` +
				`sum by (instance, job) (rate(node_network_receive_bytes_total{device=~"eth0\\.100"}[1m])) + ` +
				`sum by (instance, job) (rate(node_network_transmit_bytes_total{device=~"eth0\\.100"}[1m]))` +
				`) * on (instance, job) group_left (nodename) node_uname_info)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Query(defaultedArgs("http://p:9090", tt.mutate)); got != tt.want {
				t.Errorf("Query() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A deviceName with quotes, backslashes, newlines and PromQL of its own
// stays one string literal: every device matcher in the query reads back,
// with PromQL's (Go's) unquoting, to exactly the configured value, and what
// follows it is the range of the same selector.
func TestQueryEscaping(t *testing.T) {
	for _, dev := range []string{
		`eth0"} or vector(1e12) or {a="`,
		`eth0\"}) #`,
		"eth0`}\n[5m])",
		`\\\"'`,
		"ünï\x00code",
	} {
		t.Run(strconv.Quote(dev), func(t *testing.T) {
			q := Query(defaultedArgs("http://p:9090", func(a *Args) { a.DeviceName = dev }))
			rest, n := q, 0
			for {
				i := strings.Index(rest, "device=~")
				if i < 0 {
					break
				}
				rest = rest[i+len("device=~"):]
				lit, err := strconv.QuotedPrefix(rest)
				if err != nil {
					t.Fatalf("no string literal after device=~ in %s: %v", q, err)
				}
				got, err := strconv.Unquote(lit)
				if err != nil || got != dev {
					t.Errorf("literal %s unquotes to %q (%v), want %q", lit, got, err, dev)
				}
				rest = rest[len(lit):]
				if !strings.HasPrefix(rest, "}[1m]))") {
					t.Errorf("literal %s is followed by %.20q, want the selector's end", lit, rest)
				}
				n++
			}
			if n != 2 {
				t.Errorf("query has %d device matchers, want 2:\n%s", n, q)
			}
		})
	}
}

func TestFetch(t *testing.T) {
	type want struct {
		bandwidth                       map[string]float64
		invalid, unlabelled, duplicates int
		err                             error
		// apiErr is the client's error type for HTTP API failures.
		apiErr promv1.ErrorType
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    want
	}{
		{
			name:    "one series per node",
			handler: vector(nodeSeries("a", "1000"), nodeSeries("b", "2000.5"), nodeSeries("c", "0")),
			want:    want{bandwidth: map[string]float64{"a": 1000, "b": 2000.5, "c": 0}},
		},
		{
			name:    "empty vector",
			handler: vector(),
			want:    want{err: ErrNoSeries},
		},
		{
			name: "NaN, infinities and negative values are dropped",
			handler: vector(nodeSeries("a", "NaN"), nodeSeries("b", "+Inf"), nodeSeries("c", "-Inf"),
				nodeSeries("d", "-5"), nodeSeries("e", "7")),
			want: want{bandwidth: map[string]float64{"e": 7}, invalid: 4},
		},
		{
			name:    "nothing but invalid values",
			handler: vector(nodeSeries("a", "NaN"), nodeSeries("b", "-1")),
			want:    want{err: ErrNoSeries},
		},
		{
			name: "duplicates keep the largest value, an invalid one is ignored",
			handler: vector(nodeSeries("a", "5"), nodeSeries("a", "9"), nodeSeries("a", "NaN"), nodeSeries("a", "7"),
				nodeSeries("b", "1")),
			want: want{bandwidth: map[string]float64{"a": 9, "b": 1}, invalid: 1, duplicates: 2},
		},
		{
			name: "series without the node label",
			handler: vector(series{labels: map[string]string{"instance": "10.0.0.1:9100"}, value: "5"},
				series{labels: map[string]string{"nodename": ""}, value: "5"}, nodeSeries("b", "1")),
			want: want{bandwidth: map[string]float64{"b": 1}, unlabelled: 2},
		},
		{
			name:    "a matrix",
			handler: respond(http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[]}}`),
			want:    want{err: ErrBadResult},
		},
		{
			name:    "a scalar",
			handler: respond(http.StatusOK, `{"status":"success","data":{"resultType":"scalar","result":[1772359200,"1"]}}`),
			want:    want{err: ErrBadResult},
		},
		{
			name:    "HTTP 500 with a text body",
			handler: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) },
			want:    want{apiErr: promv1.ErrServer},
		},
		{
			name:    "HTTP 503 from a proxy, HTML",
			handler: respond(http.StatusServiceUnavailable, `<html>upstream unavailable</html>`),
			want:    want{apiErr: promv1.ErrServer},
		},
		{
			name:    "a PromQL error",
			handler: respond(http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"parse error"}`),
			want:    want{apiErr: promv1.ErrBadData},
		},
		{
			name:    "malformed JSON",
			handler: respond(http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[{"metric":`),
			want:    want{apiErr: promv1.ErrBadResponse},
		},
		{
			name:    "not JSON",
			handler: respond(http.StatusOK, `<html>login</html>`),
			want:    want{apiErr: promv1.ErrBadResponse},
		},
		{
			name:    "a vector of garbage values",
			handler: respond(http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"nodename":"a"},"value":[1,"x"]}]}}`),
			want:    want{apiErr: promv1.ErrBadResponse},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := newPromStub(t, tt.handler)
			args := defaultedArgs(stub.URL, nil)
			src, err := NewSource(args)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := src.Fetch(t.Context(), t0)

			reqs := stub.received()
			if len(reqs) == 0 || reqs[0].query != Query(args) {
				t.Fatalf("requests %+v, want one with the query %q", reqs, Query(args))
			}
			if reqs[0].timeout != "5s" {
				t.Errorf("timeout parameter %q, want 5s (Prometheus stops the query too)", reqs[0].timeout)
			}
			switch {
			case tt.want.err != nil:
				if !errors.Is(err, tt.want.err) {
					t.Fatalf("Fetch error = %v, want %v", err, tt.want.err)
				}
				return
			case tt.want.apiErr != "":
				var apiErr *promv1.Error
				if !errors.As(err, &apiErr) || apiErr.Type != tt.want.apiErr {
					t.Fatalf("Fetch error = %v, want a %q API error", err, tt.want.apiErr)
				}
				return
			case err != nil:
				t.Fatalf("Fetch: %v", err)
			}
			wantSample := &Sample{
				Time: t0, Bandwidth: tt.want.bandwidth,
				Series:  len(tt.want.bandwidth) + tt.want.invalid + tt.want.unlabelled + tt.want.duplicates,
				Invalid: tt.want.invalid, Unlabelled: tt.want.unlabelled, Duplicates: tt.want.duplicates,
			}
			if diff := cmp.Diff(wantSample, got, cmpopts.IgnoreUnexported(Sample{})); diff != "" {
				t.Errorf("sample (-want +got):\n%s", diff)
			}
			if want := t0.Truncate(time.Second); !got.since.Equal(want) {
				t.Errorf("since = %v, want %v", got.since, want)
			}
		})
	}
}

func TestFetchTimeout(t *testing.T) {
	stub := newPromStub(t, hang)
	src, err := NewSource(defaultedArgs(stub.URL, func(a *Args) { a.Timeout.Duration = 200 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start := time.Now()
	_, err = src.Fetch(context.Background(), t0)
	if err == nil {
		t.Fatal("Fetch succeeded against a server that never answers")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Fetch took %v with a 200ms timeout", d)
	}
}

func TestFetchUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	src, err := NewSource(defaultedArgs(addr, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Fetch(t.Context(), t0); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("Fetch error = %v, want one naming %s", err, addr)
	}
}

// The token file is read for every query, so a rotated token is used.
func TestBearerTokenFile(t *testing.T) {
	stub := newPromStub(t, vector(nodeSeries("a", "1")))
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("first-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(defaultedArgs(stub.URL, func(a *Args) { a.BearerTokenFile = tokenFile }))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Fetch(t.Context(), t0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte("second-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Fetch(t.Context(), t0); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range stub.received() {
		got = append(got, r.auth)
	}
	if diff := cmp.Diff([]string{"Bearer first-token", "Bearer second-token"}, got); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}

	if err := os.Remove(tokenFile); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Fetch(t.Context(), t0); err == nil || !strings.Contains(err.Error(), "bearerTokenFile") {
		t.Errorf("Fetch without the token file: error %v, want one about bearerTokenFile", err)
	}
	if n := len(stub.received()); n != 2 {
		t.Errorf("%d requests, want no third one without a token", n)
	}
}

func TestNoTokenNoAuthorization(t *testing.T) {
	stub := newPromStub(t, vector(nodeSeries("a", "1")))
	src, err := NewSource(defaultedArgs(stub.URL, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Fetch(t.Context(), t0); err != nil {
		t.Fatal(err)
	}
	if auth := stub.received()[0].auth; auth != "" {
		t.Errorf("Authorization %q sent without a token file", auth)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(vector(nodeSeries("a", "1")))
	// The handshakes this test fails on purpose are not news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}

	fetch := func(mutate func(*Args)) error {
		src, err := NewSource(defaultedArgs(srv.URL, mutate))
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = src.Fetch(t.Context(), t0)
		return err
	}
	if err := fetch(func(a *Args) { a.TLSCAFile = caFile }); err != nil {
		t.Errorf("with tlsCAFile: %v", err)
	}
	if err := fetch(nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without tlsCAFile: error %v, want a certificate error", err)
	}
	if err := fetch(func(a *Args) { a.InsecureSkipVerify = true }); err != nil {
		t.Errorf("with insecureSkipVerify: %v", err)
	}
	if err := fetch(func(a *Args) { a.TLSCAFile = notPEM }); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("with a CA file without certificates: error %v", err)
	}
	if err := fetch(func(a *Args) { a.TLSCAFile = filepath.Join(dir, "missing.pem") }); err == nil || !strings.Contains(err.Error(), "tlsCAFile") {
		t.Errorf("with a missing CA file: error %v", err)
	}
}

// A password in the address never shows in errors.
func TestAddressRedacted(t *testing.T) {
	stub := newPromStub(t, respond(http.StatusInternalServerError, "x"))
	addr := strings.Replace(stub.URL, "http://", "http://user:s3cret@", 1)
	src, err := NewSource(defaultedArgs(addr, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = src.Fetch(t.Context(), t0)
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(src.Address(), "s3cret") {
		t.Errorf("error %v / address %q show the password", err, src.Address())
	}
}

// The token goes to the configured host only: a redirect to another host,
// or from https to http, is followed without it.
func TestBearerTokenNotSentAcrossRedirects(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := newPromStub(t, vector(nodeSeries("a", "1")))
	var otherAuth []string
	var mu sync.Mutex
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		otherAuth = append(otherAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		vector(nodeSeries("a", "1"))(w, r)
	}))
	defer other.Close()
	for _, tc := range []struct {
		name, to string
		got      func() []string
	}{
		{name: "https to http", to: plain.URL, got: func() []string {
			var out []string
			for _, r := range plain.received() {
				out = append(out, r.auth)
			}
			return out
		}},
		{name: "another host", to: other.URL, got: func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), otherAuth...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var firstAuth string
			origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				firstAuth = r.Header.Get("Authorization")
				http.Redirect(w, r, tc.to+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			defer origin.Close()
			src, err := NewSource(defaultedArgs(origin.URL, func(a *Args) {
				a.BearerTokenFile, a.InsecureSkipVerify = tokenFile, true
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if _, err := src.Fetch(t.Context(), t0); err != nil {
				t.Fatal(err)
			}
			if firstAuth != "Bearer secret" {
				t.Errorf("the configured host got Authorization %q", firstAuth)
			}
			if diff := cmp.Diff([]string{""}, tc.got()); diff != "" {
				t.Errorf("Authorization after the redirect (-want +got):\n%s", diff)
			}
		})
	}
}

// An answer with more series than kept is refused, not held.
func TestTooManySeries(t *testing.T) {
	stub := newPromStub(t, vector(nodeSeries("a", "1"), nodeSeries("b", "1"), nodeSeries("c", "1")))
	src, err := NewSource(defaultedArgs(stub.URL, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	src.maxSeries = 2
	if _, err := src.Fetch(t.Context(), t0); !errors.Is(err, ErrTooManySeries) {
		t.Errorf("Fetch error = %v, want ErrTooManySeries", err)
	}
	src.maxSeries = 3
	if _, err := src.Fetch(t.Context(), t0); err != nil {
		t.Errorf("Fetch of 3 series with 3 kept: %v", err)
	}
}
