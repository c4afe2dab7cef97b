package app

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/rest"
)

// offlineOptions are Options for a daemon that is built and serves, but
// never talks to an API server.
func offlineOptions() Options {
	return Options{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1"}}
}

// loopbackSecure is the secure port on a free loopback port.
func loopbackSecure() *SecureServing {
	s := NewSecureServing()
	s.Serving.BindAddress = net.IPv4(127, 0, 0, 1)
	s.Serving.BindPort = 0
	return s
}

// The secure port with no kubeconfig for authentication and authorization
// (outside a cluster): a self-signed certificate, the health paths open,
// everything else refused, and nothing left listening once stopped.
func TestDaemonSecurePort(t *testing.T) {
	o := offlineOptions()
	o.Secure = loopbackSecure()
	d, err := NewDaemon(o, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	addr := d.SecureAddr()
	if _, port, _ := net.SplitHostPort(addr); port == "0" || port == strconv.Itoa(DefaultSecurePort) {
		t.Fatalf("secure port %s: want the free port chosen for port 0", addr)
	}
	if d.HTTPAddr() != "" {
		t.Errorf("plain HTTP endpoint at %s, none asked for", d.HTTPAddr())
	}
	stop := d.serve()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // self-signed
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503, "/metrics": 401, "/debug/pprof/": 401} {
		resp, err := client.Get("https://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d\n%s", path, resp.StatusCode, want, body)
		}
	}
	tr.CloseIdleConnections()
	stop()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("still listening after the endpoints stopped")
	}
}

// A secure port in use fails NewDaemon, and the plain endpoint it opened
// first is closed again.
func TestDaemonSecurePortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plainAddr := plain.Addr().String()
	plain.Close()

	o := offlineOptions()
	o.HTTPBindAddress = plainAddr
	o.Secure = loopbackSecure()
	o.Secure.Serving.BindPort = ln.Addr().(*net.TCPAddr).Port
	if _, err := NewDaemon(o, zaptest.NewLogger(t)); err == nil {
		t.Fatal("NewDaemon listened on a port in use")
	}
	again, err := net.Listen("tcp", plainAddr)
	if err != nil {
		t.Fatalf("the plain endpoint's port is still taken: %v", err)
	}
	again.Close()
}
