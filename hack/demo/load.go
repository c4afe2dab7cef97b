package main

// The load part of the demo. Three nodes added for it (tainted, so that
// the pods still pending above stay off them) get a node_exporter
// stand-in for CPU and memory (promtest.LoadExporter) scraped by a
// Prometheus of their own: one hot, one warm (under the 40% target), one
// idle. The yardmaster-load profile scores by TargetLoadPacking only, and a
// burst of cpu-* pods shows it packing the warm node up to the target, then
// moving on, with each placed pod counted until the next measurement.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/internal/promtest"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
)

const (
	loadProfile = "yardmaster-load"
	cpuPods     = 4
	// loadTaint keeps every pod but the cpu-* ones off the load nodes.
	loadTaint = "demo/load"
	// loadRefresh is the profile's refreshInterval, and its rate window
	// loadWindow; a long staleAfter keeps the one table the burst uses.
	loadRefresh = 2 * time.Second
	loadWindow  = 10 * time.Second
)

// loadNode is a node with a CPU exporter and its utilization.
type loadNode struct {
	node string
	cpu  float64 // percent
	what string
}

func loadNodes() []loadNode {
	return []loadNode{
		{"load-hot", 85, "hot: 85% CPU"},
		{"load-warm", 30, "warm: 30% CPU, under TargetLoadPacking's 40% target"},
		{"load-idle", 5, "idle: 5% CPU"},
	}
}

// load is the demo's CPU load: exporters, their Prometheus, and the
// profile's TargetLoadPacking arguments.
type load struct {
	*scraped
	args *loadaware.TargetLoadPackingArgs
}

// startLoad serves a CPU exporter per load node and starts a Prometheus
// scraping them; its error wraps promtest.ErrNotInstalled without one.
func startLoad(ctx context.Context) (*load, error) {
	var exporters []http.Handler
	for _, n := range loadNodes() {
		exporters = append(exporters, promtest.NewLoadExporter(n.node, 4, 16<<30, n.cpu, 20))
	}
	sc, err := startScraped(ctx, exporters)
	if err != nil {
		return nil, err
	}
	return &load{scraped: sc}, nil
}

// profile returns the load profile for the configuration's profiles list.
func (l *load) profile() string {
	return fmt.Sprintf(`- schedulerName: %s
  plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: %s
  pluginConfig:
  - name: %s
    args:
      prometheusAddress: %q
      refreshInterval: %s
      staleAfter: 5m
      timeRange: %s
`, loadProfile, loadaware.TargetLoadPackingName, loadaware.TargetLoadPackingName, l.prom.URL, loadRefresh, loadWindow)
}

// loadArgs takes the profile's arguments from the loaded configuration.
func (l *load) loadArgs(c *config.Config) error {
	for _, p := range c.Profiles {
		if a, ok := p.Args[loadaware.TargetLoadPackingName].(*loadaware.TargetLoadPackingArgs); ok && p.SchedulerName == loadProfile {
			l.args = a
			return nil
		}
	}
	return fmt.Errorf("profile %q has no %s arguments", loadProfile, loadaware.TargetLoadPackingName)
}

// show waits for Prometheus to measure the CPU, creates the burst and
// prints each load node's CPU, TargetLoadPacking's score for the first pod
// (the plugin's own Explain) and the pods placed there. The first pod
// takes the warm node (30 → 37.5%: 96); for the next the warm node would
// be at 45% (37) against the idle node's 12.5% (59), so the idle one takes
// the rest (20%: 70, 27.5%: 81).
func (l *load) show(ctx context.Context, client kubernetes.Interface) error {
	step(fmt.Sprintf("Load: profile %s scores nodes by measured CPU only (%s, target %d%%)", loadProfile, loadaware.TargetLoadPackingName, l.args.TargetUtilization))
	var names []string
	for _, n := range loadNodes() {
		fmt.Printf("     %-9s  %s\n", n.node, n.what)
		names = append(names, n.node)
		node := frameworktest.MakeNode().Name(n.node).Capacity("4", "16Gi", 110).
			Label(v1.LabelTopologyZone, "zone-a").Label(v1.LabelTopologyRegion, "demo").
			Taint(loadTaint, "true", v1.TaintEffectNoSchedule)
		if _, err := controlplane.CreateKWOKNode(ctx, client, node.Obj()); err != nil {
			return err
		}
	}
	pl, err := loadaware.NewTargetLoadPacking(l.args, nil)
	if err != nil {
		return err
	}
	metric := pl.Metrics()[0]
	fmt.Printf("   Waiting for a full %s rate window in Prometheus, then a query ... ", loadWindow)
	start := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		t, err := metric.Fetch(ctx, time.Now())
		if err != nil {
			return false, nil
		}
		for _, n := range loadNodes() {
			if v, ok := t.Values[n.node]; !ok || v < n.cpu-2 || v > n.cpu+2 {
				return false, nil
			}
		}
		metric.Store(t)
		return true, nil
	})
	if err != nil {
		fmt.Println()
		return fmt.Errorf("no accurate CPU in Prometheus: %w; query: %s", err, metric.Query())
	}
	time.Sleep(loadRefresh + 500*time.Millisecond) // yardmaster's own query
	fmt.Printf("%.1fs\n", time.Since(start).Seconds())

	affinity := &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: names},
		}}},
	}}}
	// A small request and a limit: Trimaran expects a container to use its
	// limit.
	fmt.Printf("   Creating %d cpu-* pods at once (profile %s, CPU limit 300m each: 7.5%% of 4 CPUs expected; request 10m)\n", cpuPods, loadProfile)
	cpuPod := func(name string) *v1.Pod {
		p := frameworktest.MakePod().Namespace(namespace).Name(name).SchedulerName(loadProfile).Label("app", "cpu").Req("10m", "16Mi").
			Toleration(loadTaint, v1.TolerationOpEqual, "true", v1.TaintEffectNoSchedule).Obj()
		p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m")}
		return p
	}
	first := cpuPod("cpu-0")
	for i := range cpuPods {
		p := cpuPod(fmt.Sprintf("cpu-%d", i))
		p.Spec.Affinity = affinity
		if _, err := client.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
	}
	if err := waitSettled(ctx, client, "cpu pods"); err != nil {
		return err
	}

	var infos []*framework.NodeInfo
	for _, name := range names {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ni := framework.NewNodeInfo() // no pods: scored as before the burst
		ni.SetNode(n)
		infos = append(infos, ni)
	}
	rows := pl.Explain(ctx, infos, first)
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=cpu"})
	if err != nil {
		return err
	}
	reasons, err := failureReasons(ctx, client)
	if err != nil {
		return err
	}
	byNode := map[string][]string{}
	var pending []v1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			pending = append(pending, p)
			continue
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   NODE\tCPU\tSCORE\tCPU PODS")
	for _, r := range rows {
		slices.Sort(byNode[r.Node])
		fmt.Fprintf(tw, "   %s\t%.0f%%\t%d\t%s\n", r.Node, r.Values[0], r.Score, strings.Join(byNode[r.Node], " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Println("   CPU: Prometheus's answer to TargetLoadPacking's query. SCORE: its score for the first pod (u = CPU + 7.5%):")
	fmt.Println("   40 + 60 × u / 40 up to the target, 40 × (100 − u) / 60 above it. Each pod placed counts at its expected")
	fmt.Println("   use until the next measurement, so the warm node is packed up to the target, then the idle one fills.")
	for _, p := range pending {
		fmt.Printf("   %s is pending: %s\n", p.Name, reasons[p.UID])
	}
	fmt.Printf("   Check it: yardmaster explain load --config <file> --profile %s %s\n", loadProfile, strings.Join(names, " "))
	return nil
}
