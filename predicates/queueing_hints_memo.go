package predicates

import (
	"sync"
	"weak"

	v1 "k8s.io/api/core/v1"
)

// maxHintMemo bounds a podMemo: past it, the memo starts over. It is above
// the pools of unschedulable pods yardmaster is benchmarked with (20,000),
// so a pool's entries survive from one event to the next.
const maxHintMemo = 1 << 16

// podMemo keeps what a hint derives from a pending pod (its compiled
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
type podMemo[T any] struct {
	mu sync.Mutex
	m  map[weak.Pointer[v1.Pod]]T
}

func (m *podMemo[T]) get(pod *v1.Pod, compute func(*v1.Pod) T) T {
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
