package framework

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// The tests of resource.go that read its unexported parts; the others are
// in resource_test.go, an external test, which builds its pods with
// framework/frameworktest (an import this package cannot make).

// The int64 sums (containerRequests) must give what component-helpers'
// resource.PodRequests gives whenever they answer: random pods with
// sidecars, init containers, overhead, missing requests, pod-level
// requests, resize status and quantities finer than the scheduler's units.
func TestPodRequestsMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, "hugepages-2Mi", "example.com/gpu", "storage"}
	quantity := func(name v1.ResourceName) resource.Quantity {
		switch {
		case name == v1.ResourceCPU && rng.IntN(8) == 0:
			return resource.MustParse(fmt.Sprintf("%du", rng.IntN(3000))) // below 1m
		case name == v1.ResourceCPU:
			return *resource.NewMilliQuantity(int64(rng.IntN(40))*50, resource.DecimalSI)
		case rng.IntN(8) == 0:
			return resource.MustParse(fmt.Sprintf("%dm", rng.IntN(3000))) // a fraction of a unit
		}
		return *resource.NewQuantity(int64(rng.IntN(40))<<20, resource.BinarySI)
	}
	list := func() v1.ResourceList {
		var l v1.ResourceList
		for _, n := range names {
			if rng.IntN(3) == 0 {
				if l == nil {
					l = v1.ResourceList{}
				}
				l[n] = quantity(n)
			}
		}
		return l
	}
	always := v1.ContainerRestartPolicyAlways
	randomPod := func() *v1.Pod {
		p := &v1.Pod{}
		for i := 1 + rng.IntN(3); i > 0; i-- {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", i), Resources: v1.ResourceRequirements{Requests: list()}})
		}
		for i := rng.IntN(3); i > 0; i-- {
			c := v1.Container{Name: fmt.Sprintf("i%d", i), Resources: v1.ResourceRequirements{Requests: list()}}
			if rng.IntN(2) == 0 {
				c.RestartPolicy = &always
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
		if rng.IntN(4) == 0 {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: list()}
		}
		if rng.IntN(4) == 0 {
			p.Spec.Overhead = list()
		}
		if rng.IntN(4) == 0 {
			for _, c := range p.Spec.Containers {
				cs := v1.ContainerStatus{Name: c.Name, AllocatedResources: list()}
				if rng.IntN(2) == 0 {
					cs.Resources = &v1.ResourceRequirements{Requests: list()}
				}
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
			}
		}
		return p
	}
	viaLibrary := func(pod *v1.Pod, opts resourcehelper.PodResourcesOptions) Resource {
		var r Resource
		r.Add(resourcehelper.PodRequests(pod, opts))
		return r
	}
	nonZero := onNodeRequests
	nonZero.NonMissingContainerRequests = defaultRequests
	views := []struct {
		name    string
		opts    resourcehelper.PodResourcesOptions
		nonZero bool
	}{
		{"on node", onNodeRequests, false},
		{"on node, non-zero", nonZero, true},
		{"fit", fitRequests, false},
		{"fit score", fitScoreRequests, true},
	}
	answered := 0
	for i := range 5000 {
		pod := randomPod()
		for _, v := range views {
			got, ok := containerRequests(pod, v.opts, v.nonZero)
			if !ok {
				continue
			}
			answered++
			if diff := cmp.Diff(viaLibrary(pod, v.opts), got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("pod %d, %s (-library +int64 sums):\n%s\n%+v", i, v.name, diff, pod.Spec)
			}
		}
	}
	// Many must take the fast way, or it is not one (one quantity in eight
	// quantities here are finer than the scheduler's units; real pods
	// rarely have one).
	if answered < 5000 {
		t.Errorf("the int64 sums answered %d of %d", answered, 4*5000)
	}
}
