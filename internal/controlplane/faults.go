package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Faults for tests: the API server and etcd stopped and started again
// while clients keep running, as in an upgrade, a crash or a node reboot.
// The state (etcd's data, the API server's keys, tokens and serving
// certificate) and the ports are kept, so clients reconnect to the same
// addresses and trust what they find there.

// errStopped is returned by a fault asked of a stopped control plane.
var errStopped = errors.New("control plane stopped")

// RestartAPIServer stops kube-apiserver (SIGTERM, as a rolling upgrade
// does), waits down, starts it again on the same port against the same
// etcd, and returns once it is ready.
func (c *ControlPlane) RestartAPIServer(ctx context.Context, down time.Duration) error {
	c.mu.Lock()
	p, stopped := c.apiserver, c.stopped
	c.mu.Unlock()
	if stopped {
		return errStopped
	}
	if err := p.Stop(stopGracePeriod); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	if err := sleep(ctx, down); err != nil {
		return err
	}
	if err := c.launchAPIServer(ctx); err != nil {
		return fmt.Errorf("restarting kube-apiserver: %w", err)
	}
	return nil
}

// StopEtcd stops etcd; the API server keeps running and fails the
// requests that need it until StartEtcd.
func (c *ControlPlane) StopEtcd() error {
	c.mu.Lock()
	p, stopped := c.etcd, c.stopped
	c.mu.Unlock()
	if stopped {
		return errStopped
	}
	if err := p.Stop(stopGracePeriod); err != nil {
		return fmt.Errorf("stopping etcd: %w", err)
	}
	return nil
}

// StartEtcd starts etcd again after StopEtcd, on the same ports and data,
// and returns once it is healthy.
func (c *ControlPlane) StartEtcd(ctx context.Context) error {
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return errStopped
	}
	if err := c.launchEtcd(ctx); err != nil {
		return fmt.Errorf("restarting etcd: %w", err)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
