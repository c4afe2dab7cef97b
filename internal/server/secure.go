package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/path"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/client-go/kubernetes/scheme"
)

// SecureOptions make the endpoint kube-scheduler's secure port: HTTPS,
// every request authenticated and authorized by k8s.io/apiserver's
// delegating authenticator and authorizer (TokenReview, client
// certificates, SubjectAccessReview), which the caller builds from its
// flags.
type SecureOptions struct {
	// Serving listens and holds the serving certificate and the client CAs
	// (k8s.io/apiserver's SecureServingOptions.ApplyTo builds it).
	Serving *genericapiserver.SecureServingInfo
	// Authenticator identifies the caller: a client certificate, a bearer
	// token, or system:anonymous when the request carries neither.
	Authenticator authenticator.Request
	// Authorizer decides; for this endpoint every request is a non-resource
	// request (verb get, the path), as in a SubjectAccessReview's
	// nonResourceAttributes.
	Authorizer authorizer.Authorizer
	// AnonymousPaths are where a request without credentials is served as
	// system:anonymous ("/healthz", "/livez/*", as
	// --authorization-always-allow-paths writes them). Elsewhere it gets 401
	// at once, see anonymousOnlyOn.
	AnonymousPaths []string
}

// SecureServer is the endpoint of Options served with SecureOptions.
// NewSecure listens (SecureOptions.Serving did); Serve serves until its
// context is done. A SecureServer that is never served must be closed.
type SecureServer struct {
	info    *genericapiserver.SecureServingInfo
	handler http.Handler
}

// NewSecure builds the routes of routes behind authentication and
// authorization, on sec.Serving's listener. routes.Addr, CertFile and
// KeyFile are not used: the listener and the certificate are sec.Serving's.
func NewSecure(routes Options, sec SecureOptions) (*SecureServer, error) {
	if sec.Serving == nil || sec.Serving.Listener == nil {
		return nil, errors.New("secure serving needs a listener")
	}
	if sec.Authenticator == nil || sec.Authorizer == nil {
		return nil, errors.New("secure serving needs an authenticator and an authorizer")
	}
	authn, err := anonymousOnlyOn(sec.Authenticator, sec.AnonymousPaths)
	if err != nil {
		return nil, err
	}
	if sec.Serving.ClientCA != nil {
		authn = waitForClientCA(authn, sec.Serving.ClientCA.CurrentCABundleContent, time.Now().Add(clientCAGrace))
	}
	return &SecureServer{info: sec.Serving, handler: secureHandler(Handler(routes), authn, sec.Authorizer)}, nil
}

// secureHandler is kube-scheduler's handler chain (its buildHandlerChain):
// panics recovered, requests logged, responses not cached, then
// authentication (401 on failure) and authorization (403).
func secureHandler(h http.Handler, authn authenticator.Request, authz authorizer.Authorizer) http.Handler {
	// No API prefixes: every path is a non-resource request.
	resolver := &apirequest.RequestInfoFactory{}
	h = genericapifilters.WithAuthorization(h, authz, scheme.Codecs)
	h = genericapifilters.WithAuthentication(h, authn, genericapifilters.Unauthorized(scheme.Codecs), nil, nil)
	h = genericapifilters.WithRequestInfo(h, resolver)
	h = genericapifilters.WithCacheControl(h)
	h = genericfilters.WithHTTPLogging(h)
	return genericfilters.WithPanicRecovery(h, resolver)
}

// anonymousOnlyOn accepts the system:anonymous identity authn gives a
// request without credentials only on paths; elsewhere the request is
// unauthenticated (401).
//
// kube-scheduler answers such a request with a SubjectAccessReview for
// system:anonymous, and 403. Here it never leaves the process: anyone who
// reaches the port could otherwise make the scheduler send the API server a
// review per request, and varying the path defeats the authorizer's cache.
// The kubelet's probes, which carry no credentials, ask for the health
// paths, which stay open. A bad token or certificate is refused by authn
// itself, as before.
func anonymousOnlyOn(authn authenticator.Request, paths []string) (authenticator.Request, error) {
	open, err := path.NewAuthorizer(paths)
	if err != nil {
		return nil, fmt.Errorf("anonymous paths: %w", err)
	}
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		resp, ok, err := authn.AuthenticateRequest(req)
		if err != nil || !ok || resp.User.GetName() != user.Anonymous {
			return resp, ok, err
		}
		if d, _, _ := open.Authorize(req.Context(), authorizer.AttributesRecord{Path: req.URL.Path}); d == authorizer.DecisionAllow {
			return resp, true, nil
		}
		return nil, false, nil
	}), nil
}

// clientCAGrace is how long after the start a request with a client
// certificate waits for the client CAs to be read, rather than get 401.
const clientCAGrace = 10 * time.Second

// waitForClientCA makes a request that presents a client certificate
// before until wait (bounded by until and the request) for caContent to
// be non-empty. The CAs of the extension-apiserver-authentication
// ConfigMap are read by an informer that starts with the server, so for a
// moment after the start no certificate could be verified: a scrape by
// certificate then got 401 (kube-scheduler still answers so). Requests
// without a certificate, and any after until, are not held.
func waitForClientCA(authn authenticator.Request, caContent func() []byte, until time.Time) authenticator.Request {
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
			for len(caContent()) == 0 && time.Now().Before(until) {
				select {
				case <-req.Context().Done():
					return nil, false, req.Context().Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
		return authn.AuthenticateRequest(req)
	})
}

// Addr returns the address the server listens on.
func (s *SecureServer) Addr() net.Addr { return s.info.Listener.Addr() }

// Serve answers requests until ctx is done, then lets requests in progress
// finish (for up to 5 seconds) and returns once the listener is closed. The
// client CAs of the extension-apiserver-authentication ConfigMap are
// watched while it serves.
func (s *SecureServer) Serve(ctx context.Context) error {
	stopped, listenerStopped, err := s.info.Serve(s.handler, shutdownTimeout, ctx.Done())
	if err != nil {
		_ = s.info.Listener.Close()
		return fmt.Errorf("serve HTTPS on %s: %w", s.Addr(), err)
	}
	<-stopped
	<-listenerStopped
	return nil
}

// Close stops listening; for a SecureServer whose Serve was never called.
func (s *SecureServer) Close() error { return s.info.Listener.Close() }
