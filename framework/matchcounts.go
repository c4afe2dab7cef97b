package framework

import (
	"sync"

	"k8s.io/apimachinery/pkg/labels"
)

// maxMatchCountSelectors bounds how many selectors MatchCounts remembers.
// A backlog is usually a few workloads, each with one selector; when more
// selectors are in use the least recently used one is forgotten.
const maxMatchCountSelectors = 32

// MatchCounts remembers, per (namespace, selector), how many pods on each
// node are in the namespace, not terminating, and match the selector.
//
// A spread constraint needs that count on every node in every cycle, yet
// between two cycles of a backlog only the node that took the last pod
// changed. A count is kept with the generation of the node state it was
// taken from; the cache stamps a fresh, never reused generation on every
// change, so an equal generation means the very same pods and the count is
// reused. Counting drops from every pod in the cluster to the pods of the
// nodes that changed. NodeInfos with generation 0 (built by hand, not by
// the cache) are always counted.
//
// It is safe for concurrent use; callers of one scheduling cycle are
// sequential, so the lock is never contended.
type MatchCounts struct {
	mu      sync.Mutex
	tick    uint64
	entries map[string]*matchCountEntry
}

// matchCountEntry holds one selector's counts, by position in the node list
// last passed; a node at another position is simply counted again.
type matchCountEntry struct {
	used   uint64
	gens   []int64
	counts []int32
}

// NewMatchCounts returns an empty MatchCounts.
func NewMatchCounts() *MatchCounts {
	return &MatchCounts{entries: map[string]*matchCountEntry{}}
}

// CountMatchingPods returns how many of pods are in namespace, not
// terminating, and match selector. An empty selector counts nothing, as in
// kube-scheduler's topology spreading.
func CountMatchingPods(selector labels.Selector, pods []*PodInfo, namespace string) int {
	if selector.Empty() {
		return 0
	}
	n := 0
	for _, pi := range pods {
		p := pi.Pod
		if p.DeletionTimestamp != nil || p.Namespace != namespace {
			continue
		}
		if selector.Matches(labels.Set(p.Labels)) {
			n++
		}
	}
	return n
}

// ForEach calls fn(i, count) for each node in nodes, in order, with the
// number of its pods CountMatchingPods would count. fn must not call back
// into m.
func (m *MatchCounts) ForEach(selector labels.Selector, namespace string, nodes []*NodeInfo, fn func(i int, count int)) {
	if selector.Empty() {
		for i := range nodes {
			fn(i, 0)
		}
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entryLocked(namespace+"/"+selector.String(), len(nodes))
	for i, ni := range nodes {
		if g := ni.Generation; g == 0 || e.gens[i] != g {
			e.counts[i] = int32(CountMatchingPods(selector, ni.Pods, namespace))
			e.gens[i] = g
		}
		fn(i, int(e.counts[i]))
	}
}

// entryLocked returns the entry for key, sized for n nodes, making room for
// it when needed.
func (m *MatchCounts) entryLocked(key string, n int) *matchCountEntry {
	m.tick++
	e, ok := m.entries[key]
	if !ok {
		if len(m.entries) >= maxMatchCountSelectors {
			var oldest string
			var oldestUsed uint64
			for k, v := range m.entries {
				if oldest == "" || v.used < oldestUsed {
					oldest, oldestUsed = k, v.used
				}
			}
			delete(m.entries, oldest)
		}
		e = &matchCountEntry{}
		m.entries[key] = e
	}
	e.used = m.tick
	if len(e.gens) != n {
		// The node list changed length: start over. A zero generation
		// matches no node the cache made.
		e.gens = make([]int64, n)
		e.counts = make([]int32, n)
	}
	return e
}
