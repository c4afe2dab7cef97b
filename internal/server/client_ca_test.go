package server

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// A request with a client certificate that comes before the client CAs are
// read waits for them (until the grace ends); one without a certificate,
// or after the grace, is not held.
func TestWaitForClientCA(t *testing.T) {
	var ca atomic.Pointer[[]byte]
	content := func() []byte {
		if p := ca.Load(); p != nil {
			return *p
		}
		return nil
	}
	// Stands for the x509 authenticator: it knows the certificate only
	// once the CA is there.
	inner := authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
		return &authenticator.Response{User: &user.DefaultInfo{Name: "carol"}}, len(content()) > 0, nil
	})
	withCert := httptest.NewRequest("GET", "/metrics", nil)
	withCert.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{}}}
	without := httptest.NewRequest("GET", "/metrics", nil)

	authn := waitForClientCA(inner, content, time.Now().Add(5*time.Second))
	if _, ok, _ := authn.AuthenticateRequest(without); ok {
		t.Fatal("a request without a certificate authenticated before the CA was read")
	}
	time.AfterFunc(200*time.Millisecond, func() { b := []byte("pem"); ca.Store(&b) })
	start := time.Now()
	if _, ok, err := authn.AuthenticateRequest(withCert); !ok || err != nil {
		t.Fatalf("a certificate presented before the CA was read: ok %v, %v; want it to wait and pass", ok, err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("returned after %v: did not wait for the CA", waited)
	}

	ca.Store(nil)
	late := waitForClientCA(inner, content, time.Now().Add(-time.Second))
	start = time.Now()
	if _, ok, _ := late.AuthenticateRequest(withCert); ok || time.Since(start) > 100*time.Millisecond {
		t.Errorf("after the grace: ok %v after %v; want a refusal at once", ok, time.Since(start))
	}
}
