package main

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// on returns p bound to node i.
func on(p *v1.Pod, i int) *v1.Pod {
	p.Namespace = "ns"
	p.Spec.NodeName = nodeName(i)
	return p
}

func TestCheckPlacement(t *testing.T) {
	// Six nodes: node i is in zone i mod 3.
	nodes := make([]*v1.Node, 6)
	for i := range nodes {
		nodes[i] = benchNode(i)
	}
	tests := []struct {
		name string
		pods []*v1.Pod
		want Placement
	}{{
		name: "one 100m pod per node is even and valid",
		pods: []*v1.Pod{
			on(basePod(0, "a", "100m", "128Mi"), 0), on(basePod(1, "a", "100m", "128Mi"), 1),
			on(basePod(2, "a", "100m", "128Mi"), 2), on(basePod(3, "a", "100m", "128Mi"), 3),
			on(basePod(4, "a", "100m", "128Mi"), 4), on(basePod(5, "a", "100m", "128Mi"), 5),
		},
		want: Placement{Pods: 6, Bound: 6},
	}, {
		name: "unbound pods are counted, not violations",
		pods: []*v1.Pod{on(basePod(0, "a", "600m", ""), 0), basePod(1, "a", "100m", "")},
		// cpu per node: 600, 0, 0, 0, 0, 0 → mean 100, variance (500² + 5·100²)/6 = 50000.
		want: Placement{Pods: 2, Bound: 1, CPUStddevMilli: 223.60679774997897},
	}, {
		name: "33 cpu on a 32-cpu node is one overcommit",
		pods: []*v1.Pod{on(basePod(0, "a", "16", ""), 0), on(basePod(1, "a", "17", ""), 0)},
		want: Placement{Pods: 2, Bound: 2, Violations: 1, Overcommit: 1},
	}, {
		name: "zone spread 3-1-0 has skew 3: two pods over maxSkew 1",
		pods: []*v1.Pod{
			on(withZoneSpread(basePod(0, "s", "100m", "")), 0),
			on(withZoneSpread(basePod(1, "s", "100m", "")), 3),
			on(withZoneSpread(basePod(2, "s", "100m", "")), 0),
			on(withZoneSpread(basePod(3, "s", "100m", "")), 1),
		},
		want: Placement{Pods: 4, Bound: 4, Violations: 2, Spread: 2, MaxSkew: 3},
	}, {
		name: "zone spread 2-1-1 holds",
		pods: []*v1.Pod{
			on(withZoneSpread(basePod(0, "s", "100m", "")), 0),
			on(withZoneSpread(basePod(1, "s", "100m", "")), 3),
			on(withZoneSpread(basePod(2, "s", "100m", "")), 1),
			on(withZoneSpread(basePod(3, "s", "100m", "")), 2),
		},
		want: Placement{Pods: 4, Bound: 4, MaxSkew: 1},
	}, {
		name: "two anti-affine pods on one node both violate; an unlabelled neighbour does not",
		pods: []*v1.Pod{
			on(withHostnameAntiAffinity(basePod(0, "aa", "100m", "")), 0),
			on(withHostnameAntiAffinity(basePod(1, "aa", "100m", "")), 0),
			on(basePod(2, "other", "100m", ""), 1),
			on(withHostnameAntiAffinity(basePod(3, "aa", "100m", "")), 1),
		},
		want: Placement{Pods: 4, Bound: 4, Violations: 2, AntiAffinity: 2},
	}, {
		name: "required zone-1 pod in zone-0 violates node affinity",
		pods: []*v1.Pod{on(mixedPod(9, 6), 0), on(mixedPod(19, 6), 1)},
		want: Placement{Pods: 2, Bound: 2, Violations: 1, NodeAffinity: 1},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := checkPlacement(nodes, tc.pods)
			opts := []cmp.Option{
				cmpopts.IgnoreFields(Placement{}, "Examples"),
				cmpopts.EquateApprox(0, 1e-9),
			}
			if tc.want.CPUStddevMilli == 0 {
				opts = append(opts, cmpopts.IgnoreFields(Placement{}, "CPUStddevMilli"))
			}
			if diff := cmp.Diff(tc.want, got, opts...); diff != "" {
				t.Errorf("checkPlacement() (-want +got):\n%s", diff)
			}
			if len(got.Examples) != min(got.Violations, maxExamples) {
				t.Errorf("%d examples for %d violations: %q", len(got.Examples), got.Violations, got.Examples)
			}
		})
	}
}

func TestWorkloadsAreDeterministicAndFit(t *testing.T) {
	const nodes, pods = 30, 500
	for _, w := range workloads {
		if w.preempt {
			continue // fits only through preemption: TestPreemptionShape
		}
		t.Run(w.name, func(t *testing.T) {
			count := w.count(sizes{pods: pods, nodes: nodes})
			a := podsFor(w, count, nodes, "ns", "s")
			b := podsFor(w, count, nodes, "ns", "s")
			if diff := cmp.Diff(a, b); diff != "" {
				t.Fatalf("two generations differ (-first +second):\n%s", diff)
			}
			aa := 0
			var cpu int64
			for _, p := range a {
				if p.Spec.Affinity != nil && p.Spec.Affinity.PodAntiAffinity != nil {
					aa++
				}
				c, _ := podRequests(p)
				cpu += c
			}
			// Hostname anti-affinity needs a node per pod; everything
			// else must leave plenty of room on 32-cpu nodes.
			if aa > nodes {
				t.Errorf("%d anti-affine pods for %d nodes", aa, nodes)
			}
			if cpu > nodes*32000/2 {
				t.Errorf("%dm cpu requested of %dm: the workload does not fit comfortably", cpu, nodes*32000)
			}
		})
	}
}

// bindClaim binds claim to pv as the PV binder does: the claim names the
// volume, the volume's claimRef the claim.
func bindClaim(c *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) {
	c.Spec.VolumeName = pv.Name
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, UID: c.UID}
}

func TestCheckVolumes(t *testing.T) {
	// Three nodes; volume i is on node i, claim i is pod i's.
	const n = 3
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		nodes[i] = benchNode(i)
	}
	w, _ := workloadByName("volumes")
	type world struct {
		pods   []*v1.Pod
		claims []*v1.PersistentVolumeClaim
		pvs    []*v1.PersistentVolume
	}
	// placed returns the three pods, pod i on node nodeOf[i] (-1:
	// pending) with its claim bound to volume volumeOf[i] (-1: unbound).
	placed := func(nodeOf, volumeOf [n]int) world {
		var wd world
		for i := range n {
			wd.pvs = append(wd.pvs, benchVolume(i, n))
		}
		for i := range n {
			p := w.pod(i, n)
			p.Namespace = "ns"
			if nodeOf[i] >= 0 {
				p.Spec.NodeName = nodeName(nodeOf[i])
			}
			c := benchClaim(i, "ns")
			c.UID = types.UID(fmt.Sprintf("uid-%d", i))
			if volumeOf[i] >= 0 {
				bindClaim(c, wd.pvs[volumeOf[i]])
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
		name:  "each pod on the node of its volume",
		world: placed([n]int{0, 1, 2}, [n]int{0, 1, 2}),
	}, {
		name:  "pods on the nodes of the volumes they got, in another order",
		world: placed([n]int{2, 0, 1}, [n]int{2, 0, 1}),
	}, {
		name:  "a pending pod's claim may wait unbound",
		world: placed([n]int{0, 1, -1}, [n]int{0, 1, -1}),
	}, {
		name:  "a pod on a node its volume does not reach",
		world: placed([n]int{1, 0, 2}, [n]int{0, 1, 2}),
		// Pods 0 and 1 are each on the other's node.
		want: Placement{Violations: 2, VolumeNodeAffinity: 2},
	}, {
		name:  "a bound pod whose claim is not bound",
		world: placed([n]int{0, 1, 2}, [n]int{0, 1, -1}),
		want:  Placement{Violations: 1, ClaimBinding: 1},
	}, {
		name: "one volume given to two claims",
		world: func() world {
			wd := placed([n]int{0, 1, 0}, [n]int{0, 1, 2})
			// Claim 2 names volume 0 as well; volume 0's claimRef
			// names claim 2 now, so claim 0's binding is broken too.
			bindClaim(wd.claims[2], wd.pvs[0])
			wd.pvs[2].Spec.ClaimRef = nil
			return wd
		}(),
		want: Placement{Violations: 2, SharedVolumes: 1, ClaimBinding: 1},
	}, {
		name: "a claim claimed by two volumes",
		world: func() world {
			wd := placed([n]int{0, 1, -1}, [n]int{0, 1, -1})
			wd.pvs[2].Spec.ClaimRef = wd.pvs[0].Spec.ClaimRef.DeepCopy()
			return wd
		}(),
		want: Placement{Violations: 1, ClaimBinding: 1},
	}, {
		name: "a claimRef with another uid is not the claim's",
		world: func() world {
			wd := placed([n]int{0, 1, 2}, [n]int{0, 1, 2})
			wd.pvs[1].Spec.ClaimRef.UID = "uid-of-a-deleted-claim"
			return wd
		}(),
		want: Placement{Violations: 1, ClaimBinding: 1},
	}, {
		name: "a claim bound to a volume that is gone",
		world: func() world {
			wd := placed([n]int{0, 1, 2}, [n]int{0, 1, 2})
			wd.pvs = wd.pvs[:2]
			return wd
		}(),
		want: Placement{Violations: 1, ClaimBinding: 1},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Placement
			checkVolumes(&got, nodes, tc.world.pods, tc.world.claims, tc.world.pvs)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Placement{}, "Examples")); diff != "" {
				t.Errorf("checkVolumes() (-want +got):\n%s\nexamples: %q", diff, got.Examples)
			}
			if len(got.Examples) != min(got.Violations, maxExamples) {
				t.Errorf("%d examples for %d violations: %q", len(got.Examples), got.Violations, got.Examples)
			}
		})
	}
}
