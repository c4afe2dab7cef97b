package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}

func TestChecks(t *testing.T) {
	synced := false
	opts := Options{
		Livez: []Checker{CheckFunc("leaderElection", func(*http.Request) error { return nil })},
		Readyz: []Checker{CheckFunc("informer-sync", func(*http.Request) error {
			if !synced {
				return errors.New("informer caches not synced")
			}
			return nil
		})},
	}
	h := Handler(opts)
	tests := []struct {
		target   string
		wantCode int
		wantBody string
	}{
		{"/healthz", 200, "ok"},
		{"/livez", 200, "ok"},
		{"/livez?verbose", 200, "[+]ping ok\n[+]leaderElection ok\n/livez check passed\n"},
		{"/livez/leaderElection", 200, "ok"},
		{"/readyz", 503, "[+]ping ok\n[+]leaderElection ok\n[-]informer-sync failed: informer caches not synced\n/readyz check failed\n"},
		{"/readyz/informer-sync", 503, "[-]informer-sync failed: informer caches not synced\n/readyz/informer-sync check failed\n"},
		{"/readyz?exclude=informer-sync", 200, "ok"},
		{"/readyz?exclude=informer-sync&verbose", 200, "[+]ping ok\n[+]leaderElection ok\n[+]informer-sync excluded: ok\n/readyz check passed\n"},
		// Readiness checks are not liveness checks.
		{"/livez/informer-sync", 404, "404 page not found\n"},
		// No Gatherer, no Profiling.
		{"/metrics", 404, "404 page not found\n"},
		{"/debug/pprof/", 404, "404 page not found\n"},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			code, body := get(t, h, tc.target)
			if code != tc.wantCode {
				t.Errorf("status %d, want %d", code, tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantBody, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
	synced = true
	if code, body := get(t, h, "/readyz"); code != 200 || body != "ok" {
		t.Errorf("after sync: /readyz %d %q, want 200 ok", code, body)
	}
}

func TestMetricsAndProfiling(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "yardmaster_test_total", Help: "A test counter."})
	reg.MustRegister(c)
	c.Add(3)
	h := Handler(Options{Gatherer: reg, Profiling: true})

	code, body := get(t, h, "/metrics")
	if code != 200 || !strings.Contains(body, "yardmaster_test_total 3\n") {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
	if code, body := get(t, h, "/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/: %d\n%s", code, body)
	}
	if code, _ := get(t, h, "/debug/pprof/cmdline"); code != 200 {
		t.Errorf("/debug/pprof/cmdline: %d", code)
	}
}

func TestServeAndShutdown(t *testing.T) {
	s, err := New(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()

	resp, err := http.Get("http://" + s.Addr().String() + "/livez")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("/livez: %d %q", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
	}
	http.DefaultClient.CloseIdleConnections()
	if _, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		t.Error("still listening after Serve returned")
	}
}

func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := New(Options{Addr: ln.Addr().String()}); err == nil {
		t.Error("New listened on a port in use")
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := writeCert(t, dir)

	if _, err := New(Options{Addr: "127.0.0.1:0", CertFile: certFile}); err == nil {
		t.Error("a certificate without a key was accepted")
	}
	if _, err := New(Options{Addr: "127.0.0.1:0", CertFile: keyFile, KeyFile: keyFile}); err == nil {
		t.Error("a bad certificate was accepted")
	}

	s, err := New(Options{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := client.Get("https://" + s.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("https /healthz: %d", resp.StatusCode)
	}
	// Plain HTTP to the TLS port is refused.
	plain := &http.Transport{}
	defer plain.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: plain, Timeout: 10 * time.Second}).Get("http://" + s.Addr().String() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered 200 on the TLS port")
		}
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "yardmaster-test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true,

		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
