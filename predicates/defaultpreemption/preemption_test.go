package defaultpreemption_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/defaultpreemption"
)

// podSlots is a filter for these tests: a node holds as many pods as its
// allocatable "pods" says.
type podSlots struct{}

func (podSlots) Name() string { return "PodSlots" }

func (podSlots) Filter(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	if int64(len(ni.Pods)) >= ni.Node().Status.Allocatable.Pods().Value() {
		return framework.NewStatus(framework.Unschedulable, "Too many pods")
	}
	return nil
}

func placed(name, node string, priority int32) *v1.Pod {
	p := frameworktest.MakePod().Name(name).Priority(priority).Node(node).Obj()
	p.UID = types.UID(name)
	return p
}

// world is a plugin over nodes of two pod slots each, holding pods.
func world(t *testing.T, nodes []string, pods []*v1.Pod, pdbs ...*policyv1.PodDisruptionBudget) (*defaultpreemption.Plugin, *frameworktest.Handle, *framework.FilteredNodes) {
	t.Helper()
	var ns []*v1.Node
	for _, n := range nodes {
		ns = append(ns, frameworktest.MakeNode().Name(n).Capacity("8", "16Gi", 2).Obj())
	}
	snap := frameworktest.NewSnapshot(ns, pods)
	h := frameworktest.NewHandle(snap)
	h.Filters = []framework.FilterPlugin{podSlots{}}
	for _, p := range pdbs {
		h.AddObjects(p)
	}
	pl, err := defaultpreemption.New(&defaultpreemption.Args{}, h)
	if err != nil {
		t.Fatal(err)
	}
	filtered := &framework.FilteredNodes{NumAllNodes: len(nodes), Resolvable: snap.List()}
	return pl, h, filtered
}

func victimNames(vs []*v1.Pod) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	slices.Sort(out)
	return out
}

func TestPostFilter(t *testing.T) {
	high := func() *v1.Pod {
		p := frameworktest.MakePod().Name("high").Priority(1000).Obj()
		p.UID = "high"
		return p
	}
	tests := []struct {
		name        string
		pods        []*v1.Pod
		pdbs        []*policyv1.PodDisruptionBudget
		pod         *v1.Pod
		nominations map[types.UID]framework.Nomination
		wantCode    framework.Code
		wantNode    string
		wantVictims []string
		wantMsg     string
	}{{
		name:        "the node whose victims matter least",
		pods:        []*v1.Pod{placed("a1", "a", 15), placed("a2", "a", 500), placed("b1", "b", 10), placed("b2", "b", 20)},
		pod:         high(),
		wantNode:    "b",
		wantVictims: []string{"b1"},
		wantMsg:     "preemption: found a potential placement for pod on node b, preempting 1 victims",
	}, {
		name: "a victim a budget protects is spared where another node has none",
		pods: []*v1.Pod{placed("a1", "a", 10), placed("a2", "a", 10), placed("b1", "b", 10), placed("b2", "b", 10)},
		pdbs: []*policyv1.PodDisruptionBudget{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "keep-a"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"node": "a"}}},
		}},
		pod:         high(),
		wantNode:    "b",
		wantVictims: []string{"b1"},
		wantMsg:     "preemption: found a potential placement for pod on node b, preempting 1 victims",
	}, {
		name:     "nothing of lower priority to evict",
		pods:     []*v1.Pod{placed("a1", "a", 2000), placed("a2", "a", 2000), placed("b1", "b", 2000), placed("b2", "b", 2000)},
		pod:      high(),
		wantCode: framework.Unschedulable,
		wantMsg:  "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
	}, {
		name: "preemptionPolicy Never",
		pods: []*v1.Pod{placed("a1", "a", 10), placed("a2", "a", 10)},
		pod: func() *v1.Pod {
			p := high()
			never := v1.PreemptNever
			p.Spec.PreemptionPolicy = &never
			return p
		}(),
		wantCode: framework.Unschedulable,
		wantMsg:  "preemption: not eligible due to preemptionPolicy=Never.",
	}, {
		name:        "its evictions are still being requested",
		pods:        []*v1.Pod{placed("a1", "a", 10), placed("a2", "a", 10)},
		pod:         high(),
		nominations: map[types.UID]framework.Nomination{"high": {Node: "a", Victims: []types.UID{"a1"}, Running: true}},
		wantCode:    framework.Unschedulable,
		wantMsg:     "preemption: waiting for the preemption for this pod to be finished",
	}, {
		name:        "its victim is still there",
		pods:        []*v1.Pod{placed("a1", "a", 10), placed("a2", "a", 10)},
		pod:         high(),
		nominations: map[types.UID]framework.Nomination{"high": {Node: "a", Victims: []types.UID{"a1"}}},
		wantCode:    framework.Unschedulable,
		wantMsg:     "preemption: not eligible due to a terminating pod on the nominated node.",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range tt.pods {
				p.Labels = map[string]string{"node": p.Spec.NodeName}
			}
			nodes := []string{"a", "b"}
			if !slices.ContainsFunc(tt.pods, func(p *v1.Pod) bool { return p.Spec.NodeName == "b" }) {
				nodes = nodes[:1]
			}
			pl, h, filtered := world(t, nodes, tt.pods, tt.pdbs...)
			h.Nominations = tt.nominations
			st := pl.PostFilter(context.Background(), framework.NewCycleState(), tt.pod, filtered)
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Errorf("PostFilter = %v %q, want %v %q", st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
			got := h.Preempted()
			if tt.wantNode == "" {
				if len(got) != 0 {
					t.Errorf("preempted %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 || got[0].Node != tt.wantNode || !slices.Equal(victimNames(got[0].Victims), tt.wantVictims) {
				t.Fatalf("preempted %+v, want node %s, victims %v", got, tt.wantNode, tt.wantVictims)
			}
		})
	}
}

// A pod nominated to a node, of the preemptor's priority or more, takes
// room there that preemption cannot count on.
func TestPreemptionCountsNominatedPods(t *testing.T) {
	pods := []*v1.Pod{placed("a1", "a", 10), placed("b1", "b", 10), placed("b2", "b", 10)}
	pl, h, filtered := world(t, []string{"a", "b"}, pods)
	// a has a free slot, taken by a nominated pod of equal priority.
	other := frameworktest.MakePod().Name("other").Priority(1000).Obj()
	other.UID = "other"
	h.Nominated = map[string][]*framework.PodInfo{"a": {framework.NewPodInfo(other)}}
	pod := frameworktest.MakePod().Name("high").Priority(1000).Obj()
	pod.UID = "high"
	st := pl.PostFilter(context.Background(), framework.NewCycleState(), pod, filtered)
	if !st.IsSuccess() {
		t.Fatalf("PostFilter: %v", st.Message())
	}
	// On a, evicting a1 leaves one slot, the nominated pod's: the pod
	// would need both a's slots. b needs one victim.
	if got := h.Preempted(); len(got) != 1 || got[0].Node != "b" || len(got[0].Victims) != 1 {
		t.Errorf("preempted %+v, want one victim on b", got)
	}
}

// The plan is the decision without its effects.
func TestPlanPreemptionDoesNothing(t *testing.T) {
	pods := []*v1.Pod{placed("a1", "a", 10), placed("a2", "a", 10)}
	pl, h, filtered := world(t, []string{"a"}, pods)
	pod := frameworktest.MakePod().Name("high").Priority(1000).Obj()
	plan := pl.PlanPreemption(context.Background(), framework.NewCycleState(), pod, filtered)
	if !plan.Eligible || plan.Best == nil || plan.Best.Node != "a" || len(plan.Candidates) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	if len(h.Preempted()) != 0 || len(h.Cleared()) != 0 {
		t.Errorf("the plan acted: preempted %v, cleared %v", h.Preempted(), h.Cleared())
	}
}

// With no node where preemption might help, the pod's nomination is
// dropped: it holds room that helps nobody.
func TestNoCandidateClearsTheNomination(t *testing.T) {
	pl, h, _ := world(t, []string{"a"}, nil)
	pod := frameworktest.MakePod().Name("high").Priority(1000).Obj()
	st := pl.PostFilter(context.Background(), framework.NewCycleState(), pod, &framework.FilteredNodes{NumAllNodes: 3})
	want := "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	if st.Code() != framework.Unschedulable || st.Message() != want {
		t.Errorf("PostFilter = %v %q, want Unschedulable %q", st.Code(), st.Message(), want)
	}
	if c := h.Cleared(); len(c) != 1 || c[0] != pod {
		t.Errorf("cleared %v, want the pod", c)
	}
}

func TestValidateArgs(t *testing.T) {
	for _, tc := range []struct {
		pct, abs int32
		wantErr  string
	}{
		{10, 100, ""},
		{0, 1, ""},
		{101, 100, "minCandidateNodesPercentage: Invalid value: 101"},
		{10, -1, "minCandidateNodesAbsolute: Invalid value: -1"},
		{0, 0, "cannot be zero at the same time"},
	} {
		t.Run(fmt.Sprintf("%d/%d", tc.pct, tc.abs), func(t *testing.T) {
			err := defaultpreemption.ValidateArgs(&defaultpreemption.Args{MinCandidateNodesPercentage: &tc.pct, MinCandidateNodesAbsolute: &tc.abs})
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ValidateArgs = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
