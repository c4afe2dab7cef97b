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
			"Exit codes: 0 printed; 1 an error (bad input, the API or Prometheus unreachable).",
		RunE: func(cmd *cobra.Command, names []string) error {
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
			return explainLoad(cmd.Context(), cmd.OutOrStdout(), name, plugins, client, names, pod)
		},
	}
	f := cmd.Flags()
	kube.AddFlags(f)
	f.StringVar(&path, "config", "", "KubeSchedulerConfiguration file with load-aware plugins in a profile's pluginConfig")
	f.StringVar(&profile, "profile", "", "schedulerName of the profile (default: the only one that configures load-aware plugins)")
	f.BoolVar(&all, "all", false, "every node")
	f.StringVar(&podCPU, "pod-cpu", "", "CPU request of the pod to score for (none: TargetLoadPacking predicts defaultRequests)")
	f.StringVar(&podMemory, "pod-memory", "", "memory request of the pod to score for")
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

// explainLoad queries each plugin's metrics once, reads the nodes (all, or
// the named ones) and their pods, and prints each plugin's view.
func explainLoad(ctx context.Context, w io.Writer, profile string, plugins []loadaware.Explainer, client kubernetes.Interface, names []string, pod *v1.Pod) error {
	nodes, err := nodeInfos(ctx, client, names)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "profile: %s\n", profile)
	for _, pl := range plugins {
		fmt.Fprintf(w, "\n%s\n", pl.Name())
		now := time.Now()
		metrics, labels := pl.Metrics(), pl.MetricNames()
		for i, m := range metrics {
			if m == nil {
				fmt.Fprintf(w, "  %-15s off\n", labels[i]+":")
				continue
			}
			t, err := m.Fetch(ctx, now)
			if err != nil {
				fmt.Fprintf(w, "  %-15s %s\n  %-15s ERROR %v (the plugin treats every node alike without data)\n", labels[i]+":", m.Query(), "", err)
				continue
			}
			m.Store(t)
			fmt.Fprintf(w, "  %-15s %s\n  %-15s %d series: %d nodes, %d invalid, %d unlabelled, %d duplicates\n",
				labels[i]+":", m.Query(), "", t.Series, len(t.Values), t.Invalid, t.Unlabelled, t.Duplicates)
		}
		rows := pl.Explain(ctx, nodes, pod)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		header := []string{"  NODE"}
		for _, l := range labels {
			header = append(header, strings.ToUpper(l), "+SINCE")
		}
		header = append(header, "SCORE")
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, r := range rows {
			cols := []string{"  " + r.Node}
			for i := range r.Values {
				if math.IsNaN(r.Values[i]) {
					cols = append(cols, "-", "-")
					continue
				}
				cols = append(cols, fmt.Sprintf("%.4g", r.Values[i]), fmt.Sprintf("%.4g", r.Added[i]))
			}
			switch {
			case r.Rejected != "":
				cols = append(cols, "filtered: "+r.Rejected)
			case r.Score < 0:
				cols = append(cols, "passes")
			default:
				cols = append(cols, fmt.Sprint(r.Score))
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
