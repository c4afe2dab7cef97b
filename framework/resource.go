package framework

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Defaults the scorers assume for a container that sets no cpu or memory
// request, so that request-less pods still spread (kube-scheduler's values).
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// Resource is a set of quantities in the units the scheduler compares:
// millicores, bytes, a pod count, and integer amounts of every other
// resource (extended resources, hugepages).
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// AllowedPodNumber is only meaningful for a node's allocatable.
	AllowedPodNumber int64
	// ScalarResources holds every other resource; nil when there are none.
	ScalarResources map[v1.ResourceName]int64
}

// NewResource converts a ResourceList (see Add).
func NewResource(rl v1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds every quantity of rl that kube-scheduler's Resource keeps: cpu,
// memory, ephemeral-storage, pods and the scalar resources
// (IsScalarResourceName); any other name is dropped.
func (r *Resource) Add(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.Memory += q.Value()
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case v1.ResourcePods:
			r.AllowedPodNumber += q.Value()
		default:
			if IsScalarResourceName(name) {
				r.AddScalar(name, q.Value())
			}
		}
	}
}

// AddScalar adds v of the named scalar resource.
func (r *Resource) AddScalar(name v1.ResourceName, v int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = make(map[v1.ResourceName]int64, 1)
	}
	r.ScalarResources[name] += v
}

// AddResource adds sign×other (sign is +1 or -1).
func (r *Resource) AddResource(other *Resource, sign int64) {
	r.MilliCPU += sign * other.MilliCPU
	r.Memory += sign * other.Memory
	r.EphemeralStorage += sign * other.EphemeralStorage
	r.AllowedPodNumber += sign * other.AllowedPodNumber
	for name, v := range other.ScalarResources {
		r.AddScalar(name, sign*v)
	}
}

// SetMax raises every quantity of r to at least other's. A scalar
// resource of other that r lacks is set even when 0, as the library's
// maximum of two ResourceLists keeps every name.
func (r *Resource) SetMax(other *Resource) {
	r.MilliCPU = max(r.MilliCPU, other.MilliCPU)
	r.Memory = max(r.Memory, other.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, other.EphemeralStorage)
	r.AllowedPodNumber = max(r.AllowedPodNumber, other.AllowedPodNumber)
	for name, v := range other.ScalarResources {
		if cur, ok := r.ScalarResources[name]; !ok || v > cur {
			if r.ScalarResources == nil {
				r.ScalarResources = make(map[v1.ResourceName]int64, 1)
			}
			r.ScalarResources[name] = v
		}
	}
}

// Get returns the quantity of the named resource in the scheduler's units.
func (r *Resource) Get(name v1.ResourceName) int64 {
	switch name {
	case v1.ResourceCPU:
		return r.MilliCPU
	case v1.ResourceMemory:
		return r.Memory
	case v1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case v1.ResourcePods:
		return r.AllowedPodNumber
	default:
		return r.ScalarResources[name]
	}
}

// Clone returns a deep copy.
func (r *Resource) Clone() *Resource {
	c := *r
	if r.ScalarResources != nil {
		c.ScalarResources = make(map[v1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			c.ScalarResources[k] = v
		}
	}
	return &c
}

// IsZero reports whether every quantity is zero.
func (r *Resource) IsZero() bool {
	if r.MilliCPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 || r.AllowedPodNumber != 0 {
		return false
	}
	for _, v := range r.ScalarResources {
		if v != 0 {
			return false
		}
	}
	return true
}

// A pod's requests as kube-scheduler v1.37 counts them, each where it
// counts them, with the feature gates it has on by default:
// PodLevelResources (beta: spec.resources replaces the containers' sum for
// cpu, memory and hugepages), InPlacePodVerticalScaling (GA: a running pod
// being resized counts the larger of its spec, what the kubelet allocated
// and what it actuated) and InPlacePodLevelResourcesVerticalScaling (beta:
// the same for spec.resources). The arithmetic is component-helpers'
// resource.PodRequests, the kubelet's and kube-scheduler's own (sidecars,
// init containers, overhead), called with kube-scheduler's options.
//
// The library works on ResourceLists: a dozen maps and a few microseconds
// per pod, three times per cycle and two or three times more per pod
// placed (the queue's and the cache's PodInfo). Most pods need none of
// what only the library can do, so podRequests first tries the sums on
// int64s that the scheduler always did (containerRequests), and calls the
// library only when that could differ from it: pod-level requests, a
// resize in progress, a quantity finer than the scheduler's unit.
// TestPodRequestsMatchesLibrary compares the two on random pods.
var (
	// onNodeRequests counts a pod on its node (NodeInfo.Requested, the
	// filter's "used"): kube-scheduler's PodInfo.CalculateResource.
	onNodeRequests = resourcehelper.PodResourcesOptions{
		UseStatusResources: true,
		InPlacePodLevelResourcesVerticalScalingEnabled: true,
	}
	// fitRequests counts the pod NodeResourcesFit's filter places
	// (computePodResourceRequest): no status, the pod is not running.
	fitRequests = resourcehelper.PodResourcesOptions{}
	// fitScoreRequests counts the pod NodeResourcesFit's scorer places:
	// kube-scheduler v1.37 builds that scorer without the feature gates
	// (noderesources.NewFit gives them to the filter half only), so it
	// ignores spec.resources and status, and it counts a container
	// without a cpu or memory request at the defaults.
	fitScoreRequests = resourcehelper.PodResourcesOptions{
		SkipPodLevelResources:       true,
		NonMissingContainerRequests: defaultRequests,
	}

	// defaultRequests are the cpu and memory a container that requests
	// none is counted at where non-zero requests are wanted.
	defaultRequests = v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(DefaultMemoryRequest, resource.DecimalSI),
	}
)

// FitRequests returns the pod's requests as NodeResourcesFit's filter
// checks them: pod-level requests included.
func FitRequests(pod *v1.Pod) Resource { return podRequests(pod, fitRequests, false) }

// FitScoreRequests returns the pod's requests as NodeResourcesFit's scorer
// counts them: the containers' only, cpu and memory non-zero.
func FitScoreRequests(pod *v1.Pod) Resource { return podRequests(pod, fitScoreRequests, true) }

// BalancedAllocationRequests returns the pod's requests as
// NodeResourcesBalancedAllocation counts them: the plain requests,
// pod-level included, as on a node.
func BalancedAllocationRequests(pod *v1.Pod) Resource {
	return podRequests(pod, onNodeRequests, false)
}

// podRequests returns the pod's requests counted with opts, in the
// scheduler's units; resources that are not cpu, memory,
// ephemeral-storage, pods or a scalar resource are dropped, as
// kube-scheduler's Resource.Add drops them. nonZero says whether opts
// count missing cpu and memory at defaultRequests (and nothing else).
func podRequests(pod *v1.Pod, opts resourcehelper.PodResourcesOptions, nonZero bool) Resource {
	if r, ok := containerRequests(pod, opts, nonZero); ok {
		return r
	}
	var r Resource
	r.Add(resourcehelper.PodRequests(pod, opts))
	return r
}

// podRequestsOnNode returns what pod takes on its node and its cpu and
// memory counted non-zero (NonZeroRequests), as kube-scheduler's
// PodInfo.CalculateResource counts them. A container without a cpu or
// memory request counts at the defaults, except that a pod with pod-level
// requests gets a default only for a resource requested nowhere, neither
// by the pod nor by any container.
func podRequestsOnNode(pod *v1.Pod) (requests Resource, nonZero NonZeroResource) {
	if !resourcehelper.IsPodLevelRequestsSet(pod) {
		requests = podRequests(pod, onNodeRequests, false)
		opts := onNodeRequests
		opts.NonMissingContainerRequests = defaultRequests
		non0 := podRequests(pod, opts, true)
		return requests, NonZeroResource{MilliCPU: non0.MilliCPU, Memory: non0.Memory}
	}
	reqs := resourcehelper.PodRequests(pod, onNodeRequests)
	requests.Add(reqs)
	var nonMissing v1.ResourceList
	for name, q := range defaultRequests {
		if _, ok := reqs[name]; !ok {
			if nonMissing == nil {
				nonMissing = v1.ResourceList{}
			}
			nonMissing[name] = q
		}
	}
	nonZero.MilliCPU, nonZero.Memory = requests.MilliCPU, requests.Memory
	if len(nonMissing) > 0 {
		opts := onNodeRequests
		opts.NonMissingContainerRequests = nonMissing
		non0 := resourcehelper.PodRequests(pod, opts)
		cpu, mem := non0[v1.ResourceCPU], non0[v1.ResourceMemory]
		nonZero.MilliCPU, nonZero.Memory = cpu.MilliValue(), mem.Value()
	}
	return requests, nonZero
}

// containerRequests is resourcehelper.PodRequests(pod, opts) on int64s,
// for the pods where that gives the library's result exactly, and false
// for the others:
//
//   - spec.resources requests count (opts does not skip them) and are set;
//   - opts read the status, and it holds requests other than the spec's
//     (a resize in progress: the library then takes the larger of spec,
//     allocated and actuated);
//   - a quantity is finer than the scheduler's unit (cpu below 1m, a
//     fraction of a byte): the library rounds the sum up, this would round
//     each term;
//   - opts ask for anything else than the above and the defaults.
//
// The sums are the kubelet's: regular containers and restartable (sidecar)
// init containers run together; other init containers one at a time, each
// beside the sidecars started before it; the pod needs the larger of the
// two, plus the overhead.
func containerRequests(pod *v1.Pod, opts resourcehelper.PodResourcesOptions, nonZero bool) (Resource, bool) {
	if opts.SkipContainerLevelResources || opts.UseDRANodeAllocatableResourceClaimStatus ||
		opts.Reuse != nil || nonZero != (len(opts.NonMissingContainerRequests) > 0) {
		return Resource{}, false
	}
	if !opts.SkipPodLevelResources && resourcehelper.IsPodLevelRequestsSet(pod) {
		return Resource{}, false
	}
	if opts.UseStatusResources && resizing(pod, opts) {
		return Resource{}, false
	}
	var reqs Resource
	for i := range pod.Spec.Containers {
		if !reqs.addExact(pod.Spec.Containers[i].Resources.Requests, nonZero) {
			return Resource{}, false
		}
	}
	var sidecars, initMax Resource
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		var cur Resource
		if !cur.addExact(c.Resources.Requests, nonZero) {
			return Resource{}, false
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			reqs.AddResource(&cur, 1)
			sidecars.AddResource(&cur, 1)
			cur = *sidecars.Clone()
		} else {
			cur.AddResource(&sidecars, 1)
		}
		initMax.SetMax(&cur)
	}
	reqs.SetMax(&initMax)
	if !reqs.addExact(pod.Spec.Overhead, false) {
		return Resource{}, false
	}
	return reqs, true
}

// resizing reports whether the status the library reads when it counts
// status (UseStatusResources) can count differently from the spec: a
// container's allocated or actuated requests that are not its spec's (a
// resize under way; the library then takes the larger of the three), or
// pod-level status, which the library reads with pod-level resizing on.
// A running pod's statuses carry the allocated requests, equal to the
// spec's but while it resizes.
func resizing(pod *v1.Pod, opts resourcehelper.PodResourcesOptions) bool {
	if opts.InPlacePodLevelResourcesVerticalScalingEnabled && (pod.Status.AllocatedResources != nil || pod.Status.Resources != nil) {
		return true
	}
	differs := func(statuses []v1.ContainerStatus, containers []v1.Container) bool {
		for i := range statuses {
			cs := &statuses[i]
			if cs.AllocatedResources == nil && cs.Resources == nil {
				continue
			}
			var spec v1.ResourceList
			found := false
			for j := range containers {
				if containers[j].Name == cs.Name {
					spec, found = containers[j].Resources.Requests, true
					break
				}
			}
			if !found {
				return true
			}
			if cs.AllocatedResources != nil && !sameQuantities(cs.AllocatedResources, spec) {
				return true
			}
			if cs.Resources != nil && cs.Resources.Requests != nil && !sameQuantities(cs.Resources.Requests, spec) {
				return true
			}
		}
		return false
	}
	return differs(pod.Status.ContainerStatuses, pod.Spec.Containers) ||
		differs(pod.Status.InitContainerStatuses, pod.Spec.InitContainers)
}

// sameQuantities reports whether a and b hold the same quantities.
func sameQuantities(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}

// addExact adds rl as Add does, and reports false when a quantity is not a
// whole number of the scheduler's unit (millicores for cpu, units for the
// rest), where summing rounded terms could differ from rounding the sum.
// With nonZero a missing cpu or memory counts at the default.
func (r *Resource) addExact(rl v1.ResourceList, nonZero bool) bool {
	for name, q := range rl {
		if name == v1.ResourceCPU {
			m := q.MilliValue()
			if q.Cmp(*resource.NewMilliQuantity(m, resource.DecimalSI)) != 0 {
				return false
			}
			r.MilliCPU += m
			continue
		}
		v, ok := q.AsInt64()
		if !ok {
			return false
		}
		switch name {
		case v1.ResourceMemory:
			r.Memory += v
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += v
		case v1.ResourcePods:
			r.AllowedPodNumber += v
		default:
			if IsScalarResourceName(name) {
				r.AddScalar(name, v)
			}
		}
	}
	if nonZero {
		if _, ok := rl[v1.ResourceCPU]; !ok {
			r.MilliCPU += DefaultMilliCPURequest
		}
		if _, ok := rl[v1.ResourceMemory]; !ok {
			r.Memory += DefaultMemoryRequest
		}
	}
	return true
}

// IsScalarResourceName reports whether name is a resource kube-scheduler
// tracks besides cpu, memory, ephemeral-storage and pods: an extended
// resource, hugepages, a kubernetes.io-prefixed resource or an attachable
// volume count.
func IsScalarResourceName(name v1.ResourceName) bool {
	s := string(name)
	return IsExtendedResourceName(name) ||
		strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.Contains(s, v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix)
}

// IsExtendedResourceName reports whether name is an extended resource: a
// domain-qualified name outside kubernetes.io that, prefixed with
// "requests.", is still a valid qualified name (so that quota can name it).
func IsExtendedResourceName(name v1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}
