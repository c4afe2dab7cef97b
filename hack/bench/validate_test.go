package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
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
		t.Run(w.name, func(t *testing.T) {
			a := podsFor(w, w.count(pods, nodes), nodes, "ns", "s")
			b := podsFor(w, w.count(pods, nodes), nodes, "ns", "s")
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
