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

func TestNodeUnschedulableFilter(t *testing.T) {
	cordoned := frameworktest.MakeNode().Name("n1").Unschedulable().Obj()
	rejected := reject(framework.UnschedulableAndUnresolvable, "node(s) were unschedulable")
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
			got := predicates.NewNodeUnschedulable().Filter(context.Background(), framework.NewCycleState(), tc.pod, nodeInfoOf(tc.node))
			if diff := cmp.Diff(viewOf(tc.want), viewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}
