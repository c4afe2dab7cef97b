package dynamicresources

import (
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"
)

// An update that replaces a claim's allocation without clearing it first
// (seen after a relist: the claim deallocated and allocated anew, or
// deleted and made again under its name, while the watch was down) frees
// the old devices and takes the new ones; an update that keeps the
// allocation changes nothing.
func TestClaimChangedFollowsReplacedAllocations(t *testing.T) {
	claim := func(uid types.UID, devices ...string) *resourceapi.ResourceClaim {
		c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: uid}}
		if len(devices) == 0 {
			return c
		}
		c.Status.Allocation = &resourceapi.AllocationResult{}
		for _, d := range devices {
			c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
				resourceapi.DeviceRequestAllocationResult{Request: "r", Driver: "drv", Pool: "p", Device: d})
		}
		return c
	}
	a := newAllocatedDevices()
	var rev int64
	step := func(name string, oldClaim, newClaim *resourceapi.ResourceClaim, changed bool, taken ...string) {
		t.Helper()
		a.claimChanged(oldClaim, newClaim)
		state, r, _ := a.sync()
		if (r != rev) != changed {
			t.Errorf("%s: revision %d after %d, want changed=%v", name, r, rev, changed)
		}
		rev = r
		want := map[structured.DeviceID]bool{}
		for _, d := range taken {
			want[structured.MakeDeviceID("drv", "p", d)] = true
		}
		if len(state.AllocatedDevices) != len(want) {
			t.Errorf("%s: taken %v, want %v", name, state.AllocatedDevices.UnsortedList(), taken)
		}
		for id := range want {
			if !state.AllocatedDevices.Has(id) {
				t.Errorf("%s: %v not taken; taken %v", name, id, state.AllocatedDevices.UnsortedList())
			}
		}
	}
	step("allocated", claim("u1"), claim("u1", "a"), true, "a")
	step("same allocation, another copy", claim("u1", "a"), claim("u1", "a"), false, "a")
	step("allocated anew", claim("u1", "a"), claim("u1", "b"), true, "b")
	step("made again, same devices", claim("u1", "b"), claim("u2", "b"), true, "b")
	step("made again, other devices", claim("u2", "b"), claim("u3", "a", "c"), true, "a", "c")
	step("deleted", claim("u3", "a", "c"), nil, true)
}
