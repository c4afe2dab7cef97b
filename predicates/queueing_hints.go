package predicates

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The cluster events each filter registers, and the hints that decide per
// pod whether an event can undo its rejection (framework.EnqueueExtensions).
// They follow kube-scheduler v1.37 with queueing hints on; where they differ,
// the hint says why.

var (
	_ framework.EnqueueExtensions = &Fit{}
	_ framework.EnqueueExtensions = &TaintToleration{}
	_ framework.EnqueueExtensions = &NodeAffinity{}
	_ framework.EnqueueExtensions = &NodeUnschedulable{}
	_ framework.EnqueueExtensions = &NodeName{}
	_ framework.EnqueueExtensions = &NodePorts{}
	_ framework.EnqueueExtensions = &NodeDeclaredFeatures{}
	_ framework.EnqueueExtensions = &InterPodAffinity{}
	_ framework.EnqueueExtensions = &PodTopologySpread{}
)

// EventsToRegister: a node added or whose allocatable changed, and an
// assigned pod deleted or scaled down.
// With DeviceClasses (DRA-served extended resources), a DeviceClass
// created or changed too.
func (f *Fit) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	h := &fitHints{Fit: f}
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
	*Fit
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
func (f *Fit) requestedNames(pod *v1.Pod) []v1.ResourceName {
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

// fitsNode is Fit's NodeCheck: the node's whole allocatable holds the
// pod's requests.
func (f *fitHints) fitsNode(pod *v1.Pod, node *v1.Node) bool {
	return f.podStates.Get(pod, f.newFitPodState).fitsAllocatable(node)
}

// anyNode is the NodeCheck of a node-local plugin that cannot tell from
// the node alone: it never rules a node out.
func anyNode(*v1.Pod, *v1.Node) bool { return true }

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

// EventsToRegister: a node added or whose taints changed, and the pod's
// own tolerations changed.
func (pl *TaintToleration) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: taintsNowTolerated, NodeCheck: toleratesNode},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}, QueueingHintFn: framework.OwnPodChanged},
	}, nil
}

// taintsNowTolerated queues the pod when the node had a NoSchedule or
// NoExecute taint it did not tolerate (or is new) and now has none.
func taintsNowTolerated(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil {
		return framework.QueueSkip, nil
	}
	if _, untolerated := FirstUntoleratedTaint(pod, newNode); untolerated {
		return framework.QueueSkip, nil
	}
	if oldNode != nil {
		if _, was := FirstUntoleratedTaint(pod, oldNode); !was {
			return framework.QueueSkip, nil
		}
	}
	return framework.Queue, nil
}

// toleratesNode is TaintToleration's NodeCheck: the pod tolerates the
// node's NoSchedule and NoExecute taints.
func toleratesNode(pod *v1.Pod, node *v1.Node) bool {
	_, untolerated := FirstUntoleratedTaint(pod, node)
	return !untolerated
}

// EventsToRegister: a node added or relabelled.
func (pl *NodeAffinity) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	h := &nodeAffinityHints{NodeAffinity: pl}
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: h.isSchedulableAfterNodeChange, NodeCheck: h.matchesNode},
	}, nil
}

// nodeAffinityHints are NodeAffinity's hints, with the pods' compiled
// affinity kept.
type nodeAffinityHints struct {
	*NodeAffinity
	required framework.PodMemo[*framework.RequiredNodeAffinity]
}

// matchesNode is NodeAffinity's NodeCheck: the node matches the
// profile's added affinity and the pod's nodeSelector and required
// affinity.
func (pl *nodeAffinityHints) matchesNode(pod *v1.Pod, node *v1.Node) bool {
	return (pl.added == nil || pl.added.Match(node)) && pl.required.Get(pod, framework.NewRequiredNodeAffinity).Match(node)
}

// isSchedulableAfterNodeChange queues the pod when the node matches the
// profile's added affinity and the pod's nodeSelector and required
// affinity now, and did not before (or is new).
func (pl *nodeAffinityHints) isSchedulableAfterNodeChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil {
		return framework.QueueSkip, nil
	}
	if pl.added != nil && !pl.added.Match(newNode) {
		return framework.QueueSkip, nil
	}
	required := pl.required.Get(pod, framework.NewRequiredNodeAffinity)
	if !required.Match(newNode) {
		return framework.QueueSkip, nil
	}
	if oldNode != nil && required.Match(oldNode) && (pl.added == nil || pl.added.Match(oldNode)) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// EventsToRegister: a node added or made schedulable (an UpdateNodeTaint
// event, as in kube-scheduler), and the pod's own tolerations changed.
func (*NodeUnschedulable) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: nodeNowSchedulable},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}, QueueingHintFn: toleratesUnschedulableNow},
	}, nil
}

// nodeNowSchedulable queues the pod when a schedulable node is added or a
// cordoned node is uncordoned.
func nodeNowSchedulable(_ *zap.Logger, _ *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode != nil && !newNode.Spec.Unschedulable && (oldNode == nil || oldNode.Spec.Unschedulable) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// toleratesUnschedulableNow queues the pod when its own update made it
// tolerate the unschedulable taint.
func toleratesUnschedulableNow(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, newPod, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newPod != nil && newPod.UID == pod.UID && framework.TolerationsTolerateTaint(newPod.Spec.Tolerations, &unschedulableTaint) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// EventsToRegister: a node added (the one the pod names may appear).
func (*NodeName) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, QueueingHintFn: namedNodeAdded, NodeCheck: isNamedNode},
	}, nil
}

// isNamedNode is NodeName's NodeCheck: the pod names no node, or this one.
func isNamedNode(pod *v1.Pod, node *v1.Node) bool {
	return pod.Spec.NodeName == "" || pod.Spec.NodeName == node.Name
}

// namedNodeAdded queues the pod when the added node is the one it names.
// kube-scheduler registers no hint (every added node); the name is all
// that matters to the filter.
func namedNodeAdded(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil || (pod.Spec.NodeName != "" && pod.Spec.NodeName != newNode.Name) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// EventsToRegister: an assigned pod deleted, and a node added.
func (*NodePorts) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: conflictingPortsFreed},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, NodeCheck: anyNode},
	}, nil
}

// conflictingPortsFreed queues the pod when the deleted pod held (bound or
// nominated) a host port the pod wants, on a node the pod may run on.
func conflictingPortsFreed(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	deleted, _, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if deleted == nil || !framework.AssignedOrNominated(deleted) || !framework.MayRunOn(pod, deleted.Spec.NodeName) {
		return framework.QueueSkip, nil
	}
	freed := framework.PodHostPorts(deleted)
	if len(freed) == 0 {
		return framework.QueueSkip, nil
	}
	var inUse framework.HostPortInfo
	for _, hp := range freed {
		inUse.Add(hp)
	}
	for _, hp := range framework.PodHostPorts(pod) {
		if inUse.Conflicts(hp) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// EventsToRegister: a node added or whose declared features changed.
func (*NodeDeclaredFeatures) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeDeclaredFeature}, NodeCheck: anyNode},
	}, nil
}

// EventsToRegister: a pod added, relabelled or deleted, and a node added
// or relabelled.
func (pl *InterPodAffinity) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	h := &affinityHints{}
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete}, QueueingHintFn: h.podChange},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: h.nodeChange},
	}, nil
}

// affinityHints are InterPodAffinity's hints, with the pods' compiled
// terms kept (an empty set for a pod without terms).
type affinityHints struct {
	terms framework.PodMemo[*framework.PodAffinityTerms]
}

func (h *affinityHints) termsOf(pod *v1.Pod) *framework.PodAffinityTerms {
	return h.terms.Get(pod, func(pod *v1.Pod) *framework.PodAffinityTerms {
		if t := framework.NewPodAffinityTerms(pod); t != nil {
			return t
		}
		return &framework.PodAffinityTerms{}
	})
}

// affinityPodChange queues the pod, as kube-scheduler v1.37 does, when an
// assigned (or nominated) pod now matches all its required affinity terms
// (added, or relabelled into them), when a pod matching any of its
// required anti-affinity terms matches none of them any more (relabelled)
// or is deleted, or when a deleted pod had an anti-affinity term the pod
// matches. Any update of the pod itself queues it.
//
// Affinity needs one pod matching every term, anti-affinity is violated
// by a pod matching any one: v1.36 asked "all terms" of anti-affinity
// too, so a pod with two anti-affinity terms stayed parked when the one
// pod in its way (matching one term) went away.
func (h *affinityHints) podChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldPod, newPod, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if oldPod != nil && newPod != nil && newPod.UID == pod.UID {
		return framework.Queue, nil
	}
	if (newPod != nil && !framework.AssignedOrNominated(newPod)) || (oldPod != nil && !framework.AssignedOrNominated(oldPod)) {
		return framework.QueueSkip, nil
	}
	terms := h.termsOf(pod)
	if terms.Err != nil {
		return framework.Queue, terms.Err
	}
	affinity, anti := terms.RequiredAffinity, terms.RequiredAntiAffinity
	switch {
	case oldPod != nil && newPod != nil:
		if !framework.PodMatchesAllTerms(affinity, oldPod) && framework.PodMatchesAllTerms(affinity, newPod) {
			return framework.Queue, nil
		}
		if framework.PodMatchesAnyTerm(anti, oldPod) && !framework.PodMatchesAnyTerm(anti, newPod) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	case newPod != nil:
		if framework.PodMatchesAllTerms(affinity, newPod) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if framework.PodMatchesAnyTerm(anti, oldPod) {
		return framework.Queue, nil
	}
	if a := oldPod.Spec.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 {
		return framework.QueueSkip, nil
	}
	if theirs := framework.NewPodAffinityTerms(oldPod); theirs != nil && framework.PodMatchesAnyTerm(theirs.RequiredAntiAffinity, pod) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// affinityNodeChange queues the pod when a node gains (or, added, has) the
// topology key of one of its affinity terms or changes its value, or when
// a node loses or changes the topology key of one of its anti-affinity
// terms (or is added while it has any), as kube-scheduler does.
func (h *affinityHints) nodeChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil {
		return framework.QueueSkip, nil
	}
	terms := h.termsOf(pod)
	for i := range terms.RequiredAffinity {
		key := terms.RequiredAffinity[i].TopologyKey
		nv, nHas := newNode.Labels[key]
		if oldNode == nil {
			if nHas {
				return framework.Queue, nil
			}
			continue
		}
		ov, oHas := oldNode.Labels[key]
		if nHas && (!oHas || ov != nv) {
			return framework.Queue, nil
		}
	}
	for i := range terms.RequiredAntiAffinity {
		if oldNode == nil {
			return framework.Queue, nil
		}
		key := terms.RequiredAntiAffinity[i].TopologyKey
		ov, oHas := oldNode.Labels[key]
		nv, nHas := newNode.Labels[key]
		if oHas && (!nHas || ov != nv) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// EventsToRegister: a pod added, relabelled, deleted or whose tolerations
// changed, and a node added, deleted, relabelled or whose taints changed.
func (pl *PodTopologySpread) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	h := &spreadHints{PodTopologySpread: pl}
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.UpdatePodToleration | framework.Delete}, QueueingHintFn: h.isSchedulableAfterPodChange},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint}, QueueingHintFn: h.isSchedulableAfterNodeChange},
	}, nil
}

// spreadHints are PodTopologySpread's hints, with the pods' compiled
// DoNotSchedule constraints kept.
type spreadHints struct {
	*PodTopologySpread
	constraints framework.PodMemo[compiledConstraints]
}

type compiledConstraints struct {
	c   []framework.SpreadConstraint
	err error
}

func (pl *spreadHints) constraintsOf(pod *v1.Pod) ([]framework.SpreadConstraint, error) {
	cc := pl.constraints.Get(pod, func(pod *v1.Pod) compiledConstraints {
		c, err := pl.spread.Constraints(pod, v1.DoNotSchedule)
		return compiledConstraints{c, err}
	})
	return cc.c, cc.err
}

// involvedInSpreading reports whether other counts in pod's spreading: the
// pod itself, or an assigned (or nominated) pod of its namespace.
func involvedInSpreading(other, pod *v1.Pod) bool {
	if other.UID == pod.UID {
		return true
	}
	return framework.AssignedOrNominated(other) && other.Namespace == pod.Namespace
}

// isSchedulableAfterPodChange queues the pod, as kube-scheduler does, when
// a pod of its namespace that one of its DoNotSchedule constraints selects
// is added or deleted, or is relabelled into or out of a constraint's
// selector; or when its own tolerations changed and a constraint honours
// node taints.
func (pl *spreadHints) isSchedulableAfterPodChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldPod, newPod, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if (newPod != nil && !involvedInSpreading(newPod, pod)) || (oldPod != nil && !involvedInSpreading(oldPod, pod)) {
		return framework.QueueSkip, nil
	}
	constraints, err := pl.constraintsOf(pod)
	if err != nil {
		return framework.Queue, err
	}
	matchesAny := func(l map[string]string) bool {
		for i := range constraints {
			if constraints[i].Selector.Matches(labels.Set(l)) {
				return true
			}
		}
		return false
	}
	switch {
	case oldPod != nil && newPod != nil:
		if newPod.UID == pod.UID && !equality.Semantic.DeepEqual(oldPod.Spec.Tolerations, newPod.Spec.Tolerations) {
			for i := range constraints {
				if constraints[i].NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
					return framework.Queue, nil
				}
			}
		}
		if maps.Equal(oldPod.Labels, newPod.Labels) {
			return framework.QueueSkip, nil
		}
		for i := range constraints {
			sel := constraints[i].Selector
			if sel.Matches(labels.Set(oldPod.Labels)) != sel.Matches(labels.Set(newPod.Labels)) {
				return framework.Queue, nil
			}
		}
		return framework.QueueSkip, nil
	case newPod != nil:
		if matchesAny(newPod.Labels) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if matchesAny(oldPod.Labels) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// isSchedulableAfterNodeChange queues the pod, as kube-scheduler does,
// when a node carrying every constraint's topology key is added or
// deleted, when a node gains or loses one of those keys, or when a node
// that has them all changes a key's value or its taints.
func (pl *spreadHints) isSchedulableAfterNodeChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	constraints, err := pl.constraintsOf(pod)
	if err != nil {
		return framework.Queue, err
	}
	var oldMatching, newMatching bool
	if oldNode != nil {
		oldMatching = framework.NodeHasSpreadKeys(oldNode, constraints)
	}
	if newNode != nil {
		newMatching = framework.NodeHasSpreadKeys(newNode, constraints)
	}
	switch {
	case oldNode != nil && newNode != nil:
		if oldMatching != newMatching {
			return framework.Queue, nil
		}
		if newMatching {
			for i := range constraints {
				key := constraints[i].TopologyKey
				if oldNode.Labels[key] != newNode.Labels[key] {
					return framework.Queue, nil
				}
			}
			if !equality.Semantic.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints) {
				return framework.Queue, nil
			}
		}
		return framework.QueueSkip, nil
	case newNode != nil:
		if newMatching {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if oldMatching {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}
