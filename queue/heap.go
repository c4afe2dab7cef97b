package queue

import (
	"container/heap"

	"k8s.io/apimachinery/pkg/types"
)

// podHeap is a binary heap of queued pods with an index from UID to item, and
// each item knows its position, so that lookup is O(1) and add, pop, remove
// and fix are O(log n). Swaps touch only the two items, never the map. It is
// not safe for concurrent use; the PriorityQueue's lock guards it.
type podHeap struct {
	items []*heapItem
	pos   map[types.UID]*heapItem
	// compare orders pods; negative means a comes out before b.
	compare func(a, b *QueuedPodInfo) int
	// seq numbers insertions, see heapItem.seq.
	seq uint64
}

type heapItem struct {
	pod *QueuedPodInfo
	// index is the item's position in items.
	index int
	// seq breaks ties between pods that compare equal in insertion order:
	// container/heap is not stable, and with a coarse (or fake) clock two pods
	// of the same priority often carry the same Timestamp.
	seq uint64
}

var _ heap.Interface = (*podHeap)(nil)

func newPodHeap(compare func(a, b *QueuedPodInfo) int) *podHeap {
	return &podHeap{pos: make(map[types.UID]*heapItem), compare: compare}
}

// Len, Less, Swap, Push and Pop implement heap.Interface; use the lower-case
// methods below instead.

func (h *podHeap) Len() int { return len(h.items) }

func (h *podHeap) Less(i, j int) bool {
	if c := h.compare(h.items[i].pod, h.items[j].pod); c != 0 {
		return c < 0
	}
	return h.items[i].seq < h.items[j].seq
}

func (h *podHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index = i
	h.items[j].index = j
}

func (h *podHeap) Push(x any) {
	it := x.(*heapItem)
	it.index = len(h.items)
	h.items = append(h.items, it)
	h.pos[it.pod.Pod.UID] = it
}

func (h *podHeap) Pop() any {
	last := len(h.items) - 1
	it := h.items[last]
	h.items[last] = nil // drop the reference so the pod can be collected
	h.items = h.items[:last]
	delete(h.pos, it.pod.Pod.UID)
	return it
}

// add inserts qpi, whose UID must not be in the heap, and reports whether it
// became the head.
func (h *podHeap) add(qpi *QueuedPodInfo) (head bool) {
	h.seq++
	it := &heapItem{pod: qpi, seq: h.seq}
	heap.Push(h, it)
	return it.index == 0
}

// get returns the pod with uid.
func (h *podHeap) get(uid types.UID) (*QueuedPodInfo, bool) {
	it, ok := h.pos[uid]
	if !ok {
		return nil, false
	}
	return it.pod, true
}

// fix restores the order after the pod with uid changed in a way compare
// sees. It keeps the pod's insertion number.
func (h *podHeap) fix(uid types.UID) {
	if it, ok := h.pos[uid]; ok {
		heap.Fix(h, it.index)
	}
}

// remove takes out the pod with uid.
func (h *podHeap) remove(uid types.UID) (*QueuedPodInfo, bool) {
	it, ok := h.pos[uid]
	if !ok {
		return nil, false
	}
	return heap.Remove(h, it.index).(*heapItem).pod, true
}

// peek returns the head, or nil when the heap is empty.
func (h *podHeap) peek() *QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0].pod
}

// pop takes out the head; the heap must not be empty.
func (h *podHeap) pop() *QueuedPodInfo {
	return heap.Pop(h).(*heapItem).pod
}

func (h *podHeap) len() int { return len(h.items) }
