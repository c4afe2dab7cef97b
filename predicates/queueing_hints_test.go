package predicates_test

import (
	"context"
	"testing"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates"
)

// hintCase is one event seen by one plugin's registrations: what the queue
// would decide for a pod that plugin rejected. registered false means the
// plugin does not register the event at all.
type hintCase struct {
	name     string
	pod      *v1.Pod
	event    framework.ClusterEvent
	old, new any
	want     framework.QueueingHint
}

// Events as the informer handlers raise them.
var (
	evNodeAdd        = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	evAssignedAdd    = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}
	evAssignedDelete = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}
)

func nodeUpdate(o, n *v1.Node) framework.ClusterEvent {
	return framework.ClusterEvent{Resource: framework.Node, ActionType: framework.NodeUpdateActions(o, n)}
}

func assignedPodUpdate(o, n *v1.Pod) framework.ClusterEvent {
	return framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.PodUpdateActions(o, n)}
}

func ownPodUpdate(o, n *v1.Pod) framework.ClusterEvent {
	return framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.PodUpdateActions(o, n)}
}

// checkHints runs each case through the plugin's registrations the way the
// queue does: the registrations matching the event, each hint in turn
// (none: Queue), Queue when any says so; QueueSkip when none matches.
func checkHints(t *testing.T, pl framework.EnqueueExtensions, cases []hintCase) {
	t.Helper()
	regs, err := pl.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := framework.QueueSkip
			for _, r := range regs {
				if !r.Event.Match(tc.event) {
					continue
				}
				if r.QueueingHintFn == nil {
					got = framework.Queue
					break
				}
				h, err := r.QueueingHintFn(zap.NewNop(), tc.pod, tc.old, tc.new)
				if err != nil {
					t.Fatalf("hint: %v", err)
				}
				if r.PodInfoHintFn != nil {
					// The queue's path must decide alike, the first
					// time and from what it kept.
					pi := framework.NewPodInfo(tc.pod)
					for range 2 {
						hi, err := r.PodInfoHintFn(zap.NewNop(), pi, tc.old, tc.new)
						if err != nil || hi != h {
							t.Fatalf("PodInfoHintFn = %v, %v; QueueingHintFn = %v", hi, err, h)
						}
					}
				}
				if h == framework.Queue {
					got = framework.Queue
					break
				}
			}
			if got != tc.want {
				t.Errorf("%s hint = %v, want %v", pl.Name(), got, tc.want)
			}
		})
	}
}

func node(name string) *frameworktest.NodeWrapper {
	return frameworktest.MakeNode().Name(name).Capacity("4", "8Gi", 110)
}

func pod(name string) *frameworktest.PodWrapper { return frameworktest.MakePod().Name(name) }

func TestFitHints(t *testing.T) {
	big := pod("big").Req("3", "1Gi").Obj()
	gpu := pod("gpu").Res(map[v1.ResourceName]string{"example.com/gpu": "1"}).Obj()
	small := node("n1").Capacity("2", "8Gi", 110).Obj()
	large := node("n1").Obj()
	pinned := pod("pinned").Req("3", "1Gi").Node("n2").Obj()
	onN1 := pod("other").Req("1", "1Gi").Node("n1").Obj()
	cpuOnly := pod("cpu-only").Req("1", "").Node("n1").Obj()
	unassigned := pod("pending").Req("1", "1Gi").Obj()
	nominated := pod("nominated").Req("1", "1Gi").Obj()
	nominated.Status.NominatedNodeName = "n1"
	shrunk := onN1.DeepCopy()
	shrunk.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m")
	grownPods := node("n1").Capacity("2", "8Gi", 200).Obj()
	// A node that publishes no pods allocatable holds no pod (the filter
	// counts 0 allowed), as kube-scheduler's hint checks it.
	noPods := node("n1").Obj()
	delete(noPods.Status.Allocatable, v1.ResourcePods)
	smallNoPods := small.DeepCopy()
	delete(smallNoPods.Status.Allocatable, v1.ResourcePods)
	checkHints(t, predicates.NewFit(nil), []hintCase{
		{name: "node added that holds the pod", pod: big, event: evNodeAdd, new: large, want: framework.Queue},
		{name: "node added too small", pod: big, event: evNodeAdd, new: small, want: framework.QueueSkip},
		{name: "node added without a pods allocatable", pod: big, event: evNodeAdd, new: noPods, want: framework.QueueSkip},
		{name: "allocatable grew enough, no pods allocatable", pod: big, event: nodeUpdate(smallNoPods, noPods), old: smallNoPods, new: noPods, want: framework.QueueSkip},
		{name: "allocatable grew enough", pod: big, event: nodeUpdate(small, large), old: small, new: large, want: framework.Queue},
		{name: "allocatable grew, not enough", pod: pod("huge").Req("6", "1Gi").Obj(), event: nodeUpdate(small, large), old: small, new: large, want: framework.QueueSkip},
		{name: "allocatable grew in pods only, pod fits the node", pod: pod("p").Req("1", "1Gi").Obj(), event: nodeUpdate(small, grownPods), old: small, new: grownPods, want: framework.Queue},
		{name: "labels only: not registered", pod: big, event: nodeUpdate(large, node("n1").Label("a", "b").Obj()), old: large, new: node("n1").Label("a", "b").Obj(), want: framework.QueueSkip},
		{name: "assigned pod deleted", pod: big, event: evAssignedDelete, old: onN1, want: framework.Queue},
		{name: "nominated pod deleted", pod: big, event: evAssignedDelete, old: nominated, want: framework.Queue},
		{name: "pending pod deleted", pod: big, event: evAssignedDelete, old: unassigned, want: framework.QueueSkip},
		{name: "pod of a node the pod is not pinned to", pod: pinned, event: evAssignedDelete, old: onN1, want: framework.QueueSkip},
		{name: "deleted pod frees only a pod slot: a node full by count", pod: gpu, event: evAssignedDelete, old: onN1, want: framework.Queue},
		{name: "deleted pod frees some of what the pod requests", pod: pod("mem").Req("", "1Gi").Obj(), event: evAssignedDelete, old: onN1, want: framework.Queue},
		{name: "deleted pod frees cpu and a pod slot, the pod wants memory", pod: pod("mem").Req("", "1Gi").Obj(), event: evAssignedDelete, old: cpuOnly, want: framework.Queue},
		{name: "pod of another node shrank in cpu, the pod wants memory", pod: pod("mem").Req("", "1Gi").Obj(), event: assignedPodUpdate(onN1, shrunk), old: onN1, new: shrunk, want: framework.QueueSkip},
		{name: "assigned pod scaled down", pod: big, event: assignedPodUpdate(onN1, shrunk), old: onN1, new: shrunk, want: framework.Queue},
		{name: "assigned pod added: not registered", pod: big, event: evAssignedAdd, new: onN1, want: framework.QueueSkip},
	})

	// With the node lister, a deletion on a node whose whole allocatable
	// is smaller than the pod's requests wakes nothing.
	nodes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	if err := nodes.Add(small); err != nil { // n1: 2 cpu
		t.Fatal(err)
	}
	withNodes := predicates.NewFit(nil).UseNodeLister(corelisters.NewNodeLister(nodes))
	onN2 := pod("other").Req("1", "1Gi").Node("n2").Obj()
	shrunkOnN1 := pod("other").Req("1", "1Gi").Node("n1").Obj()
	shrunkOnN1.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m")
	checkHints(t, withNodes, []hintCase{
		{name: "deleted from a node too small for the pod's cpu", pod: big, event: evAssignedDelete, old: onN1, want: framework.QueueSkip},
		{name: "nominated on a node too small", pod: big, event: evAssignedDelete, old: nominated, want: framework.QueueSkip},
		{name: "scaled down on a node too small", pod: big, event: assignedPodUpdate(onN1, shrunk), old: onN1, new: shrunk, want: framework.QueueSkip},
		{name: "deleted from a node that could hold the pod", pod: pod("fits").Req("1", "1Gi").Obj(), event: evAssignedDelete, old: onN1, want: framework.Queue},
		{name: "the same event for a pod the node could hold", pod: pod("fits").Req("1", "1Gi").Obj(), event: assignedPodUpdate(onN1, shrunkOnN1), old: onN1, new: shrunkOnN1, want: framework.Queue},
		{name: "deleted from a node the lister does not know", pod: big, event: evAssignedDelete, old: onN2, want: framework.Queue},
	})

	// With the cache's view, a deletion that leaves too little room for
	// the pod on that node wakes nothing: n1 (4 cpu, 2 pods at most)
	// still runs a pod of 3 cpu after the deletion, n3 (16 cpu) one gpu
	// pod on its only gpu.
	n1 := node("n1").Capacity("4", "8Gi", 2).Obj()
	n3 := node("n3").Capacity("16", "64Gi", 110).Obj()
	n3.Status.Allocatable["example.com/gpu"] = resource.MustParse("1")
	stays := pod("stays").Req("3", "1Gi").Node("n1").Obj()
	gpuUser := pod("gpu-user").Res(map[v1.ResourceName]string{"example.com/gpu": "1"}).Node("n3").Obj()
	h := frameworktest.NewHandle(frameworktest.NewSnapshot([]*v1.Node{n1, n3}, []*v1.Pod{stays, gpuUser}))
	// n3 also has a preemptor of priority 10 nominated, for 8 cpu.
	preemptor := pod("preemptor").Req("8", "").Priority(10).Obj()
	h.Nominated = map[string][]*framework.PodInfo{"n3": {framework.NewPodInfo(preemptor)}}
	withRoom := predicates.NewFit(nil).UseNodeInfoReader(h.ReadNodeInfo, h.NominatedPodsForNode)
	onN3 := pod("other").Req("1", "1Gi").Node("n3").Obj()
	checkHints(t, withRoom, []hintCase{
		{name: "room left too small for the pod's cpu", pod: pod("two").Req("2", "").Obj(), event: evAssignedDelete, old: onN1, want: framework.QueueSkip},
		{name: "room left enough", pod: pod("one").Req("1", "").Obj(), event: evAssignedDelete, old: onN1, want: framework.Queue},
		{name: "nominated pod's room, too small", pod: pod("two").Req("2", "").Obj(), event: evAssignedDelete, old: nominated, want: framework.QueueSkip},
		{name: "every gpu still taken", pod: gpu, event: evAssignedDelete, old: onN3, want: framework.QueueSkip},
		{name: "cpu freed where the gpu pod fits", pod: pod("cpu").Req("8", "").Obj(), event: evAssignedDelete, old: onN3, want: framework.Queue},
		{name: "room left only without the nominated pod, of higher priority", pod: pod("cpu").Req("9", "").Obj(), event: evAssignedDelete, old: onN3, want: framework.QueueSkip},
		{name: "the same, of equal priority", pod: pod("cpu").Req("9", "").Priority(10).Obj(), event: evAssignedDelete, old: onN3, want: framework.QueueSkip},
		{name: "the same, of higher priority than the nominated pod", pod: pod("cpu").Req("9", "").Priority(11).Obj(), event: evAssignedDelete, old: onN3, want: framework.Queue},
		{name: "the nominated pod itself", pod: preemptor, event: evAssignedDelete, old: onN3, want: framework.Queue},
		{name: "node unknown to the cache", pod: pod("two").Req("2", "").Obj(), event: evAssignedDelete, old: onN2, want: framework.Queue},
	})
	full := node("n4").Capacity("8", "8Gi", 1).Obj()
	h = frameworktest.NewHandle(frameworktest.NewSnapshot([]*v1.Node{full}, []*v1.Pod{pod("last").Node("n4").Obj()}))
	checkHints(t, predicates.NewFit(nil).UseNodeInfoReader(h.ReadNodeInfo, h.NominatedPodsForNode), []hintCase{
		{name: "node still full by count", pod: pod("tiny").Req("10m", "").Obj(), event: evAssignedDelete, old: pod("gone").Node("n4").Obj(), want: framework.QueueSkip},
	})
}

func TestTaintTolerationHints(t *testing.T) {
	p := pod("p").Toleration("ok", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj()
	tainted := node("n1").Taint("bad", "", v1.TaintEffectNoSchedule).Obj()
	tolerated := node("n1").Taint("ok", "", v1.TaintEffectNoSchedule).Obj()
	preferNo := node("n1").Taint("bad", "", v1.TaintEffectPreferNoSchedule).Obj()
	clean := node("n1").Obj()
	withTol := p.DeepCopy()
	withTol.Spec.Tolerations = append(withTol.Spec.Tolerations, v1.Toleration{Key: "bad", Operator: v1.TolerationOpExists})
	other := pod("other").Obj()
	otherTol := other.DeepCopy()
	otherTol.Spec.Tolerations = withTol.Spec.Tolerations
	checkHints(t, predicates.NewTaintToleration(), []hintCase{
		{name: "node added untainted", pod: p, event: evNodeAdd, new: clean, want: framework.Queue},
		{name: "node added with a tolerated taint", pod: p, event: evNodeAdd, new: tolerated, want: framework.Queue},
		{name: "node added with an untolerated taint", pod: p, event: evNodeAdd, new: tainted, want: framework.QueueSkip},
		{name: "untolerated taint removed", pod: p, event: nodeUpdate(tainted, clean), old: tainted, new: clean, want: framework.Queue},
		{name: "untolerated taint made PreferNoSchedule", pod: p, event: nodeUpdate(tainted, preferNo), old: tainted, new: preferNo, want: framework.Queue},
		{name: "taint added", pod: p, event: nodeUpdate(clean, tainted), old: clean, new: tainted, want: framework.QueueSkip},
		{name: "was tolerated already", pod: p, event: nodeUpdate(tolerated, clean), old: tolerated, new: clean, want: framework.QueueSkip},
		{name: "labels only: not registered", pod: p, event: nodeUpdate(tainted, node("n1").Taint("bad", "", v1.TaintEffectNoSchedule).Label("a", "b").Obj()),
			old: tainted, new: node("n1").Taint("bad", "", v1.TaintEffectNoSchedule).Label("a", "b").Obj(), want: framework.QueueSkip},
		{name: "own tolerations changed", pod: p, event: ownPodUpdate(p, withTol), old: p, new: withTol, want: framework.Queue},
		{name: "another pod's tolerations changed", pod: p, event: ownPodUpdate(other, otherTol), old: other, new: otherTol, want: framework.QueueSkip},
	})
}

func TestNodeAffinityHints(t *testing.T) {
	p := pod("p").NodeSelector(map[string]string{"disk": "ssd"}).Obj()
	ssd := node("n1").Label("disk", "ssd").Obj()
	hdd := node("n1").Label("disk", "hdd").Obj()
	ssdMore := node("n1").Label("disk", "ssd").Label("x", "y").Obj()
	zonal := pod("z").RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().In("zone", "a").Obj()).Obj()
	zoneA := node("n1").Label("zone", "a").Obj()
	zoneB := node("n1").Label("zone", "b").Obj()
	added := predicates.NewNodeAffinity(&framework.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			frameworktest.MakeNodeSelectorTerm().In("pool", "batch").Obj()}}}})
	checkHints(t, predicates.NewNodeAffinity(nil), []hintCase{
		{name: "matching node added", pod: p, event: evNodeAdd, new: ssd, want: framework.Queue},
		{name: "other node added", pod: p, event: evNodeAdd, new: hdd, want: framework.QueueSkip},
		{name: "label now matches", pod: p, event: nodeUpdate(hdd, ssd), old: hdd, new: ssd, want: framework.Queue},
		{name: "matched already", pod: p, event: nodeUpdate(ssd, ssdMore), old: ssd, new: ssdMore, want: framework.QueueSkip},
		{name: "label no longer matches", pod: p, event: nodeUpdate(ssd, hdd), old: ssd, new: hdd, want: framework.QueueSkip},
		{name: "required term now matches", pod: zonal, event: nodeUpdate(zoneB, zoneA), old: zoneB, new: zoneA, want: framework.Queue},
		{name: "unrelated label change", pod: zonal, event: nodeUpdate(zoneB, node("n1").Label("zone", "b").Label("x", "y").Obj()),
			old: zoneB, new: node("n1").Label("zone", "b").Label("x", "y").Obj(), want: framework.QueueSkip},
		{name: "taints only: not registered", pod: p, event: nodeUpdate(hdd, node("n1").Label("disk", "hdd").Taint("k", "", v1.TaintEffectNoSchedule).Obj()),
			old: hdd, new: node("n1").Label("disk", "hdd").Taint("k", "", v1.TaintEffectNoSchedule).Obj(), want: framework.QueueSkip},
	})
	checkHints(t, added, []hintCase{
		{name: "added affinity not matched", pod: p, event: evNodeAdd, new: ssd, want: framework.QueueSkip},
		{name: "added affinity now matched", pod: p, event: nodeUpdate(ssd, node("n1").Label("disk", "ssd").Label("pool", "batch").Obj()),
			old: ssd, new: node("n1").Label("disk", "ssd").Label("pool", "batch").Obj(), want: framework.Queue},
	})
}

func TestNodeUnschedulableHints(t *testing.T) {
	p := pod("p").Obj()
	cordoned := node("n1").Unschedulable().Obj()
	open := node("n1").Obj()
	tol := p.DeepCopy()
	tol.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	checkHints(t, predicates.NewNodeUnschedulable(), []hintCase{
		{name: "schedulable node added", pod: p, event: evNodeAdd, new: open, want: framework.Queue},
		{name: "cordoned node added", pod: p, event: evNodeAdd, new: cordoned, want: framework.QueueSkip},
		{name: "uncordoned", pod: p, event: nodeUpdate(cordoned, open), old: cordoned, new: open, want: framework.Queue},
		{name: "taint change on a cordoned node", pod: p, event: nodeUpdate(cordoned, node("n1").Unschedulable().Taint("k", "", v1.TaintEffectNoSchedule).Obj()),
			old: cordoned, new: node("n1").Unschedulable().Taint("k", "", v1.TaintEffectNoSchedule).Obj(), want: framework.QueueSkip},
		{name: "now tolerates unschedulable", pod: p, event: ownPodUpdate(p, tol), old: p, new: tol, want: framework.Queue},
	})
}

func TestNodeNameHints(t *testing.T) {
	p := pod("p").Node("n2").Obj()
	checkHints(t, predicates.NewNodeName(), []hintCase{
		{name: "the named node added", pod: p, event: evNodeAdd, new: node("n2").Obj(), want: framework.Queue},
		{name: "another node added", pod: p, event: evNodeAdd, new: node("n1").Obj(), want: framework.QueueSkip},
		{name: "node relabelled: not registered", pod: p, event: nodeUpdate(node("n2").Obj(), node("n2").Label("a", "b").Obj()),
			old: node("n2").Obj(), new: node("n2").Label("a", "b").Obj(), want: framework.QueueSkip},
	})
}

func TestNodePortsHints(t *testing.T) {
	p := pod("p").HostPort(8080, v1.ProtocolTCP, "").Obj()
	holder := pod("holder").HostPort(8080, v1.ProtocolTCP, "").Node("n1").Obj()
	otherPort := pod("other").HostPort(9090, v1.ProtocolTCP, "").Node("n1").Obj()
	pending := pod("pending").HostPort(8080, v1.ProtocolTCP, "").Obj()
	checkHints(t, predicates.NewNodePorts(), []hintCase{
		{name: "pod holding the port deleted", pod: p, event: evAssignedDelete, old: holder, want: framework.Queue},
		{name: "pod holding another port deleted", pod: p, event: evAssignedDelete, old: otherPort, want: framework.QueueSkip},
		{name: "pod without ports deleted", pod: p, event: evAssignedDelete, old: pod("x").Node("n1").Obj(), want: framework.QueueSkip},
		{name: "pending pod deleted", pod: p, event: evAssignedDelete, old: pending, want: framework.QueueSkip},
		{name: "node added", pod: p, event: evNodeAdd, new: node("n9").Obj(), want: framework.Queue},
	})
}

func TestInterPodAffinityHints(t *testing.T) {
	snap := frameworktest.NewSnapshot(nil, nil)
	pl, err := predicates.NewInterPodAffinity(frameworktest.NewHandle(snap))
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
	checkHints(t, pl, []hintCase{
		{name: "matching pod bound", pod: wantsDB, event: evAssignedAdd, new: db, want: framework.Queue},
		{name: "other pod bound", pod: wantsDB, event: evAssignedAdd, new: cache, want: framework.QueueSkip},
		{name: "pending pod added", pod: wantsDB, event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}, new: pendingDB, want: framework.QueueSkip},
		{name: "relabelled into the affinity", pod: wantsDB, event: assignedPodUpdate(cache, cacheToDB), old: cache, new: cacheToDB, want: framework.Queue},
		{name: "relabelled, still not matching", pod: wantsDB, event: assignedPodUpdate(web, webRelabelled), old: web, new: webRelabelled, want: framework.QueueSkip},
		{name: "anti-affinity pod relabelled away", pod: avoidsWeb, event: assignedPodUpdate(web, webRelabelled), old: web, new: webRelabelled, want: framework.Queue},
		{name: "anti-affinity pod deleted", pod: avoidsWeb, event: evAssignedDelete, old: web, want: framework.Queue},
		{name: "unrelated pod deleted", pod: avoidsWeb, event: evAssignedDelete, old: cache, want: framework.QueueSkip},
		{name: "pod whose anti-affinity excluded it deleted", pod: wantsDB, event: evAssignedDelete, old: hater, want: framework.Queue},
		{name: "two anti-affinity terms: pod matching one deleted", pod: avoidsWebAndDB, event: evAssignedDelete, old: web, want: framework.Queue},
		{name: "two anti-affinity terms: pod matching one relabelled to match none", pod: avoidsWebAndDB,
			event: assignedPodUpdate(web, webRelabelled), old: web, new: webRelabelled, want: framework.Queue},
		{name: "two anti-affinity terms: relabelled from one term into the other", pod: avoidsWebAndDB,
			event: assignedPodUpdate(web, webToDB), old: web, new: webToDB, want: framework.QueueSkip},
		{name: "two anti-affinity terms: unrelated pod deleted", pod: avoidsWebAndDB, event: evAssignedDelete, old: cache, want: framework.QueueSkip},
		{name: "deleted pod's two anti-affinity terms, one matching the pod", pod: wantsDB, event: evAssignedDelete, old: hater2, want: framework.Queue},
		{name: "status-only update: not registered", pod: wantsDB, event: assignedPodUpdate(db, db.DeepCopy()), old: db, new: db.DeepCopy(), want: framework.QueueSkip},
		{name: "node gains the topology key", pod: wantsDB, event: nodeUpdate(zoneless, zoned), old: zoneless, new: zoned, want: framework.Queue},
		{name: "node added with the key", pod: wantsDB, event: evNodeAdd, new: zoned, want: framework.Queue},
		{name: "node added without the key", pod: wantsDB, event: evNodeAdd, new: zoneless, want: framework.QueueSkip},
		{name: "anti-affinity: node changes domain", pod: avoidsWeb, event: nodeUpdate(zoned, zonedB), old: zoned, new: zonedB, want: framework.Queue},
		{name: "unrelated node label", pod: wantsDB, event: nodeUpdate(zoned, node("n1").Label("zone", "a").Label("x", "y").Obj()),
			old: zoned, new: node("n1").Label("zone", "a").Label("x", "y").Obj(), want: framework.QueueSkip},
	})
}

func TestPodTopologySpreadHints(t *testing.T) {
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nil, nil))
	ts, err := framework.NewTopologySpread(&framework.PodTopologySpreadArgs{DefaultingType: framework.ListDefaulting}, h)
	if err != nil {
		t.Fatal(err)
	}
	pl := predicates.NewPodTopologySpread(ts)
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
	checkHints(t, pl, []hintCase{
		{name: "matching pod bound", pod: p, event: evAssignedAdd, new: web, want: framework.Queue},
		{name: "non-matching pod bound", pod: p, event: evAssignedAdd, new: db, want: framework.QueueSkip},
		{name: "matching pod of another namespace bound", pod: p, event: evAssignedAdd, new: webElsewhere, want: framework.QueueSkip},
		{name: "matching pod deleted", pod: p, event: evAssignedDelete, old: web, want: framework.Queue},
		{name: "non-matching pod deleted", pod: p, event: evAssignedDelete, old: db, want: framework.QueueSkip},
		{name: "relabelled out of the selector", pod: p, event: assignedPodUpdate(web, webToDB), old: web, new: webToDB, want: framework.Queue},
		{name: "relabelled, selector unaffected", pod: p, event: assignedPodUpdate(web, webMore), old: web, new: webMore, want: framework.QueueSkip},
		{name: "own tolerations, taints honoured", pod: honour, event: ownPodUpdate(honour, honourTol), old: honour, new: honourTol, want: framework.Queue},
		{name: "node gains the key", pod: p, event: nodeUpdate(zoneless, zoned), old: zoneless, new: zoned, want: framework.Queue},
		{name: "node added without the key", pod: p, event: evNodeAdd, new: zoneless, want: framework.QueueSkip},
		{name: "node with the key deleted", pod: p, event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Delete}, old: zoned, want: framework.Queue},
		{name: "unrelated node label", pod: p, event: nodeUpdate(zoned, node("n1").Label("zone", "a").Label("x", "y").Obj()),
			old: zoned, new: node("n1").Label("zone", "a").Label("x", "y").Obj(), want: framework.QueueSkip},
		{name: "taints of a counted node", pod: p, event: nodeUpdate(zoned, node("n1").Label("zone", "a").Taint("k", "", v1.TaintEffectNoSchedule).Obj()),
			old: zoned, new: node("n1").Label("zone", "a").Taint("k", "", v1.TaintEffectNoSchedule).Obj(), want: framework.Queue},
	})
}
