package framework

import (
	v1 "k8s.io/api/core/v1"
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

// NewResource converts a ResourceList.
func NewResource(rl v1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds every quantity of rl.
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
			r.AddScalar(name, q.Value())
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

// SetMax raises every quantity of r to at least other's.
func (r *Resource) SetMax(other *Resource) {
	r.MilliCPU = max(r.MilliCPU, other.MilliCPU)
	r.Memory = max(r.Memory, other.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, other.EphemeralStorage)
	r.AllowedPodNumber = max(r.AllowedPodNumber, other.AllowedPodNumber)
	for name, v := range other.ScalarResources {
		if v > r.ScalarResources[name] {
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

// PodRequests returns what a pod reserves on its node, counted the way the
// kubelet admits it:
//
//   - regular containers run together, so their requests add up;
//   - restartable (sidecar) init containers keep running, so they add to the
//     regular containers and to every init container started after them;
//   - other init containers run one at a time, so the pod needs the largest
//     of them (plus the sidecars already running) or the sum above, whichever
//     is larger;
//   - pod-level requests (spec.resources), where set, replace the container
//     sum for cpu and memory;
//   - the RuntimeClass overhead is added on top.
//
// With nonZero, a container that omits a cpu or memory request counts as
// DefaultMilliCPURequest / DefaultMemoryRequest; the scorers use that view.
func PodRequests(pod *v1.Pod, nonZero bool) Resource {
	var reqs Resource
	for i := range pod.Spec.Containers {
		reqs.addContainer(pod.Spec.Containers[i].Resources.Requests, nonZero)
	}

	var sidecars, initMax Resource
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		var cur Resource
		cur.addContainer(c.Resources.Requests, nonZero)
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

	if pr := pod.Spec.Resources; pr != nil {
		if q, ok := pr.Requests[v1.ResourceCPU]; ok {
			reqs.MilliCPU = q.MilliValue()
		}
		if q, ok := pr.Requests[v1.ResourceMemory]; ok {
			reqs.Memory = q.Value()
		}
	}
	reqs.Add(pod.Spec.Overhead)
	return reqs
}

// addContainer adds one container's requests; with nonZero a missing cpu or
// memory request counts as the default.
func (r *Resource) addContainer(rl v1.ResourceList, nonZero bool) {
	r.Add(rl)
	if !nonZero {
		return
	}
	if _, ok := rl[v1.ResourceCPU]; !ok {
		r.MilliCPU += DefaultMilliCPURequest
	}
	if _, ok := rl[v1.ResourceMemory]; !ok {
		r.Memory += DefaultMemoryRequest
	}
}
