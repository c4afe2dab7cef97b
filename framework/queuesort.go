package framework

import (
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

// QueuedPodInfo is a pod waiting in the scheduling queue, with its history
// there: what a QueueSortPlugin orders.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod last entered the queue: when it was added,
	// or when its last attempt failed. It orders pods of equal priority in
	// PrioritySort, and backoff is counted from it.
	Timestamp time.Time
	// InitialAttemptTimestamp is when the pod first became ready to schedule
	// (first entered the active queue); zero while it has never been. The
	// scheduler measures end-to-end scheduling latency from it.
	InitialAttemptTimestamp time.Time
	// Attempts counts how often the pod was taken from the queue.
	Attempts int
	// UnschedulablePlugins names the plugins that rejected the pod in its
	// last attempt. It is read-only: one set may be shared by every pod
	// that the same plugins rejected.
	UnschedulablePlugins sets.Set[string]
}

// QueueSortPlugin orders the pods ready to be scheduled: the scheduler
// takes the first by this order. All profiles share one scheduling queue,
// so they must name the same queue-sort plugin with the same args (the
// configuration is refused otherwise), and a profile names exactly one.
// PrioritySort is the default.
type QueueSortPlugin interface {
	Plugin
	// Less reports whether a goes before b. It is called under the
	// queue's lock, many times per pod: it must be quick, must not block
	// and must not call the scheduler. Pods neither of which goes before
	// the other come out in the order they entered the queue.
	Less(a, b *QueuedPodInfo) bool
}
