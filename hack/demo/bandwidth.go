package main

// The bandwidth part of the demo. Every node gets a node_exporter stand-in
// (promtest.NodeExporter, served on loopback) and a real Prometheus scrapes
// them every second. Three nodes have a 10G uplink (label net=10g): one
// busy with a backup, one moderately busy, one quiet. The yardmaster-quiet
// profile scores nodes by NetworkTraffic only, and a burst of stream pods
// that need a 10G uplink shows where it sends them. It needs a prometheus
// binary, which `make demo` installs (hack/install-prometheus.sh); run
// without one, the demo says so and skips this part.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/promtest"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
)

const (
	quietProfile = "yardmaster-quiet"
	// uplinkLabel marks the nodes with a 10G uplink, the only ones the
	// stream pods may use.
	uplinkLabel, uplinkValue = "net", "10g"

	mbps = 1e6 // bytes/s
	// quietRate is the traffic of every node not listed in uplinks.
	quietRate = 1 * mbps
	// podEstimate is the profile's podBandwidthEstimate: large enough
	// next to the gap between the quiet and the moderate uplink node (1 and
	// 25 MB/s) that the burst spreads over both. In MB/s, pod by pod:
	// node-06 1→11→21→31, node-03 25→35, node-06 31→41, node-03 35→45;
	// node-02 stays the busiest, at 80.
	podEstimate = 10 * mbps
	streamPods  = 6
	// refreshInterval is the profile's; waitMeasured waits one more after
	// Prometheus has the traffic right, for the plugin to have queried it.
	refreshInterval = 2 * time.Second
)

// uplink is a node with a 10G uplink and the traffic on it.
type uplink struct {
	node string
	rate float64 // bytes/s
	what string
}

// uplinks are the nodes the stream pods may go to, busiest first.
func uplinks() []uplink {
	return []uplink{
		{"node-02", 80 * mbps, "busy: a backup is pulling 80 MB/s"},
		{"node-03", 25 * mbps, "moderate: 25 MB/s"},
		{"node-06", 1 * mbps, "quiet: 1 MB/s, like every node without a 10G uplink"},
	}
}

func isUplink(node string) bool {
	return slices.ContainsFunc(uplinks(), func(u uplink) bool { return u.node == node })
}

// trafficOf returns the bytes/s a node's exporter reports.
func trafficOf(node string) float64 {
	for _, u := range uplinks() {
		if u.node == node {
			return u.rate
		}
	}
	return quietRate
}

// bandwidth is the demo's network traffic: the exporters, the Prometheus
// that scrapes them, and the NetworkTraffic arguments of the quiet profile.
type bandwidth struct {
	*scraped
	// args are the quiet profile's NetworkTraffic arguments as the
	// configuration file sets them, defaulted; set by loadArgs.
	args *networktraffic.Args
}

// startBandwidth serves an exporter for each of nodes and starts a
// Prometheus that scrapes them every second. Its error wraps
// promtest.ErrNotInstalled when there is no prometheus binary.
func startBandwidth(ctx context.Context, nodes []string) (*bandwidth, error) {
	exporters := make([]http.Handler, 0, len(nodes))
	for _, n := range nodes {
		exporters = append(exporters, promtest.NewNodeExporter(n, trafficOf(n)))
	}
	sc, err := startScraped(ctx, exporters)
	if err != nil {
		return nil, err
	}
	return &bandwidth{scraped: sc}, nil
}

// scraped is exporters served on loopback and a Prometheus scraping them
// every second: the bandwidth part's and the load part's.
type scraped struct {
	exporters []*httptest.Server
	prom      *promtest.Server
}

// startScraped serves each exporter on loopback and starts a Prometheus
// scraping them. Its error wraps promtest.ErrNotInstalled when there is
// no prometheus binary.
func startScraped(ctx context.Context, exporters []http.Handler) (*scraped, error) {
	if _, err := promtest.Binary(""); err != nil {
		return nil, err
	}
	sc := &scraped{}
	targets := make([]string, 0, len(exporters))
	for _, h := range exporters {
		srv := httptest.NewServer(h)
		sc.exporters = append(sc.exporters, srv)
		targets = append(targets, strings.TrimPrefix(srv.URL, "http://"))
	}
	prom, err := promtest.Start(ctx, promtest.Options{Targets: targets, ScrapeInterval: time.Second})
	if err != nil {
		sc.stop()
		return nil, err
	}
	sc.prom = prom
	return sc, nil
}

// stop stops Prometheus and the exporters.
func (sc *scraped) stop() {
	if sc.prom != nil {
		if err := sc.prom.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop Prometheus:", err)
		}
	}
	for _, srv := range sc.exporters {
		srv.Close()
	}
}

// profile returns the quiet profile, for the profiles list of the
// configuration: NetworkTraffic is its only scorer (the default filters
// still run), with intervals short enough for a demo.
func (b *bandwidth) profile() string {
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
      timeRange: 10s
      staleAfter: 30s
      podBandwidthEstimate: %.0f
`, quietProfile, networktraffic.Name, networktraffic.Name, b.prom.URL, refreshInterval, podEstimate)
}

// loadArgs takes the quiet profile's NetworkTraffic arguments from the
// loaded configuration, so that the demo queries and scores exactly as
// yardmaster does.
func (b *bandwidth) loadArgs(c *config.Config) error {
	for _, p := range c.Profiles {
		if p.SchedulerName != quietProfile {
			continue
		}
		if a, ok := p.Args[networktraffic.Name].(*networktraffic.Args); ok {
			b.args = a
			return nil
		}
	}
	return fmt.Errorf("profile %q has no %s arguments", quietProfile, networktraffic.Name)
}

// show creates the stream pods once NetworkTraffic has the traffic, and
// prints where they went next to each uplink node's traffic and score.
func (b *bandwidth) show(ctx context.Context, client kubernetes.Interface) error {
	step(fmt.Sprintf("Bandwidth: profile %s scores nodes by their network traffic only (%s)", quietProfile, networktraffic.Name))
	fmt.Printf("   Every node runs a node_exporter stand-in; the three with a 10G uplink (%s=%s):\n", uplinkLabel, uplinkValue)
	for _, u := range uplinks() {
		fmt.Printf("     %s  %s\n", u.node, u.what)
	}
	src, err := networktraffic.NewSource(b.args)
	if err != nil {
		return err
	}
	defer src.Close()
	fmt.Printf("   Waiting for a full %s rate window in Prometheus, then a NetworkTraffic query ... ", b.args.TimeRange.Duration)
	start := time.Now()
	if err := waitMeasured(ctx, src); err != nil {
		fmt.Println()
		return err
	}
	fmt.Printf("%.1fs\n", time.Since(start).Seconds())

	// The sample the first stream pod is scored with, or one a moment
	// younger: the traffic does not change any more.
	sample, err := src.Fetch(ctx, time.Now())
	if err != nil {
		return fmt.Errorf("query Prometheus: %w", err)
	}
	fmt.Printf("   Creating %d stream-* pods at once (profile %s, nodeSelector %s=%s, no requests)\n",
		streamPods, quietProfile, uplinkLabel, uplinkValue)
	for i := range streamPods {
		p := frameworktest.MakePod().Namespace(namespace).Name(fmt.Sprintf("stream-%d", i)).
			SchedulerName(quietProfile).Label("app", "stream").
			NodeSelector(map[string]string{uplinkLabel: uplinkValue}).Obj()
		if _, err := client.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
	}
	if err := waitSettled(ctx, client, "stream pods"); err != nil {
		return err
	}
	return printBandwidth(ctx, client, b.args, sample)
}

// waitMeasured waits until Prometheus, asked with the plugin's own query,
// has every node's traffic within 10% of its exporter's rate — which takes
// a full timeRange after Prometheus starts, as rate() extrapolates a
// partly filled window — and then for one refreshInterval more, in which
// NetworkTraffic queries Prometheus itself.
func waitMeasured(ctx context.Context, src *networktraffic.Source) error {
	var last map[string]float64
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		s, err := src.Fetch(ctx, time.Now())
		if err != nil {
			return false, nil // no data yet is an answer like any other here
		}
		last = s.Bandwidth
		for i := range numNodes {
			want := trafficOf(nodeName(i))
			if got, ok := s.Bandwidth[nodeName(i)]; !ok || got < 0.9*want || got > 1.1*want {
				return false, nil
			}
		}
		return true, nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no accurate traffic in Prometheus within 60s (last answer: %v); query: %s", last, src.Query())
	}
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(refreshInterval + 500*time.Millisecond):
		return nil
	}
}

// printBandwidth prints, for each uplink node, the traffic in sample and
// the score NetworkTraffic gives it for a pod that can only go to the
// uplink nodes (the first stream pod), computed by the plugin's own
// Explain, and the stream pods bound there.
func printBandwidth(ctx context.Context, client kubernetes.Interface, args *networktraffic.Args, sample *networktraffic.Sample) error {
	var feasible []*framework.NodeInfo
	for _, u := range uplinks() {
		n, err := client.CoreV1().Nodes().Get(ctx, u.node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ni := framework.NewNodeInfo() // no pods: scored as before the burst
		ni.SetNode(n)
		feasible = append(feasible, ni)
	}
	// Explain normalizes among the nodes it is given, as a cycle does among
	// the feasible ones.
	rows := networktraffic.Explain(args, sample, sample.Time, feasible)

	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=stream"})
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
	fmt.Fprintln(tw, "   NODE\tTRAFFIC\tSCORE\tSTREAM PODS")
	for _, r := range rows {
		traffic := "no data"
		if r.HasData {
			traffic = fmt.Sprintf("%.1f MB/s", r.Measured/mbps)
		}
		slices.Sort(byNode[r.Node])
		fmt.Fprintf(tw, "   %s\t%s\t%d\t%s\n", r.Node, traffic, r.Score, strings.Join(byNode[r.Node], " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Println("   TRAFFIC: Prometheus's answer to NetworkTraffic's query. SCORE: NetworkTraffic's score for a")
	fmt.Println("   stream pod before any was placed, 100 − 100 × traffic / busiest.")
	fmt.Printf("   Each pod placed counts as %.0f MB/s more on its node until the next sample (podBandwidthEstimate),\n", podEstimate/mbps)
	fmt.Println("   so a burst spreads over the quieter nodes instead of piling onto the quietest one.")
	for _, p := range pending {
		fmt.Printf("   %s is pending: %s\n", p.Name, reasons[p.UID])
	}
	return nil
}
