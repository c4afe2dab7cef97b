package scheduler

import (
	"context"
	"encoding/binary"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
)

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

// filterAnswers signs pod for the longest run of active filters (indexes
// into prof.filter) from the first whose plugins all sign, and returns
// their answers with the length of that run; nil and 0 when the first
// filter does not sign. The answer kept per node is the run's verdict: the
// first rejection, or none.
func (s *Scheduler) filterAnswers(prof *profile, state *framework.CycleState, pod *v1.Pod, active []int) (*slotAnswers[rejection], int) {
	if s.noShortcuts {
		return nil, 0
	}
	sig := prof.signatures.buf[:0]
	n := 0
	for _, i := range active {
		signer, ok := prof.filter[i].(framework.PodSigner)
		if !ok {
			break
		}
		before := len(sig)
		sig = binary.AppendUvarint(sig, uint64(i))
		if sig, ok = signer.SignPod(state, pod, sig); !ok {
			sig = sig[:before] // the run ends before this plugin
			break
		}
		n++
	}
	prof.signatures.buf = sig
	if n == 0 {
		return nil, 0
	}
	// The run's length is in the signature: the plugin indexes that open
	// each fragment say which plugins signed.
	return prof.signatures.filters.answers(sig, 1, len(s.snapshot.Slots().Nodes)), n
}

// runFiltersSigned is runFilters for a node, in slot with generation gen,
// whose first n active filters have kept answers: their verdict is read,
// or computed and kept; the rest run as usual.
func runFiltersSigned(ctx context.Context, prof *profile, active []int, n int, answers *slotAnswers[rejection], slot int, gen int64, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, timers []*metrics.PluginTimer) (*framework.Status, string) {
	if got, ok := answers.get(slot, gen); ok {
		if got[0].status != nil {
			return got[0].status, got[0].plugin
		}
	} else {
		st, by := runFilters(ctx, prof, active[:n], state, pod, ni, timers)
		// An error is no answer to keep: it ends the attempt.
		if kept := answers.put(slot, gen); kept != nil && ctx.Err() == nil && st.Code() != framework.Error {
			kept[0] = rejection{status: st, plugin: by}
			answers.done(slot, gen)
		}
		if !st.IsSuccess() {
			return st, by
		}
	}
	if n == len(active) {
		return nil, ""
	}
	return runFiltersAt(ctx, prof, active[n:], state, pod, ni, slot, gen, timers)
}

// scoreAnswers signs pod for the scorers that sign (scorers are the
// cycle's, Skip left out) and returns their answers with, parallel to
// scorers, each one's column in them or -1; nil when none signs.
func (s *Scheduler) scoreAnswers(prof *profile, state *framework.CycleState, pod *v1.Pod, scorers []weightedScorer, columns []int) (*slotAnswers[int64], []int) {
	columns = columns[:0]
	sig := prof.signatures.buf[:0]
	width := 0
	for _, sc := range scorers {
		column := -1
		if signer, ok := sc.ScorePlugin.(framework.PodSigner); ok && !s.noShortcuts {
			before := len(sig)
			sig = framework.SignString(sig, sc.Name())
			if sig, ok = signer.SignPod(state, pod, sig); ok {
				column = width
				width++
			} else {
				sig = sig[:before]
			}
		}
		columns = append(columns, column)
	}
	prof.signatures.buf = sig
	if width == 0 {
		return nil, columns
	}
	return prof.signatures.scores.answers(sig, width, len(s.snapshot.Slots().Nodes)), columns
}
