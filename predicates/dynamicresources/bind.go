package dynamicresources

// The binding cycle of DynamicResources: Reserve puts Filter's allocations
// in flight, PreBind writes them (and the pod's reservation) to the claims
// and waits for binding conditions, Unreserve takes back what is left.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/yardmaster-io/yardmaster/framework"
)

// bindingPoll is how often PreBind looks at the binding conditions, as in
// kube-scheduler.
const bindingPoll = 5 * time.Second

// Reserve puts the allocations Filter made on nodeName in flight: the next
// cycles see their devices taken and the claims being allocated. It makes
// no API call.
func (pl *DynamicResources) Reserve(_ context.Context, cs *framework.CycleState, _ *v1.Pod, nodeName string) *framework.Status {
	s, err := readState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.empty() || !s.allocate {
		return nil
	}
	ext := s.extendedClaim()
	toAllocate, userToAllocate := 0, false
	for _, claim := range s.claims {
		if claim.Status.Allocation == nil {
			toAllocate++
			userToAllocate = userToAllocate || claim != ext
		}
	}
	if toAllocate == 0 {
		return nil
	}
	s.mu.Lock()
	na := s.nodeAllocations[nodeName]
	// The cycle is over: from here on only the chosen node's allocation
	// is read. The other nodes' and the allocator would otherwise stay
	// with the pod for as long as it waits in PreBind, and in a backlog
	// hundreds of pods wait there at once.
	s.nodeAllocations = map[string]*nodeAllocation{nodeName: na}
	s.allocator, s.slices, s.allocated = nil, nil, structured.AllocatedState{}
	s.mu.Unlock()
	if na == nil || len(na.results) == 0 {
		if !userToAllocate {
			return nil // the node serves the extended resources itself
		}
		return framework.AsStatus(errors.New("claim allocation not found for node"))
	}
	if len(na.results) != toAllocate {
		return framework.AsStatus(fmt.Errorf("internal error, have %d allocations, %d claims to allocate, want %d claims", len(na.results), toAllocate, toAllocate))
	}
	k := 0
	for i, claim := range s.claims {
		if claim.Status.Allocation != nil {
			continue
		}
		// A copy: the results may be the allocator's answers kept for
		// the node (answers.go), shared by every pod that gets them.
		allocation := na.results[k].DeepCopy()
		k++
		s.info[i].allocation = allocation
		if claim == ext {
			claim = na.extendedClaim
		}
		claim = claim.DeepCopy()
		if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
			claim.Finalizers = append(claim.Finalizers, resourceapi.Finalizer)
		}
		claim.Status.Allocation = allocation
		pl.m.inFlight.signal(claim)
	}
	return nil
}

// Unreserve takes the pod's allocations out of flight, gives back the
// cache's view of claims it changed, removes the pod from the
// reservations it wrote, and deletes a claim it made for extended
// resources. The reservation is removed with an API call only in the
// binding cycle: in the scheduling cycle, which must not wait on the API,
// a reservation the pod still holds from an earlier attempt is harmless
// (it is the pod's own, and the pod comes back).
func (pl *DynamicResources) Unreserve(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, _ string) {
	s, err := readState(cs)
	if err != nil || s.empty() {
		return
	}
	apiCalls := framework.InBindingCycle(ctx)
	for _, claim := range s.claims[:s.numUser] {
		if pl.m.inFlight.maybeRemove(claim.UID, false) {
			pl.m.claims.restore(claim.Namespace, claim.Name)
		}
		if apiCalls && claim.Status.Allocation != nil && resourceclaim.IsReservedForPod(pod, claim, false) {
			patch := fmt.Sprintf(`{"metadata": {"uid": %q}, "status": {"reservedFor": [{"$patch": "delete", "uid": %q}]}}`, claim.UID, pod.UID)
			if _, err := pl.client.ResourceV1().ResourceClaims(claim.Namespace).Patch(ctx, claim.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
				pl.logger().Warn("could not remove the pod from the claim's reservations",
					zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("claim", claim.Namespace+"/"+claim.Name), zap.Error(err))
			}
		}
	}
	ext := s.extendedClaim()
	if ext == nil {
		return
	}
	if pl.m.inFlight.maybeRemove(s.extended.initialUID, false) {
		pl.m.claims.restore(ext.Namespace, ext.Name)
	}
	if ext.Name != inMemoryClaimName && apiCalls {
		if err := pl.deleteClaim(ctx, ext.DeepCopy()); err != nil {
			pl.logger().Warn("could not delete the claim made for extended resources",
				zap.String("claim", ext.Namespace+"/"+ext.Name), zap.Error(err))
		}
	}
}

// PreBindPreFlight says that PreBind has claims to write for every pod
// with claims.
func (pl *DynamicResources) PreBindPreFlight(_ context.Context, cs *framework.CycleState, _ *v1.Pod, _ string) *framework.Status {
	s, err := readState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.empty() {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// PreBind writes each claim's allocation (when Reserve made one) and the
// pod's reservation, then waits, when an allocated device declares binding
// conditions, until they are all true.
func (pl *DynamicResources) PreBind(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	s, err := readState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.empty() {
		return nil
	}
	for i, claim := range s.claims {
		if resourceclaim.IsReservedForPod(pod, claim, false) {
			continue
		}
		bound, err := pl.bindClaim(ctx, s, i, pod, nodeName)
		if err != nil {
			return framework.AsStatus(err)
		}
		s.claims[i] = bound
	}
	if !hasBindingConditions(s) {
		return nil
	}
	if rec := pl.handle.EventRecorder(); rec != nil {
		rec.Eventf(pod, nil, v1.EventTypeNormal, "BindingConditionsPending", "Scheduling", "waiting for binding conditions for device on node %s", nodeName)
	}
	err = wait.PollUntilContextTimeout(ctx, bindingPoll, pl.bindingTimeout, true, func(context.Context) (bool, error) {
		return pl.podReadyForBinding(s)
	})
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %w", ErrDeviceBindingTimeout, err)
	}
	if err != nil {
		return framework.AsStatus(err)
	}
	return nil
}

// bindClaim writes claim i: for the claim for extended resources first
// its creation, then the finalizer and allocation (when Reserve made one)
// and the pod's reservation, retried on conflicts with the latest claim;
// then, for extended resources, the pod's status. It returns the claim as
// written, which the cache takes at once.
func (pl *DynamicResources) bindClaim(ctx context.Context, s *stateData, i int, pod *v1.Pod, nodeName string) (*resourceapi.ResourceClaim, error) {
	claim := s.claims[i]
	allocation := s.info[i].allocation
	extended := i >= s.numUser
	if extended && allocation == nil && claim.Spec.Devices.Requests == nil {
		return claim, nil // served by the node's device plugin
	}
	pendingUID := claim.UID
	if extended {
		pendingUID = s.extended.initialUID
	}
	written := false
	defer func() {
		forget := false
		if written {
			if extended {
				pl.assumeWhenSeen(ctx, claim)
			} else if err := pl.m.claims.assume(claim); err == nil {
				forget = true
			}
		}
		if allocation != nil {
			pl.m.inFlight.maybeRemove(pendingUID, forget)
		}
	}()

	if extended && claim.Name == inMemoryClaimName {
		created, err := pl.createExtendedClaim(ctx, s, nodeName)
		if err != nil {
			return nil, err
		}
		claim, written = created, true
		s.claims[i] = created
	}

	key := claim.Namespace + "/" + claim.Name
	refresh := false
	claim = claim.DeepCopy()
	// Tried again on a conflict, as kube-scheduler does, and on the
	// failures that may pass or hide a write that was committed (see
	// retriable); each try reads the claim again, and finds there what an
	// earlier one wrote when its answer was lost.
	err := retry.OnError(claimWriteRetry, retriable, func() error {
		if refresh {
			latest, err := pl.client.ResourceV1().ResourceClaims(claim.Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("get updated claim %s after conflict: %w", key, err)
			}
			claim = latest
		}
		refresh = true
		if claim.DeletionTimestamp != nil {
			return fmt.Errorf("claim %s got deleted in the meantime", key)
		}
		if allocation != nil {
			switch {
			case claim.Status.Allocation == nil:
				if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
					claim.Finalizers = append(claim.Finalizers, resourceapi.Finalizer)
					updated, err := pl.client.ResourceV1().ResourceClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
					if err != nil {
						return fmt.Errorf("add finalizer to claim %s: %w", key, err)
					}
					claim = updated
				}
				claim.Status.Allocation = allocation.DeepCopy()
			case sameAllocation(claim.Status.Allocation, allocation):
				// An earlier try's, whose answer was lost.
			default:
				return fmt.Errorf("claim %s got allocated elsewhere in the meantime", key)
			}
		}
		if claim.Status.Allocation == nil {
			return fmt.Errorf("claim %s got deallocated elsewhere in the meantime", key)
		}
		if resourceclaim.IsReservedForPod(pod, claim, false) {
			// Written by an earlier try whose answer was lost.
			written = true
			return nil
		}
		claim.Status.ReservedFor = append(claim.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{
			Resource: "pods", Name: pod.Name, UID: pod.UID,
		})
		if claim.Status.Allocation.AllocationTimestamp == nil {
			claim.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: time.Now()}
		}
		updated, err := pl.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			if allocation != nil {
				return fmt.Errorf("add allocation and reservation to claim %s: %w", key, err)
			}
			return fmt.Errorf("add reservation to claim %s: %w", key, err)
		}
		claim, written = updated, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if extended {
		if err := pl.patchExtendedStatus(ctx, pod, claim, s, nodeName); err != nil {
			return nil, err
		}
	}
	return claim, nil
}

// assumeWhenSeen puts a claim the scheduler created into the cache once
// the informer has seen it created (the cache only takes writes to claims
// it knows), waiting up to 2 minutes, as kube-scheduler does.
func (pl *DynamicResources) assumeWhenSeen(ctx context.Context, claim *resourceapi.ResourceClaim) {
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(context.Context) (bool, error) {
		if err := pl.m.claims.assume(claim); err != nil {
			if errors.Is(err, errClaimNotFound) {
				return false, nil
			}
			return false, err
		}
		return true, nil
	})
	if err != nil {
		pl.logger().Warn("the claim made for extended resources did not reach the cache",
			zap.String("claim", claim.Namespace+"/"+claim.Name), zap.Error(err))
	}
}

// podReadyForBinding reads every claim again and reports whether all the
// binding conditions of their devices are true; it fails when one's
// failure condition is true, or its binding timed out.
func (pl *DynamicResources) podReadyForBinding(s *stateData) (bool, error) {
	for i, claim := range s.claims {
		latest, err := pl.m.claims.get(claim.Namespace, claim.Name)
		if err != nil {
			return false, err
		}
		s.claims[i] = latest
		ready, err := claimReadyForBinding(latest)
		if err != nil {
			return false, err
		}
		if !ready {
			if pl.claimTimedOut(latest) {
				return false, fmt.Errorf("%w: claim=%s", ErrDeviceBindingTimeout, latest.Name)
			}
			return false, nil
		}
	}
	return true, nil
}

func hasBindingConditions(s *stateData) bool {
	for _, claim := range s.claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if len(r.BindingConditions) > 0 {
				return true
			}
		}
	}
	return false
}

// patchPodStatus applies a strategic merge patch of the pod's status
// fields, with the pod's UID as a precondition.
func patchPodStatus(ctx context.Context, client kubernetes.Interface, pod *v1.Pod, status map[string]any) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID}, "status": status})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status")
	return err
}

// claimWriteRetry spaces the tries of a claim's write in PreBind: 10,
// 30, 90 and 270 ms after the first.
var claimWriteRetry = wait.Backoff{Duration: 10 * time.Millisecond, Factor: 3, Steps: 5}

// retriable are the errors a write of PreBind is tried again on:
// kube-scheduler's for a pod status patch (500, 503, a conflict, the
// connection refused), and also 429, the API server's timeouts and a
// connection lost on the way (reset, EOF), which may hide a write that
// was committed. kube-scheduler tries a claim's write again only on a
// conflict, and a lost answer fails its pod's binding cycle: the claim
// then keeps what was written (the next attempt finds it), or is deleted
// with the pod's claim for extended resources. Every write tried again
// is a patch, which may be applied twice, or an update of a claim read
// again, which shows what an earlier try wrote.
func retriable(err error) bool {
	if apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsConflict(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err)
}

// sameAllocation reports whether a claim's allocation is want: the same
// devices for the same requests on the same nodes.
func sameAllocation(got, want *resourceapi.AllocationResult) bool {
	return apiequality.Semantic.DeepEqual(got.Devices, want.Devices) && apiequality.Semantic.DeepEqual(got.NodeSelector, want.NodeSelector)
}

// logger is the scheduler's logger.
func (pl *DynamicResources) logger() *zap.Logger {
	if pl.handle != nil && pl.handle.Logger() != nil {
		return pl.handle.Logger()
	}
	return zap.NewNop()
}
