// Package explain holds the answer to "why is my pod Pending?" (and "why
// did it go there?"): what one scheduling cycle of yardmaster's real
// pipeline found for one pod, node by node.
//
// The scheduler fills an Explanation (scheduler.Scheduler.Explain) by
// running the profile's own plugin objects on a snapshot, exactly as a
// cycle does, with a recorder that keeps what a cycle throws away: each
// node's verdict (the first filter that rejected it and its reasons), each
// score plugin's raw and normalized score with its weight, the weighted
// totals, the best node, and what preemption would do (a dry run: victims
// per candidate node, nothing written). This package only describes and
// prints: it imports no scheduler code, so the command line can decode an
// Explanation it got over HTTP with it.
//
//	Explanation ── Verdicts (one per node) ── Scores (feasible nodes)
//	            ├─ Preemption (dry run)
//	            └─ Summary (what a person reads first)
package explain

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIVersion is the apiVersion of what explain and simulate print with
// -o json or -o yaml, described by the JSON Schema in
// docs/schemas/yardmaster.io_v1alpha1.schema.json. A field is added to a
// kind of it only with the schema (a test compares them); a field is
// renamed or removed only in a new version.
const APIVersion = "yardmaster.io/v1alpha1"

// KindExplanation is the kind of an Explanation printed on its own.
const KindExplanation = "Explanation"

// Sources of an Explanation.
const (
	// SourceLive: a running yardmaster's state, over /debug/explain (the
	// leader's is the one that decides; a standby's cache is as warm but
	// does not hold the leader's assumed pods).
	SourceLive = "live"
	// SourceSnapshot: a snapshot read from the API with the configuration
	// file, by the command line itself.
	SourceSnapshot = "snapshot"
	// SourceSimulation: an in-memory cluster (yardmaster simulate).
	SourceSimulation = "simulation"
)

// Explanation is what one cycle of the real pipeline found for one pod.
type Explanation struct {
	// TypeMeta is set (APIVersion, KindExplanation) on an explanation
	// printed or served on its own, and left empty on one inside another
	// object (a simulation's placements).
	metav1.TypeMeta `json:",inline"`
	// Pod is namespace/name.
	Pod     string `json:"pod"`
	Profile string `json:"profile"`
	Source  string `json:"source,omitempty"`
	// BoundTo is the pod's spec.nodeName when it is already placed: the
	// cycle was run as if it were not, to say why it went there.
	BoundTo string `json:"boundTo,omitempty"`
	// NominatedNode is the pod's status.nominatedNodeName.
	NominatedNode string `json:"nominatedNode,omitempty"`
	// Nodes is how many nodes the snapshot holds.
	Nodes int `json:"nodes"`
	// PercentageOfNodesToScore is how many nodes the scheduler's own
	// cycle would have filtered before scoring (explain filters all).
	NodesToFind int `json:"nodesToFind,omitempty"`
	// PreFilter is set when a PreFilter plugin rejected the pod before
	// any node was looked at.
	PreFilter *Rejection `json:"preFilter,omitempty"`
	// Scorers are the score plugins that ran, in configured order, with
	// their weights; NodeScore.Raw and Normalized are parallel to it.
	Scorers []Scorer `json:"scorers,omitempty"`
	// Verdicts has one entry per node: the feasible ones first, best
	// total first, then the rejected ones by name.
	Verdicts []NodeVerdict `json:"verdicts,omitempty"`
	// Best are the feasible nodes with the highest total; the scheduler
	// picks one of them at random.
	Best []string `json:"best,omitempty"`
	// Selected is the node this cycle chose among Best, as selectHost
	// does (simulate assumes the pod there).
	Selected   string      `json:"selected,omitempty"`
	Preemption *Preemption `json:"preemption,omitempty"`
	// Message is the FailedScheduling message the cycle would write.
	Message string `json:"message,omitempty"`
	// Summary is one paragraph for a person.
	Summary string `json:"summary"`
	// NotConsulted are the HTTP extenders (URL prefixes) the scheduler
	// also asks about this pod, which an explanation never calls: a node
	// they would refuse, or their scores, are not in it.
	NotConsulted []string `json:"notConsulted,omitempty"`
	// Kept is set when the explanation is the last attempt's, kept by
	// the scheduler, not a new run (see Kept).
	Kept *Kept `json:"kept,omitempty"`
	// PodGroup is, for a pending member of a pod group, what the group
	// cycle would do for the whole group (a dry run): the pod is placed
	// only with its group.
	PodGroup *PodGroupExplanation `json:"podGroup,omitempty"`
}

// Rejection is a plugin's verdict against the pod.
type Rejection struct {
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons"`
	// Unresolvable: no cluster event short of changing the node (or the
	// pod) can undo it, and preemption does not try that node.
	Unresolvable bool `json:"unresolvable,omitempty"`
}

// Scorer is a score plugin and its weight.
type Scorer struct {
	Plugin string `json:"plugin"`
	Weight int64  `json:"weight"`
}

// NodeVerdict is one node's answer.
type NodeVerdict struct {
	Node     string `json:"node"`
	Feasible bool   `json:"feasible"`
	// Rejected is the first filter that rejected the node (filters run in
	// configured order, cheapest first, and stop there).
	Rejected *Rejection `json:"rejected,omitempty"`
	// Shortfall is, when NodeResourcesFit rejected the node, how much of
	// each resource is missing there (the pod's request minus what is
	// free), as quantities: {"cpu": "500m"}.
	Shortfall map[string]string `json:"shortfall,omitempty"`
	// Raw and Normalized are parallel to Explanation.Scorers.
	Raw        []int64 `json:"raw,omitempty"`
	Normalized []int64 `json:"normalized,omitempty"`
	// Total is Σ weight × normalized.
	Total int64 `json:"total,omitempty"`
}

// Preemption is what DefaultPreemption would do, found without evicting
// anything.
type Preemption struct {
	// Eligible is false when the pod may not preempt (preemptionPolicy
	// Never, an earlier preemption still under way); Message says why.
	Eligible bool `json:"eligible"`
	// Candidates are the nodes where evicting Victims lets the pod fit
	// (the search stops once it has enough, as kube-scheduler's does).
	Candidates []PreemptionCandidate `json:"candidates,omitempty"`
	// Node is the candidate DefaultPreemption would pick.
	Node string `json:"node,omitempty"`
	// Message is the "preemption: ..." part of the FailedScheduling
	// message: why preemption would not help, or, with Node, where the
	// pod would go and how many victims it would evict (kube-scheduler
	// v1.37's "found a potential placement for pod on node ...").
	Message string `json:"message,omitempty"`
}

// PreemptionCandidate is a node and the pods evicted there.
type PreemptionCandidate struct {
	Node          string   `json:"node"`
	Victims       []string `json:"victims"`
	PDBViolations int      `json:"pdbViolations,omitempty"`
}

// Kept is the last attempt of a pending pod as the scheduler kept it:
// reason counts per plugin and a bounded sample of nodes, not every node.
type Kept struct {
	// Attempts is the pod's attempts so far; At is the last one's time
	// (RFC 3339).
	Attempts int    `json:"attempts"`
	At       string `json:"at"`
	// Counts are, per plugin and reason, how many nodes it rejected.
	Counts []ReasonCount `json:"counts"`
}

// ReasonCount counts the nodes a plugin rejected for one reason.
type ReasonCount struct {
	Plugin string `json:"plugin,omitempty"`
	Reason string `json:"reason"`
	Nodes  int    `json:"nodes"`
	// Sample names a few of the nodes.
	Sample []string `json:"sample,omitempty"`
}

// WithTypeMeta sets e's apiVersion and kind, for printing or serving on
// its own, and returns e.
func (e *Explanation) WithTypeMeta() *Explanation {
	e.TypeMeta = metav1.TypeMeta{APIVersion: APIVersion, Kind: KindExplanation}
	return e
}

// Feasible returns how many nodes passed every filter.
func (e *Explanation) Feasible() int {
	n := 0
	for _, v := range e.Verdicts {
		if v.Feasible {
			n++
		}
	}
	return n
}

// Group is the nodes one plugin rejected for the same reasons.
type Group struct {
	Plugin  string   `json:"plugin"`
	Reasons []string `json:"reasons"`
	Nodes   []string `json:"nodes"`
}

// Groups returns the rejected nodes grouped by plugin and reasons, the
// largest group first: what a large cluster's verdicts say in a few lines.
func (e *Explanation) Groups() []Group {
	idx := map[string]int{}
	var out []Group
	for _, v := range e.Verdicts {
		if v.Rejected == nil {
			continue
		}
		key := v.Rejected.Plugin + "\x00" + strings.Join(v.Rejected.Reasons, "\x00")
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, Group{Plugin: v.Rejected.Plugin, Reasons: v.Rejected.Reasons})
		}
		out[i].Nodes = append(out[i].Nodes, v.Node)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].Nodes) != len(out[j].Nodes) {
			return len(out[i].Nodes) > len(out[j].Nodes)
		}
		return out[i].Plugin < out[j].Plugin
	})
	return out
}

// Summarize writes e.Summary from the rest: where the pod goes (or is),
// or why it fits nowhere, by reason, with the closest node's shortfall and
// what preemption would do.
func (e *Explanation) Summarize() {
	var b strings.Builder
	feasible := e.Feasible()
	switch {
	case e.Kept != nil:
		fmt.Fprintf(&b, "The last attempt (%s, attempt %d) found 0/%d nodes available: %s.",
			e.Kept.At, e.Kept.Attempts, e.Nodes, keptReasons(e.Kept.Counts))
	case e.Nodes == 0:
		b.WriteString("The cluster has no nodes.")
	case e.PreFilter != nil:
		fmt.Fprintf(&b, "Fits nowhere: %s rejected the pod before any node was looked at: %s.",
			orUnknown(e.PreFilter.Plugin), strings.Join(e.PreFilter.Reasons, "; "))
	case feasible == 0:
		fmt.Fprintf(&b, "Fits nowhere: of %d nodes, %s.", e.Nodes, groupPhrase(e.Groups()))
		if s := e.closest(); s != "" {
			b.WriteString(" " + s)
		}
	case e.Selected == "" && e.Message != "":
		// Simulate's Reserve refused the node the cycle chose.
		fmt.Fprintf(&b, "Passed the filters on %d of %d nodes, but was not placed: %s.", feasible, e.Nodes, strings.TrimSuffix(e.Message, "."))
	default:
		where := "would go to " + e.Selected
		if len(e.Best) > 1 {
			where = fmt.Sprintf("would go to one of %d nodes tied at the best score (%s)", len(e.Best), strings.Join(head(e.Best, 3), ", "))
		}
		fmt.Fprintf(&b, "Fits on %d of %d nodes and %s, total score %d", feasible, e.Nodes, where, e.Verdicts[0].Total)
		if top := e.topScorer(); top != "" {
			fmt.Fprintf(&b, " (%s)", top)
		}
		b.WriteString(".")
		if rejected := e.Nodes - feasible; rejected > 0 {
			fmt.Fprintf(&b, " The other %d: %s.", rejected, groupPhrase(e.Groups()))
		}
	}
	if e.BoundTo != "" {
		fmt.Fprintf(&b, " It is bound to %s.", e.BoundTo)
	}
	if g := e.PodGroup; g != nil {
		fmt.Fprintf(&b, " Its pod group %s: %s", g.PodGroup, lowerFirst(g.Summary))
	}
	if p := e.Preemption; p != nil {
		switch {
		case p.Node != "":
			c := p.candidate(p.Node)
			fmt.Fprintf(&b, " Preemption would evict %d pod(s) on %s (%s).", len(c.Victims), p.Node, strings.Join(head(c.Victims, 3), ", "))
		case p.Message != "":
			fmt.Fprintf(&b, " Preemption would not help: %s", strings.TrimSuffix(strings.TrimPrefix(p.Message, "preemption: "), ".")+".")
		}
	}
	e.Summary = b.String()
}

func (p *Preemption) candidate(node string) PreemptionCandidate {
	for _, c := range p.Candidates {
		if c.Node == node {
			return c
		}
	}
	return PreemptionCandidate{Node: node}
}

// groupPhrase says "40 nodes: NodeResourcesFit: Insufficient cpu; 3 nodes:
// TaintToleration: ..." for the largest groups.
func groupPhrase(groups []Group) string {
	const shown = 4
	parts := make([]string, 0, shown+1)
	rest := 0
	for i, g := range groups {
		if i >= shown {
			rest += len(g.Nodes)
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", len(g.Nodes), plural(len(g.Nodes), "node"), describeGroup(g)))
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("%d for other reasons", rest))
	}
	return strings.Join(parts, ", ")
}

func describeGroup(g Group) string {
	return orUnknown(g.Plugin) + ": " + strings.Join(g.Reasons, "; ")
}

func keptReasons(counts []ReasonCount) string {
	parts := make([]string, 0, len(counts))
	for _, c := range counts {
		parts = append(parts, fmt.Sprintf("%d %s (%s)", c.Nodes, c.Reason, orUnknown(c.Plugin)))
	}
	return strings.Join(parts, ", ")
}

// closest names the node that lacks least, among those NodeResourcesFit
// rejected: freeing that much there gets the pod past NodeResourcesFit
// (the filters after it were not asked about that node).
func (e *Explanation) closest() string {
	best := -1
	bestMissing := 0
	for i, v := range e.Verdicts {
		if len(v.Shortfall) == 0 {
			continue
		}
		if best < 0 || len(v.Shortfall) < bestMissing || (len(v.Shortfall) == bestMissing && shortfallLess(v.Shortfall, e.Verdicts[best].Shortfall)) {
			best, bestMissing = i, len(v.Shortfall)
		}
	}
	if best < 0 {
		return ""
	}
	v := e.Verdicts[best]
	return fmt.Sprintf("The closest is %s: freeing %s there would get the pod past NodeResourcesFit.", v.Node, shortfallPhrase(v.Shortfall))
}

// shortfallLess orders shortfalls of the same number of resources
// resource by resource (names sorted), by quantity.
func shortfallLess(a, b map[string]string) bool {
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		qa, errA := resource.ParseQuantity(a[n])
		qb, errB := resource.ParseQuantity(b[n])
		if errA != nil || errB != nil {
			continue
		}
		if c := qa.Cmp(qb); c != 0 {
			return c < 0
		}
	}
	return false
}

func shortfallPhrase(s map[string]string) string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = s[n] + " " + n
	}
	return strings.Join(parts, " and ")
}

// topScorer names the scorer that added most to the best node's total.
func (e *Explanation) topScorer() string {
	if len(e.Scorers) == 0 || len(e.Verdicts) == 0 || len(e.Verdicts[0].Normalized) != len(e.Scorers) {
		return ""
	}
	v := e.Verdicts[0]
	best, bestVal := -1, int64(0)
	for i, sc := range e.Scorers {
		if w := sc.Weight * v.Normalized[i]; w > bestVal {
			best, bestVal = i, w
		}
	}
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("most from %s: %d × %d", e.Scorers[best].Plugin, e.Scorers[best].Weight, v.Normalized[best])
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func orUnknown(plugin string) string {
	if plugin == "" {
		return "the scheduler"
	}
	return plugin
}

func head(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string{}, s[:n]...), "…")
	}
	return s
}
