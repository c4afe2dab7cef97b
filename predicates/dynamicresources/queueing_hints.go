package dynamicresources

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/yardmaster-io/yardmaster/framework"
)

var _ framework.EnqueueExtensions = &DynamicResources{}

// EventsToRegister lists the events that can make a pod DynamicResources
// rejected schedulable, as kube-scheduler v1.37 does: a node added or
// whose labels or allocatable changed; one of the pod's claims created or
// changed, or any claim freeing devices; the pod's generated claims
// recorded in its status; a DeviceClass or ResourceSlice created or
// changed; a claim deleted (see claimDeletedCanHelp). And, which
// kube-scheduler does not register, a ResourceSlice deleted: a request for
// all the devices of a node, one of which is taken, can be met once the
// pool that holds it is gone (and a pool made whole or valid by a slice's
// going can be used), and kube-scheduler leaves such a pod to its
// 5-minute flush of unschedulable pods.
func (pl *DynamicResources) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel | framework.UpdateNodeAllocatable}},
		{Event: framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: claimCanHelp},
		{Event: framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Delete}, QueueingHintFn: claimDeletedCanHelp},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodGeneratedResourceClaim}, QueueingHintFn: ownPodChanged},
		{Event: framework.ClusterEvent{Resource: framework.DeviceClass, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.ResourceSlice, ActionType: framework.Add | framework.Update | framework.Delete}},
	}, nil
}

// claimCanHelp queues the pod when the claim is one of its own (created,
// allocated, reserved or freed), or when another claim gave devices back:
// its allocation or a reservation was removed. Another claim allocated or
// reserved only takes devices, which helps no one.
func claimCanHelp(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	var oldClaim, newClaim *resourceapi.ResourceClaim
	if oldObj != nil {
		c, ok := oldObj.(*resourceapi.ResourceClaim)
		if !ok {
			return framework.Queue, fmt.Errorf("old object is %T, want a ResourceClaim", oldObj)
		}
		oldClaim = c
	}
	c, ok := newObj.(*resourceapi.ResourceClaim)
	if !ok {
		return framework.Queue, fmt.Errorf("new object is %T, want a ResourceClaim", newObj)
	}
	newClaim = c
	if podsClaim(pod, newClaim) {
		return framework.Queue, nil
	}
	if oldClaim == nil {
		return framework.QueueSkip, nil
	}
	if oldClaim.Status.Allocation != nil && newClaim.Status.Allocation == nil {
		return framework.Queue, nil
	}
	if len(newClaim.Status.ReservedFor) < len(oldClaim.Status.ReservedFor) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// claimDeletedCanHelp queues the pod when the claim deleted is its own,
// or held devices. PostFilter deletes a claim an earlier attempt made for
// the pod's extended resources: when that attempt's creation had its
// answer lost, the claim has no allocation and no finalizer, and its
// deletion is the only event there is; and the claim the scheduler made
// for a pod's extended resources is deleted allocated, which frees its
// devices with no update before. kube-scheduler v1.37 registers the
// deletion too, but queues only for a claim that was allocated (or a
// tombstone): a pod whose own unallocated claim is deleted waits there
// for its 5-minute flush of unschedulable pods.
func claimDeletedCanHelp(_ *zap.Logger, pod *v1.Pod, oldObj, _ any) (framework.QueueingHint, error) {
	c, ok := oldObj.(*resourceapi.ResourceClaim)
	if !ok {
		return framework.Queue, fmt.Errorf("deleted object is %T, want a ResourceClaim", oldObj)
	}
	if podsClaim(pod, c) || c.Status.Allocation != nil {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// podsClaim reports whether claim is one the pod uses: named by it,
// generated for it from a template, or owned by it (a claim for its
// DRA-served extended resources).
func podsClaim(pod *v1.Pod, claim *resourceapi.ResourceClaim) bool {
	if claim.Namespace != pod.Namespace {
		return false
	}
	if podOwner(claim) == pod.UID {
		return true
	}
	for i := range pod.Spec.ResourceClaims {
		name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err == nil && name != nil && *name == claim.Name {
			return true
		}
	}
	return false
}

// ownPodChanged queues the pod when the update is its own (the claims
// generated for it were recorded in its status).
func ownPodChanged(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldPod, _ := oldObj.(*v1.Pod)
	newPod, ok := newObj.(*v1.Pod)
	if !ok {
		return framework.Queue, fmt.Errorf("new object is %T, want a Pod", newObj)
	}
	if newPod.UID != pod.UID {
		return framework.QueueSkip, nil
	}
	if oldPod != nil && equality.Semantic.DeepEqual(oldPod.Status.ResourceClaimStatuses, newPod.Status.ResourceClaimStatuses) &&
		equality.Semantic.DeepEqual(oldPod.Status.ExtendedResourceClaimStatus, newPod.Status.ExtendedResourceClaimStatus) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}
