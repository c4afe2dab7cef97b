package nodename_test

import (
	"testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodename"
)

func TestNodeNameHints(t *testing.T) {
	node := func(name string) *frameworktest.NodeWrapper {
		return frameworktest.MakeNode().Name(name).Capacity("4", "8Gi", 110)
	}
	evNodeAdd := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	p := frameworktest.MakePod().Name("p").Node("n2").Obj()
	frameworktest.CheckHints(t, nodename.NewFilter(), []frameworktest.HintCase{
		{Name: "the named node added", Pod: p, Event: evNodeAdd, New: node("n2").Obj(), Want: framework.Queue},
		{Name: "another node added", Pod: p, Event: evNodeAdd, New: node("n1").Obj(), Want: framework.QueueSkip},
		{Name: "node relabelled: not registered", Pod: p, Event: frameworktest.NodeUpdate(node("n2").Obj(), node("n2").Label("a", "b").Obj()),
			Old: node("n2").Obj(), New: node("n2").Label("a", "b").Obj(), Want: framework.QueueSkip},
	})
}
