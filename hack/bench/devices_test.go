package main

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestDeviceLayout checks the dra workload's devices: one slice per node,
// in a pool named after the node, with devicesPerNode distinct devices of
// the driver the class selects; every pod claims one device through the
// template, in a container that uses the claim; and the layout is the
// same every time.
func TestDeviceLayout(t *testing.T) {
	const nodes = 30
	w, _ := workloadByName("dra")
	if count := w.count(sizes{pods: 5000, nodes: nodes}); count != nodes {
		t.Errorf("count without -dra-pods = %d, want one pod per node, %d", count, nodes)
	}
	if count := w.count(sizes{pods: 5000, draPods: 4 * nodes, nodes: nodes}); count != 4*nodes {
		t.Errorf("count with -dra-pods %d = %d", 4*nodes, count)
	}
	if got, want := benchDeviceClass().Spec.Selectors[0].CEL.Expression, `device.driver == "`+benchDriver+`"`; got != want {
		t.Errorf("class selector %q, want %q", got, want)
	}
	req := benchTemplate("ns").Spec.Spec.Devices.Requests
	if len(req) != 1 || req[0].Exactly == nil || req[0].Exactly.DeviceClassName != benchDeviceClassName || req[0].Exactly.Count != 1 {
		t.Errorf("template requests %+v, want one device of class %q", req, benchDeviceClassName)
	}

	pools := map[string]bool{}
	for i := range nodes {
		s := benchSlice(i)
		if diff := cmp.Diff(s, benchSlice(i)); diff != "" {
			t.Fatalf("slice %d differs between two calls (-first +second):\n%s", i, diff)
		}
		if s.Spec.Driver != benchDriver || ptr.Deref(s.Spec.NodeName, "") != nodeName(i) || s.Spec.Pool.Name != nodeName(i) || s.Spec.Pool.ResourceSliceCount != 1 {
			t.Errorf("slice %d: driver %q, node %v, pool %+v; want %q on and named after %q, one slice", i, s.Spec.Driver, s.Spec.NodeName, s.Spec.Pool, benchDriver, nodeName(i))
		}
		names := map[string]bool{}
		for _, d := range s.Spec.Devices {
			names[d.Name] = true
		}
		if len(names) != devicesPerNode || len(s.Spec.Devices) != devicesPerNode {
			t.Errorf("slice %d has %d devices, %d distinct; want %d", i, len(s.Spec.Devices), len(names), devicesPerNode)
		}
		pools[s.Spec.Pool.Name] = true
	}
	if len(pools) != nodes {
		t.Errorf("%d pools for %d nodes", len(pools), nodes)
	}

	p := w.pod(7, nodes)
	want := []v1.PodResourceClaim{{Name: podClaimName, ResourceClaimTemplateName: ptr.To(benchTemplateName)}}
	if diff := cmp.Diff(want, p.Spec.ResourceClaims); diff != "" {
		t.Errorf("pod's resourceClaims (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]v1.ResourceClaim{{Name: podClaimName}}, p.Spec.Containers[0].Resources.Claims); diff != "" {
		t.Errorf("container's claims (-want +got):\n%s", diff)
	}
}

func TestCheckDevices(t *testing.T) {
	// Three nodes with their slices; pod i's claim is "claim-i".
	const n = 3
	w, _ := workloadByName("dra")
	rs := make([]*resourceapi.ResourceSlice, n)
	for i := range rs {
		rs[i] = benchSlice(i)
	}
	type world struct {
		pods   []*v1.Pod
		claims []*resourceapi.ResourceClaim
	}
	// placed returns the three pods, pod i on node nodeOf[i] (-1:
	// pending), its claim recorded in its status and allocated device
	// deviceOf[i] of that node (-1: unallocated) and reserved for it.
	placed := func(nodeOf, deviceOf [n]int) world {
		var wd world
		for i := range n {
			p := w.pod(i, n)
			p.Namespace, p.UID = "ns", types.UID(fmt.Sprintf("pod-uid-%d", i))
			name := fmt.Sprintf("claim-%d", i)
			p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: podClaimName, ResourceClaimName: ptr.To(name)}}
			c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
			if nodeOf[i] >= 0 {
				p.Spec.NodeName = nodeName(nodeOf[i])
				if deviceOf[i] >= 0 {
					allocate(c, nodeName(nodeOf[i]), deviceName(deviceOf[i]))
					c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}}
				}
			}
			wd.pods, wd.claims = append(wd.pods, p), append(wd.claims, c)
		}
		return wd
	}
	tests := []struct {
		name  string
		world world
		want  Placement
	}{{
		name:  "each pod with a device of its node",
		world: placed([n]int{0, 1, 2}, [n]int{0, 0, 7}),
	}, {
		name:  "two pods on one node with two of its devices",
		world: placed([n]int{1, 1, 2}, [n]int{0, 1, 0}),
	}, {
		name:  "a pending pod's claim may wait unallocated",
		world: placed([n]int{0, 1, -1}, [n]int{0, 0, -1}),
	}, {
		name:  "a bound pod whose claim is not allocated",
		world: placed([n]int{0, 1, 2}, [n]int{0, 0, -1}),
		want:  Placement{Violations: 1, DeviceAllocation: 1},
	}, {
		name:  "one device given to two claims",
		world: placed([n]int{1, 1, 2}, [n]int{3, 3, 0}),
		want:  Placement{Violations: 1, SharedDevices: 1},
	}, {
		name: "a claim allocated a device of another node",
		world: func() world {
			wd := placed([n]int{0, 1, 2}, [n]int{0, 0, 0})
			allocate(wd.claims[0], nodeName(2), deviceName(5))
			return wd
		}(),
		want: Placement{Violations: 1, DeviceAllocation: 1},
	}, {
		name: "a claim allocated a device no slice publishes",
		world: func() world {
			wd := placed([n]int{0, 1, 2}, [n]int{0, 0, 0})
			allocate(wd.claims[1], nodeName(1), "gpu-99")
			return wd
		}(),
		want: Placement{Violations: 1, DeviceAllocation: 1},
	}, {
		name: "a claim reserved for a pod of the same name with another uid",
		world: func() world {
			wd := placed([n]int{0, 1, 2}, [n]int{0, 0, 0})
			wd.claims[2].Status.ReservedFor[0].UID = "uid-of-a-deleted-pod"
			return wd
		}(),
		want: Placement{Violations: 1, DeviceAllocation: 1},
	}, {
		name: "a bound pod with no claim in its status, and one whose claim is gone",
		world: func() world {
			wd := placed([n]int{0, 1, 2}, [n]int{0, 0, 0})
			wd.pods[0].Status.ResourceClaimStatuses = nil
			wd.claims = wd.claims[:2]
			return wd
		}(),
		want: Placement{Violations: 2, DeviceAllocation: 2},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Placement
			checkDevices(&got, tc.world.pods, tc.world.claims, rs)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Placement{}, "Examples")); diff != "" {
				t.Errorf("checkDevices() (-want +got):\n%s\nexamples: %q", diff, got.Examples)
			}
			if len(got.Examples) != min(got.Violations, maxExamples) {
				t.Errorf("%d examples for %d violations: %q", len(got.Examples), got.Violations, got.Examples)
			}
		})
	}
}

// allocate gives claim c the device of node's pool, as a scheduler does.
func allocate(c *resourceapi.ResourceClaim, node, device string) {
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
		Results: []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: benchDriver, Pool: node, Device: device}},
	}}
}
