package queue

// Event is why a pod entered a queue: a change the queue saw itself (a pod
// added, a failed attempt, a backoff that ran out) or a cluster event that
// the scheduler passes to MoveAllToActiveOrBackoff (as a
// framework.ClusterEvent, which the queue labels with an Event). Its String is the label
// the Metrics hook receives, spelled as kube-scheduler spells its events.
type Event int

// Events the queue raises itself.
const (
	// EventUnknown is the zero Event; nothing raises it.
	EventUnknown Event = iota
	// PodAdd: the informer delivered a new pending pod.
	PodAdd
	// PodUpdate: the informer delivered a change to a pending pod (its gates
	// were removed, or its spec or labels changed while it was unschedulable).
	PodUpdate
	// ScheduleAttemptFailure: a scheduling attempt failed and the pod came back.
	ScheduleAttemptFailure
	// BackoffComplete: the pod's backoff ran out.
	BackoffComplete
	// UnschedulableTimeout: the pod stayed unschedulable for the longest
	// allowed time (Options.MaxUnschedulableStay).
	UnschedulableTimeout
	// PopFromBackoffQ: Pop took the pod from backoffQ, activeQ being empty.
	PopFromBackoffQ

	// Cluster events, which may make unschedulable pods fit. The scheduler's
	// informer handlers pass them to MoveAllToActiveOrBackoff.

	// NodeAdd: a node was added.
	NodeAdd
	// NodeUpdate: a node's allocatable, labels, taints, conditions or
	// unschedulable flag changed.
	NodeUpdate
	// NodeDelete: a node was deleted.
	NodeDelete
	// AssignedPodAdd: a pod was bound to a node (affinity may now match).
	AssignedPodAdd
	// AssignedPodUpdate: a bound pod changed (its labels, or it shrank).
	AssignedPodUpdate
	// AssignedPodDelete: a bound pod went away and freed its resources.
	AssignedPodDelete
	// UnscheduledPodAdd: a pending pod was added.
	UnscheduledPodAdd
	// UnscheduledPodUpdate: a pending pod changed.
	UnscheduledPodUpdate
	// UnscheduledPodDelete: a pending pod was deleted.
	UnscheduledPodDelete
	// PersistentVolumeAdd: a PersistentVolume was added.
	PersistentVolumeAdd
	// PersistentVolumeUpdate: a PersistentVolume changed.
	PersistentVolumeUpdate
	// PersistentVolumeClaimAdd: a PersistentVolumeClaim was added.
	PersistentVolumeClaimAdd
	// PersistentVolumeClaimUpdate: a PersistentVolumeClaim changed.
	PersistentVolumeClaimUpdate
	// StorageClassAdd: a StorageClass was added.
	StorageClassAdd
	// StorageClassUpdate: a StorageClass's allowedTopologies changed.
	StorageClassUpdate
	// CSINodeAdd: a CSINode was added.
	CSINodeAdd
	// CSINodeUpdate: a CSINode's drivers or migrated plugins changed.
	CSINodeUpdate
	// CSIDriverUpdate: a CSIDriver changed (it stopped publishing storage
	// capacity, say).
	CSIDriverUpdate
	// CSIStorageCapacityAdd: a CSIStorageCapacity was added.
	CSIStorageCapacityAdd
	// CSIStorageCapacityUpdate: a CSIStorageCapacity changed.
	CSIStorageCapacityUpdate
	// VolumeAttachmentDelete: a VolumeAttachment was deleted (a volume
	// detached from its node).
	VolumeAttachmentDelete
	// NodeMetricsUpdate: a metric plugin has a new measurement of the
	// nodes.
	NodeMetricsUpdate
	// ResourceClaimAdd: a ResourceClaim was added.
	ResourceClaimAdd
	// ResourceClaimUpdate: a ResourceClaim changed as the scheduler sees it
	// (allocated, reserved, deallocated), by the API or by the scheduler's
	// own writes.
	ResourceClaimUpdate
	// ResourceSliceAdd: a ResourceSlice was added.
	ResourceSliceAdd
	// ResourceSliceUpdate: a ResourceSlice changed.
	ResourceSliceUpdate
	// DeviceClassAdd: a DeviceClass was added.
	DeviceClassAdd
	// DeviceClassUpdate: a DeviceClass changed.
	DeviceClassUpdate
	// ForceActivate: every unschedulable pod is retried, whatever
	// rejected it (a preemption that did not complete, say).
	ForceActivate

	numEvents // keep last
)

var eventNames = [numEvents]string{
	EventUnknown:                "Unknown",
	PodAdd:                      "PodAdd",
	PodUpdate:                   "PodUpdate",
	ScheduleAttemptFailure:      "ScheduleAttemptFailure",
	BackoffComplete:             "BackoffComplete",
	UnschedulableTimeout:        "UnschedulableTimeout",
	PopFromBackoffQ:             "PopFromBackoffQ",
	NodeAdd:                     "NodeAdd",
	NodeUpdate:                  "NodeUpdate",
	NodeDelete:                  "NodeDelete",
	AssignedPodAdd:              "AssignedPodAdd",
	AssignedPodUpdate:           "AssignedPodUpdate",
	AssignedPodDelete:           "AssignedPodDelete",
	UnscheduledPodAdd:           "UnscheduledPodAdd",
	UnscheduledPodUpdate:        "UnscheduledPodUpdate",
	UnscheduledPodDelete:        "UnscheduledPodDelete",
	PersistentVolumeAdd:         "PvAdd",
	PersistentVolumeUpdate:      "PvUpdate",
	PersistentVolumeClaimAdd:    "PvcAdd",
	PersistentVolumeClaimUpdate: "PvcUpdate",
	StorageClassAdd:             "StorageClassAdd",
	StorageClassUpdate:          "StorageClassUpdate",
	CSINodeAdd:                  "CSINodeAdd",
	CSINodeUpdate:               "CSINodeUpdate",
	CSIDriverUpdate:             "CSIDriverUpdate",
	CSIStorageCapacityAdd:       "CSIStorageCapacityAdd",
	CSIStorageCapacityUpdate:    "CSIStorageCapacityUpdate",
	VolumeAttachmentDelete:      "VolumeAttachmentDelete",
	NodeMetricsUpdate:           "NodeMetricsUpdate",
	ResourceClaimAdd:            "ResourceClaimAdd",
	ResourceClaimUpdate:         "ResourceClaimUpdate",
	ResourceSliceAdd:            "ResourceSliceAdd",
	ResourceSliceUpdate:         "ResourceSliceUpdate",
	DeviceClassAdd:              "DeviceClassAdd",
	DeviceClassUpdate:           "DeviceClassUpdate",
	ForceActivate:               "ForceActivate",
}

// String returns the event's name, "Unknown" for values out of range.
func (e Event) String() string {
	if e < 0 || e >= numEvents {
		return eventNames[EventUnknown]
	}
	return eventNames[e]
}

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

type noMetrics struct{}

func (noMetrics) PodQueued(Location, Event) {}
