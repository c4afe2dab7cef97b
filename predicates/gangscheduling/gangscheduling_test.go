package gangscheduling_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/gangscheduling"
)

// groups is a fixed framework.PodGroupLister.
type groups map[framework.PodGroupKey]framework.PodGroupInfo

func (g groups) Get(key framework.PodGroupKey) framework.PodGroupInfo {
	if info, ok := g[key]; ok {
		return info
	}
	return framework.PodGroupInfo{Key: key}
}

func (g groups) Peek(key framework.PodGroupKey) framework.PodGroupInfo {
	info := g.Get(key)
	info.Scheduled = 0
	return info
}

func (groups) Served(framework.PodGroupAPI) bool { return true }

func gang(name string, minCount int32) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}},
	}
}

func basic(name string) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}},
	}
}

func key(name string) framework.PodGroupKey {
	return framework.PodGroupKey{Namespace: "ns", Name: name}
}

func TestPreEnqueue(t *testing.T) {
	lister := groups{
		key("full"):     {Key: key("full"), Object: gang("full", 3), Members: 3},
		key("short"):    {Key: key("short"), Object: gang("short", 3), Members: 2},
		key("basic"):    {Key: key("basic"), Object: basic("basic"), Members: 1},
		crdKey("full"):  {Key: crdKey("full"), Coscheduling: &framework.CoschedulingPodGroup{MinMember: 2}, Members: 2},
		crdKey("short"): {Key: crdKey("short"), Coscheduling: &framework.CoschedulingPodGroup{MinMember: 2}, Members: 1},
	}
	pl := gangscheduling.New(lister, nil)
	tests := []struct {
		name  string
		group string // "" for none
		code  framework.Code
		msg   string
	}{
		{"no group", "", framework.Success, ""},
		{"gang with minCount members", "full", framework.Success, ""},
		{"gang short of minCount", "short", framework.UnschedulableAndUnresolvable, gangscheduling.MsgWaitingForMinCount},
		{"basic group", "basic", framework.Success, ""},
		{"no PodGroup", "missing", framework.UnschedulableAndUnresolvable, `waiting for pods's pod group "missing" to appear in scheduling queue`},
		{"scheduler-plugins group with minMember members", "label:full", framework.Success, ""},
		{"scheduler-plugins group short of minMember", "label:short", framework.UnschedulableAndUnresolvable, "cannot find enough sibling pods, current pods number: 1, minMember of group: 2"},
		{"no scheduler-plugins PodGroup", "label:missing", framework.UnschedulableAndUnresolvable, `waiting for PodGroup "missing" (scheduling.x-k8s.io/v1alpha1) to exist`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := frameworktest.MakePod().Namespace("ns").Name("p")
			if name, ok := strings.CutPrefix(tc.group, "label:"); ok {
				p = p.Label(framework.CoschedulingPodGroupLabel, name)
			} else if tc.group != "" {
				p = p.PodGroup(tc.group)
			}
			st := pl.PreEnqueue(context.Background(), p.Obj())
			if st.Code() != tc.code || st.Message() != tc.msg {
				t.Errorf("PreEnqueue = %v %q, want %v %q", st.Code(), st.Message(), tc.code, tc.msg)
			}
		})
	}
}

func TestPodGroupFeasible(t *testing.T) {
	pl := gangscheduling.New(groups{}, nil)
	g := &framework.PodGroupInfo{Key: key("g"), Object: gang("g", 3)}
	tests := []struct {
		scheduled, remaining int
		code                 framework.Code
		msg                  string
	}{
		{0, 4, framework.Wait, "minCount (3) is not yet satisfied: 0 scheduled, 4 remaining"},
		{2, 1, framework.Wait, "minCount (3) is not yet satisfied: 2 scheduled, 1 remaining"},
		{1, 1, framework.Unschedulable, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"},
		{3, 0, framework.Success, ""},
		{4, 2, framework.Success, ""},
	}
	for _, tc := range tests {
		st := pl.PodGroupFeasible(context.Background(), g, framework.PodGroupProgress{Scheduled: tc.scheduled, Remaining: tc.remaining, Tried: 1})
		if st.Code() != tc.code || st.Message() != tc.msg {
			t.Errorf("PodGroupFeasible(%d, %d) = %v %q, want %v %q", tc.scheduled, tc.remaining, st.Code(), st.Message(), tc.code, tc.msg)
		}
	}
	// A basic group needs one member.
	b := &framework.PodGroupInfo{Key: key("b"), Object: basic("b")}
	if st := pl.PodGroupFeasible(context.Background(), b, framework.PodGroupProgress{}); st.Code() != framework.Unschedulable {
		t.Errorf("basic group with nothing placed: %v, want Unschedulable", st.Code())
	}
	if st := pl.PodGroupFeasible(context.Background(), b, framework.PodGroupProgress{Scheduled: 1, Tried: 1}); !st.IsSuccess() {
		t.Errorf("basic group with one placed: %v, want Success", st.Code())
	}
}

func TestPermit(t *testing.T) {
	lister := groups{
		key("met"):  {Key: key("met"), Object: gang("met", 2), Members: 2, Scheduled: 2},
		key("wait"): {Key: key("wait"), Object: gang("wait", 2), Members: 2, Scheduled: 1},
	}
	pl := gangscheduling.New(lister, nil)
	for group, want := range map[string]framework.Code{"met": framework.Success, "wait": framework.Wait, "": framework.Success} {
		p := frameworktest.MakePod().Namespace("ns").Name("p")
		if group != "" {
			p = p.PodGroup(group)
		}
		st, timeout := pl.Permit(context.Background(), framework.NewCycleState(), p.Obj(), "n")
		if st.Code() != want {
			t.Errorf("Permit in group %q = %v, want %v", group, st.Code(), want)
		}
		if want == framework.Wait && timeout <= 0 {
			t.Errorf("Permit waits without a timeout")
		}
	}
}

func TestHints(t *testing.T) {
	member := frameworktest.MakePod().Namespace("ns").Name("m").PodGroup("g").Obj()
	sibling := frameworktest.MakePod().Namespace("ns").Name("s").PodGroup("g").Obj()
	stranger := frameworktest.MakePod().Namespace("ns").Name("x").PodGroup("other").Obj()
	loner := frameworktest.MakePod().Namespace("ns").Name("l").Obj()
	lowered, raised := gang("g", 2), gang("g", 4)
	big := frameworktest.MakePod().Namespace("ns").Name("b").Label(framework.CoschedulingPodGroupLabel, "big").Obj()
	small := frameworktest.MakePod().Namespace("ns").Name("s").Label(framework.CoschedulingPodGroupLabel, "small").Obj()
	lister := groups{
		crdKey("big"):   {Key: crdKey("big"), Coscheduling: &framework.CoschedulingPodGroup{MinMember: 2, MinResources: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8")}}},
		crdKey("small"): {Key: crdKey("small"), Coscheduling: &framework.CoschedulingPodGroup{MinMember: 2}},
	}
	bound := frameworktest.MakePod().Namespace("ns").Name("gone").Node("n").Obj()
	frameworktest.CheckHints(t, gangscheduling.New(lister, nil), []frameworktest.HintCase{
		{Name: "a node added, for a group with minResources", Pod: big, Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, New: frameworktest.MakeNode().Name("n").Obj(), Want: framework.Queue},
		{Name: "a bound pod deleted, for a group with minResources", Pod: big, Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}, Old: bound, Want: framework.Queue},
		{Name: "a node added, for a group without minResources", Pod: small, Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, New: frameworktest.MakeNode().Name("n").Obj(), Want: framework.QueueSkip},
		{Name: "a sibling added", Pod: member, Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}, New: sibling, Want: framework.Queue},
		{Name: "a sibling bound elsewhere added", Pod: member, Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}, New: sibling, Want: framework.Queue},
		{Name: "a pod of another group", Pod: member, Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}, New: stranger, Want: framework.QueueSkip},
		{Name: "a pod of no group", Pod: member, Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}, New: loner, Want: framework.QueueSkip},
		{Name: "its PodGroup added", Pod: member, Event: framework.ClusterEvent{Resource: framework.PodGroup, ActionType: framework.Add}, New: gang("g", 3), Want: framework.Queue},
		{Name: "another PodGroup added", Pod: member, Event: framework.ClusterEvent{Resource: framework.PodGroup, ActionType: framework.Add}, New: gang("other", 3), Want: framework.QueueSkip},
		{Name: "minCount lowered", Pod: member, Event: framework.ClusterEvent{Resource: framework.PodGroup, ActionType: framework.Update}, Old: gang("g", 3), New: lowered, Want: framework.Queue},
		{Name: "minCount raised", Pod: member, Event: framework.ClusterEvent{Resource: framework.PodGroup, ActionType: framework.Update}, Old: gang("g", 3), New: raised, Want: framework.QueueSkip},
		{Name: "a node added", Pod: member, Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, New: frameworktest.MakeNode().Name("n").Obj(), Want: framework.QueueSkip},
	})
}

// minResources is checked before the first member is tried, against the
// free room of all nodes together, the group's own pods counted as free.
func TestMinResources(t *testing.T) {
	nodes := []*v1.Node{
		frameworktest.MakeNode().Name("a").Capacity("4", "8Gi", 10).Obj(),
		frameworktest.MakeNode().Name("b").Capacity("4", "8Gi", 10).Obj(),
	}
	pods := []*v1.Pod{
		frameworktest.MakePod().Namespace("ns").Name("busy").Node("a").Req("3", "1Gi").Obj(),
		frameworktest.MakePod().Namespace("ns").Name("own").Node("b").Req("2", "1Gi").Label(framework.CoschedulingPodGroupLabel, "g").Obj(),
	}
	pl := gangscheduling.New(groups{}, frameworktest.NewSnapshot(nodes, pods))
	tests := []struct {
		name string
		min  v1.ResourceList
		want string
	}{
		// Free: a has 1 cpu, b has 4 (its 2 are the group's own).
		{"fits", v1.ResourceList{v1.ResourceCPU: resource.MustParse("5")}, ""},
		{"short of cpu", v1.ResourceList{v1.ResourceCPU: resource.MustParse("6")}, "resource gap: cpu short by 1"},
		{"short of a resource no node has", v1.ResourceList{"example.com/gpu": resource.MustParse("2")}, "resource gap: example.com/gpu short by 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &framework.PodGroupInfo{Key: crdKey("g"), Coscheduling: &framework.CoschedulingPodGroup{MinMember: 1, MinResources: tc.min}}
			st := pl.PodGroupFeasible(context.Background(), g, framework.PodGroupProgress{Remaining: 1})
			switch {
			case tc.want == "" && st.Code() != framework.Wait:
				t.Errorf("PodGroupFeasible = %v %q, want Wait (minResources met, minMember not yet)", st.Code(), st.Message())
			case tc.want != "" && (st.Code() != framework.UnschedulableAndUnresolvable || st.Message() != tc.want):
				t.Errorf("PodGroupFeasible = %v %q, want %q", st.Code(), st.Message(), tc.want)
			}
		})
	}
}

func crdKey(name string) framework.PodGroupKey {
	return framework.PodGroupKey{API: framework.CoschedulingPodGroups, Namespace: "ns", Name: name}
}
