package scheduler

// Kept explanations: what the last attempt of each pod that stays Pending
// found, readable by explain without running a cycle.
//
// A failed attempt already has its FitError: the reasons counted per node
// and, since the per-node loop gives one shared status per fixed reason,
// a short list of distinct rejections with their plugin (FitError.tally).
// Only those counts and a few node names per reason are kept, not a
// verdict per node, so a pod costs a few hundred bytes whatever the size
// of the cluster; at most maxKept pods are kept, the oldest attempt going
// first. A pod's entry goes when it is placed, and the cleanup loop drops
// those of pods that are gone or bound elsewhere.

import (
	"slices"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/explain"
)

// maxKept bounds the pods whose last attempt is kept.
const maxKept = 10000

// keptPruneTicks is how many ticks of the cache cleanup loop (one a
// second) go between two prunes: a deleted pod's entry may linger that
// long, and a prune reads the informer once per kept pod.
const keptPruneTicks = 30

// keptAttempt is one pod's last failed attempt.
type keptAttempt struct {
	namespace, name string
	profile         string
	attempts        int
	at              time.Time
	nodes           int
	message         string
	counts          []explain.ReasonCount
	preFilter       *explain.Rejection
	// seq orders the records: the entry of order that holds it is live.
	seq uint64
}

// keptRef is an entry of keptExplanations.order.
type keptRef struct {
	uid types.UID
	seq uint64
}

// keptExplanations are the kept attempts by pod UID. Written by the
// scheduling goroutine, read by /debug/explain: mu guards them.
type keptExplanations struct {
	mu    sync.Mutex
	byUID map[types.UID]*keptAttempt
	// order lists the records oldest first, so that the oldest is
	// evicted without a scan of byUID (a full store evicts on every
	// record: with 20,000 pods pending, a scan of 10,000 entries per
	// attempt was 40% of an idle scheduler's CPU). An entry whose pod was
	// recorded again since, or forgotten, is stale and skipped.
	order []keptRef
	seq   uint64
	// dropped counts the entries evicted to stay within maxKept.
	dropped int
	// lastCounts are the counts recorded last: an attempt that counted
	// the same keeps them, not a copy (read-only once recorded), so that
	// a pool of pods turned away alike keeps one.
	lastCounts []explain.ReasonCount
}

// record keeps pod's failed attempt, fitErr its result.
func (k *keptExplanations) record(pod *v1.Pod, profile string, attempts int, fitErr *FitError, now time.Time) {
	a := &keptAttempt{namespace: pod.Namespace, name: pod.Name, profile: profile, attempts: attempts, at: now,
		nodes: fitErr.NumAllNodes, message: fitErr.Error()}
	if fitErr.PreFilterMessage != "" {
		a.preFilter = &explain.Rejection{Plugin: fitErr.preFilterPlugin, Reasons: []string{fitErr.PreFilterMessage}, Unresolvable: fitErr.Unresolvable}
	}
	a.counts = keptCounts(fitErr)
	k.mu.Lock()
	defer k.mu.Unlock()
	if sameCounts(a.counts, k.lastCounts) {
		a.counts = k.lastCounts
	} else {
		k.lastCounts = a.counts
	}
	if k.byUID == nil {
		k.byUID = map[types.UID]*keptAttempt{}
	}
	if _, ok := k.byUID[pod.UID]; !ok && len(k.byUID) >= maxKept {
		k.evictOldestLocked()
	}
	k.seq++
	a.seq = k.seq
	k.byUID[pod.UID] = a
	k.order = append(k.order, keptRef{uid: pod.UID, seq: a.seq})
	if len(k.order) > 2*len(k.byUID)+64 {
		k.compactLocked()
	}
}

// evictOldestLocked drops the entry recorded longest ago.
func (k *keptExplanations) evictOldestLocked() {
	for len(k.order) > 0 {
		r := k.order[0]
		k.order = k.order[1:]
		if a, ok := k.byUID[r.uid]; ok && a.seq == r.seq {
			delete(k.byUID, r.uid)
			k.dropped++
			return
		}
	}
}

// compactLocked drops the stale entries of order.
func (k *keptExplanations) compactLocked() {
	live := make([]keptRef, 0, len(k.byUID))
	for _, r := range k.order {
		if a, ok := k.byUID[r.uid]; ok && a.seq == r.seq {
			live = append(live, r)
		}
	}
	k.order = live
}

// keptCounts turns the FitError's counts into counts per plugin and
// reason, most nodes first. Rejections beyond what tally counted are
// taken from ReasonCounts, without a plugin.
func keptCounts(f *FitError) []explain.ReasonCount {
	type key struct{ plugin, reason string }
	idx := map[key]int{}
	var out []explain.ReasonCount
	counted := map[string]int{}
	for _, c := range f.byStatus {
		for _, r := range c.status.Reasons() {
			k := key{c.plugin, r}
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, explain.ReasonCount{Plugin: c.plugin, Reason: r})
			}
			out[i].Nodes += c.nodes
			for _, n := range c.sample[:min(c.nodes, keptSample)] {
				if len(out[i].Sample) < keptSample {
					out[i].Sample = append(out[i].Sample, n)
				}
			}
			counted[r] += c.nodes
		}
	}
	for r, n := range f.ReasonCounts {
		if rest := n - counted[r]; rest > 0 {
			out = append(out, explain.ReasonCount{Reason: r, Nodes: rest})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Nodes != out[j].Nodes {
			return out[i].Nodes > out[j].Nodes
		}
		return out[i].Plugin+out[i].Reason < out[j].Plugin+out[j].Reason
	})
	return out
}

// sameCounts reports whether a and b count the same reasons on the same
// nodes.
func sameCounts(a, b []explain.ReasonCount) bool {
	return slices.EqualFunc(a, b, func(x, y explain.ReasonCount) bool {
		return x.Plugin == y.Plugin && x.Reason == y.Reason && x.Nodes == y.Nodes && slices.Equal(x.Sample, y.Sample)
	})
}

// forget drops pod uid's entry: it was placed, or is gone.
func (k *keptExplanations) forget(uid types.UID) {
	k.mu.Lock()
	delete(k.byUID, uid)
	k.mu.Unlock()
}

// get returns the explanation kept for pod, if any.
func (k *keptExplanations) get(pod *v1.Pod) (*explain.Explanation, bool) {
	k.mu.Lock()
	a, ok := k.byUID[pod.UID]
	k.mu.Unlock()
	if !ok {
		return nil, false
	}
	e := &explain.Explanation{
		Pod: a.namespace + "/" + a.name, Profile: a.profile, Nodes: a.nodes, Message: a.message,
		PreFilter:     a.preFilter,
		NominatedNode: pod.Status.NominatedNodeName,
		Kept:          &explain.Kept{Attempts: a.attempts, At: a.at.UTC().Format(time.RFC3339), Counts: slices.Clone(a.counts)},
	}
	e.Summarize()
	return e, true
}

// prune drops the entries of pods that are gone or placed, as keep
// (given a UID) says.
func (k *keptExplanations) prune(keep func(namespace, name string, uid types.UID) bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for uid, a := range k.byUID {
		if !keep(a.namespace, a.name, uid) {
			delete(k.byUID, uid)
		}
	}
	k.compactLocked()
}

// len returns how many pods are kept.
func (k *keptExplanations) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.byUID)
}

// KeptExplanation returns the last attempt kept for the pod
// namespace/name, if it is pending and was tried.
func (s *Scheduler) KeptExplanation(namespace, name string) (*explain.Explanation, error) {
	if s.podLister == nil {
		return nil, errNoInformers
	}
	pod, err := s.podLister.Pods(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	e, ok := s.kept.get(pod)
	if !ok {
		return nil, ErrNotKept
	}
	return e, nil
}

// pruneKept drops the kept attempts of pods the informer shows gone,
// replaced (another UID) or bound.
func (s *Scheduler) pruneKept() {
	if s.podLister == nil {
		return
	}
	s.kept.prune(func(ns, name string, uid types.UID) bool {
		p, err := s.podLister.Pods(ns).Get(name)
		return err == nil && p.UID == uid && p.Spec.NodeName == ""
	})
}
