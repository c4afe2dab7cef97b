package nodeports_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeports"
)

func TestNodePortsHints(t *testing.T) {
	pod := func(name string) *frameworktest.PodWrapper { return frameworktest.MakePod().Name(name) }
	evNodeAdd := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	evAssignedDelete := framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}
	p := pod("p").HostPort(8080, v1.ProtocolTCP, "").Obj()
	holder := pod("holder").HostPort(8080, v1.ProtocolTCP, "").Node("n1").Obj()
	otherPort := pod("other").HostPort(9090, v1.ProtocolTCP, "").Node("n1").Obj()
	pending := pod("pending").HostPort(8080, v1.ProtocolTCP, "").Obj()
	frameworktest.CheckHints(t, nodeports.NewFilter(), []frameworktest.HintCase{
		{Name: "pod holding the port deleted", Pod: p, Event: evAssignedDelete, Old: holder, Want: framework.Queue},
		{Name: "pod holding another port deleted", Pod: p, Event: evAssignedDelete, Old: otherPort, Want: framework.QueueSkip},
		{Name: "pod without ports deleted", Pod: p, Event: evAssignedDelete, Old: pod("x").Node("n1").Obj(), Want: framework.QueueSkip},
		{Name: "pending pod deleted", Pod: p, Event: evAssignedDelete, Old: pending, Want: framework.QueueSkip},
		{Name: "node added", Pod: p, Event: evNodeAdd, New: frameworktest.MakeNode().Name("n9").Capacity("4", "8Gi", 110).Obj(), Want: framework.Queue},
	})
}
