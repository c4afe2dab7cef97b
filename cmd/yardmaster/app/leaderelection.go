package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"go.uber.org/zap"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// ErrLostLease is returned by Run when this replica stopped leading before
// it was asked to stop: the process must exit non-zero so that its
// Deployment restarts it, as kube-scheduler does, rather than go on with a
// scheduler state another leader has since changed.
var ErrLostLease = errors.New("lost the leader lease")

// runWithLeaderElection schedules only while holding the Lease. On SIGTERM
// the leader stops scheduling, finishes in-flight bindings and releases the
// Lease so a standby takes over within about one retry period.
func (d *Daemon) runWithLeaderElection(ctx context.Context) error {
	le := d.Config.LeaderElection
	identity, err := leaderIdentity()
	if err != nil {
		return err
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, le.ResourceNamespace, le.ResourceName,
		d.Client.CoreV1(), d.Client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	log := d.logger.With(zap.String("lease", le.ResourceNamespace+"/"+le.ResourceName), zap.String("identity", identity))

	// The elector runs on its own context: on SIGTERM the scheduling loop
	// stops first and drains its in-flight bindings while the lease is still
	// held, and only then is the elector cancelled, which releases the
	// lease. Releasing earlier would let a standby place pods into capacity
	// our last bindings are about to take.
	electorCtx, stopElector := context.WithCancel(context.Background())
	defer stopElector()
	var started atomic.Bool
	drained := make(chan struct{})
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
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
				// Stop on SIGTERM (ctx) or on losing the lease (leadCtx).
				schedCtx, cancel := context.WithCancel(leadCtx)
				defer cancel()
				stop := context.AfterFunc(ctx, cancel)
				defer stop()
				d.schedule(schedCtx)
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					log.Error("lost the lease: stopped scheduling")
					return
				}
				log.Info("released the lease")
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
	go func() {
		<-ctx.Done()
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
	if ctx.Err() == nil {
		return ErrLostLease
	}
	return nil
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
