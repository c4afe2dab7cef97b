package nodeunschedulable_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeunschedulable"
)

func TestNodeUnschedulableHints(t *testing.T) {
	node := func(name string) *frameworktest.NodeWrapper {
		return frameworktest.MakeNode().Name(name).Capacity("4", "8Gi", 110)
	}
	evNodeAdd := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	p := frameworktest.MakePod().Name("p").Obj()
	cordoned := node("n1").Unschedulable().Obj()
	open := node("n1").Obj()
	tol := p.DeepCopy()
	tol.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	frameworktest.CheckHints(t, nodeunschedulable.NewFilter(), []frameworktest.HintCase{
		{Name: "schedulable node added", Pod: p, Event: evNodeAdd, New: open, Want: framework.Queue},
		{Name: "cordoned node added", Pod: p, Event: evNodeAdd, New: cordoned, Want: framework.QueueSkip},
		{Name: "uncordoned", Pod: p, Event: frameworktest.NodeUpdate(cordoned, open), Old: cordoned, New: open, Want: framework.Queue},
		{Name: "taint change on a cordoned node", Pod: p, Event: frameworktest.NodeUpdate(cordoned, node("n1").Unschedulable().Taint("k", "", v1.TaintEffectNoSchedule).Obj()),
			Old: cordoned, New: node("n1").Unschedulable().Taint("k", "", v1.TaintEffectNoSchedule).Obj(), Want: framework.QueueSkip},
		{Name: "now tolerates unschedulable", Pod: p, Event: frameworktest.UnscheduledPodUpdate(p, tol), Old: p, New: tol, Want: framework.Queue},
	})
}
