package scheduler

// Answers reused across cycles for pods that look alike to the plugins
// (framework.PodSigner): the replicas of a Deployment, the pods of a Job.
//
// A profile keeps, per pod signature, the answer of its signing filters
// and the raw scores of its signing scorers for every node slot, stamped
// with the node's Generation. A cycle for a pod with a known signature
// asks a plugin only about the nodes that changed since (in a backlog
// drain: the few the last cycles placed pods on); the other plugins (the
// ones whose answer depends on other nodes, such as PodTopologySpread and
// InterPodAffinity) run as usual. The answers are the plugins' own, so
// placements, statuses and messages are the same as without the memo;
// only plugin metrics skip the calls not made.

// maxSignatures bounds the signatures a profile keeps answers for; the one
// used longest ago goes first. A workload's pods share one, so this is how
// many workloads may interleave in a backlog before answers are dropped.
const maxSignatures = 16

// slotAnswers are one signature's answers by node slot: width values per
// slot, valid while gens holds the node's Generation.
type slotAnswers[T any] struct {
	used  uint64
	width int
	gens  []int64
	vals  []T
}

// fit makes room for slots slots.
func (a *slotAnswers[T]) fit(slots int) {
	if len(a.gens) < slots {
		n := max(slots, 2*len(a.gens))
		a.gens = append(a.gens, make([]int64, n-len(a.gens))...)
		a.vals = append(a.vals, make([]T, n*a.width-len(a.vals))...)
	}
}

// get returns the answers of the node in slot, if they were recorded for
// its generation gen.
func (a *slotAnswers[T]) get(slot int, gen int64) ([]T, bool) {
	if a == nil || slot <= 0 || slot >= len(a.gens) || gen == 0 || a.gens[slot] != gen {
		return nil, false
	}
	return a.vals[slot*a.width : (slot+1)*a.width], true
}

// put returns where the answers of the node in slot go, or nil when they
// cannot be kept (a NodeInfo the cache did not make, such as a what-if
// copy, has slot and generation 0). The caller fills it, then calls done
// with the node's generation.
func (a *slotAnswers[T]) put(slot int, gen int64) []T {
	if a == nil || slot <= 0 || slot >= len(a.gens) || gen == 0 {
		return nil
	}
	a.gens[slot] = 0 // not valid while being written
	return a.vals[slot*a.width : (slot+1)*a.width]
}

// done marks the answers written through put as those of generation gen.
func (a *slotAnswers[T]) done(slot int, gen int64) { a.gens[slot] = gen }

// answerMemo maps signatures to their answers. It is used by the
// scheduling goroutine only; within a cycle, workers write the slots of
// different nodes.
type answerMemo[T any] struct {
	bySig map[string]*slotAnswers[T]
	clock uint64
}

// answers returns the answers kept under sig, new ones when there are
// none, sized for slots node slots and width values per slot.
func (m *answerMemo[T]) answers(sig []byte, width, slots int) *slotAnswers[T] {
	m.clock++
	a, ok := m.bySig[string(sig)]
	if !ok {
		if m.bySig == nil {
			m.bySig = map[string]*slotAnswers[T]{}
		}
		if len(m.bySig) >= maxSignatures {
			a = m.evict()
		} else {
			a = &slotAnswers[T]{}
		}
		if a.width != width {
			a.width, a.gens, a.vals = width, nil, nil
		}
		m.bySig[string(sig)] = a
	}
	a.used = m.clock
	a.fit(slots)
	return a
}

// evict drops the least recently used signature and returns its answers,
// cleared, for reuse.
func (m *answerMemo[T]) evict() *slotAnswers[T] {
	var oldest string
	var a *slotAnswers[T]
	for sig, x := range m.bySig {
		if a == nil || x.used < a.used {
			oldest, a = sig, x
		}
	}
	delete(m.bySig, oldest)
	clear(a.gens)
	return a
}

// signatures holds a profile's memos and the buffer signatures are built in.
type signatures struct {
	filters answerMemo[rejection]
	scores  answerMemo[int64]
	buf     []byte
}
