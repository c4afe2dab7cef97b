package framework

import (
	"context"
	"slices"
	"sync"
)

// maxMemoKeys bounds how many keys a NodeMemo remembers. A backlog is
// usually a few workloads, each with one selector; when more keys are in
// use the least recently used one is forgotten.
const maxMemoKeys = 32

// memoParallelAbove is how many nodes must need computing before a NodeMemo
// computes them in parallel; fewer are cheaper on the calling goroutine.
const memoParallelAbove = 256

// NodeMemo remembers, per key and node, a value computed from the node's
// pods, so that a pre-step that aggregates over every node (how many pods
// match a spread selector, an anti-affinity term) recomputes only the
// nodes that changed since it last ran for that key. Between two cycles of
// a backlog that is the one node that took the last pod.
//
// A value is kept with the generation of the node state it was computed
// from, filed under the node's Slot. The cache stamps a fresh, never reused
// generation on every change, so an equal generation means the same pods
// and the value is reused. The key must name everything else the value
// depends on (a selector, a namespace, a namespace's labels). NodeInfos the
// cache did not make (generation 0) are always computed.
//
// It is safe for concurrent use; the callers of one scheduling cycle are
// sequential, so its lock is not contended.
type NodeMemo[T any] struct {
	parallelizer Parallelizer

	mu      sync.Mutex
	tick    uint64
	entries map[string]*memoEntry[T]
	// stale and fresh are scratch space for ForEach and SyncTotal.
	stale []int
	fresh []T
}

// memoEntry holds one key's values by slot and, for SyncTotal, the
// running total of those values.
type memoEntry[T any] struct {
	used   uint64
	gens   []int64
	values []T

	// For SyncTotal: total is the running total; seen[slot] is the last
	// call that listed the slot; transient are the values of the last
	// call's nodes that could not be filed, to take out of total next time.
	total     any
	seen      []uint64
	transient []T
	// epoch changes when the entry is handed to another key, which voids
	// the NodeValues given out for this one.
	epoch uint64
}

// NodeValues are the values a memo holds for one key by node, as of the
// SyncTotal call that returned them. They are the memo's: valid, like the
// total, until the next call for the key.
type NodeValues[T any] struct {
	entry *memoEntry[T]
	epoch uint64
}

// Get returns the value filed for ni's node state, and false when there is
// none (ni is not the cache's, or not in the last call's nodes): the
// caller then computes what it needs another way.
func (v NodeValues[T]) Get(ni *NodeInfo) (T, bool) {
	return v.GetSlot(ni.Slot, ni.Generation)
}

// GetSlot is Get for the node in slot with generation gen, read from the
// snapshot's arrays (NodeSlots) rather than from its NodeInfo.
func (v NodeValues[T]) GetSlot(slot int, gen int64) (T, bool) {
	var zero T
	e := v.entry
	if e == nil || e.epoch != v.epoch || gen == 0 || slot <= 0 || slot >= len(e.gens) || e.gens[slot] != gen {
		return zero, false
	}
	return e.values[slot], true
}

// NewNodeMemo returns an empty memo that computes on p's workers when many
// nodes need computing.
func NewNodeMemo[T any](p Parallelizer) *NodeMemo[T] {
	return &NodeMemo[T]{parallelizer: p, entries: map[string]*memoEntry[T]{}}
}

// ForEach calls fn(i, v) for each nodes[i], in order, where v is
// compute(nodes[i]): remembered when that node state was computed for key
// before, computed (in parallel when there are many) otherwise. compute
// must only read the NodeInfo; fn must not call back into m. There is no
// context: values are always computed to the end, as one a worker left
// half done would be filed as a result.
func (m *NodeMemo[T]) ForEach(key string, nodes []*NodeInfo, compute func(*NodeInfo) T, fn func(i int, v T)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entryLocked(key)

	stale := m.stale[:0]
	for i, ni := range nodes {
		if ni.Generation == 0 || ni.Slot <= 0 {
			continue // not the cache's: computed below, never filed
		}
		if ni.Slot >= len(e.gens) {
			e.grow(ni.Slot + 1)
		}
		if e.gens[ni.Slot] != ni.Generation {
			stale = append(stale, i)
		}
	}
	m.stale = stale
	// Computed into scratch space first: two NodeInfos could share a slot
	// (the snapshot lists each node once, but the memo does not rely on it).
	fresh := m.computeLocked(nodes, stale, compute)
	for j, i := range stale {
		ni := nodes[i]
		e.gens[ni.Slot], e.values[ni.Slot] = ni.Generation, fresh[j]
	}
	m.releaseLocked(fresh)

	for i, ni := range nodes {
		if ni.Generation == 0 || ni.Slot <= 0 || e.gens[ni.Slot] != ni.Generation {
			// Not the cache's, or another NodeInfo of the list took the
			// slot: computed, not filed.
			fn(i, compute(ni))
			continue
		}
		fn(i, e.values[ni.Slot])
	}
}

// computeLocked returns compute(nodes[i]) for each i of stale, in that
// order, in the memo's scratch space: on p's workers when there are many,
// on the calling goroutine otherwise. Hand the slice back with
// releaseLocked.
func (m *NodeMemo[T]) computeLocked(nodes []*NodeInfo, stale []int, compute func(*NodeInfo) T) []T {
	fresh := slices.Grow(m.fresh[:0], len(stale))[:len(stale)]
	if len(stale) > memoParallelAbove {
		m.parallelizer.Until(context.Background(), len(stale), func(j int) { fresh[j] = compute(nodes[stale[j]]) })
		return fresh
	}
	for j, i := range stale {
		fresh[j] = compute(nodes[i])
	}
	return fresh
}

// releaseLocked keeps fresh as scratch space, holding no values.
func (m *NodeMemo[T]) releaseLocked(fresh []T) {
	clear(fresh)
	m.fresh = fresh
}

// entryLocked returns the entry for key, making room for it when needed.
func (m *NodeMemo[T]) entryLocked(key string) *memoEntry[T] {
	m.tick++
	e, ok := m.entries[key]
	if !ok {
		if len(m.entries) >= maxMemoKeys {
			// The least recently used entry makes room, and its arrays are
			// the new key's: pods whose keys never repeat (a StatefulSet's
			// pods each have a label of their own) then cost the memo no
			// allocation per cycle, only the computing they cost anyway.
			var oldest string
			var oldestEntry *memoEntry[T]
			for k, v := range m.entries {
				if oldestEntry == nil || v.used < oldestEntry.used {
					oldest, oldestEntry = k, v
				}
			}
			e = oldestEntry
			e.epoch++
			delete(m.entries, oldest)
			clear(e.gens) // a zero generation matches no node the cache made
			clear(e.values)
			clear(e.seen)
			clear(e.transient)
			e.total, e.transient = nil, e.transient[:0]
		} else {
			e = &memoEntry[T]{}
		}
		m.entries[key] = e
	}
	e.used = m.tick
	return e
}

// grow makes room for slots below n, with headroom for nodes to come.
func (e *memoEntry[T]) grow(n int) {
	n = max(n, 2*len(e.gens), 64)
	gens := make([]int64, n)
	values := make([]T, n)
	seen := make([]uint64, n)
	copy(gens, e.gens)
	copy(values, e.values)
	copy(seen, e.seen)
	e.gens, e.values, e.seen = gens, values, seen
}

// SyncTotal keeps, per key, a running total over nodes of compute(node),
// such as pods per topology domain, and returns it: made by newTotal the
// first time (and after the key was forgotten), then brought up to date by
// apply(total, v, +1) for each value that enters it and apply(total, v, -1)
// for each that leaves it. Between two cycles of a backlog that is one node
// out and in again, where summing from scratch would visit every node.
//
// A value enters when its node is listed with a node state not summed
// before, and leaves when that node state changes or the node is no longer
// listed; so the total is always that of the nodes of the last call. Values
// must therefore carry all they depend on (the domain a count is for, not
// just the count), as apply gets nothing else when a value leaves.
//
// The total belongs to the memo: callers may read it until their next
// call for the key and must not change it. So may they the values by node,
// also returned: a node's own share, where the total is per domain and a
// domain is known to hold that one node. A key is used either with ForEach
// or with SyncTotal, never both.
//
// slots, when they are those of the snapshot nodes comes from (see
// NodeSlots.Lists), let the memo find the nodes that changed by comparing
// two arrays of generations, without reading every NodeInfo.
func SyncTotal[T, S any](m *NodeMemo[T], key string, nodes []*NodeInfo, slots NodeSlots, compute func(*NodeInfo) T, newTotal func() S, apply func(total S, v T, sign int64)) (S, NodeValues[T]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entryLocked(key)
	total, ok := e.total.(S)
	if !ok {
		total = newTotal()
		e.total = total
		// Values filed for another kind of total (never, by the contract)
		// or before the total was made are not in it.
		clear(e.gens)
		clear(e.values)
		clear(e.seen)
		e.transient = e.transient[:0]
	}
	for _, v := range e.transient {
		apply(total, v, -1)
	}
	clear(e.transient)
	e.transient = e.transient[:0]
	if slots.Lists(nodes) {
		m.syncBySlotLocked(e, slots, compute, func(v T, sign int64) { apply(total, v, sign) })
		return total, NodeValues[T]{entry: e, epoch: e.epoch}
	}
	call := m.tick // fresh for every call (entryLocked advanced it)

	// The listed nodes whose state is not in the total, and those that
	// cannot be filed: not made by the cache, or a second NodeInfo with a
	// slot already listed.
	stale := m.stale[:0]
	var unfiled []int
	for i, ni := range nodes {
		if ni.Generation == 0 || ni.Slot <= 0 {
			unfiled = append(unfiled, i)
			continue
		}
		if ni.Slot >= len(e.gens) {
			e.grow(ni.Slot + 1)
		}
		if e.seen[ni.Slot] == call {
			unfiled = append(unfiled, i)
			continue
		}
		e.seen[ni.Slot] = call
		if e.gens[ni.Slot] != ni.Generation {
			stale = append(stale, i)
		}
	}
	m.stale = stale

	fresh := m.computeLocked(nodes, stale, compute)
	var zero T
	for j, i := range stale {
		ni := nodes[i]
		if e.gens[ni.Slot] != 0 {
			apply(total, e.values[ni.Slot], -1)
		}
		e.gens[ni.Slot], e.values[ni.Slot] = ni.Generation, fresh[j]
		apply(total, fresh[j], +1)
	}
	m.releaseLocked(fresh)

	// Nodes summed before and not listed now (deleted, or no longer
	// holding what the caller lists nodes for) leave the total.
	for slot, gen := range e.gens {
		if gen != 0 && e.seen[slot] != call {
			apply(total, e.values[slot], -1)
			e.gens[slot], e.values[slot] = 0, zero
		}
	}
	for _, i := range unfiled {
		v := compute(nodes[i])
		apply(total, v, +1)
		e.transient = append(e.transient, v)
	}
	return total, NodeValues[T]{entry: e, epoch: e.epoch}
}

// NodeSlots are a snapshot's nodes by NodeInfo.Slot: Nodes[s] is the node
// with slot s, Gens[s] its generation and Names[s] its name; all are zero
// for a slot no node has. List is the snapshot's list of the same nodes
// and ListSlots their slots, in List's order. A loop over every node that
// needs only these reads contiguous arrays, not thousands of NodeInfos
// spread over the heap.
type NodeSlots struct {
	List      []*NodeInfo
	ListSlots []int
	Nodes     []*NodeInfo
	Gens      []int64
	Names     []string
}

// Lists reports whether nodes is the list of the snapshot the slots are
// of: the same slice, not only the same nodes.
func (s NodeSlots) Lists(nodes []*NodeInfo) bool {
	return len(nodes) > 0 && len(nodes) == len(s.List) && &nodes[0] == &s.List[0]
}

// syncBySlotLocked brings e and its total (through apply) up to date with
// the snapshot's nodes by slot: a slot whose generation differs from the
// one filed takes its value out, and in again computed anew when a node
// has the slot.
func (m *NodeMemo[T]) syncBySlotLocked(e *memoEntry[T], slots NodeSlots, compute func(*NodeInfo) T, apply func(v T, sign int64)) {
	if len(e.gens) < len(slots.Gens) {
		e.grow(len(slots.Gens))
	}
	var zero T
	stale := m.stale[:0]
	for slot := 1; slot < len(e.gens); slot++ {
		var gen int64
		if slot < len(slots.Gens) {
			gen = slots.Gens[slot]
		}
		if e.gens[slot] == gen {
			continue
		}
		if e.gens[slot] != 0 {
			apply(e.values[slot], -1)
			e.gens[slot], e.values[slot] = 0, zero
		}
		if gen != 0 {
			stale = append(stale, slot)
		}
	}
	m.stale = stale
	fresh := m.computeLocked(slots.Nodes, stale, compute)
	for j, slot := range stale {
		e.gens[slot], e.values[slot] = slots.Gens[slot], fresh[j]
		apply(fresh[j], +1)
	}
	m.releaseLocked(fresh)
}
