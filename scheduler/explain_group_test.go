package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1beta1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// servePodGroups makes s read PodGroups from a store holding groups, as
// its informer would, and returns the store.
func servePodGroups(t *testing.T, s *Scheduler, groups ...*schedulingv1beta1.PodGroup) {
	t.Helper()
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	for _, g := range groups {
		if err := idx.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	s.groups.lister = schedulinglisters.NewPodGroupLister(idx)
}

func gang(name string, minCount int32) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount},
		}},
	}
}

// members makes n pending pods of group requesting cpu each and records
// them as the informer would.
func members(s *Scheduler, group string, n int, cpu string) []*v1.Pod {
	out := make([]*v1.Pod, n)
	for i := range n {
		name := fmt.Sprintf("%s-%d", group, i)
		p := frameworktest.MakePod().Namespace("default").Name(name).PodGroup(group).Req(cpu, "100Mi").Obj()
		p.UID = types.UID(name)
		s.groups.set(p)
		out[i] = p
	}
	return out
}

// perNode counts the dry run's members per node.
func perNode(placements []string) map[string]int {
	out := map[string]int{}
	for _, n := range placements {
		out[n]++
	}
	return out
}

func TestExplainPodGroup(t *testing.T) {
	key := func(name string) framework.PodGroupKey {
		return framework.PodGroupKey{API: framework.NativePodGroups, Namespace: "default", Name: name}
	}
	type want struct {
		placed                   bool
		fit, pending, scheduled  int
		maxPerNode               int
		message, blocker, waiter string
		summary                  []string
	}
	cases := []struct {
		name     string
		nodes    []string
		minCount int32
		members  int
		bound    int
		want     want
	}{
		{
			// 2 + 2 cpus for 3 pods of 1 cpu: all fit, at most 2 a node.
			name: "fits", nodes: []string{"2", "2"}, minCount: 3, members: 3,
			want: want{placed: true, fit: 3, pending: 3, maxPerNode: 2,
				summary: []string{"Would be placed: 3 pending pods need 1 cpu and 100Mi memory each; the cluster has room for all 3 (", "and 3 of minCount 3 would be scheduled."}},
		},
		{
			// 2 cpus for 3 pods of 1 cpu: 2 fit, the third does not.
			name: "two of three", nodes: []string{"2"}, minCount: 3, members: 3,
			want: want{fit: 2, pending: 3, scheduled: 2, maxPerNode: 2,
				message: "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor",
				blocker: "0/1 nodes are available: 1 Insufficient cpu.",
				summary: []string{"Would stay Pending: 3 pending pods need 1 cpu and 100Mi memory each; the cluster has room for 2 of them (n0: 2): minCount (3) cannot be satisfied: 2 scheduled, 0 remaining",
					"The next, default/g-2: fits nowhere: of 1 nodes, 1 node (NodeResourcesFit: Insufficient cpu)."}},
		},
		{
			// One member bound on n0 (1 of its 3 cpus), 3 pending: 2
			// fit beside it, and with it they make minCount 3.
			name: "a member bound already", nodes: []string{"3"}, minCount: 3, members: 4, bound: 1,
			// The third pending member, beyond minCount, fails alone.
			want: want{placed: true, fit: 2, pending: 3, scheduled: 0, maxPerNode: 2,
				blocker: "0/1 nodes are available: 1 Insufficient cpu.",
				summary: []string{"the cluster has room for 2 of them (n0: 2), and 3 of minCount 3 would be scheduled.",
					"Stays Pending without the others: default/g-3: fits nowhere", "1 member is already scheduled."}},
		},
		{
			// 3 members of a gang of 4: they wait before any attempt.
			name: "too few members", nodes: []string{"8"}, minCount: 4, members: 3,
			want: want{pending: 3, waiter: "GangScheduling: waiting for minCount pods from a gang to appear in scheduling queue",
				summary: []string{"Would stay Pending: its 3 pending members wait in the queue before any attempt", "3 of minCount 4 members exist."}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []*v1.Node
			for i, cpu := range tc.nodes {
				nodes = append(nodes, frameworktest.MakeNode().Name(fmt.Sprintf("n%d", i)).Capacity(cpu, "16Gi", 110).Obj())
			}
			s := newTestScheduler(t, 0, nodes...)
			servePodGroups(t, s, gang("g", tc.minCount))
			pods := members(s, "g", tc.members, "1")
			for _, p := range pods[:tc.bound] {
				p.Spec.NodeName = "n0"
				s.groups.set(p)
				s.Cache.AddPod(p)
			}
			g, err := s.ExplainPodGroup(context.Background(), key("g"))
			if err != nil {
				t.Fatal(err)
			}
			var nodesOf []string
			max := 0
			for _, p := range g.Placements {
				if p.Node != "" {
					nodesOf = append(nodesOf, p.Node)
				}
			}
			for _, n := range perNode(nodesOf) {
				max = maxInt(max, n)
			}
			got := want{placed: g.Placed, fit: g.Fit, pending: g.Pending, maxPerNode: max, message: g.Message}
			if !g.Placed {
				got.scheduled = g.Fit + g.Scheduled
			}
			if g.Blocker != nil {
				got.blocker = g.Blocker.Message
			}
			if g.Waiting != nil {
				got.waiter = g.Waiting.Plugin + ": " + strings.Join(g.Waiting.Reasons, "; ")
			}
			w := tc.want
			w.summary = nil
			if diff := cmp.Diff(w, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, part := range tc.want.summary {
				if !strings.Contains(g.Summary, part) {
					t.Errorf("summary lacks %q:\n%s", part, g.Summary)
				}
			}
			if g.Members != tc.members || g.Scheduled != tc.bound || int(g.MinCount) != int(tc.minCount) || !g.Gang || !g.Exists || g.API != "scheduling.k8s.io" {
				t.Errorf("group: %+v", g)
			}
			// A dry run: the cache holds only the bound members, and the
			// snapshot is back as the cache has it.
			if _, pods, assumed := s.Cache.Counts(); pods != tc.bound || assumed != 0 {
				t.Errorf("the cache holds %d pods, %d assumed; want %d, 0", pods, assumed, tc.bound)
			}
			for _, ni := range s.snapshot.List() {
				want := int64(0)
				if ni.NodeName() == "n0" {
					want = int64(1000 * tc.bound)
				}
				if ni.Requested.MilliCPU != want || ni.Generation <= 0 {
					t.Errorf("snapshot's %s after the dry run: %dm requested, generation %d; want %dm", ni.NodeName(), ni.Requested.MilliCPU, ni.Generation, want)
				}
			}
		})
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// explain of a member carries its group's dry run, and the pod is
// placed only when its group is.
func TestExplainMemberOfPodGroup(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n0").Capacity("2", "16Gi", 110).Obj())
	servePodGroups(t, s, gang("g", 3))
	pods := members(s, "g", 3, "1")
	e, err := s.Explain(context.Background(), pods[0])
	if err != nil {
		t.Fatal(err)
	}
	// Alone it fits; its group does not.
	if e.Selected != "n0" || e.PodGroup == nil || e.PodGroup.Placed || e.Placed() {
		t.Fatalf("selected %q, group %+v, placed %v", e.Selected, e.PodGroup, e.Placed())
	}
	if !strings.Contains(e.Summary, "Its pod group default/g: would stay Pending") {
		t.Errorf("summary: %s", e.Summary)
	}
	// Room for the third: the group, and the pod with it, would be placed.
	s.Cache.AddNode(frameworktest.MakeNode().Name("n1").Capacity("2", "16Gi", 110).Obj())
	if e, err = s.Explain(context.Background(), pods[0]); err != nil {
		t.Fatal(err)
	}
	if !e.PodGroup.Placed || !e.Placed() || e.PodGroup.NodeOf("default/g-0") == "" {
		t.Errorf("group %+v, placed %v", e.PodGroup, e.Placed())
	}
}

// Members see the members placed before them in the dry run, through the
// plugins' pre-steps too (InterPodAffinity's memo of the pods with
// required anti-affinity): four members that refuse to share a node fit
// three nodes three times, and a second run answers the same.
func TestExplainPodGroupSeesEarlierMembers(t *testing.T) {
	var nodes []*v1.Node
	for i := range 3 {
		nodes = append(nodes, frameworktest.MakeNode().Name(fmt.Sprintf("n%d", i)).Label(v1.LabelHostname, fmt.Sprintf("n%d", i)).Capacity("8", "16Gi", 110).Obj())
	}
	s := newTestScheduler(t, 0, nodes...)
	servePodGroups(t, s, gang("g", 4))
	anti := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}
	for i := range 4 {
		name := fmt.Sprintf("g-%d", i)
		p := frameworktest.MakePod().Namespace("default").Name(name).PodGroup("g").Label("app", "x").Req("1", "100Mi").RequiredPodAntiAffinity(anti).Obj()
		p.UID = types.UID(name)
		s.groups.set(p)
	}
	for run := range 2 {
		g, err := s.ExplainPodGroup(context.Background(), framework.PodGroupKey{API: framework.NativePodGroups, Namespace: "default", Name: "g"})
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		for _, p := range g.Placements {
			if p.Node != "" {
				used[p.Node] = true
			}
		}
		if g.Placed || g.Fit != 3 || len(used) != 3 || g.Blocker == nil || !strings.Contains(verdictsOf(g.Blocker), "InterPodAffinity") {
			t.Errorf("run %d: placed %v, fit %d on %v, blocker %+v; want 3 on 3 nodes, the fourth refused by InterPodAffinity", run, g.Placed, g.Fit, used, g.Blocker)
		}
	}
}

// verdictsOf joins an explanation's verdicts, for matching.
func verdictsOf(e *explain.Explanation) string {
	var parts []string
	for n, v := range verdicts(e) {
		parts = append(parts, n+"="+v)
	}
	return strings.Join(parts, ", ")
}

// A member whose PodGroup does not exist: the group's explanation says
// so, and no dry run runs.
func TestExplainPodGroupMissing(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n0").Capacity("8", "16Gi", 110).Obj())
	servePodGroups(t, s)
	pods := members(s, "ghost", 2, "1")
	e, err := s.Explain(context.Background(), pods[0])
	if err != nil {
		t.Fatal(err)
	}
	g := e.PodGroup
	if g == nil || g.Exists || g.Waiting == nil || len(g.Placements) != 0 || e.Placed() {
		t.Fatalf("group %+v, placed %v", g, e.Placed())
	}
	want := `Would stay Pending: the PodGroup default/ghost (scheduling.k8s.io) does not exist, and its 2 pending members wait in the queue before any attempt (GangScheduling: waiting for pods's pod group "ghost" to appear in scheduling queue).`
	if g.Summary != want {
		t.Errorf("summary\n%s\nwant\n%s", g.Summary, want)
	}
	if _, err := s.ResolvePodGroup("default", "ghost", ""); !errors.Is(err, ErrPodGroupNotFound) {
		t.Errorf("resolve a PodGroup that is not there: %v", err)
	}
}

// A name both APIs have is ambiguous until the API is given; the dry run
// of a scheduler-plugins PodGroup judges by its minMember.
func TestResolvePodGroupAndCoscheduling(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n0").Capacity("2", "16Gi", 110).Obj())
	servePodGroups(t, s, gang("g", 3))
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{"namespace": "default", "name": "g"},
		"spec":     map[string]any{"minMember": int64(2)},
	}}
	if err := idx.Add(crd); err != nil {
		t.Fatal(err)
	}
	s.groups.crd = toolscache.NewGenericLister(idx, gvrCoschedulingPodGroups.GroupResource())
	if _, err := s.ResolvePodGroup("default", "g", ""); !errors.Is(err, ErrPodGroupAmbiguous) {
		t.Errorf("both APIs: %v", err)
	}
	key, err := s.ResolvePodGroup("default", "g", "scheduling.x-k8s.io")
	if err != nil || key.API != framework.CoschedulingPodGroups {
		t.Fatalf("scheduling.x-k8s.io: %+v %v", key, err)
	}
	// Three members of 1 cpu by the label, 2 cpus: minMember 2 is met.
	for i := range 3 {
		name := fmt.Sprintf("c-%d", i)
		p := frameworktest.MakePod().Namespace("default").Name(name).Label(framework.CoschedulingPodGroupLabel, "g").Req("1", "100Mi").Obj()
		p.UID = types.UID(name)
		s.groups.set(p)
	}
	g, err := s.ExplainPodGroup(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Placed || g.Fit != 2 || g.MinCount != 2 || g.API != "scheduling.x-k8s.io" || !g.Gang || g.Blocker == nil {
		t.Errorf("placed %v, fit %d, minCount %d, api %s, gang %v, blocker %v; want 2 of 3 placed, minMember 2", g.Placed, g.Fit, g.MinCount, g.API, g.Gang, g.Blocker != nil)
	}
}
