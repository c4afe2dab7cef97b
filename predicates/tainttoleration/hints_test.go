package tainttoleration_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/tainttoleration"
)

func TestTaintTolerationHints(t *testing.T) {
	node := func(name string) *frameworktest.NodeWrapper {
		return frameworktest.MakeNode().Name(name).Capacity("4", "8Gi", 110)
	}
	evNodeAdd := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	p := frameworktest.MakePod().Name("p").Toleration("ok", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj()
	tainted := node("n1").Taint("bad", "", v1.TaintEffectNoSchedule).Obj()
	tolerated := node("n1").Taint("ok", "", v1.TaintEffectNoSchedule).Obj()
	preferNo := node("n1").Taint("bad", "", v1.TaintEffectPreferNoSchedule).Obj()
	clean := node("n1").Obj()
	withTol := p.DeepCopy()
	withTol.Spec.Tolerations = append(withTol.Spec.Tolerations, v1.Toleration{Key: "bad", Operator: v1.TolerationOpExists})
	other := frameworktest.MakePod().Name("other").Obj()
	otherTol := other.DeepCopy()
	otherTol.Spec.Tolerations = withTol.Spec.Tolerations
	relabelled := node("n1").Taint("bad", "", v1.TaintEffectNoSchedule).Label("a", "b").Obj()
	frameworktest.CheckHints(t, tainttoleration.NewFilter(), []frameworktest.HintCase{
		{Name: "node added untainted", Pod: p, Event: evNodeAdd, New: clean, Want: framework.Queue},
		{Name: "node added with a tolerated taint", Pod: p, Event: evNodeAdd, New: tolerated, Want: framework.Queue},
		{Name: "node added with an untolerated taint", Pod: p, Event: evNodeAdd, New: tainted, Want: framework.QueueSkip},
		{Name: "untolerated taint removed", Pod: p, Event: frameworktest.NodeUpdate(tainted, clean), Old: tainted, New: clean, Want: framework.Queue},
		{Name: "untolerated taint made PreferNoSchedule", Pod: p, Event: frameworktest.NodeUpdate(tainted, preferNo), Old: tainted, New: preferNo, Want: framework.Queue},
		{Name: "taint added", Pod: p, Event: frameworktest.NodeUpdate(clean, tainted), Old: clean, New: tainted, Want: framework.QueueSkip},
		{Name: "was tolerated already", Pod: p, Event: frameworktest.NodeUpdate(tolerated, clean), Old: tolerated, New: clean, Want: framework.QueueSkip},
		{Name: "labels only: not registered", Pod: p, Event: frameworktest.NodeUpdate(tainted, relabelled), Old: tainted, New: relabelled, Want: framework.QueueSkip},
		{Name: "own tolerations changed", Pod: p, Event: frameworktest.UnscheduledPodUpdate(p, withTol), Old: p, New: withTol, Want: framework.Queue},
		{Name: "another pod's tolerations changed", Pod: p, Event: frameworktest.UnscheduledPodUpdate(other, otherTol), Old: other, New: otherTol, Want: framework.QueueSkip},
	})
}
