package nodeunschedulable_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeunschedulable"
)

func TestNodeUnschedulableFilter(t *testing.T) {
	cordoned := frameworktest.MakeNode().Name("n1").Unschedulable().Obj()
	rejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) were unschedulable")
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want *framework.Status
	}{
		{name: "schedulable node", pod: frameworktest.MakePod().Obj(), node: frameworktest.MakeNode().Name("n1").Obj()},
		{name: "schedulable node with the taint is not this filter's business", pod: frameworktest.MakePod().Obj(),
			node: frameworktest.MakeNode().Name("n1").Taint(v1.TaintNodeUnschedulable, "", v1.TaintEffectNoSchedule).Obj()},
		{name: "cordoned node", pod: frameworktest.MakePod().Obj(), node: cordoned, want: rejected},
		{name: "cordoned, pod tolerates the unschedulable taint",
			pod:  frameworktest.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj(),
			node: cordoned},
		{name: "cordoned, toleration with empty effect",
			pod:  frameworktest.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", "").Obj(),
			node: cordoned},
		{name: "cordoned, Equal with the taint's empty value",
			pod:  frameworktest.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpEqual, "", v1.TaintEffectNoSchedule).Obj(),
			node: cordoned},
		{name: "cordoned, pod tolerates everything",
			pod:  frameworktest.MakePod().Toleration("", v1.TolerationOpExists, "", "").Obj(),
			node: cordoned},
		{name: "cordoned, toleration for another effect",
			pod:  frameworktest.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoExecute).Obj(),
			node: cordoned, want: rejected},
		{name: "cordoned, Equal with another value",
			pod:  frameworktest.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpEqual, "yes", v1.TaintEffectNoSchedule).Obj(),
			node: cordoned, want: rejected},
		{name: "cordoned, toleration for another key",
			pod:  frameworktest.MakePod().Toleration("dedicated", v1.TolerationOpExists, "", "").Obj(),
			node: cordoned, want: rejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := nodeunschedulable.NewFilter().Filter(context.Background(), framework.NewCycleState(), tc.pod, frameworktest.NodeInfoOf(tc.node))
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

// kube-scheduler v1.37's NodeUnschedulable is a PreFilter plugin whose
// PreFilter prepares nothing and skips no pod (but one whose resize is
// deferred, behind an alpha gate): its filter runs for every pod, a
// cordoned node as much as any.
func TestNodeUnschedulablePreFilterNeverSkips(t *testing.T) {
	pods := map[string]*v1.Pod{
		"plain":      frameworktest.MakePod().Obj(),
		"tolerating": frameworktest.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj(),
		"named node": frameworktest.MakePod().Node("n1").Obj(),
	}
	for name, pod := range pods {
		res, st := nodeunschedulable.NewFilter().PreFilter(context.Background(), framework.NewCycleState(), pod, nil)
		if res != nil || st != nil {
			t.Errorf("PreFilter of the %s pod = (%v, %v), want (nil, nil)", name, res, st.Message())
		}
	}
}

func TestReasonMatchesKubeScheduler(t *testing.T) {
	// Users grep events for this string: it must stay kube-scheduler
	// v1.37's (unchanged since v1.36).
	if got, want := nodeunschedulable.ReasonNodeUnschedulable, "node(s) were unschedulable"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	if got := nodeunschedulable.NewFilter().Name(); got != "NodeUnschedulable" {
		t.Errorf("name = %q, want NodeUnschedulable", got)
	}
}

// The filter signs everything it reads of a pod, and only that: see
// framework.PodSigner.
func TestNodeUnschedulableSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	cases := []frameworktest.SignCase{
		{Name: "replica", A: base().Obj(), B: replica, Same: true},
		{Name: "toleration", A: base().Obj(), B: base().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj()},
	}
	pl := nodeunschedulable.NewFilter()
	frameworktest.CheckSigning(t, pl, cases)
	// What the signatures are for: pods signed alike get the same
	// answers, on nodes that answer the pods of the cases apart.
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("unschedulable").Capacity("4", "8Gi", 110).Unschedulable().
			Taint(v1.TaintNodeUnschedulable, "", v1.TaintEffectNoSchedule).Obj(),
	}, nil)
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
}
