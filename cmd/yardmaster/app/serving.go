package app

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/yardmaster-io/yardmaster/internal/server"
)

// leaderHealthTolerance is how long past the lease's expiry a leader whose
// renewals stopped still passes /livez (kube-scheduler's 20s): a renew loop
// that fails ends the process by itself; one stuck for this long (a
// deadlock) is for the kubelet to restart.
const leaderHealthTolerance = 20 * time.Second

// newServer builds the HTTP endpoint (and listens):
//
//   - /healthz, /livez: the lease renew loop is not stuck
//     (client-go's leaderelection.HealthzAdaptor; always passes on a
//     standby and without leader election);
//   - /readyz: that, and the informer caches are synced, and the process is
//     not shutting down. A standby is ready: it has a warm cache to take
//     over with.
func (d *Daemon) newServer(o Options, profiling bool) (*server.Server, error) {
	return server.New(server.Options{
		Addr:     o.HTTPBindAddress,
		CertFile: o.TLSCertFile,
		KeyFile:  o.TLSKeyFile,
		Gatherer: d.Metrics,
		Livez:    []server.Checker{d.leaderHealth},
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
	})
}

// HTTPAddr returns the address the HTTP endpoint listens on (the port
// chosen when --http-bind-address asked for port 0), or "" when there is
// none.
func (d *Daemon) HTTPAddr() string {
	if d.server == nil {
		return ""
	}
	return d.server.Addr().String()
}

// serve serves the HTTP endpoint, if any, until the returned func is
// called, which waits for it to stop.
func (d *Daemon) serve() (stop func()) {
	if d.server == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := d.server.Serve(ctx); err != nil {
			d.logger.Error("HTTP endpoint stopped", zap.Error(err))
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
