package podtopologyspread_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
)

// Events as the informer handlers raise them.
var (
	evNodeAdd        = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	evAssignedAdd    = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}
	evAssignedDelete = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}
)

func node(name string) *frameworktest.NodeWrapper {
	return frameworktest.MakeNode().Name(name).Capacity("4", "8Gi", 110)
}

func pod(name string) *frameworktest.PodWrapper { return frameworktest.MakePod().Name(name) }

func TestPodTopologySpreadHints(t *testing.T) {
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nil, nil))
	ts, err := podtopologyspread.NewSpread(&podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting}, h)
	if err != nil {
		t.Fatal(err)
	}
	pl := podtopologyspread.NewFilter(ts)
	p := pod("p").Label("app", "web").SpreadConstraint(
		frameworktest.MakeSpreadConstraint(1, "zone", v1.DoNotSchedule).MatchLabels("app", "web").Obj()).Obj()
	honour := pod("h").Label("app", "web").SpreadConstraint(
		frameworktest.MakeSpreadConstraint(1, "zone", v1.DoNotSchedule).MatchLabels("app", "web").NodeTaintsPolicy(v1.NodeInclusionPolicyHonor).Obj()).Obj()
	web := pod("web").Label("app", "web").Node("n1").Obj()
	webElsewhere := pod("web").Namespace("other").Label("app", "web").Node("n1").Obj()
	db := pod("db").Label("app", "db").Node("n1").Obj()
	webToDB := web.DeepCopy()
	webToDB.Labels = map[string]string{"app": "db"}
	webMore := web.DeepCopy()
	webMore.Labels["tier"] = "front"
	honourTol := honour.DeepCopy()
	honourTol.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}}
	zoneless := node("n1").Obj()
	zoned := node("n1").Label("zone", "a").Obj()
	frameworktest.CheckHints(t, pl, []frameworktest.HintCase{
		{Name: "matching pod bound", Pod: p, Event: evAssignedAdd, New: web, Want: framework.Queue},
		{Name: "non-matching pod bound", Pod: p, Event: evAssignedAdd, New: db, Want: framework.QueueSkip},
		{Name: "matching pod of another namespace bound", Pod: p, Event: evAssignedAdd, New: webElsewhere, Want: framework.QueueSkip},
		{Name: "matching pod deleted", Pod: p, Event: evAssignedDelete, Old: web, Want: framework.Queue},
		{Name: "non-matching pod deleted", Pod: p, Event: evAssignedDelete, Old: db, Want: framework.QueueSkip},
		{Name: "relabelled out of the selector", Pod: p, Event: frameworktest.AssignedPodUpdate(web, webToDB), Old: web, New: webToDB, Want: framework.Queue},
		{Name: "relabelled, selector unaffected", Pod: p, Event: frameworktest.AssignedPodUpdate(web, webMore), Old: web, New: webMore, Want: framework.QueueSkip},
		{Name: "own tolerations, taints honoured", Pod: honour, Event: frameworktest.UnscheduledPodUpdate(honour, honourTol), Old: honour, New: honourTol, Want: framework.Queue},
		{Name: "node gains the key", Pod: p, Event: frameworktest.NodeUpdate(zoneless, zoned), Old: zoneless, New: zoned, Want: framework.Queue},
		{Name: "node added without the key", Pod: p, Event: evNodeAdd, New: zoneless, Want: framework.QueueSkip},
		{Name: "node with the key deleted", Pod: p, Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Delete}, Old: zoned, Want: framework.Queue},
		{Name: "unrelated node label", Pod: p, Event: frameworktest.NodeUpdate(zoned, node("n1").Label("zone", "a").Label("x", "y").Obj()),
			Old: zoned, New: node("n1").Label("zone", "a").Label("x", "y").Obj(), Want: framework.QueueSkip},
		{Name: "taints of a counted node", Pod: p, Event: frameworktest.NodeUpdate(zoned, node("n1").Label("zone", "a").Taint("k", "", v1.TaintEffectNoSchedule).Obj()),
			Old: zoned, New: node("n1").Label("zone", "a").Taint("k", "", v1.TaintEffectNoSchedule).Obj(), Want: framework.Queue},
	})
}
