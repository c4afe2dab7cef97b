package framework

import (
	"fmt"
	"slices"
	"sync"
	"weak"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
)

// Helpers of queueing hints (EnqueueExtensions) that plugins share.

// AsObjects converts a hint's old and new object to T; old is nil for an
// Add, new nil for a Delete. It fails when both are nil or one is another
// type: the queue then retries the pod.
func AsObjects[T any](oldObj, newObj any) (oldT, newT T, err error) {
	var zero T
	if oldObj != nil {
		o, ok := oldObj.(T)
		if !ok {
			return zero, zero, fmt.Errorf("old object is %T, want %T", oldObj, zero)
		}
		oldT = o
	}
	if newObj != nil {
		n, ok := newObj.(T)
		if !ok {
			return zero, zero, fmt.Errorf("new object is %T, want %T", newObj, zero)
		}
		newT = n
	}
	if oldObj == nil && newObj == nil {
		return zero, zero, fmt.Errorf("event without objects, want %T", zero)
	}
	return oldT, newT, nil
}

// AssignedOrNominated reports whether a pod counts on a node: bound, or
// nominated there by a preemption.
func AssignedOrNominated(pod *v1.Pod) bool {
	return pod.Spec.NodeName != "" || pod.Status.NominatedNodeName != ""
}

// MayRunOn reports whether pod can be placed on the node named nodeName
// as far as its spec.nodeName and its required node affinity's
// matchFields metadata.name pins say (the rest of its affinity needs the
// node's labels). It allocates nothing.
func MayRunOn(pod *v1.Pod, nodeName string) bool {
	if nodeName == "" {
		return true
	}
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName == nodeName
	}
	required := RequiredNodeSelector(pod)
	if required == nil || len(required.NodeSelectorTerms) == 0 {
		return true
	}
	for i := range required.NodeSelectorTerms {
		pinned, allowed := false, true
		for _, r := range required.NodeSelectorTerms[i].MatchFields {
			if r.Key != NodeNameField || r.Operator != v1.NodeSelectorOpIn {
				continue
			}
			pinned = true
			if !slices.Contains(r.Values, nodeName) {
				allowed = false
			}
		}
		if !pinned || allowed {
			return true
		}
	}
	return false
}

// OwnPodChanged queues the pod when the event is an update of the pod
// itself (its tolerations grew, say): another pod's change does not help.
func OwnPodChanged(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (QueueingHint, error) {
	_, newPod, err := AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return Queue, err
	}
	if newPod != nil && newPod.UID == pod.UID {
		return Queue, nil
	}
	return QueueSkip, nil
}

// AnyNode is the NodeCheck (ClusterEventWithHint.NodeCheck) of a
// node-local plugin that cannot tell from the node alone: it never rules
// a node out (NodePorts, whose verdict depends on the pods there).
func AnyNode(*v1.Pod, *v1.Node) bool { return true }

// RequiredNodeSelector returns the pod's required node affinity, or nil.
func RequiredNodeSelector(pod *v1.Pod) *v1.NodeSelector {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// maxHintMemo bounds a PodMemo: past it, the memo starts over. It is above
// the pools of unschedulable pods yardmaster is benchmarked with (20,000),
// so a pool's entries survive from one event to the next.
const maxHintMemo = 1 << 16

// PodMemo keeps what a hint derives from a pending pod (its compiled
// affinity, its requests), so that an event that reaches 20,000 pods
// compiles each once, not once per event. Entries are keyed by a weak
// pointer to the pod object: an update of the pod is a new object,
// computed afresh, and the memo keeps no pod alive (a strong key would
// hold every version of every pod a hint ever saw, bound and deleted ones
// too, until the memo starts over). A weak pointer made from an object
// never equals one made from another, even at a reused address, so an
// entry whose pod is gone is never hit again; it waits for the restart.
// The values hold nothing of the pod object itself. The queue calls hints
// one at a time; the lock only makes the memo safe to share.
type PodMemo[T any] struct {
	mu sync.Mutex
	m  map[weak.Pointer[v1.Pod]]T
}

// Get returns what compute derived from pod, computing it once.
func (m *PodMemo[T]) Get(pod *v1.Pod, compute func(*v1.Pod) T) T {
	key := weak.Make(pod)
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.m[key]; ok {
		return v
	}
	if m.m == nil || len(m.m) >= maxHintMemo {
		m.m = make(map[weak.Pointer[v1.Pod]]T)
	}
	v := compute(pod)
	m.m[key] = v
	return v
}
