package queue

import (
	"github.com/yardmaster-io/yardmaster/framework"
)

// Event is why a pod entered a queue: a move the queue makes itself (a
// failed attempt, a backoff that ran out, ...) or a change it was told of:
// a cluster event the scheduler passes to MoveAllToActiveOrBackoff
// (EventOf labels it), a pod added (UnscheduledPodAdd), or the pod's own
// update (TargetPod events). Its String is the label the Metrics hooks
// receive, spelled as kube-scheduler v1.37 spells its events: the custom
// labels of its queue's own moves, else the resource and the action
// (fwk.ClusterEvent.Label: "NodeAdd", "NodeUpdateNodeTaint",
// "AssignedPodDelete", "PersistentVolumeClaimAdd",
// "storage.k8s.io/CSINodeUpdate", "TargetPodUpdatePodLabel", ...).
type Event uint16

// Events the queue raises itself, and the wildcard event.
const (
	// EventUnknown is the zero Event; nothing raises it.
	EventUnknown Event = iota
	// ScheduleAttemptFailure: a scheduling attempt failed and the pod came back.
	ScheduleAttemptFailure
	// BackoffComplete: the pod's backoff ran out.
	BackoffComplete
	// UnschedulableTimeout: the pod stayed unschedulable for the longest
	// allowed time (Options.MaxUnschedulableStay).
	UnschedulableTimeout
	// PopFromBackoffQ: Pop took the pod from backoffQ, activeQ being empty.
	PopFromBackoffQ
	// ForceActivate: a wildcard event retried every unschedulable pod
	// whatever rejected it (a preemption that did not complete, say).
	ForceActivate

	numQueueEvents // keep last
)

var queueEventNames = [numQueueEvents]string{
	EventUnknown:           "Unknown",
	ScheduleAttemptFailure: "ScheduleAttemptFailure",
	BackoffComplete:        "BackoffComplete",
	UnschedulableTimeout:   "UnschedulableTimeout",
	PopFromBackoffQ:        "PopFromBackoffQ",
	ForceActivate:          "ForceActivate",
}

// actionSlots are the actions an Event names, in the order an event
// carrying several is labelled by: Add and Delete, then the update bits in
// the order kube-scheduler splits an update into events
// (NodeSchedulingPropertiesChange, PodSchedulingPropertiesChange). An
// update that is several changes at once (a node's labels and taints) is
// one event here, labelled by its first; kube-scheduler raises one event
// per change, and a pod the first one does not move may be moved, and
// counted, under the next.
var actionSlots = []struct {
	action framework.ActionType
	name   string
}{
	{framework.Add, "Add"},
	{framework.Delete, "Delete"},
	{framework.UpdateNodeAllocatable, "UpdateNodeAllocatable"},
	{framework.UpdateNodeLabel, "UpdateNodeLabel"},
	{framework.UpdateNodeTaint, "UpdateNodeTaint"},
	{framework.UpdateNodeCondition, "UpdateNodeCondition"},
	{framework.UpdateNodeAnnotation, "UpdateNodeAnnotation"},
	{framework.UpdateNodePreemptionPolicy, "UpdateNodePreemptionPolicy"},
	{framework.UpdateNodeDeclaredFeature, "UpdateNodeDeclaredFeature"},
	{framework.UpdatePodLabel, "UpdatePodLabel"},
	{framework.UpdatePodScaleDown, "UpdatePodScaleDown"},
	{framework.UpdatePodScaleUp, "UpdatePodScaleUp"},
	{framework.UpdatePodSchedulingGatesEliminated, "UpdatePodSchedulingGatesEliminated"},
	{framework.UpdatePodToleration, "UpdatePodToleration"},
	{framework.UpdatePodGeneratedResourceClaim, "UpdatePodGeneratedResourceClaim"},
	// Last, for an event of no specific change: every update, or all.
	{framework.Update, "Update"},
	{framework.All, "All"},
}

// Slots of the events of no specific change.
var (
	updateSlot = len(actionSlots) - 2
	allSlot    = len(actionSlots) - 1
)

// numResources counts framework's event resources; one more, targetPod,
// stands for the pending pod's own updates (kube-scheduler v1.37's
// TargetPod), which reach the queue through Update, not as cluster events.
var numResources = func() int {
	n := 0
	for framework.EventResource(n).String() != "Unknown" {
		n++
	}
	return n
}()

var targetPod = framework.EventResource(numResources)

// eventNames holds every Event's label: the queue's own, then for each
// resource (targetPod last) each action slot.
var eventNames = func() []string {
	names := append([]string(nil), queueEventNames[:]...)
	for r := 0; r <= numResources; r++ {
		resource := framework.EventResource(r).String()
		if framework.EventResource(r) == targetPod {
			resource = "TargetPod"
		}
		for _, s := range actionSlots {
			names = append(names, resource+s.name)
		}
	}
	return names
}()

// NumEvents is one more than the largest Event: a table indexed by Event
// has NumEvents entries.
func NumEvents() int { return len(eventNames) }

// String returns the event's label, "Unknown" for values out of range.
func (e Event) String() string {
	if int(e) >= len(eventNames) {
		return eventNames[EventUnknown]
	}
	return eventNames[e]
}

// EventOf returns the Event a cluster event is counted under: the
// wildcard event is ForceActivate (kube-scheduler's EventForceActivate);
// any other is its resource and its first action (see actionSlots).
func EventOf(ev framework.ClusterEvent) Event {
	if ev.Resource == framework.WildCard {
		return ForceActivate
	}
	if int(ev.Resource) >= numResources {
		return EventUnknown
	}
	return eventFor(ev.Resource, ev.ActionType)
}

// targetPodEvent returns the Event a pending pod is counted under when its
// own update moved it, actions being framework.PodUpdateActions of the
// update.
func targetPodEvent(actions framework.ActionType) Event {
	return eventFor(targetPod, actions)
}

func eventFor(r framework.EventResource, a framework.ActionType) Event {
	slot := -1
	switch a {
	case framework.All:
		slot = allSlot
	case framework.Update:
		slot = updateSlot
	default:
		for i, s := range actionSlots[:updateSlot] {
			if a&s.action != 0 {
				slot = i
				break
			}
		}
	}
	if slot < 0 {
		return EventUnknown
	}
	return Event(int(numQueueEvents) + int(r)*len(actionSlots) + slot)
}

// Events of changes the queue is told of, by the names tests and callers
// use. They are what EventOf returns for the same cluster events.
var (
	// UnscheduledPodAdd: a pending pod was added, or updated while the
	// queue did not hold it (kube-scheduler v1.37 adds it then).
	UnscheduledPodAdd = EventOf(framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add})

	NodeAdd                     = EventOf(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add})
	NodeDelete                  = EventOf(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Delete})
	AssignedPodAdd              = EventOf(framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add})
	AssignedPodDelete           = EventOf(framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete})
	PersistentVolumeAdd         = EventOf(framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Add})
	PersistentVolumeUpdate      = EventOf(framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Update})
	PersistentVolumeClaimAdd    = EventOf(framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add})
	PersistentVolumeClaimUpdate = EventOf(framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Update})
	StorageClassAdd             = EventOf(framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add})
	StorageClassUpdate          = EventOf(framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Update})
	CSINodeAdd                  = EventOf(framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add})
	CSIDriverUpdate             = EventOf(framework.ClusterEvent{Resource: framework.CSIDriver, ActionType: framework.Update})
	CSIStorageCapacityAdd       = EventOf(framework.ClusterEvent{Resource: framework.CSIStorageCapacity, ActionType: framework.Add})
	CSIStorageCapacityUpdate    = EventOf(framework.ClusterEvent{Resource: framework.CSIStorageCapacity, ActionType: framework.Update})
)

// Location is where the queue holds a pod.
type Location int

const (
	// Nowhere: the queue does not know the pod (never added, deleted, or
	// bound and done).
	Nowhere Location = iota
	// ActiveQ: ready to be popped.
	ActiveQ
	// BackoffQ: waiting out its backoff after a failed attempt.
	BackoffQ
	// UnschedulablePods: failed for lack of fit, waiting for a cluster event.
	UnschedulablePods
	// GatedPods: held by spec.schedulingGates.
	GatedPods
	// InFlight: popped, and its scheduling cycle has not ended.
	InFlight

	numLocations // keep last
)

var locationNames = [numLocations]string{
	Nowhere:           "none",
	ActiveQ:           "active",
	BackoffQ:          "backoff",
	UnschedulablePods: "unschedulable",
	GatedPods:         "gated",
	InFlight:          "inFlight",
}

// String returns the location's name as used in metric labels ("active",
// "backoff", "unschedulable", "gated", "inFlight").
func (l Location) String() string {
	if l < 0 || l >= numLocations {
		return "unknown"
	}
	return locationNames[l]
}

// Metrics receives the queue's transitions, for the
// scheduler_queue_incoming_pods_total counter. Queue lengths need no hook:
// a gauge func can read PendingPods.
type Metrics interface {
	// PodQueued is called each time a pod enters queue (ActiveQ, BackoffQ,
	// UnschedulablePods or GatedPods) because of event. It is called with the
	// queue's lock held, so it must be quick and must not call the queue.
	PodQueued(queue Location, event Event)
}

// EntityMetrics is implemented by a Metrics that also counts
// kube-scheduler v1.37's scheduler_queue_incoming_entities_total; the
// queue then calls EntityQueued, besides PodQueued, for the moves that
// counter counts. kube-scheduler counts an entity (a pod, here) arriving
// in a queue unless that queue is the one the move was aimed at: a pod
// that an event, its own update or the unschedulable timeout sends to
// backoffQ, or whose failed attempt sends it to backoffQ or the
// unschedulable pool, is not counted; one that goes to activeQ because
// its backoff is over, one new to the queue, one whose backoff ended, and
// one a PreEnqueue plugin holds back are. The same rules as PodQueued
// apply.
type EntityMetrics interface {
	EntityQueued(queue Location, event Event)
}

type noMetrics struct{}

func (noMetrics) PodQueued(Location, Event) {}
