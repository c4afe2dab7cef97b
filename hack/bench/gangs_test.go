package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
)

// TestGangLayout: pod i names group i / size, every group's minCount is
// its number of members, and a count that is no whole number of groups
// ends with a smaller group of its own size.
func TestGangLayout(t *testing.T) {
	tests := []struct {
		count, size int
		// want is the minCount of each group, gang-0 first.
		want []int32
	}{
		{count: 9, size: 3, want: []int32{3, 3, 3}},
		{count: 10, size: 3, want: []int32{3, 3, 3, 1}},
		{count: 500, size: 1000, want: []int32{500}},
		{count: 3000, size: 1000, want: []int32{1000, 1000, 1000}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d in %d", tc.count, tc.size), func(t *testing.T) {
			groups := podGroupsFor(tc.count, tc.size, "ns")
			var got []int32
			members := map[string]int{}
			for g, pg := range groups {
				if pg.Name != gangName(g) || pg.Namespace != "ns" {
					t.Errorf("group %d is %s/%s, want ns/%s", g, pg.Namespace, pg.Name, gangName(g))
				}
				if pg.Spec.SchedulingPolicy.Gang == nil {
					t.Fatalf("group %s has no gang policy", pg.Name)
				}
				got = append(got, pg.Spec.SchedulingPolicy.Gang.MinCount)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("minCounts (-want +got):\n%s", diff)
			}
			for i := range tc.count {
				p := gangPod(i, tc.size)
				members[*p.Spec.SchedulingGroup.PodGroupName]++
				if cpu, mem := podRequests(p); cpu != 100 || mem != 100<<20 {
					t.Fatalf("pod %d requests %dm, %d bytes; want scheduler_perf's 100m/100Mi", i, cpu, mem)
				}
			}
			for _, pg := range groups {
				if n := members[pg.Name]; int32(n) != pg.Spec.SchedulingPolicy.Gang.MinCount {
					t.Errorf("group %s has %d members, minCount %d", pg.Name, n, pg.Spec.SchedulingPolicy.Gang.MinCount)
				}
			}
		})
	}
}

// TestGangDefaults: issue #39's sizes at 5,000 nodes (1,000 groups of 3,
// 10 of 1,000), and the cap that keeps a small cluster's drain one that
// fits.
func TestGangDefaults(t *testing.T) {
	tests := []struct {
		workload   string
		s          sizes
		pods, size int
	}{
		{"smallgangs", sizes{nodes: 5000}, 3000, 3},
		{"largegangs", sizes{nodes: 5000}, 10000, 1000},
		// 100 nodes · 110 slots / 2 = 5,500: five groups and one of 500.
		{"largegangs", sizes{nodes: 100}, 5500, 1000},
		{"largegangs", sizes{nodes: 5000, measurePods: 2000}, 2000, 1000},
	}
	for _, tc := range tests {
		w, ok := workloadByName(tc.workload)
		if !ok {
			t.Fatalf("no workload %q", tc.workload)
		}
		if got := w.count(tc.s); got != tc.pods {
			t.Errorf("%s.count(%+v) = %d, want %d", tc.workload, tc.s, got, tc.pods)
		}
		if w.groupSize != tc.size || !w.gangs() {
			t.Errorf("%s: groups of %d, want %d", tc.workload, w.groupSize, tc.size)
		}
		if len(w.controllers()) == 0 || len(w.controllerManagerFlags()) == 0 {
			t.Errorf("%s runs no PodGroup protection controller: deleted PodGroups would stay", tc.workload)
		}
		// kube-scheduler's first binding of 10 groups of 1,000 came
		// after 210 s at 5,000 nodes: the default -stall of 60 s would
		// end its drain before it.
		if tc.workload == "largegangs" && w.minStall < 2*210*time.Second {
			t.Errorf("largegangs gives up after %s without a binding; kube-scheduler needs 210 s for its first", w.minStall)
		}
		if w.skipsCeilings() {
			t.Errorf("%s skips the ceilings: binding every member places every group whole", tc.workload)
		}
	}
}

// member is pod i of group g of minCount size, bound to node (-1: not).
func member(i, size, node int) *v1.Pod {
	p := gangPod(i, size)
	p.Namespace = "ns"
	if node >= 0 {
		p.Spec.NodeName = nodeName(node)
	}
	return p
}

func TestCheckGangs(t *testing.T) {
	groups := podGroupsFor(6, 3, "ns") // gang-0: pods 0-2, gang-1: pods 3-5
	basic := &schedulingv1beta1.PodGroup{}
	basic.Namespace, basic.Name = "ns", "basic"
	tests := []struct {
		name   string
		pods   []*v1.Pod
		groups []*schedulingv1beta1.PodGroup
		want   Placement
		// examples are substrings of the examples, in order.
		examples []string
	}{{
		name:   "both whole",
		pods:   []*v1.Pod{member(0, 3, 0), member(1, 3, 1), member(2, 3, 0), member(3, 3, 2), member(4, 3, 2), member(5, 3, 2)},
		groups: groups,
		want:   Placement{Groups: 2, GroupsPlaced: 2},
	}, {
		name:   "one whole, one not at all",
		pods:   []*v1.Pod{member(0, 3, 0), member(1, 3, 1), member(2, 3, 0), member(3, 3, -1), member(4, 3, -1), member(5, 3, -1)},
		groups: groups,
		want:   Placement{Groups: 2, GroupsPlaced: 1},
	}, {
		name:     "two of three bound is a partial group",
		pods:     []*v1.Pod{member(0, 3, 0), member(1, 3, 1), member(2, 3, 0), member(3, 3, 4), member(4, 3, -1), member(5, 3, 4)},
		groups:   groups,
		want:     Placement{Groups: 2, GroupsPlaced: 1, PartialGroups: 1, Violations: 1},
		examples: []string{"PodGroup ns/gang-1 partially bound: 2 members bound, minCount 3"},
	}, {
		name: "members beyond minCount may be left out",
		pods: []*v1.Pod{member(0, 3, 0), member(1, 3, 1), member(2, 3, -1)},
		groups: func() []*schedulingv1beta1.PodGroup {
			g := podGroupsFor(3, 3, "ns")
			g[0].Spec.SchedulingPolicy.Gang.MinCount = 2
			return g
		}(),
		want: Placement{Groups: 1, GroupsPlaced: 1},
	}, {
		name:     "a bound member of a missing group is a violation, an unbound one not",
		pods:     []*v1.Pod{member(0, 3, 0), member(3, 3, -1)},
		groups:   nil,
		want:     Placement{PartialGroups: 1, Violations: 1},
		examples: []string{"pod pod-000000 on bench-node-00000 names PodGroup ns/gang-0, which does not exist"},
	}, {
		name: "a basic group is no gang",
		pods: func() []*v1.Pod {
			p := member(0, 3, 1)
			name := "basic"
			p.Spec.SchedulingGroup.PodGroupName = &name
			return []*v1.Pod{p}
		}(),
		groups:   []*schedulingv1beta1.PodGroup{basic},
		want:     Placement{Groups: 1, PartialGroups: 1, Violations: 1},
		examples: []string{"names PodGroup ns/basic, which does not exist or is no gang"},
	}, {
		name:   "pods of no group are not looked at",
		pods:   []*v1.Pod{on(basePod(0, "a", "100m", ""), 0)},
		groups: groups,
		want:   Placement{Groups: 2},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Placement
			checkGangs(&got, tc.pods, tc.groups)
			examples := got.Examples
			got.Examples = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checkGangs (-want +got):\n%s", diff)
			}
			if len(examples) != len(tc.examples) {
				t.Fatalf("examples %q, want %d like %q", examples, len(tc.examples), tc.examples)
			}
			for i, want := range tc.examples {
				if !strings.Contains(examples[i], want) {
					t.Errorf("example %q, want it to contain %q", examples[i], want)
				}
			}
		})
	}
}

// TestSplitGangs: a run that split a gang fails the benchmark; one that
// placed every group, or left some whole groups pending, does not.
func TestSplitGangs(t *testing.T) {
	run := func(partial, placed int) *Run {
		return &Run{Nodes: 10, Workload: "smallgangs", Contender: yardmasterName, Run: 1,
			Drain: &DrainResult{Placement: Placement{Groups: 3, GroupsPlaced: placed, PartialGroups: partial}}}
	}
	tests := []struct {
		name string
		runs []*Run
		want string // "" for no error
	}{
		{"all whole", []*Run{run(0, 3)}, ""},
		{"some pending whole", []*Run{run(0, 1)}, ""},
		{"one split", []*Run{run(0, 3), run(1, 2)}, "10 nodes, smallgangs, yardmaster run 1: 1 PodGroups partially bound"},
		{"no drain", []*Run{{Workload: "idle", Idle: &IdleResult{}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := splitGangs(&Report{Runs: tc.runs})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("splitGangs() = %v, want nil", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("splitGangs() = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestParseFlagsGangs: the default run includes the gang workloads, and
// any gang workload makes the API server serve PodGroups; others do not.
func TestParseFlagsGangs(t *testing.T) {
	tests := []struct {
		args          []string
		wantPodGroups bool
	}{
		{nil, true},
		{[]string{"-workloads", "largegangs"}, true},
		{[]string{"-workloads", "basic,spread"}, false},
	}
	for _, tc := range tests {
		o, err := parseFlags(tc.args)
		if err != nil {
			t.Fatalf("parseFlags(%q): %v", tc.args, err)
		}
		if o.podGroups != tc.wantPodGroups {
			t.Errorf("parseFlags(%q): podGroups %v, want %v", tc.args, o.podGroups, tc.wantPodGroups)
		}
	}
	o, _ := parseFlags(nil)
	if got := strings.Join(o.workloads, ","); got != "basic,spread,smallgangs,largegangs" {
		t.Errorf("default workloads %q, want the gangs among them", got)
	}
}
