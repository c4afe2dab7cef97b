package app

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/yardmaster-io/yardmaster/internal/server"
)

// leaderHealthTolerance is how long past the lease's expiry a leader whose
// renewals stopped still passes /livez (kube-scheduler's 20s): a renew loop
// that fails ends the process by itself; one stuck for this long (a
// deadlock) is for the kubelet to restart.
const leaderHealthTolerance = 20 * time.Second

// loopChecker is the scheduling loop as /livez checks it; see
// scheduler.Scheduler.LoopHealthy.
type loopChecker interface {
	LoopHealthy(now time.Time, bound time.Duration) error
}

// routes are the endpoint's routes, served on the plain HTTP endpoint
// (listening on addr) and on the secure port alike:
//
//   - /healthz, /livez: the lease renew loop is not stuck
//     (client-go's leaderelection.HealthzAdaptor; always passes on a
//     standby and without leader election), and the scheduling loop has
//     not been stuck for --scheduling-stall-timeout while pods wait (passes
//     on a standby, which does not run it);
//   - /readyz: those, and the informer caches are synced, and the process
//     is not shutting down. A standby is ready: it has a warm cache to take
//     over with; with delayCacheUntilActive it has none, and is not ready
//     until it leads and has filled it, as in kube-scheduler.
func (d *Daemon) routes(profiling bool, addr string) server.Options {
	livez := []server.Checker{d.leaderHealth}
	if d.stallTimeout > 0 {
		livez = append(livez, server.CheckFunc("scheduling-loop", func(*http.Request) error {
			return d.loop.LoopHealthy(time.Now(), d.stallTimeout)
		}))
	}
	return server.Options{
		Addr:     addr,
		Gatherer: d.Metrics,
		Livez:    livez,
		Readyz: []server.Checker{
			server.CheckFunc("informer-sync", func(*http.Request) error {
				if !d.synced.Load() {
					return errors.New("informer caches not synced")
				}
				return nil
			}),
			server.CheckFunc("shutdown", func(*http.Request) error {
				if d.stopping.Load() {
					return errors.New("shutting down")
				}
				return nil
			}),
		},
		Profiling: profiling,
		Logger:    d.logger,
	}
}

// newSecureServer builds the secure port (and listens); kubeconfig is the
// daemon's own, see SecureServing.apply.
func (d *Daemon) newSecureServer(s *SecureServing, kubeconfig string, profiling bool) (*server.SecureServer, error) {
	sec, err := s.apply(kubeconfig)
	if err != nil {
		return nil, err
	}
	routes := d.routes(profiling, "")
	// Only here, behind authentication and authorization: an explanation
	// shows pods and nodes of every namespace.
	routes.Debug = map[string]http.Handler{explainPath: d.explainHandler()}
	srv, err := server.NewSecure(routes, sec)
	if err != nil {
		_ = sec.Serving.Listener.Close()
		return nil, err
	}
	return srv, nil
}

// HTTPAddr returns the address the plain HTTP endpoint listens on (the
// port chosen when --http-bind-address asked for port 0), or "" when there
// is none.
func (d *Daemon) HTTPAddr() string {
	if d.server == nil {
		return ""
	}
	return d.server.Addr().String()
}

// SecureAddr returns the address the secure port listens on (the port
// chosen when --secure-port is 0), or "" when there is none.
func (d *Daemon) SecureAddr() string {
	if d.secure == nil {
		return ""
	}
	return d.secure.Addr().String()
}

// serve serves the endpoints, if any, until the returned func is called,
// which waits for them to stop.
func (d *Daemon) serve() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if d.server != nil {
		wg.Go(func() {
			if err := d.server.Serve(ctx); err != nil {
				d.logger.Error("HTTP endpoint stopped", zap.Error(err))
			}
		})
	}
	if d.secure != nil {
		wg.Go(func() {
			if err := d.secure.Serve(ctx); err != nil {
				d.logger.Error("secure endpoint stopped", zap.Error(err))
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
	}
}
