package noderesources

import (
	"context"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The cluster events NodeResourcesFit's filter registers, and the hints
// that decide per pod whether an event can undo its rejection
// (framework.EnqueueExtensions). They follow kube-scheduler v1.37 with
// queueing hints on; where they differ, the hint says why.

var _ framework.EnqueueExtensions = &FitFilter{}

// EventsToRegister: a node added or whose allocatable changed, and an
// assigned pod deleted or scaled down.
// With DeviceClasses (DRA-served extended resources), a DeviceClass
// created or changed too.
func (f *FitFilter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	h := &fitHints{FitFilter: f}
	events := []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete | framework.UpdatePodScaleDown}, QueueingHintFn: h.isSchedulableAfterPodEvent, PodInfoHintFn: h.isSchedulableAfterPodEventInfo},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable}, QueueingHintFn: h.isSchedulableAfterNodeChange, NodeCheck: h.fitsNode},
	}
	if f.deviceClasses != nil {
		events = append(events, framework.ClusterEventWithHint{Event: framework.ClusterEvent{Resource: framework.DeviceClass, ActionType: framework.Add | framework.Update}})
	}
	return events, nil
}

// fitHints are NodeResourcesFit's hints, with the pods' requests kept.
type fitHints struct {
	*FitFilter
	podStates framework.PodMemo[*fitPodState]
	// lastNode is the node of the last pod event's pod, looked up once
	// per event rather than once per parked pod.
	lastNode atomic.Pointer[eventNode]
}

// eventNode is what a pod event's hint reads of the node the event's pod
// was on: the Node (nil when unknown), and the room left there once the
// event is in the scheduler's cache (nil when unknown).
type eventNode struct {
	pod  *v1.Pod
	node *v1.Node
	room *nodeRoom
}

// nodeRoom is what a node has left: allocatable less the requests of its
// bound and assumed pods; nominated are the pods nominated there.
type nodeRoom struct {
	pods, milliCPU, memory, ephemeralStorage int64
	scalars                                  map[v1.ResourceName]int64
	allocatable                              map[v1.ResourceName]int64
	nominated                                []nominatedRequest
}

// nominatedRequest is a pod nominated to a node: what it will take there.
type nominatedRequest struct {
	uid      types.UID
	priority int32
	requests framework.Resource
}

func roomOf(ni *framework.NodeInfo) *nodeRoom {
	alloc, used := &ni.Allocatable, &ni.Requested
	r := &nodeRoom{
		pods:             alloc.AllowedPodNumber - int64(len(ni.Pods)),
		milliCPU:         alloc.MilliCPU - used.MilliCPU,
		memory:           alloc.Memory - used.Memory,
		ephemeralStorage: alloc.EphemeralStorage - used.EphemeralStorage,
	}
	if len(alloc.ScalarResources) > 0 {
		r.scalars = make(map[v1.ResourceName]int64, len(alloc.ScalarResources))
		r.allocatable = make(map[v1.ResourceName]int64, len(alloc.ScalarResources))
		for name, q := range alloc.ScalarResources {
			r.scalars[name] = q - used.ScalarResources[name]
			r.allocatable[name] = q
		}
	}
	return r
}

// eventNodeOf returns what the hints read of the node named name that the
// event's pod was on, looked up once per event rather than once per
// parked pod.
func (f *fitHints) eventNodeOf(eventPod *v1.Pod, name string) *eventNode {
	if last := f.lastNode.Load(); last != nil && last.pod == eventPod {
		return last
	}
	en := &eventNode{pod: eventPod}
	if f.nodes != nil {
		if node, err := f.nodes.Get(name); err == nil {
			en.node = node
		}
	}
	if f.readNode != nil {
		f.readNode(name, func(ni *framework.NodeInfo) { en.room = roomOf(ni) })
	}
	if en.room != nil && f.nominated != nil {
		for _, pi := range f.nominated(name) {
			en.room.nominated = append(en.room.nominated, nominatedRequest{
				uid: pi.Pod.UID, priority: corev1helpers.PodPriority(pi.Pod), requests: framework.FitRequests(pi.Pod),
			})
		}
	}
	f.lastNode.Store(en)
	return en
}

// fitsRoom reports whether room holds pod's requests, as the filter
// counts them: the pods nominated there of at least its priority take
// their requests first.
func (s *fitState) fitsRoom(pod *v1.Pod, room *nodeRoom) bool {
	prio := corev1helpers.PodPriority(pod)
	counts := func(n *nominatedRequest) bool { return n.uid != pod.UID && n.priority >= prio }
	pods, milliCPU, memory, ephemeral := room.pods, room.milliCPU, room.memory, room.ephemeralStorage
	for i := range room.nominated {
		if n := &room.nominated[i]; counts(n) {
			pods--
			milliCPU -= n.requests.MilliCPU
			memory -= n.requests.Memory
			ephemeral -= n.requests.EphemeralStorage
		}
	}
	if pods < 1 || s.milliCPU > milliCPU || s.memory > memory || s.ephemeralStorage > ephemeral {
		return false
	}
	for i := range s.scalars {
		r := &s.scalars[i]
		if r.draServed && room.allocatable[r.name] <= 0 {
			continue // left to DynamicResources there, as in the filter
		}
		free := room.scalars[r.name]
		for j := range room.nominated {
			if n := &room.nominated[j]; counts(n) {
				free -= n.requests.ScalarResources[r.name]
			}
		}
		if r.quantity > free {
			return false
		}
	}
	return true
}

// fitPodState is what the pod-event hint derives from a pending pod, once
// per version of it: its requests as the filter counts them, the
// resources it requests, and whether it is pinned to nodes (so that a pod
// that is not is never read again).
type fitPodState struct {
	*fitState
	names  []v1.ResourceName
	pinned bool
}

func (f *fitHints) newFitPodState(pod *v1.Pod) *fitPodState {
	required := framework.RequiredNodeSelector(pod)
	return &fitPodState{
		fitState: f.newFitState(pod),
		names:    f.requestedNames(pod),
		pinned:   pod.Spec.NodeName != "" || (required != nil && len(required.NodeSelectorTerms) > 0),
	}
}

// isSchedulableAfterPodEventInfo is isSchedulableAfterPodEvent for the
// queue, with what it derives kept on the PodInfo.
func (f *fitHints) isSchedulableAfterPodEventInfo(_ *zap.Logger, pi *framework.PodInfo, oldObj, newObj any) (framework.QueueingHint, error) {
	st := pi.HintState(f, func(pod *v1.Pod) any { return f.newFitPodState(pod) }).(*fitPodState)
	return f.afterPodEvent(pi.Pod, st, oldObj, newObj)
}

// isSchedulableAfterPodEvent queues the pod when a pod that held resources
// on a node (bound or nominated) was deleted, on a node the pod may run on;
// when such a pod shrank in some resource the pod requests; or when the pod
// itself shrank. kube-scheduler queues on every such deletion; yardmaster
// also skips a pod pinned to other nodes, and a pod whose requests that
// node's whole allocatable could not hold (a pod of 64 cpu waiting for a
// bigger node is not helped by any pod leaving a node of 32): neither finds
// more room than before. A node that grows registers its own event.
func (f *fitHints) isSchedulableAfterPodEvent(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	return f.afterPodEvent(pod, f.podStates.Get(pod, f.newFitPodState), oldObj, newObj)
}

func (f *fitHints) afterPodEvent(pod *v1.Pod, st *fitPodState, oldObj, newObj any) (framework.QueueingHint, error) {
	oldPod, newPod, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newPod != nil && newPod.UID == pod.UID {
		return framework.Queue, nil // the pod itself shrank
	}
	if oldPod == nil {
		return framework.QueueSkip, nil
	}
	if !framework.AssignedOrNominated(oldPod) {
		return framework.QueueSkip, nil
	}
	node := oldPod.Spec.NodeName
	if node == "" {
		node = oldPod.Status.NominatedNodeName
	}
	if st.pinned && !framework.MayRunOn(pod, node) {
		return framework.QueueSkip, nil
	}
	en := f.eventNodeOf(oldPod, node)
	if en.node != nil && !st.fitsAllocatable(en.node) {
		return framework.QueueSkip, nil
	}
	if en.room != nil && !st.fitsRoom(pod, en.room) {
		// The node, as the cache holds it with the event applied, still
		// cannot hold the pod: the room freed is not enough. Any later
		// change that frees more there raises an event of its own.
		return framework.QueueSkip, nil
	}
	if newPod == nil {
		// Deleted: it freed at least a pod slot, which every pod needs
		// (a node full by count rejects a pod that asks for nothing
		// else), so this queues whatever the deleted pod requested.
		return framework.Queue, nil
	}
	freed := framework.FitRequests(oldPod)
	now := framework.FitRequests(newPod)
	freed.AddResource(&now, -1)
	for _, name := range st.names {
		if freed.Get(name) > 0 {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// requestedNames lists the resources pod requests a positive amount of,
// as written (containers, init containers, pod-level), that the filter
// checks.
func (f *FitFilter) requestedNames(pod *v1.Pod) []v1.ResourceName {
	var names []v1.ResourceName
	add := func(rl v1.ResourceList) {
		for name, q := range rl {
			if q.Sign() > 0 && !f.ignores(name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	for i := range pod.Spec.Containers {
		add(pod.Spec.Containers[i].Resources.Requests)
	}
	for i := range pod.Spec.InitContainers {
		add(pod.Spec.InitContainers[i].Resources.Requests)
	}
	if pod.Spec.Resources != nil {
		add(pod.Spec.Resources.Requests)
	}
	return names
}

// isSchedulableAfterNodeChange queues the pod when an added node's
// allocatable holds its requests, or an updated node's allocatable grew in
// a resource it requests (or in pods) and now holds them, as
// kube-scheduler does.
func (f *fitHints) isSchedulableAfterNodeChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil {
		return framework.QueueSkip, nil
	}
	s := f.podStates.Get(pod, f.newFitPodState)
	if !s.fitsAllocatable(newNode) {
		return framework.QueueSkip, nil
	}
	if oldNode == nil {
		return framework.Queue, nil
	}
	o, n := oldNode.Status.Allocatable, newNode.Status.Allocatable
	grew := func(name v1.ResourceName) bool {
		nq, ok := n[name]
		if !ok {
			return false
		}
		oq, ok := o[name]
		return !ok || nq.Cmp(oq) > 0
	}
	if grew(v1.ResourcePods) ||
		(s.milliCPU > 0 && grew(v1.ResourceCPU)) ||
		(s.memory > 0 && grew(v1.ResourceMemory)) ||
		(s.ephemeralStorage > 0 && grew(v1.ResourceEphemeralStorage)) {
		return framework.Queue, nil
	}
	for _, sc := range s.scalars {
		if grew(sc.name) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// fitsNode is FitFilter's NodeCheck: the node's whole allocatable holds the
// pod's requests.
func (f *fitHints) fitsNode(pod *v1.Pod, node *v1.Node) bool {
	return f.podStates.Get(pod, f.newFitPodState).fitsAllocatable(node)
}

// fitsAllocatable reports whether the requests fit the node's whole
// allocatable (with no pod on it), as kube-scheduler's hint checks an
// added or grown node, without building a NodeInfo. A node that
// publishes no pods allocatable holds no pod: the filter allows it 0.
func (s *fitState) fitsAllocatable(node *v1.Node) bool {
	alloc := node.Status.Allocatable
	fits := func(name v1.ResourceName, want int64, milli bool) bool {
		if want <= 0 {
			return true
		}
		q, ok := alloc[name]
		if !ok {
			return false
		}
		if milli {
			return q.MilliValue() >= want
		}
		return q.Value() >= want
	}
	if q, ok := alloc[v1.ResourcePods]; !ok || q.Value() < 1 {
		return false
	}
	if !fits(v1.ResourceCPU, s.milliCPU, true) || !fits(v1.ResourceMemory, s.memory, false) ||
		!fits(v1.ResourceEphemeralStorage, s.ephemeralStorage, false) {
		return false
	}
	for _, sc := range s.scalars {
		if sc.draServed {
			if _, published := alloc[sc.name]; !published {
				continue // DynamicResources' to place
			}
		}
		if !fits(sc.name, sc.quantity, false) {
			return false
		}
	}
	return true
}
