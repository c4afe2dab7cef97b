package framework

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Cluster events and queueing hints, kube-scheduler's model (GA since
// 1.34): a plugin that can reject a pod says, through EnqueueExtensions,
// which cluster events can make that pod schedulable, and a hint function
// per event decides from the old and the new object whether this one can.
// The scheduling queue wakes an unschedulable pod only when one of the
// plugins that rejected it registered the event and its hint says Queue.

// EventResource is the kind of object a cluster event is about.
type EventResource uint8

// Event resources. A plugin registering Pod receives the events of both
// AssignedPod (a pod bound to a node) and UnscheduledPod (a pending pod);
// the informer handlers raise only those two.
const (
	// WildCard matches every resource: a registration for it receives every
	// event.
	WildCard EventResource = iota
	Pod
	AssignedPod
	UnscheduledPod
	Node
	PersistentVolume
	PersistentVolumeClaim
	StorageClass
	CSINode
	CSIDriver
	CSIStorageCapacity
	VolumeAttachment
	// NodeMetrics is a new measurement of the nodes (a metric plugin's
	// Prometheus table), raised through Handle.RaiseEvent: no informer
	// sees it.
	NodeMetrics
	ResourceClaim
	ResourceSlice
	DeviceClass
	// PodGroup is a scheduling.k8s.io PodGroup (framework.PodGroupOf).
	PodGroup

	numEventResources // keep last
)

var resourceNames = [numEventResources]string{
	WildCard:              "*",
	Pod:                   "Pod",
	AssignedPod:           "AssignedPod",
	UnscheduledPod:        "UnscheduledPod",
	Node:                  "Node",
	PersistentVolume:      "PersistentVolume",
	PersistentVolumeClaim: "PersistentVolumeClaim",
	StorageClass:          "storage.k8s.io/StorageClass",
	CSINode:               "storage.k8s.io/CSINode",
	CSIDriver:             "storage.k8s.io/CSIDriver",
	CSIStorageCapacity:    "storage.k8s.io/CSIStorageCapacity",
	VolumeAttachment:      "storage.k8s.io/VolumeAttachment",
	NodeMetrics:           "yardmaster.io/NodeMetrics",
	ResourceClaim:         "resource.k8s.io/ResourceClaim",
	ResourceSlice:         "resource.k8s.io/ResourceSlice",
	DeviceClass:           "resource.k8s.io/DeviceClass",
	PodGroup:              "scheduling.k8s.io/PodGroup",
}

// String returns kube-scheduler's name of the resource: for one of
// ResourceOf, "<resource>.<version>.<group>" ("podgroups.v1alpha1.scheduling.x-k8s.io").
func (r EventResource) String() string {
	if r < numEventResources {
		return resourceNames[r]
	}
	if gvr, ok := r.GroupVersionResource(); ok {
		return gvrString(gvr)
	}
	return "Unknown"
}

// gvrString is kube-scheduler's name of a resource it watches through a
// dynamic informer.
func gvrString(gvr schema.GroupVersionResource) string {
	s := gvr.Resource + "." + gvr.Version
	if gvr.Group != "" {
		s += "." + gvr.Group
	}
	return s
}

// customResources are the resources ResourceOf gave an EventResource,
// by EventResource - numEventResources.
var customResources struct {
	sync.RWMutex
	byID  []schema.GroupVersionResource
	ofGVR map[schema.GroupVersionResource]EventResource
}

// ResourceOf returns the EventResource of the objects of gvr, for a
// plugin whose rejections an object the scheduler has no constant for
// can undo: a custom resource (a PodGroup, a NodePool) or a built-in one
// (Services). The same gvr always gives the same EventResource.
//
// The scheduler watches every such resource that a plugin that can reject
// pods registered events for, with an informer of its dynamic informer
// factory (Handle.DynamicInformerFactory), and raises Add, Update (all of
// its bits) and Delete events with the objects as
// *unstructured.Unstructured. A plugin that reads those objects should
// read them through the same factory: the informer's store then has the
// change before the event wakes a pod. The resource need not be served
// when the scheduler starts (a CRD installed later, or removed): the
// scheduler does not wait for it.
func ResourceOf(gvr schema.GroupVersionResource) EventResource {
	customResources.RLock()
	r, ok := customResources.ofGVR[gvr]
	customResources.RUnlock()
	if ok {
		return r
	}
	customResources.Lock()
	defer customResources.Unlock()
	if r, ok := customResources.ofGVR[gvr]; ok {
		return r
	}
	if int(numEventResources)+len(customResources.byID) > math.MaxUint8 {
		panic(fmt.Sprintf("framework.ResourceOf(%s): more resources than an EventResource holds", gvrString(gvr)))
	}
	if customResources.ofGVR == nil {
		customResources.ofGVR = map[schema.GroupVersionResource]EventResource{}
	}
	r = numEventResources + EventResource(len(customResources.byID))
	customResources.byID = append(customResources.byID, gvr)
	customResources.ofGVR[gvr] = r
	return r
}

// GroupVersionResource returns the resource r stands for when ResourceOf
// made it, and false for the scheduler's own resources (Pod, Node, ...).
func (r EventResource) GroupVersionResource() (schema.GroupVersionResource, bool) {
	if r < numEventResources {
		return schema.GroupVersionResource{}, false
	}
	customResources.RLock()
	defer customResources.RUnlock()
	i := int(r - numEventResources)
	if i >= len(customResources.byID) {
		return schema.GroupVersionResource{}, false
	}
	return customResources.byID[i], true
}

// ActionType is what happened to the object, as a bit set: one update may
// be several changes at once (a node's labels and taints), and a plugin
// registers the union of the changes it cares about.
type ActionType uint32

// Action types, kube-scheduler's (only those yardmaster's plugins use).
const (
	Add ActionType = 1 << iota
	Delete
	// UpdateNodeAllocatable: a node's status.allocatable changed.
	UpdateNodeAllocatable
	// UpdateNodeLabel: a node's labels changed.
	UpdateNodeLabel
	// UpdateNodeTaint: a node's taints changed, or it became schedulable
	// (spec.unschedulable cleared).
	UpdateNodeTaint
	// UpdateNodeCondition: the status of a node condition changed (a
	// heartbeat, which changes only the times, is none).
	UpdateNodeCondition
	// UpdateNodeAnnotation: a node's annotations changed.
	UpdateNodeAnnotation
	// UpdateNodeDeclaredFeature: a node's status.declaredFeatures changed.
	UpdateNodeDeclaredFeature
	// UpdateNodePreemptionPolicy: a node's spec.podPreemptionPolicy
	// changed (kube-scheduler v1.37).
	UpdateNodePreemptionPolicy
	// UpdatePodLabel: a pod's labels changed.
	UpdatePodLabel
	// UpdatePodScaleDown: a pod's requests shrank.
	UpdatePodScaleDown
	// UpdatePodScaleUp: a pod's requests grew, or it requests a resource
	// it did not (kube-scheduler v1.37).
	UpdatePodScaleUp
	// UpdatePodToleration: a pod's tolerations changed.
	UpdatePodToleration
	// UpdatePodSchedulingGatesEliminated: a pod's last scheduling gate
	// was removed.
	UpdatePodSchedulingGatesEliminated
	// UpdatePodGeneratedResourceClaim: the claims generated for a pod
	// (status.resourceClaimStatuses) changed.
	UpdatePodGeneratedResourceClaim

	// All is every action.
	All ActionType = 1<<iota - 1
	// Update is every kind of update.
	Update = All &^ (Add | Delete)
	// None is no action.
	None ActionType = 0
)

// ClusterEvent is a change of the cluster: a resource and what happened
// to it. An event raised for an update may carry several update bits.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
}

// Match reports whether a plugin that registered e receives the event
// got: the resource is the same (Pod covering AssignedPod and
// UnscheduledPod; WildCard covering all) and the actions overlap.
func (e ClusterEvent) Match(got ClusterEvent) bool {
	if e.ActionType&got.ActionType == 0 {
		return false
	}
	switch e.Resource {
	case WildCard, got.Resource:
		return true
	case Pod:
		return got.Resource == AssignedPod || got.Resource == UnscheduledPod
	}
	return false
}

// QueueingHint is a hint function's verdict.
type QueueingHint int

const (
	// QueueSkip: the event cannot make the pod schedulable.
	QueueSkip QueueingHint = iota
	// Queue: the event may make the pod schedulable; retry it.
	Queue
)

// String returns "Queue" or "QueueSkip".
func (h QueueingHint) String() string {
	if h == QueueSkip {
		return "QueueSkip"
	}
	return "Queue"
}

// QueueingHintFn decides whether an event, given as its old and new object
// (old nil for an Add, new nil for a Delete), can make pod schedulable
// after the plugin rejected it. An error counts as Queue: a pod must never
// be stranded by a hint that could not decide. It runs with the queue's
// lock held, once per unschedulable pod the plugin rejected: it must be
// quick, allocate little and take no lock.
type QueueingHintFn func(logger *zap.Logger, pod *v1.Pod, oldObj, newObj any) (QueueingHint, error)

// ClusterEventWithHint is one registration: the event, and the hint that
// decides per pod. A nil QueueingHintFn always says Queue.
type ClusterEventWithHint struct {
	Event          ClusterEvent
	QueueingHintFn QueueingHintFn
	// PodInfoHintFn, when set, is called by the queue instead of
	// QueueingHintFn, with the parked pod's PodInfo: a hint that runs for
	// every one of 20,000 parked pods on every completion keeps what it
	// derives from a pod there (PodInfo.HintState), next to the queue's
	// own data, instead of in a memo keyed by the pod. Both must decide
	// alike.
	PodInfoHintFn PodInfoHintFn
	// NodeCheck, set on one of a plugin's Node registrations, says the
	// plugin is node-local: its verdict on a node depends on that node
	// and the pods on it alone, so a Node event changes it on that node
	// only. NodeCheck(pod, node) is false only when the pod fails the
	// plugin on node whatever pods run there (NodeResourcesFit: the
	// node's whole allocatable is smaller than the pod's requests). A pod
	// whose rejectors are all node-local can then only become schedulable
	// on the node of a Node event: the queue wakes it only if every
	// rejector's NodeCheck passes on that node and, on a Node Add, every
	// rejector interested in it says Queue (kube-scheduler wakes it when
	// one interested rejector says Queue). A pod of 64 cpu, rejected by
	// NodeResourcesFit and by tainted nodes' TaintToleration, then stays
	// parked when a node of 32 cpu joins or loses its taint.
	NodeCheck NodeCheckFn
}

// PodInfoHintFn is a QueueingHintFn given the pod's PodInfo.
type PodInfoHintFn func(logger *zap.Logger, pi *PodInfo, oldObj, newObj any) (QueueingHint, error)

// NodeCheckFn is a node-local plugin's check of a pod against one node
// (ClusterEventWithHint.NodeCheck). It must be quick and allocate nothing.
type NodeCheckFn func(pod *v1.Pod, node *v1.Node) bool

// EnqueueExtensions is implemented by a plugin that can reject a pod and
// knows which events can undo that. EventsToRegister is called once, when
// the profile is built. A plugin that can reject pods but does not
// implement it receives every event, as in kube-scheduler; one that
// returns no events is never the reason to wake a pod.
type EnqueueExtensions interface {
	Plugin
	EventsToRegister(ctx context.Context) ([]ClusterEventWithHint, error)
}

// EveryEvent returns the registration of a plugin without
// EnqueueExtensions: every event, no hint.
func EveryEvent() []ClusterEventWithHint {
	return []ClusterEventWithHint{{Event: ClusterEvent{Resource: WildCard, ActionType: All}}}
}

// NodeUpdateActions returns the changes between two versions of a node that
// can matter to scheduling, as kube-scheduler's
// NodeSchedulingPropertiesChange: None for a heartbeat (condition times,
// leases, images) or a resync.
func NodeUpdateActions(oldNode, newNode *v1.Node) ActionType {
	var a ActionType
	if oldNode.Spec.Unschedulable && !newNode.Spec.Unschedulable {
		a |= UpdateNodeTaint
	}
	if !equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable) {
		a |= UpdateNodeAllocatable
	}
	if !maps.Equal(oldNode.Labels, newNode.Labels) {
		a |= UpdateNodeLabel
	}
	if !equality.Semantic.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints) {
		a |= UpdateNodeTaint
	}
	if conditionsChanged(oldNode.Status.Conditions, newNode.Status.Conditions) {
		a |= UpdateNodeCondition
	}
	if !maps.Equal(oldNode.Annotations, newNode.Annotations) {
		a |= UpdateNodeAnnotation
	}
	if !slices.Equal(oldNode.Status.DeclaredFeatures, newNode.Status.DeclaredFeatures) {
		a |= UpdateNodeDeclaredFeature
	}
	if !equality.Semantic.DeepEqual(oldNode.Spec.PodPreemptionPolicy, newNode.Spec.PodPreemptionPolicy) {
		a |= UpdateNodePreemptionPolicy
	}
	return a
}

// conditionsChanged compares conditions by type and status only, without
// allocating: heartbeats rewrite the times every few seconds.
func conditionsChanged(o, n []v1.NodeCondition) bool {
	if len(o) != len(n) {
		return true
	}
	for i := range n {
		found := false
		for j := range o {
			if o[j].Type == n[i].Type {
				found = o[j].Status == n[i].Status
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}

// PodUpdateActions returns the changes between two versions of a pod that
// can matter to other pods' scheduling or to its own, as kube-scheduler's
// PodSchedulingPropertiesChange, or Update when there is none of those
// (any other change).
func PodUpdateActions(oldPod, newPod *v1.Pod) ActionType {
	var a ActionType
	if !maps.Equal(oldPod.Labels, newPod.Labels) {
		a |= UpdatePodLabel
	}
	o, n := FitRequests(oldPod), FitRequests(newPod)
	if scaledDown(&o, &n) {
		a |= UpdatePodScaleDown
	}
	// Both at once when one request grows as another shrinks, as
	// kube-scheduler raises both events.
	if scaledDown(&n, &o) {
		a |= UpdatePodScaleUp
	}
	if len(oldPod.Spec.SchedulingGates) != 0 && len(newPod.Spec.SchedulingGates) == 0 {
		a |= UpdatePodSchedulingGatesEliminated
	}
	if len(oldPod.Spec.Tolerations) != len(newPod.Spec.Tolerations) {
		a |= UpdatePodToleration
	}
	if !equality.Semantic.DeepEqual(oldPod.Status.ResourceClaimStatuses, newPod.Status.ResourceClaimStatuses) ||
		!equality.Semantic.DeepEqual(oldPod.Status.ExtendedResourceClaimStatus, newPod.Status.ExtendedResourceClaimStatus) {
		a |= UpdatePodGeneratedResourceClaim
	}
	if a == None {
		a = Update
	}
	return a
}

// scaledDown reports whether any of requests o shrank or went away in n;
// with the arguments swapped, whether any grew or appeared.
func scaledDown(o, n *Resource) bool {
	return o.MilliCPU > n.MilliCPU || o.Memory > n.Memory || o.EphemeralStorage > n.EphemeralStorage ||
		scalarShrank(o.ScalarResources, n.ScalarResources)
}

func scalarShrank(o, n map[v1.ResourceName]int64) bool {
	for name, q := range o {
		if n[name] < q {
			return true
		}
	}
	return false
}
