package app

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/yardmaster-io/yardmaster/config"
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
	var path, profile string
	cmd := &cobra.Command{
		Use:   use,
		Short: "Query Prometheus as NetworkTraffic does and print each node's traffic and score",
		Long: "Load the configuration file, take the NetworkTraffic arguments of a profile, run the\n" +
			"plugin's query against Prometheus once and print, for every node in the answer, its\n" +
			"traffic and the score NetworkTraffic would give it among all of them. Pods bound since\n" +
			"the sample are not known here, so the pile-on estimate is not included. Only Prometheus\n" +
			"is read, not the cluster.\n\n" +
			"Exit codes: 0 printed; 1 an error (bad input, Prometheus unreachable).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			return printBandwidth(cmd.OutOrStdout(), name, args, src, s, rows)
		},
	}
	f := cmd.Flags()
	f.StringVar(&path, "config", "", "KubeSchedulerConfiguration file with NetworkTraffic in a profile's pluginConfig")
	f.StringVar(&profile, "profile", "", "schedulerName of the profile (default: the only one that configures NetworkTraffic)")
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

// printBandwidth writes the header and one line per node.
func printBandwidth(w io.Writer, profile string, args *networktraffic.Args, src *networktraffic.Source, s *networktraffic.Sample, rows []networktraffic.NodeBandwidth) error {
	scale := "relative to the busiest node"
	if args.MaxBandwidth > 0 {
		scale = "0 at maxBandwidth " + humanBandwidth(args.MaxBandwidth)
	}
	fmt.Fprintf(w, "profile:    %s\n", profile)
	fmt.Fprintf(w, "prometheus: %s\n", src.Address())
	fmt.Fprintf(w, "query:      %s\n", src.Query())
	fmt.Fprintf(w, "answer:     %d series: %d nodes, %d invalid values, %d without label %q, %d duplicates\n",
		s.Series, len(s.Bandwidth), s.Invalid, s.Unlabelled, args.NodeNameLabel, s.Duplicates)
	for _, warning := range s.Warnings {
		fmt.Fprintf(w, "warning:    %s\n", warning)
	}
	fmt.Fprintf(w, "score:      100 - 100 × bandwidth / max, %s\n", scale)
	if args.FilterAbove > 0 {
		fmt.Fprintf(w, "filter:     nodes above %s are filtered out\n", humanBandwidth(args.FilterAbove))
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tBANDWIDTH\tBYTES/S\tAGE\tSCORE\tNOTE")
	for _, r := range rows {
		note := ""
		if r.Filtered {
			note = "filtered: above filterAbove"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%d\t%s\n", r.Node, humanBandwidth(r.Bandwidth), r.Bandwidth,
			r.Age.Round(time.Millisecond), r.Score, note)
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
