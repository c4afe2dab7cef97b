package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/yardmaster-io/yardmaster/internal/testca"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The secure endpoint answers as the issue asks of it, with the delegating
// authenticator and authorizer of k8s.io/apiserver over a fake API: a
// TokenReview knows two tokens, a SubjectAccessReview allows get on
// /metrics to alice and to the group of carol's client certificate.
func TestSecure(t *testing.T) {
	ca := testca.New(t, "yardmaster-test-ca")
	s, api := newTestSecureServer(t, ca)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	carol := ca.ClientCert(t, "carol", "metrics-readers")
	tests := []struct {
		name, path, token string
		cert              *tls.Certificate
		want              int
	}{
		{name: "health without credentials", path: "/healthz", want: 200},
		{name: "liveness without credentials", path: "/livez", want: 200},
		{name: "readiness without credentials", path: "/readyz", want: 200},
		{name: "metrics without credentials", path: "/metrics", want: 401},
		{name: "pprof without credentials", path: "/debug/pprof/", want: 401},
		{name: "unknown path without credentials", path: "/nothing-here", want: 401},
		{name: "a token the API server does not know", path: "/metrics", token: "forged", want: 401},
		{name: "a token without RBAC", path: "/metrics", token: "bob-token", want: 403},
		{name: "a token allowed get /metrics", path: "/metrics", token: "alice-token", want: 200},
		{name: "alice may not profile", path: "/debug/pprof/", token: "alice-token", want: 403},
		{name: "a client certificate allowed get /metrics", path: "/metrics", cert: &carol, want: 200},
		{name: "a health path with a token", path: "/healthz", token: "bob-token", want: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := testca.HTTPSGet(t, s.Addr().String(), tc.path, tc.token, tc.cert)
			if code != tc.want {
				t.Errorf("GET %s: %d, want %d\n%s", tc.path, code, tc.want, body)
			}
		})
	}

	// What was asked of the API: one TokenReview per token (answers are
	// cached) and a SubjectAccessReview per identity and path; none for a
	// request without credentials.
	reviews := api.asked()
	want := []string{
		"SubjectAccessReview alice get /debug/pprof/",
		"SubjectAccessReview alice get /metrics",
		"SubjectAccessReview bob get /metrics",
		"SubjectAccessReview carol get /metrics",
		"TokenReview alice-token",
		"TokenReview bob-token",
		"TokenReview forged",
	}
	if !slices.Equal(reviews, want) {
		t.Errorf("reviews asked for:\n%s\nwant:\n%s", strings.Join(reviews, "\n"), strings.Join(want, "\n"))
	}

	// Plain HTTP to the TLS port gets nothing served.
	plain := &http.Transport{}
	defer plain.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: plain, Timeout: 10 * time.Second}).Get("http://" + s.Addr().String() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered 200 on the secure port")
		}
	}
}

func TestSecureShutdown(t *testing.T) {
	s, _ := newTestSecureServer(t, testca.New(t, "yardmaster-test-ca"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	if code, body := testca.HTTPSGet(t, s.Addr().String(), "/livez", "", nil); code != 200 {
		t.Fatalf("/livez: %d %s", code, body)
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
	if c, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("still listening after Serve returned")
	}
}

func TestSecureNeedsAuth(t *testing.T) {
	if _, err := NewSecure(Options{}, SecureOptions{}); err == nil {
		t.Error("NewSecure without a listener succeeded")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := NewSecure(Options{}, SecureOptions{Serving: &genericapiserver.SecureServingInfo{Listener: ln}}); err == nil {
		t.Error("NewSecure without an authenticator and an authorizer succeeded")
	}
}

// newTestSecureServer serves Options with metrics and pprof on a loopback
// port, behind the delegating authenticator and authorizer of a fake API
// server that answers reviews.
func newTestSecureServer(t *testing.T, ca *testca.CA) (*SecureServer, *fakeAPI) {
	t.Helper()
	api := newFakeAPI(t)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: api.srv.URL})
	if err != nil {
		t.Fatal(err)
	}

	serving := apiserveroptions.NewSecureServingOptions()
	serving.ServerCert.CertDirectory = ""
	ln, _, err := apiserveroptions.CreateListener("tcp", "127.0.0.1:0", net.ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	serving.Listener = ln
	if err := serving.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		t.Fatal(err)
	}
	var info *genericapiserver.SecureServingInfo
	if err := serving.ApplyTo(&info); err != nil {
		t.Fatal(err)
	}
	caContent, err := dynamiccertificates.NewStaticCAContent("test-ca", ca.PEM)
	if err != nil {
		t.Fatal(err)
	}
	info.ClientCA = caContent
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                          &apiserver.AnonymousAuthConfig{Enabled: true},
		TokenAccessReviewClient:            client.AuthenticationV1(),
		WebhookRetryBackoff:                apiserveroptions.DefaultAuthWebhookRetryBackoff(),
		CacheTTL:                           time.Minute,
		ClientCertificateCAContentProvider: caContent,
	}.New()
	if err != nil {
		t.Fatal(err)
	}
	delegated, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		AllowCacheTTL:             time.Minute,
		DenyCacheTTL:              time.Minute,
		WebhookRetryBackoff:       apiserveroptions.DefaultAuthWebhookRetryBackoff(),
	}.New()
	if err != nil {
		t.Fatal(err)
	}
	// As DelegatingAuthorizationOptions builds it: the always-allowed
	// paths, then the API server's answer.
	alwaysAllow := apiserveroptions.NewDelegatingAuthorizationOptions().AlwaysAllowPaths
	open, err := path.NewAuthorizer(alwaysAllow)
	if err != nil {
		t.Fatal(err)
	}
	authz, err := union.New(union.NamedAuthorizer{AuthorizerName: "always-allow-paths", Authorizer: open},
		union.NamedAuthorizer{AuthorizerName: "delegated", Authorizer: delegated})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "yardmaster_test_total", Help: "A test counter."}))
	s, err := NewSecure(Options{Gatherer: reg, Profiling: true}, SecureOptions{
		Serving:        info,
		Authenticator:  authn,
		Authorizer:     authz,
		AnonymousPaths: alwaysAllow,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, api
}

// fakeAPI answers TokenReviews (alice-token and bob-token are known) and
// SubjectAccessReviews (get /metrics is allowed to alice and to the group
// metrics-readers), and records them.
type fakeAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reviews []string
}

func newFakeAPI(t *testing.T) *fakeAPI {
	api := &fakeAPI{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /apis/authentication.k8s.io/v1/tokenreviews", func(w http.ResponseWriter, r *http.Request) {
		var tr authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		api.record("TokenReview " + tr.Spec.Token)
		switch tr.Spec.Token {
		case "alice-token":
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "alice"}}
		case "bob-token":
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "bob"}}
		}
		writeJSON(w, &tr)
	})
	mux.HandleFunc("POST /apis/authorization.k8s.io/v1/subjectaccessreviews", func(w http.ResponseWriter, r *http.Request) {
		var sar authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		nr := sar.Spec.NonResourceAttributes
		if nr == nil {
			http.Error(w, "not a non-resource request", http.StatusBadRequest)
			return
		}
		api.record("SubjectAccessReview " + sar.Spec.User + " " + nr.Verb + " " + nr.Path)
		metrics := nr.Verb == "get" && nr.Path == "/metrics"
		sar.Status.Allowed = metrics && (sar.Spec.User == "alice" || slices.Contains(sar.Spec.Groups, "metrics-readers"))
		writeJSON(w, &sar)
	})
	api.srv = httptest.NewServer(mux)
	t.Cleanup(api.srv.Close)
	return api
}

func (a *fakeAPI) record(r string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reviews = append(a.reviews, r)
}

// asked returns the reviews made, sorted, each once.
func (a *fakeAPI) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Clone(a.reviews)
	slices.Sort(out)
	return slices.Compact(out)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
