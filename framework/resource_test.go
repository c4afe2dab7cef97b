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

	"github.com/yardmaster-io/yardmaster/internal/schedtest"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
	// defMem is DefaultMemoryRequest, 200Mi.
	defMem = 200 * mi
)

// rl is a request map for the pod builders.
type rl = map[v1.ResourceName]string

// What a pod takes on its node, as kube-scheduler v1.37 counts it
// (PodInfo.CalculateResource): Requests, and cpu and memory non-zero.
func TestNewPodInfoRequests(t *testing.T) {
	pod := func() *schedtest.PodWrapper { return schedtest.MakePod().Name("p") }
	tests := []struct {
		name        string
		pod         *v1.Pod
		want        Resource
		wantNonZero NonZeroResource
	}{
		{name: "one container", pod: pod().Req("500m", "1Gi").Obj(),
			want: Resource{MilliCPU: 500, Memory: gi}, wantNonZero: NonZeroResource{MilliCPU: 500, Memory: gi}},
		{name: "no requests: the defaults, non-zero only", pod: pod().Obj(),
			want: Resource{}, wantNonZero: NonZeroResource{MilliCPU: 100, Memory: defMem}},
		{name: "a container without requests counts at the defaults", pod: pod().Req("500m", "1Gi").Container("", "").Obj(),
			want: Resource{MilliCPU: 500, Memory: gi}, wantNonZero: NonZeroResource{MilliCPU: 500 + 100, Memory: gi + defMem}},
		{
			// Containers and the sidecar run together: 1000+200m,
			// 1Gi+100Mi; the init container runs beside the sidecar:
			// 2000+200m, 500Mi+100Mi. The larger of each.
			name: "sidecar and init container",
			pod:  pod().Req("1", "1Gi").SidecarReq("200m", "100Mi").InitReq("2", "500Mi").Obj(),
			want: Resource{MilliCPU: 2200, Memory: gi + 100*mi}, wantNonZero: NonZeroResource{MilliCPU: 2200, Memory: gi + 100*mi},
		},
		{name: "overhead on top", pod: pod().Req("500m", "1Gi").Overhead("100m", "10Mi").Obj(),
			want: Resource{MilliCPU: 600, Memory: gi + 10*mi}, wantNonZero: NonZeroResource{MilliCPU: 600, Memory: gi + 10*mi}},
		{name: "pod-level cpu and memory replace the containers' sum", pod: pod().Req("500m", "1Gi").Container("500m", "1Gi").PodReq(rl{"cpu": "3", "memory": "4Gi"}).Obj(),
			want: Resource{MilliCPU: 3000, Memory: 4 * gi}, wantNonZero: NonZeroResource{MilliCPU: 3000, Memory: 4 * gi}},
		{
			// Pod-level requests are set and cpu is requested (200m, by
			// a container): no default for the container without one.
			name: "pod-level memory, a container without cpu: no cpu default",
			pod:  pod().Req("200m", "").Container("", "").PodReq(rl{"memory": "2Gi"}).Obj(),
			want: Resource{MilliCPU: 200, Memory: 2 * gi}, wantNonZero: NonZeroResource{MilliCPU: 200, Memory: 2 * gi},
		},
		{
			// cpu is requested nowhere: each of the two containers counts
			// at 100m.
			name: "pod-level memory, no cpu anywhere: cpu defaults per container",
			pod:  pod().Container("", "").PodReq(rl{"memory": "2Gi"}).Obj(),
			want: Resource{Memory: 2 * gi}, wantNonZero: NonZeroResource{MilliCPU: 2 * 100, Memory: 2 * gi},
		},
		{
			name:        "pod-level hugepages replace the containers'",
			pod:         pod().Req("500m", "1Gi").Res(rl{"hugepages-2Mi": "20Mi"}).PodReq(rl{"cpu": "1", "hugepages-2Mi": "100Mi"}).Obj(),
			want:        Resource{MilliCPU: 1000, Memory: gi, ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 100 * mi}},
			wantNonZero: NonZeroResource{MilliCPU: 1000, Memory: gi},
		},
		{
			name: "pod-level hugepages alone set pod-level requests",
			pod:  pod().Req("500m", "").PodReq(rl{"hugepages-1Gi": "2Gi"}).Obj(),
			want: Resource{MilliCPU: 500, ScalarResources: map[v1.ResourceName]int64{"hugepages-1Gi": 2 * gi}},
			// memory is requested nowhere: the default, for the one container.
			wantNonZero: NonZeroResource{MilliCPU: 500, Memory: defMem},
		},
		{
			name: "a pod being resized counts the largest of spec, allocated and actuated",
			pod:  pod().Req("500m", "1Gi").Resized(rl{"cpu": "1", "memory": "1Gi"}, rl{"cpu": "800m", "memory": "2Gi"}).Obj(),
			want: Resource{MilliCPU: 1000, Memory: 2 * gi}, wantNonZero: NonZeroResource{MilliCPU: 1000, Memory: 2 * gi},
		},
		{
			name: "an infeasible resize counts what was allocated and actuated, not the spec",
			pod:  pod().Req("4", "1Gi").Resized(rl{"cpu": "1", "memory": "1Gi"}, rl{"cpu": "1", "memory": "1Gi"}).ResizeInfeasible().Obj(),
			want: Resource{MilliCPU: 1000, Memory: gi}, wantNonZero: NonZeroResource{MilliCPU: 1000, Memory: gi},
		},
		{
			name: "a pod-level resize",
			pod:  pod().Req("500m", "1Gi").PodReq(rl{"cpu": "2", "memory": "2Gi"}).PodResized(rl{"cpu": "2", "memory": "2Gi"}, rl{"cpu": "3", "memory": "2Gi"}).Obj(),
			want: Resource{MilliCPU: 3000, Memory: 2 * gi}, wantNonZero: NonZeroResource{MilliCPU: 3000, Memory: 2 * gi},
		},
		{
			// kube-scheduler's Resource keeps only the names it knows.
			name:        "a resource name that is not scalar is dropped",
			pod:         pod().Req("500m", "1Gi").Res(rl{"storage": "1Gi", "example.com/gpu": "1"}).Obj(),
			want:        Resource{MilliCPU: 500, Memory: gi, ScalarResources: map[v1.ResourceName]int64{"example.com/gpu": 1}},
			wantNonZero: NonZeroResource{MilliCPU: 500, Memory: gi},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pi := NewPodInfo(tc.pod)
			if diff := cmp.Diff(tc.want, pi.Requests); diff != "" {
				t.Errorf("Requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNonZero, pi.NonZeroRequests); diff != "" {
				t.Errorf("NonZeroRequests (-want +got):\n%s", diff)
			}
		})
	}
}

// The incoming pod as each plugin counts it.
func TestPodRequestsOptions(t *testing.T) {
	// Two containers, one without requests; pod-level cpu and hugepages;
	// a status as if it were being resized (a pod being scheduled has
	// none, but the options say whether it would count).
	pod := schedtest.MakePod().Name("p").Req("500m", "1Gi").Res(rl{"hugepages-2Mi": "20Mi"}).Container("", "").
		PodReq(rl{"cpu": "2", "hugepages-2Mi": "100Mi"}).
		Resized(rl{"cpu": "1"}, rl{"cpu": "1"}).Obj()
	tests := []struct {
		name string
		opts string
		want Resource
	}{
		{name: "NodeResourcesFit filter: pod-level, no status", opts: "fit",
			want: Resource{MilliCPU: 2000, Memory: gi, ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 100 * mi}}},
		{
			// Containers only, the one without requests at the defaults.
			name: "NodeResourcesFit scorer: containers, non-zero", opts: "fitScore",
			want: Resource{MilliCPU: 500 + 100, Memory: gi + defMem, ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 20 * mi}},
		},
		{name: "BalancedAllocation: pod-level", opts: "balanced",
			want: Resource{MilliCPU: 2000, Memory: gi, ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 100 * mi}}},
	}
	opts := map[string]func() Resource{
		"fit":      func() Resource { return FitRequests(pod) },
		"fitScore": func() Resource { return FitScoreRequests(pod) },
		"balanced": func() Resource { return BalancedAllocationRequests(pod) },
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, opts[tc.opts]()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

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
