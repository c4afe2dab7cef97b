package prommetric

import (
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Table is one answer of Prometheus: a value for every node it knows, as
// of Time. It is never written after it is published (but for the lookup
// cache, which is atomic), so any number of cycles read it at once.
type Table struct {
	// Time is when the query was sent; pods bound from then on are not in
	// the values yet.
	Time time.Time
	// Since is Time rounded down to the resolution of the API's bind
	// times; see BindTimeResolution. Recent compares bind times with it.
	Since time.Time
	// Values maps node names to the query's value.
	Values map[string]float64
	// Series is how many series the answer held; the three counts below are
	// the ones that did not make it into Values as they were.
	Series int
	// Invalid counts series whose value was NaN, ±Inf or (where not
	// allowed) negative.
	Invalid int
	// Unlabelled counts series without the node name label.
	Unlabelled int
	// Duplicates counts series for a node already seen; the larger value is
	// kept, so one node_exporter scraped twice is not counted twice.
	Duplicates int
	// Warnings are the warnings Prometheus returned with the answer.
	Warnings []string
	// Seq numbers the tables a Metric published, from 1; a PodSigner
	// signs it, so that answers computed from one table are never given
	// out for another.
	Seq uint64

	// bySlot caches Values by NodeInfo.Slot, so that Score reads an array
	// rather than hashing the node's name: filled on first use, checked
	// against the name since slots are given to other nodes.
	bySlot []atomic.Pointer[slotEntry]
}

type slotEntry struct {
	name  string
	value float64
	ok    bool
}

// slotsPerNode sizes the lookup cache: slots are numbered from 1 up to
// about the number of nodes the cache holds, which is near the number of
// nodes in the answer; a node in a slot beyond is looked up by name.
const slotsPerNode, slotsExtra = 2, 64

// index makes the lookup cache; the Metric calls it before publishing.
// AnyAtMost reports whether some node's value is at most limit.
func (t *Table) AnyAtMost(limit float64) bool {
	for _, v := range t.Values {
		if v <= limit {
			return true
		}
	}
	return false
}

func (t *Table) index() {
	t.bySlot = make([]atomic.Pointer[slotEntry], slotsPerNode*len(t.Values)+slotsExtra)
}

// Lookup returns ni's node's value and whether the table has one.
func (t *Table) Lookup(ni *framework.NodeInfo) (float64, bool) {
	name := ni.NodeName()
	slot := ni.Slot
	if slot <= 0 || slot >= len(t.bySlot) {
		v, ok := t.Values[name]
		return v, ok
	}
	// Equal names are usually one string (the snapshot clones keep the
	// Node's), so the comparison is a pointer check.
	if e := t.bySlot[slot].Load(); e != nil && e.name == name {
		return e.value, e.ok
	}
	v, ok := t.Values[name]
	t.bySlot[slot].Store(&slotEntry{name: name, value: v, ok: ok})
	return v, ok
}

// BindTimeResolution rounds a table's time down to the resolution of the
// bind times it is compared with: the API serializes them in whole
// seconds, so a pod bound 0.4s after a query reads as bound up to 0.6s
// before it. Rounding down counts such a pod (and at worst one bound just
// under a second before the query) rather than forget it.
func BindTimeResolution(t time.Time) time.Time { return t.Truncate(time.Second) }

// BoundBefore reports whether pod is known to have been bound before t.
//
// The API server stamps PodScheduled=True with the time of the binding
// (and the kubelet does for pods created with a node name), so every bound
// pod the informer delivers carries it. A pod without it is one the
// scheduler has assumed and not yet seen bound: it was placed just now.
func BoundBefore(pod *v1.Pod, t time.Time) bool {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue {
			return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Time.Before(t)
		}
	}
	return false
}

// Recent sums estimate over the pods on nodeInfo (which may be nil) bound
// at or after since: their load cannot be in a table taken before. The
// snapshot holds the scheduler's assumed pods as soon as a cycle has
// picked their node, so a burst of pods sees its own earlier members.
func Recent(nodeInfo *framework.NodeInfo, since time.Time, estimate func(*framework.PodInfo) float64) float64 {
	if nodeInfo == nil {
		return 0
	}
	var sum float64
	for _, pi := range nodeInfo.Pods {
		if BoundBefore(pi.Pod, since) {
			continue
		}
		sum += estimate(pi)
	}
	return sum
}
