package main

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestPreemptionShape checks the arithmetic of PreemptionBasic scaled to
// the harness's nodes: the fill fits, a preemptor does not fit beside it,
// fits after exactly preemptVictims victims and not after fewer, and two
// preemptors never share a node.
func TestPreemptionShape(t *testing.T) {
	const nodes = 3
	node := benchNode(0)
	alloc := node.Status.Allocatable.Cpu().MilliValue()
	fill := make([]*v1.Pod, fillPerNode*nodes)
	for i := range fill {
		fill[i] = fillPod(i, nodes)
	}
	if p := checkPlacement([]*v1.Node{benchNode(0), benchNode(1), benchNode(2)}, fill); p.Violations != 0 || p.Bound != len(fill) {
		t.Fatalf("fill: %d of %d bound, %d violations: %v", p.Bound, len(fill), p.Violations, p.Examples)
	}
	fillCPU, _ := podRequests(fill[0])
	preemptor, _ := podRequests(preemptorPod(0))
	free := func(victims int) int64 { return alloc - int64(fillPerNode-victims)*fillCPU }
	// 32000 - 4·7200 = 3200 < 24000; 32000 - 2·7200 = 17600 < 24000;
	// 32000 - 1·7200 = 24800 ≥ 24000.
	for victims := range preemptVictims {
		if free(victims) >= preemptor {
			t.Errorf("a preemptor fits with %d victims (%dm free, %dm needed); want %d", victims, free(victims), preemptor, preemptVictims)
		}
	}
	if free(preemptVictims) < preemptor {
		t.Errorf("a preemptor does not fit with %d victims: %dm free, %dm needed", preemptVictims, free(preemptVictims), preemptor)
	}
	if left := free(preemptVictims) - preemptor; left+int64(fillPerNode-preemptVictims)*fillCPU >= preemptor {
		t.Errorf("two preemptors fit on one node: the shape needs one node per preemptor")
	}
	w, _ := workloadByName("preemption")
	if got := w.count(sizes{nodes: nodes}); got != nodes {
		t.Errorf("preemption measures %d pods on %d nodes, want one per node", got, nodes)
	}
	if p := preemptorPod(0); p.Spec.PriorityClassName != highPriorityClass {
		t.Errorf("preemptor has PriorityClass %q, want %q", p.Spec.PriorityClassName, highPriorityClass)
	}
	if f := fill[0]; f.Spec.PriorityClassName != "" || f.Spec.TerminationGracePeriodSeconds == nil || *f.Spec.TerminationGracePeriodSeconds != 0 {
		t.Errorf("fill pod: PriorityClass %q, grace %v; want none and 0 (no kubelet ends a victim)", f.Spec.PriorityClassName, f.Spec.TerminationGracePeriodSeconds)
	}
}

// TestPoolPodFitsNowhere: a pool pod asks for more than any node has.
func TestPoolPodFitsNowhere(t *testing.T) {
	p := poolPod(0)
	p.Spec.NodeName = nodeName(0)
	res := checkPlacement([]*v1.Node{benchNode(0)}, []*v1.Pod{p})
	if res.Overcommit == 0 {
		t.Errorf("a pool pod on an empty node is no overcommit: it would fit")
	}
	if p.Spec.PriorityClassName != highPriorityClass {
		t.Errorf("pool pod has PriorityClass %q, want %q: it must come before the measured pods", p.Spec.PriorityClassName, highPriorityClass)
	}
}

// TestDaemonSetPodPinned: pod i's required node affinity admits node i
// and no other.
func TestDaemonSetPodPinned(t *testing.T) {
	const nodes = 4
	for i := range nodes {
		p := daemonSetPod(i, nodes)
		for j := range nodes {
			if got, want := nodeMatches(p, benchNode(j)), i == j; got != want {
				t.Errorf("pod %d on node %d: matches %v, want %v", i, j, got, want)
			}
		}
		if cpu, mem := podRequests(p); cpu != 0 || mem != 0 {
			t.Errorf("pod %d requests %dm cpu, %d bytes: scheduler_perf's DaemonSet pod requests nothing", i, cpu, mem)
		}
	}
}

// TestMeasuredDefaults: the scheduler_perf shapes' defaults, and the cap
// that keeps a small test cluster's drain one that fits.
func TestMeasuredDefaults(t *testing.T) {
	tests := []struct {
		workload string
		s        sizes
		want     int
	}{
		{"unschedulable", sizes{nodes: 5000}, 5000},
		{"mixedchurn", sizes{nodes: 5000}, 10000},
		// 20 nodes · 110 slots / 2.
		{"unschedulable", sizes{nodes: 20}, 1100},
		{"mixedchurn", sizes{nodes: 20, measurePods: 300}, 300},
		{"daemonset", sizes{nodes: 15000}, 15000},
		{"daemonset", sizes{nodes: 15000, measurePods: 100}, 100},
		{"preemption", sizes{nodes: 1000, measurePods: 5000}, 1000},
	}
	for _, tc := range tests {
		w, ok := workloadByName(tc.workload)
		if !ok {
			t.Fatalf("no workload %q", tc.workload)
		}
		if got := w.count(tc.s); got != tc.want {
			t.Errorf("%s.count(%+v) = %d, want %d", tc.workload, tc.s, got, tc.want)
		}
	}
}
