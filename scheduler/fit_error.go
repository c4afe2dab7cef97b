package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unique"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
)

// ErrNoNodesAvailable is returned when the cluster has no nodes at all.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// FitError says why a pod fits no node: how many nodes were considered and
// how many of them failed for each reason.
type FitError struct {
	NumAllNodes int
	// ReasonCounts counts nodes per rejection reason.
	ReasonCounts map[string]int
	// PreFilterMessage is set when a PreFilter rejected the pod outright.
	PreFilterMessage string
	// Unresolvable is true when every node failed in a way no cluster event
	// can fix (the pod names another node, say).
	Unresolvable bool
	// Plugins names the plugins that rejected the pod on some node.
	Plugins sets.Set[string]
	// PostFilterMessage is what the PostFilter steps found, appended to
	// the message: kube-scheduler's "preemption: ...", saying why
	// preemption does not help or, when it found a node, where the pod
	// is going.
	PostFilterMessage string

	// candidates are the nodes whose rejection another pod's eviction
	// might undo (not UnschedulableAndUnresolvable), for preemption.
	candidates []*framework.NodeInfo
	// preFilterPlugin is the PreFilter plugin that rejected the pod.
	preFilterPlugin string
	// byStatus counts the nodes per distinct rejection, for the kept
	// explanation (kept.go); overflowed says some were not counted there.
	byStatus   []statusCount
	overflowed bool

	// message is what Error returned for PostFilterMessage messageFor:
	// a failed attempt reads it three times (kept, logged, written).
	message, messageFor string
}

// newFitError returns an empty FitError over numAllNodes nodes.
func newFitError(numAllNodes int) *FitError {
	return &FitError{NumAllNodes: numAllNodes, ReasonCounts: map[string]int{}}
}

// statusCount is how many nodes one rejection (a status a plugin
// returned) was given for, with a few of their names.
type statusCount struct {
	rejection
	nodes int
	// sample holds the first min(nodes, keptSample) names: an array, so
	// that counting allocates nothing per node.
	sample [keptSample]string
}

// Bounds of FitError.byStatus.
const (
	// maxStatusCounts bounds the distinct rejections counted: plugins
	// return one shared status per fixed reason, so a cluster gives a few;
	// a reason that names something of the node (a taint) gives more.
	maxStatusCounts = 32
	// keptSample is how many node names a rejection keeps.
	keptSample = 3
)

// tally counts r, given for node ni. Statuses for a fixed reason are
// shared, so comparing pointers finds the entry, most often the last one;
// a status made for the node (a taint named in it) is matched by its
// reasons.
func (f *FitError) tally(r rejection, ni *framework.NodeInfo) {
	i := len(f.byStatus) - 1
	if i < 0 || !f.byStatus[i].matches(r) {
		i = slices.IndexFunc(f.byStatus, func(c statusCount) bool { return c.matches(r) })
	}
	if i < 0 {
		if len(f.byStatus) >= maxStatusCounts {
			f.overflowed = true
			return
		}
		if f.byStatus == nil {
			// A failed cycle on a real cluster sees a few reasons.
			f.byStatus = make([]statusCount, 0, 8)
		}
		f.byStatus = append(f.byStatus, statusCount{rejection: r})
		i = len(f.byStatus) - 1
	}
	c := &f.byStatus[i]
	if c.nodes < keptSample {
		c.sample[c.nodes] = ni.NodeName()
	}
	c.nodes++
}

// matches reports whether r is c's rejection: the same status, or one of
// the same plugin with the same reasons.
func (c *statusCount) matches(r rejection) bool {
	if c.plugin != r.plugin {
		return false
	}
	return c.status == r.status || slices.Equal(c.status.Reasons(), r.status.Reasons())
}

// Error renders the message users know from kube-scheduler:
// "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) were unschedulable."
// Reasons are counted per node and sorted, so the message is stable.
//
// The message is what the pod's FailedScheduling event says, and an event
// note holds at most binder.NoteLengthLimit bytes (the API server refuses
// a longer one, and the event is lost). So a message that would not fit
// is shortened: the reasons of the most nodes are kept and the others
// counted. What remains too long
// (a long PreFilter or PostFilter message) is cut as kube-scheduler cuts
// it (binder.TruncateNote).
func (f *FitError) Error() string {
	if f.message != "" && f.messageFor == f.PostFilterMessage {
		return f.message
	}
	// Interned: the pods of a pool turned away for the same reasons keep
	// one message (the kept explanation, the binder's last message).
	f.message, f.messageFor = unique.Make(f.render()).Value(), f.PostFilterMessage
	return f.message
}

// render builds Error's message.
func (f *FitError) render() string {
	budget := binder.NoteLengthLimit
	if f.PostFilterMessage != "" {
		// The reasons come first and keep at least half the room.
		budget = max(budget-len(f.PostFilterMessage)-1, budget/2)
	}
	msg := f.reasons(budget)
	if f.PostFilterMessage != "" {
		msg += " " + f.PostFilterMessage
	}
	return binder.TruncateNote(msg)
}

// reasons renders "0/N nodes are available: ..." in at most budget bytes
// where it can (see Error).
func (f *FitError) reasons(budget int) string {
	head := fmt.Sprintf("0/%d nodes are available:", f.NumAllNodes)
	if f.PreFilterMessage != "" {
		return head + " " + f.PreFilterMessage + "."
	}
	counts := f.ReasonCounts
	msg := framework.UnavailableMessage(f.NumAllNodes, counts)
	if len(msg) <= budget {
		return msg
	}
	return mostReasons(head, counts, budget)
}

// mostReasons renders head and the reasons of the most nodes that fit in
// budget, with the count of the others: "0/40 nodes are available: 12
// Insufficient cpu, 9 ..., and 19 other reasons." The first reason is
// always there, even when it alone is too long.
func mostReasons(head string, counts map[string]int, budget int) string {
	type part struct {
		n    int
		text string
	}
	parts := make([]part, 0, len(counts))
	for reason, n := range counts {
		parts = append(parts, part{n, fmt.Sprintf("%d %s", n, reason)})
	}
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].n != parts[j].n {
			return parts[i].n > parts[j].n
		}
		return parts[i].text < parts[j].text
	})
	others := func(n int) string {
		if n == 1 {
			return ", and 1 other reason."
		}
		return fmt.Sprintf(", and %d other reasons.", n)
	}
	var b strings.Builder
	b.WriteString(head)
	for i, p := range parts {
		// Room for this part and for the count of those after it.
		end := "."
		if left := len(parts) - i - 1; left > 0 {
			end = others(left)
		}
		if i > 0 && b.Len()+2+len(p.text)+len(end) > budget {
			b.WriteString(others(len(parts) - i))
			return b.String()
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" ")
		b.WriteString(p.text)
	}
	b.WriteString(".")
	return b.String()
}

// addStatus counts each reason of a node's rejection by plugin p.
func (f *FitError) addStatus(s *framework.Status, p string) {
	for _, r := range s.Reasons() {
		f.ReasonCounts[r]++
	}
	if p != "" {
		f.addPlugins(p)
	}
}

// addPlugins records plugins that rejected the pod.
func (f *FitError) addPlugins(names ...string) {
	if f.Plugins == nil {
		f.Plugins = sets.New[string]()
	}
	f.Plugins.Insert(names...)
}

// addAbsent counts the nodes that PreFilter results left out (absent of
// them) under kube-scheduler's reason for them, and names the plugins
// whose results narrowed the nodes among those that rejected the pod, as
// kube-scheduler's diagnosis does whether or not a node was left out.
func (f *FitError) addAbsent(narrowedBy []string, absent int) {
	if len(narrowedBy) == 0 {
		return
	}
	f.addPlugins(narrowedBy...)
	if absent > 0 {
		f.ReasonCounts[absentMessage(narrowedBy)] += absent
	}
}

// absentMessage is kube-scheduler's reason for the nodes PreFilter results
// left out: "node(s) didn't satisfy plugin(s) [NodeAffinity]", the plugins
// sorted.
func absentMessage(plugins []string) string {
	sorted := slices.Clone(plugins)
	slices.Sort(sorted)
	return fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sorted)
}
