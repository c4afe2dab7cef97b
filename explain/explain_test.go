package explain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func rejected(node, plugin string, shortfall map[string]string, reasons ...string) NodeVerdict {
	return NodeVerdict{Node: node, Rejected: &Rejection{Plugin: plugin, Reasons: reasons}, Shortfall: shortfall}
}

// pendingOn40 is a cluster where 40 nodes lack cpu and 3 are tainted.
func pendingOn40() *Explanation {
	e := &Explanation{Pod: "default/web", Profile: "yardmaster", Nodes: 43}
	for i := range 40 {
		// node-07 lacks least: 500m (node-03's "1" is more, though
		// it sorts first as text).
		short := fmt.Sprintf("%dm", 600+i)
		switch i {
		case 3:
			short = "1"
		case 7:
			short = "500m"
		}
		e.Verdicts = append(e.Verdicts, rejected(fmt.Sprintf("node-%02d", i), "NodeResourcesFit", map[string]string{"cpu": short}, "Insufficient cpu"))
	}
	for i := range 3 {
		e.Verdicts = append(e.Verdicts, rejected(fmt.Sprintf("gpu-%d", i), "TaintToleration", nil, "node(s) had untolerated taint {gpu: true}"))
	}
	return e
}

func TestGroups(t *testing.T) {
	g := pendingOn40().Groups()
	got := []string{}
	for _, x := range g {
		got = append(got, fmt.Sprintf("%d %s %v", len(x.Nodes), x.Plugin, x.Reasons))
	}
	want := []string{"40 NodeResourcesFit [Insufficient cpu]", "3 TaintToleration [node(s) had untolerated taint {gpu: true}]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		e    *Explanation
		want string
	}{
		{
			name: "fits nowhere",
			e:    pendingOn40(),
			want: "Fits nowhere: of 43 nodes, 40 nodes (NodeResourcesFit: Insufficient cpu), 3 nodes (TaintToleration: node(s) had untolerated taint {gpu: true}). " +
				"The closest is node-07: freeing 500m cpu there would get the pod past NodeResourcesFit.",
		},
		{
			name: "fits",
			e: &Explanation{Nodes: 3, Selected: "a", Best: []string{"a"},
				Scorers: []Scorer{{Plugin: "NodeResourcesFit", Weight: 1}, {Plugin: "TaintToleration", Weight: 3}},
				Verdicts: []NodeVerdict{
					{Node: "a", Feasible: true, Normalized: []int64{80, 100}, Total: 380},
					{Node: "b", Feasible: true, Normalized: []int64{90, 0}, Total: 90},
					rejected("c", "NodeUnschedulable", nil, "node(s) were unschedulable"),
				}},
			// 3 × 100 = 300 is the most any plugin added to a's total.
			want: "Fits on 2 of 3 nodes and would go to a, total score 380 (most from TaintToleration: 3 × 100). The other 1: 1 node (NodeUnschedulable: node(s) were unschedulable).",
		},
		{
			name: "prefilter",
			e:    &Explanation{Nodes: 5, PreFilter: &Rejection{Plugin: "VolumeBinding", Reasons: []string{`persistentvolumeclaim "data" not found`}}},
			want: `Fits nowhere: VolumeBinding rejected the pod before any node was looked at: persistentvolumeclaim "data" not found.`,
		},
		{
			name: "preemption",
			e: func() *Explanation {
				e := pendingOn40()
				e.Verdicts = e.Verdicts[40:]
				e.Nodes = 3
				e.Preemption = &Preemption{Eligible: true, Node: "gpu-1", Candidates: []PreemptionCandidate{{Node: "gpu-1", Victims: []string{"default/low"}}}}
				return e
			}(),
			want: "Fits nowhere: of 3 nodes, 3 nodes (TaintToleration: node(s) had untolerated taint {gpu: true}). Preemption would evict 1 pod(s) on gpu-1 (default/low).",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.e.Summarize()
			if diff := cmp.Diff(tc.want, tc.e.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrint(t *testing.T) {
	e := pendingOn40()
	e.Summarize()
	var table bytes.Buffer
	if err := Print(&table, e, PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	// Grouped: one line per group, not one per node.
	for _, line := range []string{"40        NodeResourcesFit  Insufficient cpu", "3         TaintToleration   node(s) had untolerated taint {gpu: true}"} {
		if !strings.Contains(table.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, table.String())
		}
	}
	if strings.Contains(table.String(), "node-39") {
		t.Errorf("the grouped table names every node:\n%s", table.String())
	}
	var all bytes.Buffer
	if err := Print(&all, e, PrintOptions{AllNodes: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(all.String(), "node-39") || !strings.Contains(all.String(), "(short 639m cpu)") {
		t.Errorf("--nodes does not list every node with its shortfall:\n%s", all.String())
	}

	for _, format := range []string{FormatJSON, FormatYAML} {
		var out bytes.Buffer
		if err := Print(&out, e, PrintOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		var back Explanation
		var err error
		if format == FormatJSON {
			err = json.Unmarshal(out.Bytes(), &back)
		} else {
			err = yaml.Unmarshal(out.Bytes(), &back)
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(e, &back); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", format, diff)
		}
	}
	if err := Print(&bytes.Buffer{}, e, PrintOptions{Format: "xml"}); err == nil {
		t.Error("xml accepted")
	}
}
