package interpodaffinity_test

import (
	"testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
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

func TestInterPodAffinityHints(t *testing.T) {
	snap := frameworktest.NewSnapshot(nil, nil)
	pl, err := interpodaffinity.NewFilter(frameworktest.NewHandle(snap))
	if err != nil {
		t.Fatal(err)
	}
	wantsDB := pod("p").Label("app", "front").RequiredPodAffinity(frameworktest.MakePodAffinityTerm("zone").MatchLabel("app", "db").Obj()).Obj()
	avoidsWeb := pod("q").RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm("zone").MatchLabel("app", "web").Obj()).Obj()
	db := pod("db").Label("app", "db").Node("n1").Obj()
	web := pod("web").Label("app", "web").Node("n1").Obj()
	cache := pod("cache").Label("app", "cache").Node("n1").Obj()
	pendingDB := pod("db2").Label("app", "db").Obj()
	webRelabelled := web.DeepCopy()
	webRelabelled.Labels = map[string]string{"app": "cache"}
	cacheToDB := cache.DeepCopy()
	cacheToDB.Labels = map[string]string{"app": "db"}
	hater := pod("hater").Label("app", "x").Node("n1").
		RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm("zone").Exists("app").Obj()).Obj()
	// Two anti-affinity terms: a pod matching either one is in the way.
	// kube-scheduler v1.37 wakes the pod when one such pod leaves; v1.36
	// asked a pod to match both, and none ever does here.
	avoidsWebAndDB := pod("r").
		RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm("zone").MatchLabel("app", "web").Obj()).
		RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm("zone").MatchLabel("app", "db").Obj()).Obj()
	webToDB := web.DeepCopy()
	webToDB.Labels = map[string]string{"app": "db"}
	// hater2 excludes pods labelled app=front or tier=x by two terms;
	// wantsDB (app=front) matches one.
	hater2 := pod("hater2").Label("app", "y").Node("n1").
		RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm("zone").MatchLabel("app", "front").Obj()).
		RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm("zone").MatchLabel("tier", "x").Obj()).Obj()
	zoneless := node("n1").Obj()
	zoned := node("n1").Label("zone", "a").Obj()
	zonedB := node("n1").Label("zone", "b").Obj()
	frameworktest.CheckHints(t, pl, []frameworktest.HintCase{
		{Name: "matching pod bound", Pod: wantsDB, Event: evAssignedAdd, New: db, Want: framework.Queue},
		{Name: "other pod bound", Pod: wantsDB, Event: evAssignedAdd, New: cache, Want: framework.QueueSkip},
		{Name: "pending pod added", Pod: wantsDB, Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}, New: pendingDB, Want: framework.QueueSkip},
		{Name: "relabelled into the affinity", Pod: wantsDB, Event: frameworktest.AssignedPodUpdate(cache, cacheToDB), Old: cache, New: cacheToDB, Want: framework.Queue},
		{Name: "relabelled, still not matching", Pod: wantsDB, Event: frameworktest.AssignedPodUpdate(web, webRelabelled), Old: web, New: webRelabelled, Want: framework.QueueSkip},
		{Name: "anti-affinity pod relabelled away", Pod: avoidsWeb, Event: frameworktest.AssignedPodUpdate(web, webRelabelled), Old: web, New: webRelabelled, Want: framework.Queue},
		{Name: "anti-affinity pod deleted", Pod: avoidsWeb, Event: evAssignedDelete, Old: web, Want: framework.Queue},
		{Name: "unrelated pod deleted", Pod: avoidsWeb, Event: evAssignedDelete, Old: cache, Want: framework.QueueSkip},
		{Name: "pod whose anti-affinity excluded it deleted", Pod: wantsDB, Event: evAssignedDelete, Old: hater, Want: framework.Queue},
		{Name: "two anti-affinity terms: pod matching one deleted", Pod: avoidsWebAndDB, Event: evAssignedDelete, Old: web, Want: framework.Queue},
		{Name: "two anti-affinity terms: pod matching one relabelled to match none", Pod: avoidsWebAndDB,
			Event: frameworktest.AssignedPodUpdate(web, webRelabelled), Old: web, New: webRelabelled, Want: framework.Queue},
		{Name: "two anti-affinity terms: relabelled from one term into the other", Pod: avoidsWebAndDB,
			Event: frameworktest.AssignedPodUpdate(web, webToDB), Old: web, New: webToDB, Want: framework.QueueSkip},
		{Name: "two anti-affinity terms: unrelated pod deleted", Pod: avoidsWebAndDB, Event: evAssignedDelete, Old: cache, Want: framework.QueueSkip},
		{Name: "deleted pod's two anti-affinity terms, one matching the pod", Pod: wantsDB, Event: evAssignedDelete, Old: hater2, Want: framework.Queue},
		{Name: "status-only update: not registered", Pod: wantsDB, Event: frameworktest.AssignedPodUpdate(db, db.DeepCopy()), Old: db, New: db.DeepCopy(), Want: framework.QueueSkip},
		{Name: "node gains the topology key", Pod: wantsDB, Event: frameworktest.NodeUpdate(zoneless, zoned), Old: zoneless, New: zoned, Want: framework.Queue},
		{Name: "node added with the key", Pod: wantsDB, Event: evNodeAdd, New: zoned, Want: framework.Queue},
		{Name: "node added without the key", Pod: wantsDB, Event: evNodeAdd, New: zoneless, Want: framework.QueueSkip},
		{Name: "anti-affinity: node changes domain", Pod: avoidsWeb, Event: frameworktest.NodeUpdate(zoned, zonedB), Old: zoned, New: zonedB, Want: framework.Queue},
		{Name: "unrelated node label", Pod: wantsDB, Event: frameworktest.NodeUpdate(zoned, node("n1").Label("zone", "a").Label("x", "y").Obj()),
			Old: zoned, New: node("n1").Label("zone", "a").Label("x", "y").Obj(), Want: framework.QueueSkip},
	})
}
