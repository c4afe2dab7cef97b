package app

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// newExplainLoadCommand returns `yardmaster explain load NODE...|--all`
// (use "load", beneath explain) or its deprecated alias `yardmaster
// explain-load`: query Prometheus once with the load plugins' arguments
// of a profile, read the nodes and their pods from the cluster (with
// kubectl's flags), and print per node and plugin each metric's value,
// what the pods placed since add, and the score (or a filter's verdict)
// the plugin's own code gives.
func newExplainLoadCommand(reg framework.Registry, use string) *cobra.Command {
	var path, profile, podCPU, podMemory string
	var all bool
	var output string
	kube := newConfigFlags()
	cmd := &cobra.Command{
		Use:   use + " (NODE... | --all)",
		Short: "Query Prometheus as the load-aware plugins do and print each node's load and score",
		Long: "Load the configuration file, build the load-aware plugins a profile configures\n" +
			"(TargetLoadPacking, LoadVariationRiskBalancing, PrometheusScore, LoadHotSpot), run each\n" +
			"of their queries against Prometheus once, read the nodes and their pods from the\n" +
			"cluster, and print for every node each metric's value, the estimate of the pods bound\n" +
			"since the answer, and the score the plugin gives it among the nodes shown, for a pod\n" +
			"with the requests of --pod-cpu and --pod-memory. NODE is NAME or node/NAME (nodes/,\n" +
			"no/). The cluster is reached with kubectl's flags (--kubeconfig, --context, --as,\n" +
			"--server, --request-timeout, ...).\n\n" +
			"-o json and -o yaml print the LoadExplanation (apiVersion " + explain.APIVersion + ",\n" +
			"docs/schemas/), where a missing value is null; -o wide is the table.\n\n" +
			"Exit codes: 0 printed; 1 an error (bad input, the API or Prometheus unreachable).",
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := checkOutputOf(&output, reportOutputFormats); err != nil {
				return err
			}
			if all == (len(names) > 0) {
				return fmt.Errorf("name nodes or pass --all, not both or neither")
			}
			names, err := parseNodeArgs(names)
			if err != nil {
				return err
			}
			c, err := config.LoadWith(path, reg, config.Overrides{})
			if err != nil {
				return err
			}
			name, plugins, err := loadPlugins(c, profile)
			if err != nil {
				return err
			}
			rc, err := restConfig(kube)
			if err != nil {
				return err
			}
			client, err := kubernetes.NewForConfig(rc)
			if err != nil {
				return err
			}
			pod, err := hypotheticalPod(podCPU, podMemory)
			if err != nil {
				return err
			}
			return explainLoad(cmd.Context(), cmd.OutOrStdout(), name, plugins, client, names, pod, output)
		},
	}
	f := cmd.Flags()
	kube.AddFlags(f)
	f.StringVar(&path, "config", "", "KubeSchedulerConfiguration file with load-aware plugins in a profile's pluginConfig")
	f.StringVar(&profile, "profile", "", "schedulerName of the profile (default: the only one that configures load-aware plugins)")
	f.BoolVar(&all, "all", false, "every node")
	f.StringVar(&podCPU, "pod-cpu", "", "CPU request of the pod to score for (none: TargetLoadPacking predicts defaultRequests)")
	f.StringVar(&podMemory, "pod-memory", "", "memory request of the pod to score for")
	f.StringVarP(&output, "output", "o", "", "Output format: wide, json or yaml (default: the table)")
	_ = cmd.MarkFlagRequired("config")
	deprecatedAlias(cmd, "load")
	return cmd
}

// nodeTypes are the TYPE of TYPE/NAME that name nodes, as kubectl reads
// them.
var nodeTypes = []string{"nodes", "node", "no"}

// parseNodeArgs reads explain load's arguments as kubectl reads nodes':
// NAME or TYPE/NAME, TYPE one of nodeTypes (any case).
func parseNodeArgs(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		typ, name, ok := strings.Cut(a, "/")
		if !ok {
			out = append(out, a)
			continue
		}
		if !slices.Contains(nodeTypes, strings.ToLower(typ)) {
			return nil, fmt.Errorf("explain load takes nodes, not %q: write NAME or node/NAME", typ)
		}
		if name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("%q is not a node name", name)
		}
		out = append(out, name)
	}
	return out, nil
}

// loadPluginNames are the plugins explain-load shows, in order.
var loadPluginNames = []string{
	loadaware.TargetLoadPackingName, loadaware.LoadVariationRiskBalancingName,
	loadaware.PrometheusScoreName, loadaware.LoadHotSpotName,
}

// loadPlugins builds the load-aware plugins of the named profile, or of
// the only profile that configures some.
func loadPlugins(c *config.Config, profile string) (string, []loadaware.Explainer, error) {
	var candidates []string
	for _, p := range c.Profiles {
		if profile != "" && p.SchedulerName != profile {
			continue
		}
		var out []loadaware.Explainer
		for _, n := range loadPluginNames {
			a, ok := p.Args[n]
			if !ok {
				continue
			}
			pl, err := newLoadPlugin(n, a)
			if err != nil {
				return "", nil, fmt.Errorf("profile %q: %w", p.SchedulerName, err)
			}
			out = append(out, pl)
		}
		if profile != "" {
			if len(out) == 0 {
				return "", nil, fmt.Errorf("profile %q configures no load-aware plugin (%s)", profile, strings.Join(loadPluginNames, ", "))
			}
			return profile, out, nil
		}
		if len(out) > 0 {
			candidates = append(candidates, p.SchedulerName)
		}
	}
	switch {
	case profile != "":
		return "", nil, fmt.Errorf("no profile %q", profile)
	case len(candidates) == 0:
		return "", nil, fmt.Errorf("no profile configures a load-aware plugin (%s)", strings.Join(loadPluginNames, ", "))
	case len(candidates) > 1:
		return "", nil, fmt.Errorf("profiles %s configure load-aware plugins: choose one with --profile", strings.Join(candidates, ", "))
	}
	return loadPlugins(c, candidates[0])
}

// newLoadPlugin builds one plugin from its decoded args, without a handle
// (no metrics, no logs) and without a pool.
func newLoadPlugin(name string, a any) (loadaware.Explainer, error) {
	switch a := a.(type) {
	case *loadaware.TargetLoadPackingArgs:
		return loadaware.NewTargetLoadPacking(a, nil)
	case *loadaware.LoadVariationRiskBalancingArgs:
		return loadaware.NewLoadVariationRiskBalancing(a, nil)
	case *loadaware.PrometheusScoreArgs:
		return loadaware.NewPrometheusScore(a, nil)
	case *loadaware.LoadHotSpotArgs:
		return loadaware.NewLoadHotSpot(a, nil)
	}
	return nil, fmt.Errorf("%s: args of type %T", name, a)
}

// hypotheticalPod is the pod explain-load scores for.
func hypotheticalPod(cpu, memory string) (*v1.Pod, error) {
	rl := v1.ResourceList{}
	for name, s := range map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: memory} {
		if s == "" {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("--pod-%s: %w", name, err)
		}
		rl[name] = q
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "explain-load"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: rl}}}}}, nil
}

// KindLoadExplanation is the kind of a LoadExplanation, of apiVersion
// explain.APIVersion.
const KindLoadExplanation = "LoadExplanation"

// LoadExplanation is what `explain load -o json|yaml` prints: every
// load-aware plugin of a profile, the answer of each of its metrics and
// each node's values and score, as the table shows them. Values that are
// missing (no data for the node, a metric off or its query failed) are
// null, as JSON has no NaN.
type LoadExplanation struct {
	metav1.TypeMeta `json:",inline"`
	// Profile is the schedulerName of the profile whose plugins these are.
	Profile string       `json:"profile"`
	Plugins []LoadPlugin `json:"plugins"`
}

// LoadPlugin is one plugin's view: its metrics, in order, and a row per
// node, sorted by name.
type LoadPlugin struct {
	Name    string       `json:"name"`
	Metrics []LoadMetric `json:"metrics"`
	Nodes   []LoadNode   `json:"nodes"`
}

// LoadMetric is one metric of a plugin and what Prometheus answered.
type LoadMetric struct {
	// Name is the metric's name in the plugin (cpu%, memory% mean, ...), the
	// table's column.
	Name string `json:"name"`
	// Off is true when the plugin's arguments turn the metric off: there is
	// no query then.
	Off   bool   `json:"off,omitempty"`
	Query string `json:"query,omitempty"`
	// Error is why the query failed; the plugin then treats every node
	// alike.
	Error string `json:"error,omitempty"`
	// Answer is Prometheus's answer, absent when off or failed.
	Answer *PrometheusAnswer `json:"answer,omitempty"`
}

// PrometheusAnswer counts one answer of Prometheus: how many series it
// held and why those that give no node value were left out.
type PrometheusAnswer struct {
	// Time is when the query was sent, RFC 3339.
	Time string `json:"time"`
	// Series is how many series the answer held.
	Series int `json:"series"`
	// Nodes is how many nodes have a value.
	Nodes int `json:"nodes"`
	// Invalid counts series whose value was NaN, ±Inf or negative.
	Invalid int `json:"invalid"`
	// Unlabelled counts series without the node name label.
	Unlabelled int `json:"unlabelled"`
	// Duplicates counts series of a node already seen.
	Duplicates int      `json:"duplicates"`
	Warnings   []string `json:"warnings,omitempty"`
}

// LoadNode is one node's row of a plugin's view. Values and Added are
// aligned with the plugin's metrics.
type LoadNode struct {
	Node string `json:"node"`
	// Values are each metric's value for the node, null where there is
	// none.
	Values []*float64 `json:"values"`
	// Added are, per metric, the estimate of the pods placed on the node
	// since the answer, in the metric's unit; null where Values is.
	Added []*float64 `json:"added"`
	// Score is the normalized score among the nodes shown; absent for a
	// filter, whose verdict is Rejected.
	Score *int64 `json:"score,omitempty"`
	// Rejected is a filter's reason for refusing the node, absent when it
	// passes (and for a scorer).
	Rejected string `json:"rejected,omitempty"`
}

// finite returns v, or nil when v is NaN or infinite (JSON has neither).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// rfc3339 is t as PrometheusAnswer.Time writes it.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// explainLoad queries each plugin's metrics once, reads the nodes (all, or
// the named ones) and their pods, and prints each plugin's view in the
// format of -o.
func explainLoad(ctx context.Context, w io.Writer, profile string, plugins []loadaware.Explainer, client kubernetes.Interface, names []string, pod *v1.Pod, output string) error {
	nodes, err := nodeInfos(ctx, client, names)
	if err != nil {
		return err
	}
	e := &LoadExplanation{TypeMeta: metav1.TypeMeta{APIVersion: explain.APIVersion, Kind: KindLoadExplanation}, Profile: profile, Plugins: []LoadPlugin{}}
	for _, pl := range plugins {
		lp := LoadPlugin{Name: pl.Name(), Metrics: []LoadMetric{}, Nodes: []LoadNode{}}
		now := time.Now()
		metrics, labels := pl.Metrics(), pl.MetricNames()
		for i, m := range metrics {
			lm := LoadMetric{Name: labels[i]}
			if m == nil {
				lm.Off = true
				lp.Metrics = append(lp.Metrics, lm)
				continue
			}
			lm.Query = m.Query()
			t, err := m.Fetch(ctx, now)
			if err != nil {
				lm.Error = err.Error()
			} else {
				m.Store(t)
				lm.Answer = &PrometheusAnswer{Time: rfc3339(t.Time), Series: t.Series, Nodes: len(t.Values),
					Invalid: t.Invalid, Unlabelled: t.Unlabelled, Duplicates: t.Duplicates, Warnings: t.Warnings}
			}
			lp.Metrics = append(lp.Metrics, lm)
		}
		for _, r := range pl.Explain(ctx, nodes, pod) {
			ln := LoadNode{Node: r.Node, Values: make([]*float64, len(r.Values)), Added: make([]*float64, len(r.Values)), Rejected: r.Rejected}
			for i, v := range r.Values {
				if ln.Values[i] = finite(v); ln.Values[i] != nil {
					ln.Added[i] = finite(r.Added[i])
				}
			}
			if r.Score >= 0 {
				ln.Score = &r.Score
			}
			lp.Nodes = append(lp.Nodes, ln)
		}
		e.Plugins = append(e.Plugins, lp)
	}
	if output == outputJSON || output == outputYAML {
		return explain.Marshal(w, e, output)
	}
	return printLoad(w, e)
}

// printLoad writes e as the table (the default and -o wide).
func printLoad(w io.Writer, e *LoadExplanation) error {
	fmt.Fprintf(w, "profile: %s\n", e.Profile)
	for _, pl := range e.Plugins {
		fmt.Fprintf(w, "\n%s\n", pl.Name)
		header := []string{"  NODE"}
		for _, m := range pl.Metrics {
			header = append(header, strings.ToUpper(m.Name), "+SINCE")
			switch {
			case m.Off:
				fmt.Fprintf(w, "  %-15s off\n", m.Name+":")
			case m.Answer == nil:
				fmt.Fprintf(w, "  %-15s %s\n  %-15s ERROR %s (the plugin treats every node alike without data)\n", m.Name+":", m.Query, "", m.Error)
			default:
				a := m.Answer
				fmt.Fprintf(w, "  %-15s %s\n  %-15s %d series: %d nodes, %d invalid, %d unlabelled, %d duplicates\n",
					m.Name+":", m.Query, "", a.Series, a.Nodes, a.Invalid, a.Unlabelled, a.Duplicates)
			}
		}
		header = append(header, "SCORE")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, r := range pl.Nodes {
			cols := []string{"  " + r.Node}
			for i, v := range r.Values {
				if v == nil {
					cols = append(cols, "-", "-")
					continue
				}
				added := "-"
				if r.Added[i] != nil {
					added = fmt.Sprintf("%.4g", *r.Added[i])
				}
				cols = append(cols, fmt.Sprintf("%.4g", *v), added)
			}
			switch {
			case r.Rejected != "":
				cols = append(cols, "filtered: "+r.Rejected)
			case r.Score == nil:
				cols = append(cols, "passes")
			default:
				cols = append(cols, fmt.Sprint(*r.Score))
			}
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// nodeInfos reads the named nodes (all when names is empty) and the pods
// bound to them.
func nodeInfos(ctx context.Context, client kubernetes.Interface, names []string) ([]*framework.NodeInfo, error) {
	nl, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	byName := map[string]*framework.NodeInfo{}
	var out []*framework.NodeInfo
	for i := range nl.Items {
		n := &nl.Items[i]
		if len(names) > 0 && !slices.Contains(names, n.Name) {
			continue
		}
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		byName[n.Name] = ni
		out = append(out, ni)
	}
	for _, n := range names {
		if _, ok := byName[n]; !ok {
			return nil, fmt.Errorf("no node %q", n)
		}
	}
	pl, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!="})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	for i := range pl.Items {
		p := &pl.Items[i]
		if ni, ok := byName[p.Spec.NodeName]; ok && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			ni.AddPodInfo(framework.NewPodInfo(p))
		}
	}
	slices.SortFunc(out, func(a, b *framework.NodeInfo) int { return strings.Compare(a.NodeName(), b.NodeName()) })
	return out, nil
}

// ExplainLoad runs `yardmaster explain load args...` writing to w; for
// tests and tools that want its output. The configuration may name the
// built-in plugins.
func ExplainLoad(ctx context.Context, w io.Writer, args ...string) error {
	cmd := newExplainLoadCommand(registry.NewInTree(), "load")
	cmd.SetOut(w)
	cmd.SetErr(w)
	cmd.SetArgs(args)
	cmd.SilenceUsage = true
	return cmd.ExecuteContext(ctx)
}
