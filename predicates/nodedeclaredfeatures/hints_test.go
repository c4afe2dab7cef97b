package nodedeclaredfeatures_test

import (
	"context"
	"testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodedeclaredfeatures"
)

// A node added, or one whose declared features changed, may now declare
// what a rejected pod needs; nothing else can.
func TestNodeDeclaredFeaturesHints(t *testing.T) {
	pl := nodedeclaredfeatures.NewFilter()
	p := restartAll(frameworktest.MakePod().Name("p").Obj(), false)
	bare := frameworktest.MakeNode().Name("n1").Obj()
	featured := bare.DeepCopy()
	featured.Status.DeclaredFeatures = []string{featureRestartAll}
	relabelled := frameworktest.MakeNode().Name("n1").Label("a", "b").Obj()
	frameworktest.CheckHints(t, pl, []frameworktest.HintCase{
		{Name: "node added", Pod: p, Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, New: featured, Want: framework.Queue},
		{Name: "features declared", Pod: p, Event: frameworktest.NodeUpdate(bare, featured), Old: bare, New: featured, Want: framework.Queue},
		{Name: "labels only: not registered", Pod: p, Event: frameworktest.NodeUpdate(bare, relabelled), Old: bare, New: relabelled, Want: framework.QueueSkip},
		{Name: "assigned pod deleted: not registered", Pod: p, Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete},
			Old: frameworktest.MakePod().Name("x").Node("n1").Obj(), Want: framework.QueueSkip},
	})

	// The plugin is node-local: a node event can only help on that node,
	// and the node alone does not rule the pod out.
	regs, err := pl.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if r.Event.Resource == framework.Node && (r.NodeCheck == nil || !r.NodeCheck(p, bare)) {
			t.Errorf("node registration %v: NodeCheck missing or ruling a node out", r.Event)
		}
	}
}
