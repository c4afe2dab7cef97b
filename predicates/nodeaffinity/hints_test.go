package nodeaffinity_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
)

func TestNodeAffinityHints(t *testing.T) {
	node := func(name string) *frameworktest.NodeWrapper {
		return frameworktest.MakeNode().Name(name).Capacity("4", "8Gi", 110)
	}
	evNodeAdd := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	p := frameworktest.MakePod().Name("p").NodeSelector(map[string]string{"disk": "ssd"}).Obj()
	ssd := node("n1").Label("disk", "ssd").Obj()
	hdd := node("n1").Label("disk", "hdd").Obj()
	ssdMore := node("n1").Label("disk", "ssd").Label("x", "y").Obj()
	zonal := frameworktest.MakePod().Name("z").RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().In("zone", "a").Obj()).Obj()
	zoneA := node("n1").Label("zone", "a").Obj()
	zoneB := node("n1").Label("zone", "b").Obj()
	zoneBMore := node("n1").Label("zone", "b").Label("x", "y").Obj()
	hddTainted := node("n1").Label("disk", "hdd").Taint("k", "", v1.TaintEffectNoSchedule).Obj()
	added := nodeaffinity.NewFilter(&nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			frameworktest.MakeNodeSelectorTerm().In("pool", "batch").Obj()}}}})
	frameworktest.CheckHints(t, nodeaffinity.NewFilter(nil), []frameworktest.HintCase{
		{Name: "matching node added", Pod: p, Event: evNodeAdd, New: ssd, Want: framework.Queue},
		{Name: "other node added", Pod: p, Event: evNodeAdd, New: hdd, Want: framework.QueueSkip},
		{Name: "label now matches", Pod: p, Event: frameworktest.NodeUpdate(hdd, ssd), Old: hdd, New: ssd, Want: framework.Queue},
		{Name: "matched already", Pod: p, Event: frameworktest.NodeUpdate(ssd, ssdMore), Old: ssd, New: ssdMore, Want: framework.QueueSkip},
		{Name: "label no longer matches", Pod: p, Event: frameworktest.NodeUpdate(ssd, hdd), Old: ssd, New: hdd, Want: framework.QueueSkip},
		{Name: "required term now matches", Pod: zonal, Event: frameworktest.NodeUpdate(zoneB, zoneA), Old: zoneB, New: zoneA, Want: framework.Queue},
		{Name: "unrelated label change", Pod: zonal, Event: frameworktest.NodeUpdate(zoneB, zoneBMore), Old: zoneB, New: zoneBMore, Want: framework.QueueSkip},
		{Name: "taints only: not registered", Pod: p, Event: frameworktest.NodeUpdate(hdd, hddTainted), Old: hdd, New: hddTainted, Want: framework.QueueSkip},
	})
	batch := node("n1").Label("disk", "ssd").Label("pool", "batch").Obj()
	frameworktest.CheckHints(t, added, []frameworktest.HintCase{
		{Name: "added affinity not matched", Pod: p, Event: evNodeAdd, New: ssd, Want: framework.QueueSkip},
		{Name: "added affinity now matched", Pod: p, Event: frameworktest.NodeUpdate(ssd, batch), Old: ssd, New: batch, Want: framework.Queue},
	})
}
