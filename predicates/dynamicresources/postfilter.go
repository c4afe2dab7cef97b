package dynamicresources

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/framework"
)

// errStateNotFound is kube-scheduler's cycle state's error for a key
// nobody wrote.
var errStateNotFound = errors.New("not found")

// backgroundWriteTimeout bounds one try of one of PostFilter's writes.
const backgroundWriteTimeout = 30 * time.Second

// defaultBackgroundRetry spaces the tries of a background write that
// failed: 1, 2, 4 and 8 s after the one before, five in all.
var defaultBackgroundRetry = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 5}

// PostFilter runs when the pod fits nowhere, before preemption: a claim of
// the pod that is allocated but could not be used on some node (its node
// selector, or its devices' binding failed or timed out) and that no other
// pod holds is deallocated, so that the next attempt allocates it anew;
// else a claim the scheduler made for the pod's extended resources in an
// earlier attempt is deleted. kube-scheduler writes in PostFilter; here the
// write goes to the background (the scheduling cycle never waits on the
// API) and its event brings the pod back. The messages are
// kube-scheduler v1.37's: a PostFilter that did nothing says nothing (the
// pod's message goes on to preemption's).
func (pl *DynamicResources) PostFilter(_ context.Context, cs *framework.CycleState, pod *v1.Pod, _ *framework.FilteredNodes) *framework.Status {
	s, err := readState(cs)
	if err != nil {
		// PreFilter did not run: an earlier PreFilter turned the pod away
		// for good. kube-scheduler's plugin then fails with its cycle
		// state's "not found", which also ends the PostFilter chain (no
		// preemption); the pod's message says so the same way.
		return framework.AsStatus(errStateNotFound)
	}
	if s.empty() {
		return framework.NewStatus(framework.Unschedulable)
	}
	ext := s.extendedClaim()
	for i := range s.unavailable {
		claim := s.claims[i]
		if claim == ext {
			if ext.Name != inMemoryClaimName {
				break
			}
			continue
		}
		reserved := claim.Status.ReservedFor
		if len(reserved) == 0 || len(reserved) == 1 && reserved[0].UID == pod.UID {
			pl.deallocate(claim)
			return framework.NewStatus(framework.Unschedulable, "deallocation of ResourceClaim completed")
		}
	}
	if ext != nil && ext.Name != inMemoryClaimName {
		claim := ext.DeepCopy()
		pl.inBackground(claim.Namespace+"/"+claim.Name, func(ctx context.Context) error { return pl.deleteClaim(ctx, claim) })
		return framework.NewStatus(framework.Unschedulable, "deletion of ResourceClaim completed")
	}
	return framework.NewStatus(framework.Unschedulable)
}

// deallocate clears the claim's allocation and reservations in the
// background.
func (pl *DynamicResources) deallocate(claim *resourceapi.ResourceClaim) {
	claim = claim.DeepCopy()
	claim.Status.ReservedFor = nil
	claim.Status.Allocation = nil
	claim.Status.Devices = nil
	pl.inBackground(claim.Namespace+"/"+claim.Name, func(ctx context.Context) error {
		_, err := pl.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{})
		return err
	})
}

// inBackground hands write to the background worker unless a write of
// that claim is already under way. The pod waits, unschedulable, for the
// event the write makes, and nothing else brings it back before the
// queue's leftover flush (5 minutes): so a write that fails is tried
// again (pl.backgroundRetry), whatever the error, since a 404 or an
// answer lost may come from a proxy as well as from the API server; only
// a conflict ends it, for a claim that changed meanwhile makes an event
// of its own. kube-scheduler writes once, in PostFilter, and leaves the
// pod to the flush when that fails. A write that fails for good is
// logged; the next attempt of the pod decides again.
func (pl *DynamicResources) inBackground(key string, write func(context.Context) error) {
	pl.deallocMu.Lock()
	if pl.deallocating.Has(key) {
		pl.deallocMu.Unlock()
		return
	}
	pl.deallocating.Insert(key)
	pl.deallocMu.Unlock()
	pl.tryInBackground(key, write, pl.backgroundRetry)
}

// tryInBackground hands one try of write to the worker; a try that fails
// hands the next to it after the backoff's delay, so that the worker
// never sleeps while other claims' writes wait.
func (pl *DynamicResources) tryInBackground(key string, write func(context.Context) error, backoff wait.Backoff) {
	job := func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, backgroundWriteTimeout)
		err := write(ctx)
		cancel()
		if err != nil && !apierrors.IsConflict(err) && backoff.Steps > 1 && !pl.isStopped() {
			time.AfterFunc(backoff.Step(), func() {
				if pl.isStopped() {
					pl.doneInBackground(key, err)
					return
				}
				pl.tryInBackground(key, write, backoff)
			})
			return
		}
		pl.doneInBackground(key, err)
	}
	select {
	case pl.background <- job:
	default:
		if pl.isStopped() {
			pl.doneInBackground(key, errors.New("the scheduler stopped before the write"))
			return
		}
		// The worker is behind: run it on a goroutine of its own rather
		// than make the scheduling cycle wait.
		go job(context.Background())
	}
}

// doneInBackground ends the background write of key, with its last error.
func (pl *DynamicResources) doneInBackground(key string, err error) {
	pl.deallocMu.Lock()
	pl.deallocating.Delete(key)
	pl.deallocMu.Unlock()
	if err != nil {
		pl.logger().Warn("could not free a ResourceClaim", zap.String("claim", key), zap.Error(err))
	}
}

// isStopped reports whether Run has returned.
func (pl *DynamicResources) isStopped() bool {
	select {
	case <-pl.stopped:
		return true
	default:
		return false
	}
}

// Run writes what PostFilter decided, until ctx ends.
func (pl *DynamicResources) Run(ctx context.Context) {
	defer pl.stoppedOnce.Do(func() { close(pl.stopped) })
	for {
		select {
		case <-ctx.Done():
			return
		case job := <-pl.background:
			job(context.WithoutCancel(ctx))
		}
	}
}
