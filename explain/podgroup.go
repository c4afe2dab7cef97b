package explain

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KindPodGroupExplanation is the kind of a PodGroupExplanation printed on
// its own (explain podgroup/NAME).
const KindPodGroupExplanation = "PodGroupExplanation"

// PodGroupExplanation is what a group cycle would do for a pod group now,
// found by a dry run of it on the scheduler's snapshot: the group's
// pending members placed one after another, each seeing the ones before,
// and judged as the group cycle judges them (minCount), with nothing
// assumed, reserved or written. It is the podGroup of the Explanation of
// a member, and what `explain podgroup/NAME` prints.
type PodGroupExplanation struct {
	// TypeMeta is set (APIVersion, KindPodGroupExplanation) on one
	// printed or served on its own, empty inside an Explanation.
	metav1.TypeMeta `json:",inline"`
	// PodGroup is namespace/name; API its API group: scheduling.k8s.io
	// (a native PodGroup) or scheduling.x-k8s.io (scheduler-plugins'
	// PodGroup CRD).
	PodGroup string `json:"podGroup"`
	API      string `json:"api"`
	Profile  string `json:"profile,omitempty"`
	Source   string `json:"source,omitempty"`
	// Exists: the PodGroup object exists.
	Exists bool `json:"exists"`
	// Gang: all or nothing (a native gang policy, or a scheduler-plugins
	// PodGroup); MinCount is its minCount (minMember), 1 otherwise.
	Gang     bool `json:"gang"`
	MinCount int  `json:"minCount"`
	// Members are the group's pods that have not finished; Scheduled
	// those bound or assumed (binding), Pending the others.
	Members   int `json:"members"`
	Scheduled int `json:"scheduled"`
	Pending   int `json:"pending"`
	// Waiting is why the pending members wait in the queue before any
	// attempt (a PreEnqueue plugin's reason): no group cycle runs, and
	// Placements is empty.
	Waiting *Rejection `json:"waiting,omitempty"`
	// Requests are what each pending member requests, when they all
	// request the same (quantities by resource name).
	Requests map[string]string `json:"requests,omitempty"`
	// Placements are the pending members the dry run tried, in the group
	// cycle's order, with the node each would go to (none: it did not
	// fit).
	Placements []MemberPlacement `json:"placements,omitempty"`
	// Fit is how many pending members fitted together.
	Fit int `json:"fit"`
	// Placed: the group cycle would place the group (its members that
	// fitted would bind).
	Placed bool `json:"placed"`
	// Blocker is the explanation of the first member that did not fit,
	// on the snapshot with the members before it placed.
	Blocker *Explanation `json:"blocker,omitempty"`
	// Message is the group's reason when it would not be placed, as the
	// PodGroup's condition would give it ("minCount (3) cannot be
	// satisfied: 2 scheduled, 0 remaining").
	Message string `json:"message,omitempty"`
	// Summary is one paragraph for a person.
	Summary string `json:"summary"`
}

// MemberPlacement is one member in a group's dry run.
type MemberPlacement struct {
	// Pod is namespace/name.
	Pod  string `json:"pod"`
	Node string `json:"node,omitempty"`
}

// WithTypeMeta sets g's apiVersion and kind, for printing or serving on
// its own, and returns g.
func (g *PodGroupExplanation) WithTypeMeta() *PodGroupExplanation {
	g.TypeMeta = metav1.TypeMeta{APIVersion: APIVersion, Kind: KindPodGroupExplanation}
	return g
}

// NodeOf returns the node the dry run gave pod (namespace/name), "" when
// none.
func (g *PodGroupExplanation) NodeOf(pod string) string {
	for _, p := range g.Placements {
		if p.Pod == pod {
			return p.Node
		}
	}
	return ""
}

// Placed reports whether the pod is bound, or would be placed: by its own
// cycle, or, for a member of a pod group, by its group's.
func (e *Explanation) Placed() bool {
	if e.BoundTo != "" {
		return true
	}
	if e.PodGroup != nil {
		return e.PodGroup.Placed && e.PodGroup.NodeOf(e.Pod) != ""
	}
	return e.Selected != ""
}

// Summarize writes g.Summary from the rest: "3 pods need 1 cpu each; the
// cluster has room for 2 of them (node-a: 2): minCount (3) cannot be
// satisfied: ...", and what stops the next member.
func (g *PodGroupExplanation) Summarize() {
	var b strings.Builder
	switch {
	case !g.Exists && g.Waiting == nil:
		fmt.Fprintf(&b, "Would stay Pending: the PodGroup %s (%s) does not exist.", g.PodGroup, g.API)
	case g.Waiting != nil && !g.Exists:
		fmt.Fprintf(&b, "Would stay Pending: the PodGroup %s (%s) does not exist, and its %d pending %s wait in the queue before any attempt (%s: %s).",
			g.PodGroup, g.API, g.Pending, plural(g.Pending, "member"), orUnknown(g.Waiting.Plugin), strings.Join(g.Waiting.Reasons, "; "))
	case g.Waiting != nil:
		fmt.Fprintf(&b, "Would stay Pending: its %d pending %s wait in the queue before any attempt (%s: %s); %d of minCount %d %s exist.",
			g.Pending, plural(g.Pending, "member"), orUnknown(g.Waiting.Plugin), strings.Join(g.Waiting.Reasons, "; "),
			g.Members, g.MinCount, plural(g.Members, "member"))
	case g.Pending == 0:
		fmt.Fprintf(&b, "Nothing to place: all %d %s scheduled (bound or binding).", g.Members, either(g.Members, "member is", "members are"))
	default:
		if g.Placed {
			b.WriteString("Would be placed: ")
		} else {
			b.WriteString("Would stay Pending: ")
		}
		b.WriteString(g.need())
		fmt.Fprintf(&b, "; the cluster has room for %s", g.room())
		if g.Placed {
			fmt.Fprintf(&b, ", and %d of minCount %d would be scheduled.", g.Fit+g.Scheduled, g.MinCount)
		} else if g.Message != "" {
			fmt.Fprintf(&b, ": %s.", strings.TrimSuffix(g.Message, "."))
		} else {
			b.WriteString(".")
		}
		switch x := g.Blocker; {
		case x == nil:
		case g.Placed:
			// A member beyond minCount that did not fit fails alone.
			fmt.Fprintf(&b, " Stays Pending without the others: %s: %s", x.Pod, lowerFirst(x.Summary))
		default:
			fmt.Fprintf(&b, " The next, %s: %s", x.Pod, lowerFirst(x.Summary))
		}
	}
	if g.Scheduled > 0 && g.Pending > 0 {
		fmt.Fprintf(&b, " %d %s already scheduled.", g.Scheduled, either(g.Scheduled, "member is", "members are"))
	}
	g.Summary = b.String()
}

// need says "3 pods need 1 cpu and 100Mi memory each".
func (g *PodGroupExplanation) need() string {
	s := fmt.Sprintf("%d pending %s", g.Pending, plural(g.Pending, "pod"))
	if len(g.Requests) == 0 {
		return s
	}
	verb := "need"
	if g.Pending == 1 {
		verb = "needs"
	}
	each := " each"
	if g.Pending == 1 {
		each = ""
	}
	return fmt.Sprintf("%s %s %s%s", s, verb, shortfallPhrase(g.Requests), each)
}

// room says "2 of them (node-a: 2)", the nodes by how many members they
// took, most first.
func (g *PodGroupExplanation) room() string {
	perNode := map[string]int{}
	for _, p := range g.Placements {
		if p.Node != "" {
			perNode[p.Node]++
		}
	}
	nodes := make([]string, 0, len(perNode))
	for n := range perNode {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool {
		if perNode[nodes[i]] != perNode[nodes[j]] {
			return perNode[nodes[i]] > perNode[nodes[j]]
		}
		return nodes[i] < nodes[j]
	})
	which := fmt.Sprintf("%d of them", g.Fit)
	if g.Fit == g.Pending {
		which = fmt.Sprintf("all %d", g.Fit)
	}
	if g.Fit == 0 {
		return "none of them"
	}
	parts := make([]string, 0, len(nodes))
	for _, n := range head(nodes, 5) {
		if n == "…" {
			parts = append(parts, n)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %d", n, perNode[n]))
	}
	return which + " (" + strings.Join(parts, ", ") + ")"
}

// either returns one when n is 1, else many.
func either(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// PrintPodGroup writes g as a table: the group, its summary, each member
// tried and its node, and the explanation of the first that did not fit.
func PrintPodGroup(w io.Writer, g *PodGroupExplanation, o PrintOptions) error {
	if o.Format != "" && o.Format != FormatTable {
		return Marshal(w, g, o.Format)
	}
	policy := "basic"
	if g.Gang {
		policy = fmt.Sprintf("gang, minCount %d", g.MinCount)
	}
	src := g.Source
	if src == "" {
		src = "-"
	}
	fmt.Fprintf(w, "PodGroup: %s (%s, %s; profile %s, from %s)\n", g.PodGroup, g.API, policy, orDash(g.Profile), src)
	fmt.Fprintf(w, "Members:  %d (%d scheduled, %d pending)\n", g.Members, g.Scheduled, g.Pending)
	fmt.Fprintf(w, "Summary:  %s\n", g.Summary)
	if g.Message != "" {
		fmt.Fprintf(w, "Message:  %s\n", g.Message)
	}
	if len(g.Placements) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMBER\tNODE")
		for _, p := range g.Placements {
			fmt.Fprintf(tw, "%s\t%s\n", p.Pod, cmpOr(p.Node, "does not fit"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if g.Blocker != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "The first member that does not fit, with the ones before it placed:")
		return printTable(w, g.Blocker, o.AllNodes)
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
