package nodepool

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

func TestEventsToRegister(t *testing.T) {
	events, err := New(NewArgs()).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 {
		t.Fatalf("%d registrations, want one, for nodes", len(events))
	}
	ev := events[0]
	for _, got := range []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add},
		{Resource: framework.Node, ActionType: framework.UpdateNodeLabel},
	} {
		if !ev.Event.Match(got) {
			t.Errorf("NodePool does not receive %v", got)
		}
	}
	for _, got := range []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.UpdateNodeAllocatable},
		{Resource: framework.Node, ActionType: framework.Delete},
		{Resource: framework.AssignedPod, ActionType: framework.Delete},
	} {
		if ev.Event.Match(got) {
			t.Errorf("NodePool receives %v, which cannot undo its rejection", got)
		}
	}

	node := func(labels ...string) *v1.Node {
		n := frameworktest.MakeNode().Name("n")
		for i := 0; i+1 < len(labels); i += 2 {
			n = n.Label(labels[i], labels[i+1])
		}
		return n.Obj()
	}
	teamA := frameworktest.MakePod().Name("web").Label(pool, "team-a").Obj()
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		old, new *v1.Node
		want     framework.QueueingHint
	}{
		{"node of the pod's pool added", teamA, nil, node(pool, "team-a"), framework.Queue},
		{"node of another pool added", teamA, nil, node(pool, "team-b"), framework.QueueSkip},
		{"node in no pool added", teamA, nil, node(), framework.QueueSkip},
		{"node joins the pod's pool", teamA, node(pool, "team-b"), node(pool, "team-a"), framework.Queue},
		{"node leaves the pod's pool", teamA, node(pool, "team-a"), node(pool, "team-b"), framework.QueueSkip},
		{"another label of a node in the pool", teamA, node(pool, "team-a"), node(pool, "team-a", cost, "3"), framework.QueueSkip},
		{"default pool", frameworktest.MakePod().Name("plain").Obj(), node(), node(pool, "general"), framework.Queue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var oldObj any
			if tc.old != nil {
				oldObj = tc.old
			}
			got, err := ev.QueueingHintFn(nil, tc.pod, oldObj, tc.new)
			if err != nil || got != tc.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tc.want)
			}
			if inPool := ev.NodeCheck(tc.pod, tc.new); inPool != (tc.new.Labels[pool] == New(NewArgs()).poolOf(tc.pod)) {
				t.Errorf("NodeCheck = %v for a node of pool %q", inPool, tc.new.Labels[pool])
			}
		})
	}

	// An object of the wrong type queues the pod: a hint that cannot
	// decide must not strand it.
	if got, err := ev.QueueingHintFn(nil, teamA, nil, "not a node"); err == nil || got != framework.Queue {
		t.Errorf("hint on a string = %v, %v; want Queue and an error", got, err)
	}
}
