package dynamicresources

// Extended resources served by DRA: a container asks for example.com/gpu:
// 1, and a DeviceClass says it serves that name (spec.extendedResourceName,
// or the implicit deviceclass.resource.kubernetes.io/<class>). On a node
// that does not publish the resource in its allocatable, the devices come
// from a claim the scheduler makes for the pod: a request per container,
// allocated in Filter like the pod's own claims, created in PreBind, and
// recorded in the pod's status.extendedResourceClaimStatus, as
// kube-scheduler v1.37 does.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/util/retry"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/yardmaster-io/yardmaster/framework"
)

// inMemoryClaimName is the name of a claim for extended resources that
// exists only in the scheduler, until PreBind creates it.
const inMemoryClaimName = "<extended-resources>"

// implicitExtendedResourcePrefix names a DeviceClass as an extended
// resource: deviceclass.resource.kubernetes.io/<class>.
const implicitExtendedResourcePrefix = "deviceclass.resource.kubernetes.io/"

// extendedRequest is what the pod asks of extended resources, for Filter.
type extendedRequest struct {
	// claim is the pod's claim for them: one the scheduler made in an
	// earlier attempt, or one in memory (inMemoryClaimName).
	claim *resourceapi.ResourceClaim
	// initialUID is claim's UID in this cycle, under which Reserve files
	// its allocation in flight.
	initialUID types.UID
	// amounts are the pod's requests of every scalar resource.
	amounts map[v1.ResourceName]int64
	// pod is the pod, whose containers get the requests.
	pod *v1.Pod
}

// extendedRequestOf returns the pod's extended-resource request when it
// asks for any extended resource a DeviceClass serves, else nil.
func (pl *DynamicResources) extendedRequestOf(pod *v1.Pod) *extendedRequest {
	if !mayRequestExtended(pod) {
		return nil // nearly every pod: no map of its requests to build
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	served := false
	for name, q := range reqs {
		if !q.IsZero() && isDRAExtendedResourceName(name) && pl.m.GetDeviceClass(name) != nil {
			served = true
			break
		}
	}
	if !served {
		return nil
	}
	ext := &extendedRequest{amounts: framework.NewResource(reqs).ScalarResources, pod: pod}
	if name, ok := pl.m.generated.forPod(pod.UID); ok {
		if claim, err := pl.m.claims.get(pod.Namespace, name); err == nil && ownedBy(claim, pod) {
			ext.claim = claim
		}
	}
	if ext.claim == nil {
		ext.claim = &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:    pod.Namespace,
				Name:         inMemoryClaimName,
				UID:          uuid.NewUUID(),
				GenerateName: pod.Name + "-extended-resources-",
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true),
				}},
				Annotations: map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"},
			},
		}
	}
	ext.initialUID = ext.claim.UID
	return ext
}

// mayRequestExtended reports whether any of the pod's requests (its
// containers', init containers', pod-level or overhead) names a resource
// that DRA could serve; PodRequests sums only those.
func mayRequestExtended(pod *v1.Pod) bool {
	has := func(l v1.ResourceList) bool {
		for name := range l {
			if isDRAExtendedResourceName(name) {
				return true
			}
		}
		return false
	}
	for i := range pod.Spec.Containers {
		if has(pod.Spec.Containers[i].Resources.Requests) {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if has(pod.Spec.InitContainers[i].Resources.Requests) {
			return true
		}
	}
	if pod.Spec.Resources != nil && has(pod.Spec.Resources.Requests) {
		return true
	}
	return has(pod.Spec.Overhead)
}

// ownedBy reports whether the pod controls claim.
func ownedBy(claim *resourceapi.ResourceClaim, pod *v1.Pod) bool {
	for _, ref := range claim.OwnerReferences {
		if ref.Name == pod.Name && ref.UID == pod.UID && ptr.Deref(ref.Controller, false) {
			return true
		}
	}
	return false
}

// podOwner returns the UID of the pod that controls claim, or "".
func podOwner(claim *resourceapi.ResourceClaim) types.UID {
	for _, ref := range claim.OwnerReferences {
		if ref.Kind == "Pod" && ptr.Deref(ref.Controller, false) {
			return ref.UID
		}
	}
	return ""
}

// filterExtended decides the node for the pod's extended resources: those
// the node publishes in its allocatable are NodeResourcesFit's; those it
// does not, and a DeviceClass serves, go into a copy of the pod's claim
// for extended resources with a request per container. It returns that
// copy (nil when nothing is left to DRA on this node), its request
// mappings, or the rejection.
func (pl *DynamicResources) filterExtended(s *stateData, nodeInfo *framework.NodeInfo) (*resourceapi.ResourceClaim, []v1.ContainerExtendedResourceRequest, *framework.Status) {
	claim := s.extendedClaim()
	if claim == nil {
		return nil, nil, nil
	}
	if claim.Spec.Devices.Requests != nil {
		// Left from an earlier attempt on another node: PostFilter
		// deletes it.
		return nil, nil, statusExtendedClaim
	}
	toDRA := map[v1.ResourceName]int64{}
	for name, amount := range s.extended.amounts {
		if amount == 0 || !isDRAExtendedResourceName(name) {
			continue
		}
		allocatable, published := nodeInfo.Allocatable.ScalarResources[name]
		switch {
		case pl.m.GetDeviceClass(name) != nil && allocatable == 0:
			toDRA[name] = amount
		case !published:
			return nil, nil, statusCannotFit
		}
	}
	if s.numUser == 0 && len(toDRA) == 0 {
		return nil, nil, nil
	}
	if claim.Status.Allocation != nil {
		return nil, nil, nil
	}
	nodeClaim := claim.DeepCopy()
	reqs, mappings := pl.requestsAndMappings(s.extended.pod, toDRA)
	nodeClaim.Spec.Devices.Requests = reqs
	return nodeClaim, mappings, nil
}

var (
	statusExtendedClaim = unresolvable("cannot schedule extended resource claim")
	statusCannotFit     = unresolvable("cannot fit resource")
)

// requestsAndMappings makes the device requests for the extended
// resources left to DRA, as kube-scheduler makes them: per resource (in
// name order), a request "container-<i>-request-<j>" for each long-lived
// container (regular or sidecar) that asks for it, <i> the container's
// index among init and regular containers, <j> the resource's among the
// container's sorted requests; init containers that run to completion
// reuse the later long-lived requests and only ask for the rest, the
// largest such request standing for all of them.
func (pl *DynamicResources) requestsAndMappings(pod *v1.Pod, toDRA map[v1.ResourceName]int64) ([]resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	containers := slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers)
	var longLived, shortLived []int
	for i, c := range containers {
		isInit := i < len(pod.Spec.InitContainers)
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		if isInit && !sidecar {
			shortLived = append(shortLived, i)
		} else {
			longLived = append(longLived, i)
		}
	}
	names := make([]v1.ResourceName, 0, len(toDRA))
	for n := range toDRA {
		names = append(names, n)
	}
	slices.Sort(names)

	var requests []resourceapi.DeviceRequest
	var mappings []v1.ContainerExtendedResourceRequest
	for _, name := range names {
		class := pl.m.GetDeviceClass(name)
		if class == nil {
			continue
		}
		var longMappings, shortMappings []v1.ContainerExtendedResourceRequest
		longRequests := make([]*resourceapi.DeviceRequest, len(containers))
		for _, i := range longLived {
			req, m := containerRequest(i, &containers[i], name, class.Name, nil)
			longRequests[i] = req
			longMappings = append(longMappings, m...)
		}
		var largest *resourceapi.DeviceRequest
		shortNames := sets.New[string]()
		for _, i := range shortLived {
			req, m := containerRequest(i, &containers[i], name, class.Name, longRequests[i:])
			if req != nil {
				shortNames.Insert(req.Name)
				if largest == nil || largest.Exactly.Count < req.Exactly.Count {
					largest = req
				}
			}
			shortMappings = append(shortMappings, m...)
		}
		if largest != nil && len(shortNames) > 1 {
			shortNames.Delete(largest.Name)
			for i := range shortMappings {
				if shortNames.Has(shortMappings[i].RequestName) {
					shortMappings[i].RequestName = largest.Name
				}
			}
		}
		if largest != nil {
			requests = append(requests, *largest)
		}
		for _, r := range longRequests {
			if r != nil {
				requests = append(requests, *r)
			}
		}
		mappings = append(mappings, longMappings...)
		mappings = append(mappings, shortMappings...)
	}
	slices.SortFunc(requests, func(a, b resourceapi.DeviceRequest) int { return strings.Compare(a.Name, b.Name) })
	return requests, mappings
}

// containerRequest is the request of container (at index i) for the
// resource, less what reusable (later long-lived containers' requests)
// already covers; nil when nothing more is needed.
func containerRequest(i int, container *v1.Container, name v1.ResourceName, className string, reusable []*resourceapi.DeviceRequest) (*resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	creqs := container.Resources.Requests
	q, ok := creqs[name]
	if !ok {
		return nil, nil
	}
	count, ok := (&q).AsInt64()
	if !ok || count == 0 {
		return nil, nil
	}
	var mappings []v1.ContainerExtendedResourceRequest
	var sum int64
	for _, r := range reusable {
		if r == nil {
			continue
		}
		sum += r.Exactly.Count
		mappings = append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: container.Name, ResourceName: name.String(), RequestName: r.Name})
		if sum >= count {
			return nil, mappings
		}
	}
	keys := make([]string, 0, len(creqs))
	for k := range creqs {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	reqName := fmt.Sprintf("container-%d-request-%d", i, slices.Index(keys, name.String()))
	mappings = append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: container.Name, ResourceName: name.String(), RequestName: reqName})
	return &resourceapi.DeviceRequest{
		Name: reqName,
		Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: className,
			AllocationMode:  resourceapi.DeviceAllocationModeExactCount,
			Count:           count - sum,
		},
	}, mappings
}

// createExtendedClaim creates the claim Filter made for the node, which
// gets its name then.
func (pl *DynamicResources) createExtendedClaim(ctx context.Context, s *stateData, nodeName string) (*resourceapi.ResourceClaim, error) {
	s.mu.Lock()
	na := s.nodeAllocations[nodeName]
	s.mu.Unlock()
	if na == nil || na.extendedClaim == nil {
		return nil, fmt.Errorf("extended resource claim not found for node %s", nodeName)
	}
	claim := na.extendedClaim.DeepCopy()
	claim.Status.Allocation = nil
	claim.Name = ""
	claim.UID = ""
	created, err := pl.client.ResourceV1().ResourceClaims(claim.Namespace).Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create claim for extended resources %s/%s: %w", claim.Namespace, claim.GenerateName, err)
	}
	return created, nil
}

// patchExtendedStatus records the claim and its request mappings in the
// pod's status.extendedResourceClaimStatus.
func (pl *DynamicResources) patchExtendedStatus(ctx context.Context, pod *v1.Pod, claim *resourceapi.ResourceClaim, s *stateData, nodeName string) error {
	s.mu.Lock()
	var mappings []v1.ContainerExtendedResourceRequest
	if na := s.nodeAllocations[nodeName]; na != nil {
		mappings = na.mappings
	}
	s.mu.Unlock()
	if len(mappings) == 0 {
		return fmt.Errorf("nil or empty request mappings, no update of pod %s/%s ExtendedResourceClaimStatus", pod.Namespace, pod.Name)
	}
	status := &v1.PodExtendedResourceClaimStatus{RequestMappings: mappings, ResourceClaimName: claim.Name}
	err := retry.OnError(retry.DefaultBackoff, retriable, func() error {
		return patchPodStatus(ctx, pl.client, pod, map[string]any{"extendedResourceClaimStatus": status})
	})
	if err != nil {
		return fmt.Errorf("update pod %s/%s ExtendedResourceClaimStatus: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// deleteClaim removes the delete-protection finalizer of a claim the
// scheduler made and deletes it. A claim found gone (an earlier try's
// deletion whose answer was lost, or a claim already terminating that the
// finalizer's removal deleted) is deleted: the API server answers 404 to
// its update, to its deletion, or to the read after a conflict.
func (pl *DynamicResources) deleteClaim(ctx context.Context, claim *resourceapi.ResourceClaim) error {
	first, gone := true, false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			latest, err := pl.client.ResourceV1().ResourceClaims(claim.Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				gone = true
				return nil
			}
			if err != nil {
				return fmt.Errorf("get resourceclaim %s/%s: %w", claim.Namespace, claim.Name, err)
			}
			claim = latest
		}
		first = false
		if i := slices.Index(claim.Finalizers, resourceapi.Finalizer); i >= 0 {
			claim = claim.DeepCopy()
			claim.Finalizers = slices.Delete(claim.Finalizers, i, i+1)
		}
		if _, err := pl.client.ResourceV1().ResourceClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				gone = true
				return nil
			}
			return fmt.Errorf("update resourceclaim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
		return nil
	})
	if err != nil || gone {
		return err
	}
	err = pl.client.ResourceV1().ResourceClaims(claim.Namespace).Delete(ctx, claim.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// isDRAExtendedResourceName reports whether name can be served by DRA: an
// extended resource name, or a class's implicit name.
func isDRAExtendedResourceName(name v1.ResourceName) bool {
	return framework.IsExtendedResourceName(name) || strings.HasPrefix(string(name), implicitExtendedResourcePrefix)
}
