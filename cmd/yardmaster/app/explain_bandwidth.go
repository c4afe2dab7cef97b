package app

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
)

// newExplainBandwidthCommand returns `yardmaster explain bandwidth` (use
// "bandwidth", beneath explain) or its deprecated alias
// `yardmaster explain bandwidth`: query Prometheus once, with the
// NetworkTraffic arguments of a profile and the plugin's own code, and
// print every node's traffic and score. It reads Prometheus only, not the
// cluster, so it takes none of kubectl's flags.
func newExplainBandwidthCommand(reg framework.Registry, use string) *cobra.Command {
	var path, profile, output string
	cmd := &cobra.Command{
		Use:   use,
		Short: "Query Prometheus as NetworkTraffic does and print each node's traffic and score",
		Long: "Load the configuration file, take the NetworkTraffic arguments of a profile, run the\n" +
			"plugin's query against Prometheus once and print, for every node in the answer, its\n" +
			"traffic and the score NetworkTraffic would give it among all of them. Pods bound since\n" +
			"the sample are not known here, so the pile-on estimate is not included. Only Prometheus\n" +
			"is read, not the cluster.\n\n" +
			"-o json and -o yaml print the BandwidthExplanation (apiVersion " + explain.APIVersion + ",\n" +
			"docs/schemas/); -o wide is the table.\n\n" +
			"Exit codes: 0 printed; 1 an error (bad input, Prometheus unreachable).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutputOf(&output, reportOutputFormats); err != nil {
				return err
			}
			c, err := config.LoadWith(path, reg, config.Overrides{})
			if err != nil {
				return err
			}
			name, args, err := networkTrafficArgs(c, profile)
			if err != nil {
				return err
			}
			src, err := networktraffic.NewSource(args)
			if err != nil {
				return fmt.Errorf("profile %q: %w", name, err)
			}
			defer src.Close()
			s, err := src.Fetch(cmd.Context(), time.Now())
			if err != nil {
				return fmt.Errorf("profile %q: %w\nquery: %s", name, err, src.Query())
			}
			rows := networktraffic.Explain(args, s, time.Now(), nil)
			e := bandwidthExplanation(name, args, src, s, rows)
			if output == outputJSON || output == outputYAML {
				return explain.Marshal(cmd.OutOrStdout(), e, output)
			}
			return printBandwidth(cmd.OutOrStdout(), e)
		},
	}
	f := cmd.Flags()
	f.StringVar(&path, "config", "", "KubeSchedulerConfiguration file with NetworkTraffic in a profile's pluginConfig")
	f.StringVar(&profile, "profile", "", "schedulerName of the profile (default: the only one that configures NetworkTraffic)")
	f.StringVarP(&output, "output", "o", "", "Output format: wide, json or yaml (default: the table)")
	_ = cmd.MarkFlagRequired("config")
	deprecatedAlias(cmd, "bandwidth")
	return cmd
}

// deprecatedAlias marks cmd, when it is the old top-level explain-NAME,
// deprecated for `explain NAME`: hidden from help, and cobra prints the
// notice to stderr when it runs (scripts that parse stdout keep working).
func deprecatedAlias(cmd *cobra.Command, name string) {
	if cmd.Name() == "explain-"+name {
		cmd.Hidden = true
		cmd.Deprecated = fmt.Sprintf("use \"yardmaster explain %s\" (kubectl yardmaster explain %s) instead", name, name)
	}
}

// networkTrafficArgs returns the profile's name and NetworkTraffic
// arguments: the named profile's, or the only profile's that has them.
func networkTrafficArgs(c *config.Config, profile string) (string, *networktraffic.Args, error) {
	var names []string
	for _, p := range c.Profiles {
		a, ok := p.Args[networktraffic.Name].(*networktraffic.Args)
		if profile != "" {
			if p.SchedulerName != profile {
				continue
			}
			if !ok {
				return "", nil, fmt.Errorf("profile %q has no %s arguments in its pluginConfig", profile, networktraffic.Name)
			}
			return p.SchedulerName, a, nil
		}
		if ok {
			names = append(names, p.SchedulerName)
		}
	}
	if profile != "" {
		var all []string
		for _, p := range c.Profiles {
			all = append(all, p.SchedulerName)
		}
		return "", nil, fmt.Errorf("no profile %q (the file has %s)", profile, strings.Join(all, ", "))
	}
	switch len(names) {
	case 0:
		return "", nil, fmt.Errorf("no profile has %s arguments in its pluginConfig", networktraffic.Name)
	case 1:
		return networkTrafficArgs(c, names[0])
	}
	return "", nil, fmt.Errorf("profiles %s configure %s: choose one with --profile", strings.Join(names, ", "), networktraffic.Name)
}

// KindBandwidthExplanation is the kind of a BandwidthExplanation, of
// apiVersion explain.APIVersion.
const KindBandwidthExplanation = "BandwidthExplanation"

// BandwidthExplanation is what `explain bandwidth -o json|yaml` prints:
// the query NetworkTraffic runs, what Prometheus answered, how the plugin
// scores, and a row per node of the answer, as the table shows them.
type BandwidthExplanation struct {
	metav1.TypeMeta `json:",inline"`
	// Profile is the schedulerName of the profile whose NetworkTraffic
	// arguments these are.
	Profile string `json:"profile"`
	// Prometheus is the address queried, any password redacted.
	Prometheus string `json:"prometheus"`
	Query      string `json:"query"`
	// NodeNameLabel is the label that names a series' node.
	NodeNameLabel string           `json:"nodeNameLabel"`
	Answer        PrometheusAnswer `json:"answer"`
	// MaxBandwidth is the bandwidth, in bytes/s, that scores 0; absent
	// when scores are relative to the busiest node.
	MaxBandwidth float64 `json:"maxBandwidth,omitempty"`
	// FilterAbove is the bandwidth, in bytes/s, above which nodes are
	// filtered out; absent when nothing is filtered.
	FilterAbove float64 `json:"filterAbove,omitempty"`
	// Nodes are the nodes of the answer, sorted by name.
	Nodes []BandwidthNode `json:"nodes"`
}

// BandwidthNode is one node's row: its traffic, in bytes/s, and the score
// NetworkTraffic gives it among the nodes of the answer.
type BandwidthNode struct {
	Node string `json:"node"`
	// Bandwidth is what the node is scored by, Measured + Recent; absent
	// when the node has no usable value (Stale, or no data).
	Bandwidth *float64 `json:"bandwidth,omitempty"`
	// Measured is the node's traffic in the answer.
	Measured *float64 `json:"measured,omitempty"`
	// Recent is the estimate of the pods bound since the answer: 0 here,
	// where pods are not read.
	Recent *float64 `json:"recent,omitempty"`
	// AgeSeconds is the age of the answer when the node was scored.
	AgeSeconds float64 `json:"ageSeconds"`
	// Stale is true when the answer is older than staleAfter, so that a
	// cycle scores every node alike.
	Stale    bool  `json:"stale,omitempty"`
	Score    int64 `json:"score"`
	Filtered bool  `json:"filtered,omitempty"`
}

// bandwidthExplanation is the BandwidthExplanation of one answer s of src
// and the rows Explain made of it.
func bandwidthExplanation(profile string, args *networktraffic.Args, src *networktraffic.Source, s *networktraffic.Sample, rows []networktraffic.NodeBandwidth) *BandwidthExplanation {
	e := &BandwidthExplanation{
		TypeMeta: metav1.TypeMeta{APIVersion: explain.APIVersion, Kind: KindBandwidthExplanation},
		Profile:  profile, Prometheus: src.Address(), Query: src.Query(), NodeNameLabel: args.NodeNameLabel,
		Answer: PrometheusAnswer{Time: rfc3339(s.Time), Series: s.Series, Nodes: len(s.Bandwidth),
			Invalid: s.Invalid, Unlabelled: s.Unlabelled, Duplicates: s.Duplicates, Warnings: s.Warnings},
		MaxBandwidth: args.MaxBandwidth, FilterAbove: args.FilterAbove, Nodes: []BandwidthNode{},
	}
	for _, r := range rows {
		n := BandwidthNode{Node: r.Node, AgeSeconds: r.Age.Seconds(), Stale: r.Stale, Score: r.Score, Filtered: r.Filtered}
		if r.HasData {
			n.Bandwidth, n.Measured, n.Recent = finite(r.Bandwidth), finite(r.Measured), finite(r.Recent)
		}
		e.Nodes = append(e.Nodes, n)
	}
	return e
}

// printBandwidth writes e as the table (the default and -o wide): the
// header and one line per node.
func printBandwidth(w io.Writer, e *BandwidthExplanation) error {
	scale := "relative to the busiest node"
	if e.MaxBandwidth > 0 {
		scale = "0 at maxBandwidth " + humanBandwidth(e.MaxBandwidth)
	}
	a := e.Answer
	fmt.Fprintf(w, "profile:    %s\n", e.Profile)
	fmt.Fprintf(w, "prometheus: %s\n", e.Prometheus)
	fmt.Fprintf(w, "query:      %s\n", e.Query)
	fmt.Fprintf(w, "answer:     %d series: %d nodes, %d invalid values, %d without label %q, %d duplicates\n",
		a.Series, a.Nodes, a.Invalid, a.Unlabelled, e.NodeNameLabel, a.Duplicates)
	for _, warning := range a.Warnings {
		fmt.Fprintf(w, "warning:    %s\n", warning)
	}
	fmt.Fprintf(w, "score:      100 - 100 × bandwidth / max, %s\n", scale)
	if e.FilterAbove > 0 {
		fmt.Fprintf(w, "filter:     nodes above %s are filtered out\n", humanBandwidth(e.FilterAbove))
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tBANDWIDTH\tBYTES/S\tAGE\tSCORE\tNOTE")
	for _, r := range e.Nodes {
		note := ""
		if r.Filtered {
			note = "filtered: above filterAbove"
		}
		var bw float64
		if r.Bandwidth != nil {
			bw = *r.Bandwidth
		}
		age := time.Duration(r.AgeSeconds * float64(time.Second))
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%d\t%s\n", r.Node, humanBandwidth(bw), bw, age.Round(time.Millisecond), r.Score, note)
	}
	return tw.Flush()
}

// humanBandwidth writes bytes/s with a decimal prefix and three
// significant digits: "12.5 MB/s".
func humanBandwidth(bw float64) string {
	for _, u := range []struct {
		unit string
		size float64
	}{{"GB/s", 1e9}, {"MB/s", 1e6}, {"kB/s", 1e3}} {
		if bw >= u.size {
			return fmt.Sprintf("%.3g %s", bw/u.size, u.unit)
		}
	}
	return fmt.Sprintf("%.0f B/s", bw)
}
