package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// Output formats.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// topFeasible is how many feasible nodes the table lists without
// PrintOptions.AllNodes.
const topFeasible = 10

// PrintOptions say how to print an Explanation.
type PrintOptions struct {
	// Format is FormatTable (the default), FormatJSON or FormatYAML.
	Format string
	// AllNodes lists every node in the table, not the groups of rejected
	// nodes and the best feasible ones.
	AllNodes bool
}

// Print writes e to w.
func Print(w io.Writer, e *Explanation, o PrintOptions) error {
	if o.Format == "" || o.Format == FormatTable {
		return printTable(w, e, o.AllNodes)
	}
	return Marshal(w, e, o.Format)
}

// Marshal writes v to w as FormatJSON (indented) or FormatYAML.
func Marshal(w io.Writer, v any, format string) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case FormatYAML:
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("unknown output format %q: table, json or yaml", format)
}

func printTable(w io.Writer, e *Explanation, all bool) error {
	src := e.Source
	if src == "" {
		src = "-"
	}
	fmt.Fprintf(w, "Pod:      %s (profile %s, from %s)\n", e.Pod, e.Profile, src)
	if e.BoundTo != "" {
		fmt.Fprintf(w, "Bound to: %s\n", e.BoundTo)
	}
	if e.NominatedNode != "" {
		fmt.Fprintf(w, "Nominated: %s\n", e.NominatedNode)
	}
	fmt.Fprintf(w, "Summary:  %s\n", e.Summary)
	if len(e.NotConsulted) > 0 {
		fmt.Fprintf(w, "Extenders: not consulted here, the scheduler also asks %s (--kept shows the last attempt's verdicts)\n", strings.Join(e.NotConsulted, ", "))
	}
	if e.Message != "" {
		fmt.Fprintf(w, "Message:  %s\n", e.Message)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if e.Kept != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "NODES\tPLUGIN\tREASON")
		for _, c := range e.Kept.Counts {
			fmt.Fprintf(tw, "%d\t%s\t%s\n", c.Nodes, orDash(c.Plugin), c.Reason)
		}
		return tw.Flush()
	}
	if all {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "NODE\tVERDICT\tTOTAL\t"+scorerHeads(e.Scorers))
		for _, v := range e.Verdicts {
			if v.Feasible {
				fmt.Fprintf(tw, "%s\tfeasible\t%d\t%s\n", v.Node, v.Total, scoreCells(v))
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t\t\n", v.Node, rejectedCell(v))
		}
	} else {
		if groups := e.Groups(); len(groups) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(tw, "REJECTED\tPLUGIN\tREASON\tNODES")
			for _, g := range groups {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", len(g.Nodes), orDash(g.Plugin), strings.Join(g.Reasons, "; "), strings.Join(head(g.Nodes, 3), ", "))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if n := e.Feasible(); n > 0 {
			fmt.Fprintln(w)
			shown := min(n, topFeasible)
			fmt.Fprintf(w, "Feasible: %d %s, best first (normalized score × weight per plugin)", n, plural(n, "node"))
			if shown < n {
				fmt.Fprintf(w, ", %d shown; --nodes lists all", shown)
			}
			fmt.Fprintln(w)
			fmt.Fprintln(tw, "NODE\tTOTAL\t"+scorerHeads(e.Scorers))
			for _, v := range e.Verdicts[:shown] {
				fmt.Fprintf(tw, "%s\t%d\t%s\n", v.Node, v.Total, scoreCells(v))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if p := e.Preemption; p != nil && len(p.Candidates) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Preemption (dry run): candidates")
		fmt.Fprintln(tw, "NODE\tPICKED\tPDB VIOLATIONS\tVICTIMS")
		for _, c := range p.Candidates {
			picked := ""
			if c.Node == p.Node {
				picked = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.Node, picked, c.PDBViolations, strings.Join(c.Victims, ", "))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if e.PodGroup != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Its pod group, a dry run of the group cycle:")
		return PrintPodGroup(w, e.PodGroup, PrintOptions{AllNodes: all})
	}
	return nil
}

func scorerHeads(scorers []Scorer) string {
	parts := make([]string, len(scorers))
	for i, sc := range scorers {
		parts[i] = fmt.Sprintf("%s(×%d)", sc.Plugin, sc.Weight)
	}
	return strings.Join(parts, "\t")
}

// scoreCells writes "normalized (raw)" per scorer.
func scoreCells(v NodeVerdict) string {
	parts := make([]string, len(v.Normalized))
	for i := range v.Normalized {
		parts[i] = fmt.Sprintf("%d", v.Normalized[i])
		if i < len(v.Raw) && v.Raw[i] != v.Normalized[i] {
			parts[i] += fmt.Sprintf(" (raw %d)", v.Raw[i])
		}
	}
	return strings.Join(parts, "\t")
}

func rejectedCell(v NodeVerdict) string {
	s := orDash(v.Rejected.Plugin) + ": " + strings.Join(v.Rejected.Reasons, "; ")
	if len(v.Shortfall) > 0 {
		s += " (short " + shortfallPhrase(v.Shortfall) + ")"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
