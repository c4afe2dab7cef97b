package e2e

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/promtest"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// These tests run a real Prometheus scraping one node_exporter stand-in
// per node (promtest.LoadExporter) whose CPU and memory utilization the
// test sets, and schedule with the load-aware plugins.

// loadFile is a profile whose only scorers and extra filters are the
// test's; %s are the scheduler name, the score plugins, the filter
// plugins and the pluginConfig entries.
const loadFile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
  plugins:
    preFilter:
      enabled: [%s]
    filter:
      enabled: [%s]
    score:
      disabled:
      - name: "*"
      enabled: [%s]
  pluginConfig:
%s`

// loadSource is the source args every plugin of these tests gets: a
// 5s rate window, a refresh every second, stale after four.
const loadSource = `      prometheusAddress: %q
      refreshInterval: 1s
      staleAfter: 4s
      timeout: 1s
`

// loadEnv is one test's nodes, exporters and Prometheus.
type loadEnv struct {
	e         *env
	exporters map[string]*promtest.LoadExporter
	prom      *promtest.Server
	// configPath is the scheduler's configuration file.
	configPath string
}

// loadLabel marks the nodes of these tests, so that their pods stay there.
const loadLabel = "e2e.yardmaster.io/load"

// startLoad creates a node of 4 CPUs and 8Gi per entry of cpu, with an
// exporter at that CPU utilization (memory at 20%), and one node per name
// in bare without an exporter; then a Prometheus scraping the exporters.
func (e *env) startLoad(cpu map[string]float64, bare ...string) *loadEnv {
	e.t.Helper()
	le := &loadEnv{e: e, exporters: map[string]*promtest.LoadExporter{}}
	var targets []string
	for name, util := range cpu {
		e.addNode(e.node(name).Label(loadLabel, e.ns).Capacity("4", "8Gi", 110))
		x := promtest.NewLoadExporter(le.node(name), 4, 8<<30, util, 20)
		srv := httptest.NewServer(x)
		e.t.Cleanup(srv.Close)
		le.exporters[name] = x
		targets = append(targets, strings.TrimPrefix(srv.URL, "http://"))
	}
	for _, name := range bare {
		e.addNode(e.node(name).Label(loadLabel, e.ns).Capacity("4", "8Gi", 110))
	}
	prom, err := promtest.Start(e.ctx, promtest.Options{Targets: targets})
	if err != nil {
		e.t.Fatalf("start Prometheus: %v", err)
	}
	e.t.Cleanup(func() {
		if err := prom.Stop(); err != nil {
			e.t.Errorf("stop Prometheus: %v", err)
		}
	})
	le.prom = prom
	return le
}

func (le *loadEnv) node(name string) string { return le.e.ns + "-" + name }

func (le *loadEnv) pod(name, cpu string) *frameworktest.PodWrapper {
	return le.e.pod(name).Req(cpu, "64Mi").NodeSelector(map[string]string{loadLabel: le.e.ns})
}

// cpuQuery is the plugins' CPU query with the tests' 5s window.
func cpuQuery() string { return loadaware.CPUQuery("nodename", model.Duration(5*time.Second)) }

// waitCPU polls Prometheus with the plugins' CPU query until every
// exporter's node is within 2 points of its utilization.
func (le *loadEnv) waitCPU() {
	t := le.e.t
	t.Helper()
	c, err := prommetric.NewClient(prommetric.Connection{Address: le.prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(60 * time.Second)
	var last map[string]float64
	var lastErr error
	for time.Now().Before(deadline) {
		tb, err := c.Query(le.e.ctx, cpuQuery(), "nodename", time.Second, prommetric.MaxSeries, false, time.Now())
		lastErr = err
		if err == nil {
			last = tb.Values
			ok := true
			for name, x := range le.exporters {
				if v, found := tb.Values[le.node(name)]; !found || math.Abs(v-x.CPU()) > 2 {
					ok = false
				}
			}
			if ok {
				t.Logf("CPU utilization in Prometheus (%%): %v", last)
				return
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Prometheus never showed the expected CPU: last %v, %v\nPrometheus log:\n%s", last, lastErr, le.prom.LogTail())
}

// startScheduler runs yardmaster with the given plugins; config holds the
// pluginConfig entries, each "- name: X\n    args:\n" followed by args
// indented six spaces.
func (le *loadEnv) startScheduler(filters, scores []string, config string) {
	le.configPath = le.e.startLoadScheduler(filters, scores, config)
}

// startLoadScheduler writes the file, starts yardmaster with it and
// returns its path.
func (e *env) startLoadScheduler(filters, scores []string, pluginConfig string) string {
	list := func(names []string) string {
		var out []string
		for _, n := range names {
			out = append(out, "{name: "+n+"}")
		}
		return strings.Join(out, ", ")
	}
	path := filepath.Join(e.t.TempDir(), "scheduler.yaml")
	file := fmt.Sprintf(loadFile, e.scheduler, list(filters), list(filters), list(scores), pluginConfig)
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		e.t.Fatal(err)
	}
	if _, err := config.Load(path); err != nil {
		e.t.Fatalf("load %s: %v\n%s", path, err, file)
	}
	e.startScheduler(func(o *app.Options) {
		o.ConfigFile = path
		o.Overrides.SchedulerName = nil
	})
	return path
}

// pluginConfig returns one pluginConfig entry on address with extra args.
func pluginConfig(name, address, extra string) string {
	return "  - name: " + name + "\n    args:\n" + fmt.Sprintf(loadSource, address) + extra
}

// waitFirstTable binds a probe pod (the plugins' Run starts with the
// scheduling loop), then leaves a query's timeout for the first answer.
func (le *loadEnv) waitFirstTable() {
	le.e.createPod(le.pod("probe", "1m"))
	le.e.waitBound(30*time.Second, "probe")
	time.Sleep(1500 * time.Millisecond)
}

// TargetLoadPacking packs onto the node nearest its target without
// passing it, and follows the utilization when it changes.
func TestLoadAwareUtilizationSteersPlacement(t *testing.T) {
	e := newEnv(t)
	le := e.startLoad(map[string]float64{"a": 10, "b": 35, "c": 90})
	le.waitCPU()
	le.startScheduler(nil, []string{loadaware.TargetLoadPackingName},
		pluginConfig(loadaware.TargetLoadPackingName, le.prom.URL, "      timeRange: 5s\n"))
	le.waitFirstTable()

	// 100m requested: 150m predicted, 3.75% of 4 CPUs. Target 40:
	// a 13.75% → 61, b 38.75% → 98, c 93.75% → 4.
	e.createPod(le.pod("pack-1", "100m"))
	if got := e.waitBound(30*time.Second, "pack-1")["pack-1"]; got != le.node("b") {
		t.Errorf("pack-1 bound to %s, want %s, the node nearest the 40%% target", got, le.node("b"))
	}

	// b goes hot: 98.75% → 1; a (61) is now the best.
	le.exporters["b"].SetCPU(95)
	le.waitCPU()
	time.Sleep(2*time.Second + time.Second) // the plugin's next refresh, timeout included
	e.createPod(le.pod("pack-2", "100m"))
	if got := e.waitBound(30*time.Second, "pack-2")["pack-2"]; got != le.node("a") {
		t.Errorf("pack-2 bound to %s, want %s now that b is hot", got, le.node("a"))
	}
}

// A burst created at once spreads: each pod placed since the last table
// adds its predicted CPU to its node.
func TestLoadAwareBurstSpreads(t *testing.T) {
	e := newEnv(t)
	le := e.startLoad(map[string]float64{"a": 36, "b": 20, "c": 10})
	le.waitCPU()
	// One table for the whole test: the pods add no real load.
	le.startScheduler(nil, []string{loadaware.TargetLoadPackingName},
		"  - name: TargetLoadPacking\n    args:\n"+fmt.Sprintf("      prometheusAddress: %q\n", le.prom.URL)+
			"      refreshInterval: 10m\n      staleAfter: 20m\n      timeout: 1s\n      timeRange: 5s\n")
	le.waitFirstTable()

	// 1 CPU requested: 1.5 predicted, 37.5% of 4. Alone, each pod would
	// pick c (10 → 47.5%: 35) over b (57.5%: 28) and a (73.5%: 18); with
	// the estimate c goes to 85% (10) after the first, b to 95% (3) after
	// the second, so the three land on c, b, a.
	names := []string{"burst-0", "burst-1", "burst-2"}
	for _, n := range names {
		e.createPod(le.pod(n, "1"))
	}
	perNode := map[string]int{}
	for _, n := range e.waitBound(30*time.Second, names...) {
		perNode[n]++
	}
	want := map[string]int{le.node("a"): 1, le.node("b"): 1, le.node("c"): 1}
	if fmt.Sprint(perNode) != fmt.Sprint(want) {
		t.Errorf("pods per node %v, want %v", perNode, want)
	}
}

// Prometheus down, or something answering garbage at its address: the
// plugins have no data, filter nothing, score every node alike, and pods
// are scheduled without waiting on a query.
func TestLoadAwarePrometheusDownOrGarbage(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"a", "b"} {
		e.addNode(e.node(name).Label(loadLabel, e.ns).Capacity("4", "8Gi", 110))
	}
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"nodename":`)
	}))
	t.Cleanup(garbage.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close() // nothing listens there any more

	e.startLoadScheduler([]string{loadaware.LoadHotSpotName},
		[]string{loadaware.TargetLoadPackingName, loadaware.LoadVariationRiskBalancingName},
		pluginConfig(loadaware.TargetLoadPackingName, garbage.URL, "")+
			pluginConfig(loadaware.LoadVariationRiskBalancingName, downURL, "")+
			pluginConfig(loadaware.LoadHotSpotName, garbage.URL, "      cpuUtilizationAbove: 1\n      memoryUtilizationAbove: 1\n"))

	start := time.Now()
	var names []string
	for i := range 4 {
		names = append(names, fmt.Sprintf("blind-%d", i))
		e.createPod(e.pod(names[i]).Req("100m", "64Mi").NodeSelector(map[string]string{loadLabel: e.ns}))
	}
	e.waitBound(30*time.Second, names...)
	t.Logf("4 pods bound in %v without usable Prometheus data", time.Since(start))
}

// A query that has no value for some nodes: such a node is never filtered
// out, and scores by missingMetricsPolicy; a node above the hot-spot
// threshold is refused with the filter's reason.
func TestLoadAwareQueryMissingNodes(t *testing.T) {
	e := newEnv(t)
	le := e.startLoad(map[string]float64{"a": 70, "b": 40}, "c")
	le.waitCPU()
	le.startScheduler([]string{loadaware.LoadHotSpotName}, []string{loadaware.PrometheusScoreName},
		pluginConfig(loadaware.PrometheusScoreName, le.prom.URL,
			fmt.Sprintf("      query: %q\n      direction: lowerIsBetter\n      missingMetricsPolicy: lowest\n", cpuQuery()))+
			pluginConfig(loadaware.LoadHotSpotName, le.prom.URL, "      cpuUtilizationAbove: 55\n      timeRange: 5s\n"))
	le.waitFirstTable()

	// a is filtered (70% > 55%), c has no data and scores lowest: b.
	e.createPod(le.pod("any", "100m"))
	if got := e.waitBound(30*time.Second, "any")["any"]; got != le.node("b") {
		t.Errorf("any bound to %s, want %s", got, le.node("b"))
	}
	// c, without data, still takes a pod that only fits there.
	e.createPod(le.pod("only-c", "100m").NodeSelector(map[string]string{loadLabel: e.ns, "kubernetes.io/hostname": le.node("c")}))
	if got := e.waitBound(30*time.Second, "only-c")["only-c"]; got != le.node("c") {
		t.Errorf("only-c bound to %s, want %s", got, le.node("c"))
	}
	// a is refused, with the reason.
	e.createPod(le.pod("only-a", "100m").NodeSelector(map[string]string{loadLabel: e.ns, "kubernetes.io/hostname": le.node("a")}))
	e.waitFailedScheduling("only-a", loadaware.ReasonCPUHotSpot)

	// explain-load shows the same: a's and b's utilization, c without
	// data, a filtered, and the pods bound since (placed after the table
	// the command fetches: none).
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := e.plane.WriteKubeconfig(kubeconfig, e.plane.AdminToken); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := app.ExplainLoad(e.ctx, &out, "--config", le.configPath, "--kubeconfig", kubeconfig,
		le.node("a"), le.node("b"), le.node("c")); err != nil {
		t.Fatalf("explain-load: %v\n%s", err, out.String())
	}
	t.Logf("explain-load:\n%s", out.String())
	for _, want := range []string{
		`(?m)^\s+PrometheusScore$`, `(?m)^\s+LoadHotSpot$`,
		`(?m)^\s+` + le.node("b") + `\s+(39|40)(\.\d+)?\s`, // b's CPU
		`(?m)^\s+` + le.node("c") + `\s+-\s+-\s`,           // no data for c
		`(?m)^\s+` + le.node("a") + `\s.*filtered: ` + regexp.QuoteMeta(loadaware.ReasonCPUHotSpot),
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("explain-load output does not match %s", want)
		}
	}
}

// A pod LoadHotSpot refused because of the pods placed on a node since the
// last measurement is retried when one of those pods goes: the filter
// declares the deletion (and the hint checks that the pod counted), so the
// pod does not wait for the unschedulable pool's five-minute flush.
func TestLoadAwareHotSpotRetriedOnDelete(t *testing.T) {
	e := newEnv(t)
	le := e.startLoad(map[string]float64{"a": 50})
	le.waitCPU()
	// One table for the whole test.
	le.startScheduler([]string{loadaware.LoadHotSpotName}, []string{loadaware.TargetLoadPackingName},
		"  - name: LoadHotSpot\n    args:\n"+fmt.Sprintf("      prometheusAddress: %q\n", le.prom.URL)+
			"      refreshInterval: 10m\n      staleAfter: 20m\n      timeout: 1s\n      timeRange: 5s\n      cpuUtilizationAbove: 60\n"+
			pluginConfig(loadaware.TargetLoadPackingName, le.prom.URL, "      timeRange: 5s\n"))
	le.waitFirstTable()

	onA := map[string]string{loadLabel: e.ns, "kubernetes.io/hostname": le.node("a")}
	// heavy: 1 CPU requested, 1.5 expected, 37.5% of 4: a goes from 50%
	// (passes) to 87.5% for the next pod until the next measurement.
	e.createPod(le.pod("heavy", "1").NodeSelector(onA))
	e.waitBound(30*time.Second, "heavy")
	e.createPod(le.pod("waiter", "100m").NodeSelector(onA))
	e.waitFailedScheduling("waiter", loadaware.ReasonCPUHotSpot)

	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, "heavy", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}
	// Well within the pool's 5-minute stay.
	if got := e.waitBound(60*time.Second, "waiter")["waiter"]; got != le.node("a") {
		t.Errorf("waiter bound to %s, want %s", got, le.node("a"))
	}
}

// A pod LoadHotSpot refused because its only node was hot is woken by the
// measurement that shows the node cooled, not by the unschedulable pool's
// five-minute flush: the filter raises a NodeMetrics event when a table
// comes, and its hint queues the pod when a node is under the threshold.
func TestLoadAwareHotSpotRetriedOnCooling(t *testing.T) {
	e := newEnv(t)
	le := e.startLoad(map[string]float64{"a": 80})
	le.waitCPU()
	le.startScheduler([]string{loadaware.LoadHotSpotName}, nil,
		pluginConfig(loadaware.LoadHotSpotName, le.prom.URL, "      cpuUtilizationAbove: 60\n      timeRange: 5s\n"))
	// The first table (refreshed every second, answered within the 1 s
	// timeout): before it nothing is filtered.
	time.Sleep(3 * time.Second)
	e.createPod(le.pod("waiter", "100m"))
	e.waitFailedScheduling("waiter", loadaware.ReasonCPUHotSpot)

	le.exporters["a"].SetCPU(20)
	le.waitCPU()
	// Well within the pool's 5-minute stay; the pod's backoff is at most
	// 10 s.
	if got := e.waitBound(60*time.Second, "waiter")["waiter"]; got != le.node("a") {
		t.Errorf("waiter bound to %s, want %s", got, le.node("a"))
	}
}
