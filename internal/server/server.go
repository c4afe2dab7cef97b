// Package server is yardmaster's one HTTP endpoint: the health checks the
// kubelet probes, Prometheus metrics and, when asked for, pprof.
//
//	/healthz, /livez   the process works: every liveness check passes (the
//	                   lease renew loop is not stuck, say)
//	/readyz            the liveness checks and every readiness check pass
//	                   (informer caches synced, not shutting down)
//	/livez/NAME, ...   one check of that endpoint
//	/metrics           the Gatherer's metrics, Prometheus text format
//	/debug/pprof/      net/http/pprof, only with Options.Profiling
//
// Health responses are kube-apiserver's: 200 "ok"; or 503 with one line per
// check, "[+]NAME ok" or "[-]NAME failed: REASON", then "ENDPOINT check
// failed". ?verbose lists the checks on success too; ?exclude=NAME (which
// may repeat) leaves a check out.
//
// The routes are served two ways. New serves them as they are, over plain
// HTTP (or HTTPS with a certificate), with no authentication or
// authorization: for an operator who asks for that port explicitly.
// NewSecure (secure.go) serves them as kube-scheduler serves its secure
// port: HTTPS, every request authenticated (bearer token by TokenReview,
// client certificate) and authorized (SubjectAccessReview of get on the
// path) by k8s.io/apiserver's delegating authenticator and authorizer, the
// health paths open to the kubelet's probes.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// Checker is one named health check. Check returns nil when healthy; it is
// called on every probe, so it must be quick. leaderelection.HealthzAdaptor
// is a Checker.
type Checker interface {
	Name() string
	Check(req *http.Request) error
}

// CheckFunc makes a Checker of a function.
func CheckFunc(name string, check func(req *http.Request) error) Checker {
	return checkFunc{name: name, check: check}
}

type checkFunc struct {
	name  string
	check func(*http.Request) error
}

func (c checkFunc) Name() string                  { return c.name }
func (c checkFunc) Check(req *http.Request) error { return c.check(req) }

// Ping always passes: an answer at all shows the server is up.
var Ping = CheckFunc("ping", func(*http.Request) error { return nil })

// Options configure a Server.
type Options struct {
	// Addr is the host:port to listen on; port 0 picks a free one (Addr
	// tells which).
	Addr string
	// CertFile and KeyFile, both or neither, serve HTTPS with that
	// certificate.
	CertFile, KeyFile string
	// Gatherer is what /metrics serves; nil serves no /metrics.
	Gatherer prometheus.Gatherer
	// Livez are the checks of /healthz and /livez, and also of /readyz.
	Livez []Checker
	// Readyz are the checks /readyz adds to Livez.
	Readyz []Checker
	// Profiling serves net/http/pprof under /debug/pprof/.
	Profiling bool
	// Logger receives serving errors; nil discards them.
	Logger *zap.Logger
	// Debug are more routes under /debug/ (pattern → handler, such as
	// "GET /debug/explain"); on the secure port they are authorized as
	// every path is, by a SubjectAccessReview of get on the path.
	Debug map[string]http.Handler
}

// shutdownTimeout bounds how long Serve waits for requests in progress once
// its context is done. A CPU profile in progress is cut short.
const shutdownTimeout = 5 * time.Second

// readHeaderTimeout bounds how long a client may take to send its headers,
// so that slow clients cannot hold connections open.
const readHeaderTimeout = 10 * time.Second

// Server is the endpoint. New listens at once; Serve serves until its
// context is done. A Server that is never served must be closed.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	logger *zap.Logger
}

// New builds the handler and listens on opts.Addr, so that a port in use
// or a bad certificate is an error here, before anything else starts.
func New(opts Options) (*Server, error) {
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return nil, errors.New("serving HTTPS needs both a certificate and a private key file")
	}
	logger := opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	var tlsConfig *tls.Config
	if opts.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load the serving certificate: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %q: %w", opts.Addr, err)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	return &Server{
		ln: ln,
		srv: &http.Server{
			Handler:           Handler(opts),
			ReadHeaderTimeout: readHeaderTimeout,
			ErrorLog:          zap.NewStdLog(logger.Named("http")),
		},
		logger: logger,
	}, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve answers requests until ctx is done, then lets requests in progress
// finish (for up to 5 seconds) and returns. It returns an error only when
// serving failed.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP on %s: %w", s.ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		s.logger.Warn("HTTP requests still in progress at shutdown", zap.Error(err))
		_ = s.srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTP on %s: %w", s.ln.Addr(), err)
	}
	return nil
}

// Close stops listening; for a Server whose Serve was never called.
func (s *Server) Close() error { return s.ln.Close() }

// Handler returns the endpoint's routes, without listening: for tests and
// for embedding in another server.
func Handler(opts Options) http.Handler {
	mux := http.NewServeMux()
	livez := append([]Checker{Ping}, opts.Livez...)
	readyz := append(slices.Clone(livez), opts.Readyz...)
	installChecks(mux, "/healthz", livez)
	installChecks(mux, "/livez", livez)
	installChecks(mux, "/readyz", readyz)
	if opts.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{
			ErrorLog:      zap.NewStdLog(loggerOrNop(opts.Logger).Named("metrics")),
			ErrorHandling: promhttp.ContinueOnError,
		}))
	}
	for pattern, h := range opts.Debug {
		mux.Handle(pattern, h)
	}
	if opts.Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

func loggerOrNop(l *zap.Logger) *zap.Logger {
	if l == nil {
		return zap.NewNop()
	}
	return l
}

// installChecks serves path (all checks) and path/NAME (one check).
func installChecks(mux *http.ServeMux, path string, checks []Checker) {
	mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
		serveChecks(w, r, path, checks)
	})
	for _, c := range checks {
		mux.HandleFunc("GET "+path+"/"+c.Name(), func(w http.ResponseWriter, r *http.Request) {
			serveChecks(w, r, path+"/"+c.Name(), []Checker{c})
		})
	}
}

// serveChecks runs checks and answers as kube-apiserver's health endpoints
// do.
func serveChecks(w http.ResponseWriter, r *http.Request, path string, checks []Checker) {
	excluded := r.URL.Query()["exclude"]
	var out strings.Builder
	failed := false
	for _, c := range checks {
		if slices.Contains(excluded, c.Name()) {
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name())
			continue
		}
		if err := c.Check(r); err != nil {
			failed = true
			fmt.Fprintf(&out, "[-]%s failed: %v\n", c.Name(), err)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.Name())
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// Probes must never see a cached answer.
	w.Header().Set("Cache-Control", "no-store")
	if failed {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "%s%s check failed\n", out.String(), path)
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		fmt.Fprintf(w, "%s%s check passed\n", out.String(), path)
		return
	}
	fmt.Fprint(w, "ok")
}
