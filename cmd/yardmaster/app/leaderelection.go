package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// ErrLostLease is returned by Run when this replica stopped leading before
// it was asked to stop: the process must exit non-zero so that its
// Deployment restarts it, as kube-scheduler does, rather than go on with a
// scheduler state another leader has since changed.
var ErrLostLease = errors.New("lost the leader lease")

// runWithLeaderElection schedules only while holding the Lease; a standby
// keeps its informers and queue warm and never pops or binds. With
// delayCacheUntilActive a standby has no informers: the leader starts them
// (until background ends) and waits for their caches before it schedules.
//
// On SIGTERM (ctx) the leader stops scheduling, lets in-flight bindings
// finish and only then releases the Lease, so a standby takes over within
// about one retry period and never places pods into capacity our last
// bindings are about to take.
//
// On losing the Lease the leader stops binding at once: in-flight bindings
// are cancelled (Scheduler.Abort), nothing more is posted, and Run returns
// ErrLostLease so that the process exits non-zero and is restarted, as
// kube-scheduler does. The Lease counts as lost when client-go's elector
// gives up renewing it, or, if that is late (its release of the Lease is
// slow when the API server is), when no renewal succeeded for renewDeadline:
// past that, a standby may acquire the Lease soon.
func (d *Daemon) runWithLeaderElection(ctx, background context.Context) error {
	le := d.Config.LeaderElection
	identity, err := leaderIdentity()
	if err != nil {
		return err
	}
	rl, err := resourcelock.New(resourcelock.LeasesResourceLock, le.ResourceNamespace, le.ResourceName,
		d.leaseClient.CoreV1(), d.leaseClient.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	log := d.logger.With(zap.String("lease", le.ResourceNamespace+"/"+le.ResourceName), zap.String("identity", identity))
	lock := &renewalTracker{Interface: rl, log: log}

	// The elector runs on its own context: on SIGTERM the scheduling loop
	// stops first and drains its in-flight bindings while the lease is still
	// held, and only then is the elector cancelled, which releases the
	// lease.
	electorCtx, stopElector := context.WithCancel(context.Background())
	defer stopElector()
	var started atomic.Bool
	var cacheErr error // written before drained is closed
	drained := make(chan struct{})
	elector, err := d.leaderMetrics.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            le.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				started.Store(true)
				defer close(drained)
				log.Info("became leader: scheduling")
				// Stop popping on SIGTERM (ctx) or on losing the lease.
				schedCtx, cancel := context.WithCancel(leadCtx)
				defer cancel()
				stop := context.AfterFunc(ctx, cancel)
				defer stop()
				// leadCtx ends while we lead only when the lease is lost
				// (the elector is stopped after the drain): stop binding.
				var lost atomic.Bool
				abort := func() {
					if lost.CompareAndSwap(false, true) {
						d.Scheduler.Abort()
						cancel()
					}
				}
				stopAbort := context.AfterFunc(leadCtx, abort)
				defer stopAbort()
				go func() {
					if lock.waitExpired(schedCtx, le.RenewDeadline) {
						log.Error("lease not renewed within renewDeadline: stopped binding", zap.Duration("renewDeadline", le.RenewDeadline))
						abort()
						stopElector()
					}
				}()
				if d.delayCaches() {
					log.Info("filling the informer caches (delayCacheUntilActive)")
					if cacheErr = d.fillCaches(schedCtx, background); cacheErr != nil {
						log.Error("informer caches did not sync: giving up the lease", zap.Error(cacheErr))
						stopElector()
						return
					}
					if schedCtx.Err() != nil {
						return
					}
				}
				d.Scheduler.Run(schedCtx)
				if !lost.Load() {
					// Status patches of the last failures; a replica that
					// lost its lease exits without them.
					d.Binder.Wait()
				}
			},
			OnStoppedLeading: func() {
				d.leaderMetrics.Off(le.ResourceName)
				if ctx.Err() == nil {
					log.Error("lost the lease: stopped scheduling")
					return
				}
				if started.Load() {
					log.Info("released the lease")
				}
			},
			OnNewLeader: func(id string) {
				if id != identity {
					log.Info("new leader elected", zap.String("leader", id))
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	d.leaderHealth.SetLeaderElection(elector)
	go func() {
		select {
		case <-ctx.Done():
		case <-electorCtx.Done():
			return
		}
		if started.Load() {
			<-drained
		}
		stopElector()
	}()
	log.Info("waiting for the lease")
	elector.Run(electorCtx)
	if started.Load() {
		<-drained
	}
	if cacheErr != nil {
		return cacheErr
	}
	if ctx.Err() == nil {
		return ErrLostLease
	}
	return nil
}

// renewalTracker is the lease lock, noting when this replica last wrote
// the Lease successfully (acquired or renewed it).
type renewalTracker struct {
	resourcelock.Interface
	log *zap.Logger
	// last is the time of the last successful write, in Unix nanoseconds.
	last atomic.Int64
}

// Create implements resourcelock.Interface: the Lease was created for us.
func (r *renewalTracker) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := r.Interface.Create(ctx, ler)
	if err == nil {
		r.last.Store(time.Now().UnixNano())
	}
	return err
}

// Update implements resourcelock.Interface: the Lease was renewed, taken
// over, or released.
func (r *renewalTracker) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := r.Interface.Update(ctx, ler)
	if err == nil {
		r.last.Store(time.Now().UnixNano())
		r.log.Debug("lease renewed", zap.String("holder", ler.HolderIdentity), zap.Time("renewTime", ler.RenewTime.Time))
	}
	return err
}

// waitExpired waits until no write has succeeded for deadline, and reports
// true then, or false once ctx is done.
func (r *renewalTracker) waitExpired(ctx context.Context, deadline time.Duration) bool {
	t := time.NewTimer(deadline)
	defer t.Stop()
	for {
		left := time.Until(time.Unix(0, r.last.Load()).Add(deadline))
		if left <= 0 {
			return true
		}
		t.Reset(left)
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// leaderIdentity is hostname_<random>, unique per process even when two
// replicas share a host.
func leaderIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("hostname: %w", err)
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return host + "_" + hex.EncodeToString(b), nil
}
