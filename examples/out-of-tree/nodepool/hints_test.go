package nodepool

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// node returns node n with labels given as key, value, ...
func node(labels ...string) *frameworktest.NodeWrapper {
	n := frameworktest.MakeNode().Name("n").Capacity("4", "8Gi", 110)
	for i := 0; i+1 < len(labels); i += 2 {
		n.Label(labels[i], labels[i+1])
	}
	return n
}

// Which events wake a pod NodePool rejected, run as the queue runs them.
func TestHints(t *testing.T) {
	teamA := frameworktest.MakePod().Name("web").Label(pool, "team-a").Obj()
	plain := frameworktest.MakePod().Name("plain").Obj()
	inA, inB := node(pool, "team-a").Obj(), node(pool, "team-b").Obj()
	nodeAdd := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	frameworktest.CheckHints(t, New(NewArgs()), []frameworktest.HintCase{
		{Name: "node of the pod's pool added", Pod: teamA, Event: nodeAdd, New: inA, Want: framework.Queue},
		{Name: "node of another pool added", Pod: teamA, Event: nodeAdd, New: inB, Want: framework.QueueSkip},
		{Name: "node in no pool added", Pod: teamA, Event: nodeAdd, New: node().Obj(), Want: framework.QueueSkip},
		{Name: "node joins the pod's pool", Pod: teamA, Event: frameworktest.NodeUpdate(inB, inA), Old: inB, New: inA, Want: framework.Queue},
		{Name: "node leaves the pod's pool", Pod: teamA, Event: frameworktest.NodeUpdate(inA, inB), Old: inA, New: inB, Want: framework.QueueSkip},
		{Name: "another label of a node in the pool", Pod: teamA,
			Event: frameworktest.NodeUpdate(inA, node(pool, "team-a", cost, "3").Obj()), Old: inA, New: node(pool, "team-a", cost, "3").Obj(),
			Want: framework.QueueSkip},
		{Name: "more room on a node of another pool", Pod: teamA,
			Event: frameworktest.NodeUpdate(inB, node(pool, "team-b").Capacity("8", "16Gi", 110).Obj()), Old: inB,
			New: node(pool, "team-b").Capacity("8", "16Gi", 110).Obj(), Want: framework.QueueSkip},
		{Name: "node deleted", Pod: teamA, Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Delete}, Old: inA, Want: framework.QueueSkip},
		{Name: "default pool: a general node added", Pod: plain, Event: nodeAdd, New: node(pool, "general").Obj(), Want: framework.Queue},
	})
}

// NodePool's NodeCheck passes a node of the pod's pool only, and its hint
// queues the pod, with an error, on an object it cannot read: a hint that
// cannot decide must not strand a pod.
func TestNodeCheckAndBadObjects(t *testing.T) {
	events, err := New(NewArgs()).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].NodeCheck == nil {
		t.Fatalf("registrations %+v, want one, for nodes, with a NodeCheck", events)
	}
	ev := events[0]
	teamA := frameworktest.MakePod().Name("web").Label(pool, "team-a").Obj()
	for _, tc := range []struct {
		node *v1.Node
		want bool
	}{{node(pool, "team-a").Obj(), true}, {node(pool, "team-b").Obj(), false}, {node().Obj(), false}} {
		if got := ev.NodeCheck(teamA, tc.node); got != tc.want {
			t.Errorf("NodeCheck on a node of pool %q = %v, want %v", tc.node.Labels[pool], got, tc.want)
		}
	}
	if got, err := ev.QueueingHintFn(nil, teamA, nil, "not a node"); err == nil || got != framework.Queue {
		t.Errorf("hint on a string = %v, %v; want Queue and an error", got, err)
	}
}
