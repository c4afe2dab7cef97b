package dynamicresources

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/yardmaster-io/yardmaster/framework"
)

// networkSlice publishes devices that every node reaches.
func networkSlice(name string, devices ...string) *resourceapi.ResourceSlice {
	s := slice(name, devices...)
	s.Spec.NodeName, s.Spec.AllNodes = nil, ptr.To(true)
	return s
}

// checkAgainstAllocator runs a cycle for pod and checks every node's
// answer against the allocator asked afresh, with the state the cycle
// built: whatever Filter took from the answers kept must be what the
// allocator computes now. It returns the first node that fits, or "".
func (w *draWorld) checkAgainstAllocator(pod *testPod) string {
	w.t.Helper()
	state, pre, got := w.cycle(pod.pod)
	if pre != nil {
		w.t.Fatalf("%s: PreFilter: %v", pod.pod.Name, pre.Message())
	}
	s, err := readState(state)
	if err != nil {
		w.t.Fatal(err)
	}
	var toAllocate []*resourceapi.ResourceClaim
	for _, c := range s.claims {
		if c.Status.Allocation == nil {
			toAllocate = append(toAllocate, c)
		}
	}
	first := ""
	for _, ni := range w.h.Lister.List() {
		name := ni.NodeName()
		allocator, err := w.pl.getAllocator(context.Background(), s)
		if err != nil {
			w.t.Fatal(err)
		}
		want, err := allocator.Allocate(context.Background(), ni.Node(), toAllocate)
		if err != nil {
			w.t.Fatalf("%s on %s: Allocate: %v", pod.pod.Name, name, err)
		}
		if want == nil {
			if got[name] == "" {
				w.t.Errorf("%s fits on %s, where the allocator cannot allocate its claims", pod.pod.Name, name)
			}
			continue
		}
		if got[name] != "" {
			w.t.Errorf("%s rejected on %s (%s), where the allocator allocates %v", pod.pod.Name, name, got[name], want)
			continue
		}
		if diff := cmp.Diff(want, s.nodeAllocations[name].results, cmpopts.EquateEmpty()); diff != "" {
			w.t.Errorf("%s on %s: Filter's allocation differs from the allocator's (-allocator +filter):\n%s", pod.pod.Name, name, diff)
		}
		if first == "" || name < first {
			first = name
		}
	}
	pod.state = state
	return first
}

type testPod struct {
	pod   *v1.Pod
	state *framework.CycleState
}

// TestAnswersAreTheAllocators walks a backlog of alike pods through
// changes of every kind the answers depend on (devices taken by Reserve
// and given back by Unreserve, a claim allocated by someone else and
// deallocated, a slice added, a network-attached device taken) and checks
// after each that every node's answer is what the allocator computes
// afresh.
func TestAnswersAreTheAllocators(t *testing.T) {
	const nodes = 4
	objs := []runtime.Object{deviceClass("gpu"), networkSlice("fabric", "net-0")}
	for i := 1; i <= nodes; i++ {
		objs = append(objs, slice(fmt.Sprintf("n%d", i), "gpu-0", "gpu-1"))
	}
	// Ten devices in the end (n1 gets a third), nine pods and one claim
	// of someone else's hold them; one pod given back.
	const pods = 9
	for i := range pods + 2 {
		objs = append(objs, claim(fmt.Sprintf("c%d", i), 1, ""))
	}
	w := newDRAWorld(t, nodes, objs...)
	ctx := context.Background()
	var reserved []*testPod
	reserve := func(p *testPod, node string) {
		t.Helper()
		if st := w.pl.Reserve(ctx, p.state, p.pod, node); !st.IsSuccess() {
			t.Fatalf("Reserve %s on %s: %v", p.pod.Name, node, st.Message())
		}
		p.pod.Spec.NodeName = node
		reserved = append(reserved, p)
	}
	for i := range pods {
		p := &testPod{pod: podWith(fmt.Sprintf("p%d", i), fmt.Sprintf("c%d", i))}
		node := w.checkAgainstAllocator(p)
		if node == "" {
			t.Fatalf("%s fits nowhere", p.pod.Name)
		}
		reserve(p, node)
		switch i {
		case 3:
			// Given back: its device is free again.
			q := reserved[1]
			w.pl.Unreserve(ctx, q.state, q.pod, q.pod.Spec.NodeName)
		case 5:
			// Someone else allocates n4's devices, then gives one back.
			for _, d := range []string{"gpu-0", "gpu-1"} {
				c := claim("other-"+d, 1, "")
				c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
					Results: []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: driver, Pool: "n4", Device: d}},
				}}
				w.m.claims.informerSaw(c)
			}
			w.checkAgainstAllocator(&testPod{pod: podWith("probe", fmt.Sprintf("c%d", i+1))})
			c := claim("other-gpu-0", 1, "")
			c.ResourceVersion = "2"
			w.m.claims.informerSaw(c)
		case 7:
			// A node gets more devices.
			s := slice("n1", "gpu-0", "gpu-1", "gpu-2")
			s.Spec.Pool.Generation = 2
			w.add(s)
		}
	}
	// One device is left; once a pod takes it, no node fits.
	p := &testPod{pod: podWith("last", fmt.Sprintf("c%d", pods))}
	node := w.checkAgainstAllocator(p)
	if node == "" {
		t.Fatal("the last device is given to nobody")
	}
	reserve(p, node)
	if node := w.checkAgainstAllocator(&testPod{pod: podWith("none", fmt.Sprintf("c%d", pods+1))}); node != "" {
		t.Errorf("a pod fits on %s with every device taken", node)
	}
}

// An alike pod gets the answers kept for the last one on every node whose
// devices did not change since; a node whose did gets a fresh answer.
func TestAnswersKeptUntilTheNodeChanges(t *testing.T) {
	w := newDRAWorld(t, 3, deviceClass("gpu"), slice("n1", "gpu-0"), slice("n2", "gpu-0"), slice("n3", "gpu-0"),
		claim("a", 1, ""), claim("b", 1, ""), claim("c", 1, `device.driver == "gpu.example.com"`))
	ctx := context.Background()
	a := podWith("a", "a")
	state, _, _ := w.cycle(a)
	if st := w.pl.Reserve(ctx, state, a, "n2"); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	b := podWith("b", "b")
	state, _, got := w.cycle(b)
	s, _ := readState(state)
	kept := map[string]bool{}
	for _, ni := range w.h.Lister.List() {
		w.m.answers.mu.Lock()
		e := w.m.answers.nodes[ni.NodeName()]
		kept[ni.NodeName()] = e != nil && e.valid && e.rev < s.revision
		w.m.answers.mu.Unlock()
	}
	if want := map[string]bool{"n1": true, "n2": false, "n3": true}; !cmp.Equal(want, kept) {
		t.Errorf("answers kept from a's cycle: %v, want %v", kept, want)
	}
	if want := map[string]string{"n2": "UnschedulableAndUnresolvable: cannot allocate all claims"}; !cmp.Equal(want, got) {
		t.Errorf("b's Filter: %v, want %v", got, want)
	}
	// Another spec is another signature: nothing of b's is given to c.
	state, _, _ = w.cycle(podWith("c", "c"))
	s, _ = readState(state)
	if s.sig == "" || s.sig == claimsSignature([]*resourceapi.ResourceClaim{claim("b", 1, "")}) {
		t.Errorf("c's signature %q: empty or b's", s.sig)
	}
}

// allocatorAnswers' own rules: a put after the node was touched at a later
// revision, or in an epoch gone, is not kept; a void drops everything.
func TestAllocatorAnswersRules(t *testing.T) {
	results := &nodeAllocation{results: []resourceapi.AllocationResult{{Devices: resourceapi.DeviceAllocationResult{
		Results: []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: driver, Pool: "n1", Device: "gpu-0"}},
	}}}}
	change := []deviceChange{{allocation: &results.results[0], sign: +1}}
	slices := []*resourceapi.ResourceSlice{slice("n1", "gpu-0"), slice("n2", "gpu-0")}
	tests := []struct {
		name string
		do   func(a *allocatorAnswers)
		// want is whether get(n1, gen 1, "sig", epoch 0, rev 5) finds it.
		want bool
	}{{
		name: "kept",
		do:   func(a *allocatorAnswers) { a.put("n1", 1, "sig", 0, 3, results) },
		want: true,
	}, {
		name: "touched after it was computed",
		do: func(a *allocatorAnswers) {
			a.put("n1", 1, "sig", 0, 3, results)
			a.touch(change, 4, slices, 0)
		},
	}, {
		name: "computed before the node was touched, put after",
		do: func(a *allocatorAnswers) {
			a.touch(change, 4, slices, 0)
			a.put("n1", 1, "sig", 0, 3, results)
		},
	}, {
		name: "computed at the revision that touched it",
		do: func(a *allocatorAnswers) {
			a.touch(change, 4, slices, 0)
			a.put("n1", 1, "sig", 0, 4, results)
		},
		want: true,
	}, {
		name: "another node touched",
		do: func(a *allocatorAnswers) {
			a.put("n1", 1, "sig", 0, 3, results)
			a.touch([]deviceChange{{allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
				Results: []resourceapi.DeviceRequestAllocationResult{{Driver: driver, Pool: "n2", Device: "gpu-0"}},
			}}, sign: +1}}, 4, slices, 0)
		},
		want: true,
	}, {
		name: "a pool no slice publishes touches every node",
		do: func(a *allocatorAnswers) {
			a.put("n1", 1, "sig", 0, 3, results)
			a.touch([]deviceChange{{allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
				Results: []resourceapi.DeviceRequestAllocationResult{{Driver: driver, Pool: "gone", Device: "gpu-0"}},
			}}, sign: -1}}, 4, slices, 0)
		},
	}, {
		name: "voided",
		do: func(a *allocatorAnswers) {
			a.put("n1", 1, "sig", 0, 3, results)
			a.void()
		},
	}, {
		name: "another generation of the node",
		do:   func(a *allocatorAnswers) { a.put("n1", 2, "sig", 0, 3, results) },
	}, {
		name: "computed at a newer revision than the cycle's allocator",
		do:   func(a *allocatorAnswers) { a.put("n1", 1, "sig", 0, 6, results) },
	}, {
		name: "an allocation with a share ID",
		do: func(a *allocatorAnswers) {
			shared := &nodeAllocation{results: []resourceapi.AllocationResult{*results.results[0].DeepCopy()}}
			shared.results[0].Devices.Results[0].ShareID = ptr.To(types.UID("share"))
			a.put("n1", 1, "sig", 0, 3, shared)
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAllocatorAnswers()
			tc.do(a)
			epoch := uint64(0)
			if tc.name == "voided" {
				epoch = 1 // the cycle after the void runs in the new epoch
			}
			_, got := a.get("n1", 1, "sig", epoch, 5)
			if got != tc.want {
				t.Errorf("get found an answer: %v, want %v", got, tc.want)
			}
		})
	}
}
