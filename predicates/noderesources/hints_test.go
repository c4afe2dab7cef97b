package noderesources_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/noderesources"
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
	frameworktest.CheckHints(t, noderesources.NewFitFilter(nil), []frameworktest.HintCase{
		{Name: "node added that holds the pod", Pod: big, Event: evNodeAdd, New: large, Want: framework.Queue},
		{Name: "node added too small", Pod: big, Event: evNodeAdd, New: small, Want: framework.QueueSkip},
		{Name: "node added without a pods allocatable", Pod: big, Event: evNodeAdd, New: noPods, Want: framework.QueueSkip},
		{Name: "allocatable grew enough, no pods allocatable", Pod: big, Event: frameworktest.NodeUpdate(smallNoPods, noPods), Old: smallNoPods, New: noPods, Want: framework.QueueSkip},
		{Name: "allocatable grew enough", Pod: big, Event: frameworktest.NodeUpdate(small, large), Old: small, New: large, Want: framework.Queue},
		{Name: "allocatable grew, not enough", Pod: pod("huge").Req("6", "1Gi").Obj(), Event: frameworktest.NodeUpdate(small, large), Old: small, New: large, Want: framework.QueueSkip},
		{Name: "allocatable grew in pods only, pod fits the node", Pod: pod("p").Req("1", "1Gi").Obj(), Event: frameworktest.NodeUpdate(small, grownPods), Old: small, New: grownPods, Want: framework.Queue},
		{Name: "labels only: not registered", Pod: big, Event: frameworktest.NodeUpdate(large, node("n1").Label("a", "b").Obj()), Old: large, New: node("n1").Label("a", "b").Obj(), Want: framework.QueueSkip},
		{Name: "assigned pod deleted", Pod: big, Event: evAssignedDelete, Old: onN1, Want: framework.Queue},
		{Name: "nominated pod deleted", Pod: big, Event: evAssignedDelete, Old: nominated, Want: framework.Queue},
		{Name: "pending pod deleted", Pod: big, Event: evAssignedDelete, Old: unassigned, Want: framework.QueueSkip},
		{Name: "pod of a node the pod is not pinned to", Pod: pinned, Event: evAssignedDelete, Old: onN1, Want: framework.QueueSkip},
		{Name: "deleted pod frees only a pod slot: a node full by count", Pod: gpu, Event: evAssignedDelete, Old: onN1, Want: framework.Queue},
		{Name: "deleted pod frees some of what the pod requests", Pod: pod("mem").Req("", "1Gi").Obj(), Event: evAssignedDelete, Old: onN1, Want: framework.Queue},
		{Name: "deleted pod frees cpu and a pod slot, the pod wants memory", Pod: pod("mem").Req("", "1Gi").Obj(), Event: evAssignedDelete, Old: cpuOnly, Want: framework.Queue},
		{Name: "pod of another node shrank in cpu, the pod wants memory", Pod: pod("mem").Req("", "1Gi").Obj(), Event: frameworktest.AssignedPodUpdate(onN1, shrunk), Old: onN1, New: shrunk, Want: framework.QueueSkip},
		{Name: "assigned pod scaled down", Pod: big, Event: frameworktest.AssignedPodUpdate(onN1, shrunk), Old: onN1, New: shrunk, Want: framework.Queue},
		{Name: "assigned pod added: not registered", Pod: big, Event: evAssignedAdd, New: onN1, Want: framework.QueueSkip},
	})

	// With the node lister, a deletion on a node whose whole allocatable
	// is smaller than the pod's requests wakes nothing.
	nodes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	if err := nodes.Add(small); err != nil { // n1: 2 cpu
		t.Fatal(err)
	}
	withNodes := noderesources.NewFitFilter(nil).UseNodeLister(corelisters.NewNodeLister(nodes))
	onN2 := pod("other").Req("1", "1Gi").Node("n2").Obj()
	shrunkOnN1 := pod("other").Req("1", "1Gi").Node("n1").Obj()
	shrunkOnN1.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m")
	frameworktest.CheckHints(t, withNodes, []frameworktest.HintCase{
		{Name: "deleted from a node too small for the pod's cpu", Pod: big, Event: evAssignedDelete, Old: onN1, Want: framework.QueueSkip},
		{Name: "nominated on a node too small", Pod: big, Event: evAssignedDelete, Old: nominated, Want: framework.QueueSkip},
		{Name: "scaled down on a node too small", Pod: big, Event: frameworktest.AssignedPodUpdate(onN1, shrunk), Old: onN1, New: shrunk, Want: framework.QueueSkip},
		{Name: "deleted from a node that could hold the pod", Pod: pod("fits").Req("1", "1Gi").Obj(), Event: evAssignedDelete, Old: onN1, Want: framework.Queue},
		{Name: "the same event for a pod the node could hold", Pod: pod("fits").Req("1", "1Gi").Obj(), Event: frameworktest.AssignedPodUpdate(onN1, shrunkOnN1), Old: onN1, New: shrunkOnN1, Want: framework.Queue},
		{Name: "deleted from a node the lister does not know", Pod: big, Event: evAssignedDelete, Old: onN2, Want: framework.Queue},
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
	withRoom := noderesources.NewFitFilter(nil).UseNodeInfoReader(h.ReadNodeInfo, h.NominatedPodsForNode)
	onN3 := pod("other").Req("1", "1Gi").Node("n3").Obj()
	frameworktest.CheckHints(t, withRoom, []frameworktest.HintCase{
		{Name: "room left too small for the pod's cpu", Pod: pod("two").Req("2", "").Obj(), Event: evAssignedDelete, Old: onN1, Want: framework.QueueSkip},
		{Name: "room left enough", Pod: pod("one").Req("1", "").Obj(), Event: evAssignedDelete, Old: onN1, Want: framework.Queue},
		{Name: "nominated pod's room, too small", Pod: pod("two").Req("2", "").Obj(), Event: evAssignedDelete, Old: nominated, Want: framework.QueueSkip},
		{Name: "every gpu still taken", Pod: gpu, Event: evAssignedDelete, Old: onN3, Want: framework.QueueSkip},
		{Name: "cpu freed where the gpu pod fits", Pod: pod("cpu").Req("8", "").Obj(), Event: evAssignedDelete, Old: onN3, Want: framework.Queue},
		{Name: "room left only without the nominated pod, of higher priority", Pod: pod("cpu").Req("9", "").Obj(), Event: evAssignedDelete, Old: onN3, Want: framework.QueueSkip},
		{Name: "the same, of equal priority", Pod: pod("cpu").Req("9", "").Priority(10).Obj(), Event: evAssignedDelete, Old: onN3, Want: framework.QueueSkip},
		{Name: "the same, of higher priority than the nominated pod", Pod: pod("cpu").Req("9", "").Priority(11).Obj(), Event: evAssignedDelete, Old: onN3, Want: framework.Queue},
		{Name: "the nominated pod itself", Pod: preemptor, Event: evAssignedDelete, Old: onN3, Want: framework.Queue},
		{Name: "node unknown to the cache", Pod: pod("two").Req("2", "").Obj(), Event: evAssignedDelete, Old: onN2, Want: framework.Queue},
	})
	full := node("n4").Capacity("8", "8Gi", 1).Obj()
	h = frameworktest.NewHandle(frameworktest.NewSnapshot([]*v1.Node{full}, []*v1.Pod{pod("last").Node("n4").Obj()}))
	frameworktest.CheckHints(t, noderesources.NewFitFilter(nil).UseNodeInfoReader(h.ReadNodeInfo, h.NominatedPodsForNode), []frameworktest.HintCase{
		{Name: "node still full by count", Pod: pod("tiny").Req("10m", "").Obj(), Event: evAssignedDelete, Old: pod("gone").Node("n4").Obj(), Want: framework.QueueSkip},
	})
}
