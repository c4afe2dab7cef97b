package predicates_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates"
)

// statusView is the part of a framework.Status the tests compare.
type statusView struct {
	Code    string
	Reasons []string
}

func viewOf(s *framework.Status) statusView {
	return statusView{Code: s.Code().String(), Reasons: s.Reasons()}
}

// reject is the status a filter returns when it rejects with reason.
func reject(code framework.Code, reason string) *framework.Status {
	return framework.NewStatus(code, reason)
}

// nodeInfoOf returns a NodeInfo for node holding pods.
func nodeInfoOf(node *v1.Node, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

func TestNodeNamePreFilter(t *testing.T) {
	tests := []struct {
		name       string
		pod        *v1.Pod
		wantResult *framework.PreFilterResult
		wantStatus *framework.Status
	}{
		{name: "no node name: skip", pod: frameworktest.MakePod().Obj(), wantStatus: framework.NewStatus(framework.Skip)},
		{name: "node name narrows to that node", pod: frameworktest.MakePod().Node("n1").Obj(),
			wantResult: &framework.PreFilterResult{NodeNames: map[string]struct{}{"n1": {}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, st := predicates.NewNodeName().PreFilter(context.Background(), framework.NewCycleState(), tc.pod, nil)
			if diff := cmp.Diff(viewOf(tc.wantStatus), viewOf(st)); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResult, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeNameFilter(t *testing.T) {
	node := frameworktest.MakeNode().Name("n1").Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		want *framework.Status
	}{
		{name: "no node name fits every node", pod: frameworktest.MakePod().Obj()},
		{name: "same node name fits", pod: frameworktest.MakePod().Node("n1").Obj()},
		{name: "other node name", pod: frameworktest.MakePod().Node("n2").Obj(),
			want: reject(framework.UnschedulableAndUnresolvable, "node(s) didn't match the requested node name")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := predicates.NewNodeName().Filter(context.Background(), framework.NewCycleState(), tc.pod, nodeInfoOf(node))
			if diff := cmp.Diff(viewOf(tc.want), viewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

// kube-scheduler v1.37's NodeUnschedulable and TaintToleration are
// PreFilter plugins whose PreFilter prepares nothing and skips no pod (but
// one whose resize is deferred, behind an alpha gate): their filters run
// for every pod, a cordoned or tainted node as much as any.
func TestNodeLocalPreFiltersNeverSkip(t *testing.T) {
	pods := map[string]*v1.Pod{
		"plain":      frameworktest.MakePod().Obj(),
		"tolerating": frameworktest.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj(),
		"named node": frameworktest.MakePod().Node("n1").Obj(),
	}
	for _, pl := range []framework.PreFilterPlugin{predicates.NewNodeUnschedulable(), predicates.NewTaintToleration()} {
		for name, pod := range pods {
			state := framework.NewCycleState()
			res, st := pl.PreFilter(context.Background(), state, pod, nil)
			if res != nil || st != nil {
				t.Errorf("%s PreFilter of the %s pod = (%v, %v), want (nil, nil)", pl.Name(), name, res, st.Message())
			}
		}
	}
}

func TestReasonsMatchKubeScheduler(t *testing.T) {
	// Users grep events for these strings: they must stay kube-scheduler
	// v1.37's (unchanged since v1.36).
	got := []string{
		predicates.ReasonNodeUnschedulable,
		predicates.ReasonNodeName,
		predicates.ReasonUntoleratedTaint,
		predicates.ReasonNodeAffinity,
		predicates.ReasonNodeAffinityConflict,
		predicates.ReasonNodePorts,
	}
	want := []string{
		"node(s) were unschedulable",
		"node(s) didn't match the requested node name",
		"node(s) had untolerated taint(s)",
		"node(s) didn't match Pod's node affinity/selector",
		"pod affinity terms conflict",
		"node(s) didn't have free ports for the requested pod ports",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	names := []string{
		predicates.NewNodeUnschedulable().Name(), predicates.NewNodeName().Name(), predicates.NewTaintToleration().Name(),
		predicates.NewNodeAffinity(nil).Name(), predicates.NewNodePorts().Name(),
	}
	if diff := cmp.Diff([]string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
