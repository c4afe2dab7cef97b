package framework_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
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
	pod := func() *frameworktest.PodWrapper { return frameworktest.MakePod().Name("p") }
	tests := []struct {
		name        string
		pod         *v1.Pod
		want        framework.Resource
		wantNonZero framework.NonZeroResource
	}{
		{name: "one container", pod: pod().Req("500m", "1Gi").Obj(),
			want: framework.Resource{MilliCPU: 500, Memory: gi}, wantNonZero: framework.NonZeroResource{MilliCPU: 500, Memory: gi}},
		{name: "no requests: the defaults, non-zero only", pod: pod().Obj(),
			want: framework.Resource{}, wantNonZero: framework.NonZeroResource{MilliCPU: 100, Memory: defMem}},
		{name: "a container without requests counts at the defaults", pod: pod().Req("500m", "1Gi").Container("", "").Obj(),
			want: framework.Resource{MilliCPU: 500, Memory: gi}, wantNonZero: framework.NonZeroResource{MilliCPU: 500 + 100, Memory: gi + defMem}},
		{
			// Containers and the sidecar run together: 1000+200m,
			// 1Gi+100Mi; the init container runs beside the sidecar:
			// 2000+200m, 500Mi+100Mi. The larger of each.
			name: "sidecar and init container",
			pod:  pod().Req("1", "1Gi").SidecarReq("200m", "100Mi").InitReq("2", "500Mi").Obj(),
			want: framework.Resource{MilliCPU: 2200, Memory: gi + 100*mi}, wantNonZero: framework.NonZeroResource{MilliCPU: 2200, Memory: gi + 100*mi},
		},
		{name: "overhead on top", pod: pod().Req("500m", "1Gi").Overhead("100m", "10Mi").Obj(),
			want: framework.Resource{MilliCPU: 600, Memory: gi + 10*mi}, wantNonZero: framework.NonZeroResource{MilliCPU: 600, Memory: gi + 10*mi}},
		{name: "pod-level cpu and memory replace the containers' sum", pod: pod().Req("500m", "1Gi").Container("500m", "1Gi").PodReq(rl{"cpu": "3", "memory": "4Gi"}).Obj(),
			want: framework.Resource{MilliCPU: 3000, Memory: 4 * gi}, wantNonZero: framework.NonZeroResource{MilliCPU: 3000, Memory: 4 * gi}},
		{
			// Pod-level requests are set and cpu is requested (200m, by
			// a container): no default for the container without one.
			name: "pod-level memory, a container without cpu: no cpu default",
			pod:  pod().Req("200m", "").Container("", "").PodReq(rl{"memory": "2Gi"}).Obj(),
			want: framework.Resource{MilliCPU: 200, Memory: 2 * gi}, wantNonZero: framework.NonZeroResource{MilliCPU: 200, Memory: 2 * gi},
		},
		{
			// cpu is requested nowhere: each of the two containers counts
			// at 100m.
			name: "pod-level memory, no cpu anywhere: cpu defaults per container",
			pod:  pod().Container("", "").PodReq(rl{"memory": "2Gi"}).Obj(),
			want: framework.Resource{Memory: 2 * gi}, wantNonZero: framework.NonZeroResource{MilliCPU: 2 * 100, Memory: 2 * gi},
		},
		{
			name:        "pod-level hugepages replace the containers'",
			pod:         pod().Req("500m", "1Gi").Res(rl{"hugepages-2Mi": "20Mi"}).PodReq(rl{"cpu": "1", "hugepages-2Mi": "100Mi"}).Obj(),
			want:        framework.Resource{MilliCPU: 1000, Memory: gi, ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 100 * mi}},
			wantNonZero: framework.NonZeroResource{MilliCPU: 1000, Memory: gi},
		},
		{
			name: "pod-level hugepages alone set pod-level requests",
			pod:  pod().Req("500m", "").PodReq(rl{"hugepages-1Gi": "2Gi"}).Obj(),
			want: framework.Resource{MilliCPU: 500, ScalarResources: map[v1.ResourceName]int64{"hugepages-1Gi": 2 * gi}},
			// memory is requested nowhere: the default, for the one container.
			wantNonZero: framework.NonZeroResource{MilliCPU: 500, Memory: defMem},
		},
		{
			name: "a pod being resized counts the largest of spec, allocated and actuated",
			pod:  pod().Req("500m", "1Gi").Resized(rl{"cpu": "1", "memory": "1Gi"}, rl{"cpu": "800m", "memory": "2Gi"}).Obj(),
			want: framework.Resource{MilliCPU: 1000, Memory: 2 * gi}, wantNonZero: framework.NonZeroResource{MilliCPU: 1000, Memory: 2 * gi},
		},
		{
			name: "an infeasible resize counts what was allocated and actuated, not the spec",
			pod:  pod().Req("4", "1Gi").Resized(rl{"cpu": "1", "memory": "1Gi"}, rl{"cpu": "1", "memory": "1Gi"}).ResizeInfeasible().Obj(),
			want: framework.Resource{MilliCPU: 1000, Memory: gi}, wantNonZero: framework.NonZeroResource{MilliCPU: 1000, Memory: gi},
		},
		{
			name: "a pod-level resize",
			pod:  pod().Req("500m", "1Gi").PodReq(rl{"cpu": "2", "memory": "2Gi"}).PodResized(rl{"cpu": "2", "memory": "2Gi"}, rl{"cpu": "3", "memory": "2Gi"}).Obj(),
			want: framework.Resource{MilliCPU: 3000, Memory: 2 * gi}, wantNonZero: framework.NonZeroResource{MilliCPU: 3000, Memory: 2 * gi},
		},
		{
			// kube-scheduler's Resource keeps only the names it knows.
			name:        "a resource name that is not scalar is dropped",
			pod:         pod().Req("500m", "1Gi").Res(rl{"storage": "1Gi", "example.com/gpu": "1"}).Obj(),
			want:        framework.Resource{MilliCPU: 500, Memory: gi, ScalarResources: map[v1.ResourceName]int64{"example.com/gpu": 1}},
			wantNonZero: framework.NonZeroResource{MilliCPU: 500, Memory: gi},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pi := framework.NewPodInfo(tc.pod)
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
	pod := frameworktest.MakePod().Name("p").Req("500m", "1Gi").Res(rl{"hugepages-2Mi": "20Mi"}).Container("", "").
		PodReq(rl{"cpu": "2", "hugepages-2Mi": "100Mi"}).
		Resized(rl{"cpu": "1"}, rl{"cpu": "1"}).Obj()
	tests := []struct {
		name string
		opts string
		want framework.Resource
	}{
		{name: "NodeResourcesFit filter: pod-level, no status", opts: "fit",
			want: framework.Resource{MilliCPU: 2000, Memory: gi, ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 100 * mi}}},
		{
			// Containers only, the one without requests at the defaults.
			name: "NodeResourcesFit scorer: containers, non-zero", opts: "fitScore",
			want: framework.Resource{MilliCPU: 500 + 100, Memory: gi + defMem, ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 20 * mi}},
		},
		{name: "BalancedAllocation: pod-level", opts: "balanced",
			want: framework.Resource{MilliCPU: 2000, Memory: gi, ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 100 * mi}}},
	}
	opts := map[string]func() framework.Resource{
		"fit":      func() framework.Resource { return framework.FitRequests(pod) },
		"fitScore": func() framework.Resource { return framework.FitScoreRequests(pod) },
		"balanced": func() framework.Resource { return framework.BalancedAllocationRequests(pod) },
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, opts[tc.opts]()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
