package e2e

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/promtest"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// These tests run a real Prometheus (Debian's package, installed by
// hack/install-prometheus.sh) that scrapes one node_exporter stand-in
// (promtest.NodeExporter) per node, served by the test on loopback. Each
// exporter's byte counters grow at a rate the test sets, so the quietest
// node is known.

const mbps = 1e6 // bytes/s

// networkTrafficFile is a profile whose only scorer is NetworkTraffic,
// with intervals short enough for a test.
const networkTrafficFile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
  plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: NetworkTraffic
  pluginConfig:
  - name: NetworkTraffic
    args:
      prometheusAddress: %q
      deviceName: eth0
      timeRange: 5s
      refreshInterval: %s
      staleAfter: %s
      timeout: 1s
      podBandwidthEstimate: %d
`

// A new pod goes to the quietest node; when the traffic moves, the next pod
// follows it after a refresh; with Prometheus gone, pods are still
// scheduled.
func TestNetworkTrafficPicksQuietNode(t *testing.T) {
	e := newEnv(t)
	tn := e.startTraffic(map[string]float64{"a": 10 * mbps, "b": 1 * mbps, "c": 5 * mbps})
	tn.waitTraffic()

	// A deviceName that tries to break out of its string literal is still
	// one literal to the real PromQL parser: the query runs, and matches
	// no device.
	t.Run("escaping", func(t *testing.T) {
		// As a regular expression: eth0, a backslash, and the rest.
		args := tn.args(t, func(a *networktraffic.Args) { a.DeviceName = `eth0\\"} or vector(1) or {x=~"` })
		src, err := networktraffic.NewSource(args)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if _, err := src.Fetch(e.ctx, time.Now()); !errors.Is(err, networktraffic.ErrNoSeries) {
			t.Errorf("Fetch = %v, want %v (a query that parses and matches nothing)", err, networktraffic.ErrNoSeries)
		}
	})

	// Every shape of the default query parses and runs in the real
	// Prometheus and finds the three nodes (with "instance" as node label
	// the test's targets are named host:port, which is what relabeling
	// would replace with node names).
	t.Run("query variants", func(t *testing.T) {
		for name, mutate := range map[string]func(*networktraffic.Args){
			"receive":  func(a *networktraffic.Args) { a.Direction = networktraffic.DirectionReceive },
			"transmit": func(a *networktraffic.Args) { a.Direction = networktraffic.DirectionTransmit },
			"instance": func(a *networktraffic.Args) { a.NodeNameLabel = "instance" },
		} {
			src, err := networktraffic.NewSource(tn.args(t, mutate))
			if err != nil {
				t.Fatal(err)
			}
			s, err := src.Fetch(e.ctx, time.Now())
			src.Close()
			if err != nil || len(s.Bandwidth) != 3 {
				t.Errorf("%s: %v, %v; query %s", name, s, err, src.Query())
			}
		}
	})

	const refresh, staleAfter = time.Second, 4 * time.Second
	tn.startScheduler(refresh, staleAfter, 0)
	tn.waitFirstSample()

	e.createPod(tn.pod("quiet-1"))
	if got := e.waitBound(30*time.Second, "quiet-1")["quiet-1"]; got != tn.node("b") {
		t.Errorf("quiet-1 bound to %s, want the quietest node %s", got, tn.node("b"))
	}

	// b gets busy, c goes quiet.
	tn.setRate("b", 20*mbps)
	tn.setRate("c", 0.5*mbps)
	tn.waitTraffic()
	time.Sleep(2*refresh + time.Second) // the plugin's next refresh, timeout included
	e.createPod(tn.pod("quiet-2"))
	if got := e.waitBound(30*time.Second, "quiet-2")["quiet-2"]; got != tn.node("c") {
		t.Errorf("quiet-2 bound to %s, want the now quietest node %s", got, tn.node("c"))
	}

	// Without Prometheus the plugin scores with its last sample until that
	// is staleAfter old, then has nothing to rank by; pods are scheduled
	// all along, and no cycle waits for a query.
	if err := tn.prom.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"recent", "stale"} {
		if phase == "stale" {
			time.Sleep(staleAfter + refresh)
		}
		start := time.Now()
		var names []string
		for i := range 3 {
			names = append(names, fmt.Sprintf("%s-%d", phase, i))
			e.createPod(tn.pod(names[i]))
		}
		e.waitBound(30*time.Second, names...)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s data: 3 pods took %v to bind without Prometheus", phase, d)
		}
	}
}

// A burst of pods created together spreads: each pod bound since the last
// sample adds podBandwidthEstimate to its node until the next one.
func TestNetworkTrafficBurstSpreads(t *testing.T) {
	e := newEnv(t)
	tn := e.startTraffic(map[string]float64{"a": 10 * mbps, "b": 1 * mbps, "c": 5 * mbps})
	tn.waitTraffic()
	// One sample for the whole test: the pods add no real traffic, so a
	// later sample would (rightly) forget them.
	tn.startScheduler(10*time.Minute, 20*time.Minute, 6*mbps)
	tn.waitFirstSample()

	// In MB/s, with the estimate of 6 per pod: b 1→7 (b), c 5→11 (c),
	// b 7→13 (b, 36 against a's 9), a 10→16 (a, 23 against c's 15).
	var names []string
	for i := range 4 {
		names = append(names, fmt.Sprintf("burst-%d", i))
		e.createPod(tn.pod(names[i]))
	}
	perNode := map[string]int{}
	for _, n := range e.waitBound(30*time.Second, names...) {
		perNode[n]++
	}
	want := map[string]int{tn.node("a"): 1, tn.node("b"): 2, tn.node("c"): 1}
	if fmt.Sprint(perNode) != fmt.Sprint(want) {
		t.Errorf("pods per node %v, want %v", perNode, want)
	}
}

// trafficEnv is one test's nodes, exporters and Prometheus.
type trafficEnv struct {
	e         *env
	exporters map[string]*promtest.NodeExporter
	prom      *promtest.Server
}

// startTraffic creates a node per entry of rates, an exporter for each
// whose eth0 counters grow at that rate (bytes/s), and a Prometheus that
// scrapes them every second.
func (e *env) startTraffic(rates map[string]float64) *trafficEnv {
	e.t.Helper()
	tn := &trafficEnv{e: e, exporters: map[string]*promtest.NodeExporter{}}
	var targets []string
	for name, rate := range rates {
		e.addNode(e.node(name).Label(trafficLabel, e.ns).Capacity("4", "8Gi", 110))
		x := promtest.NewNodeExporter(tn.node(name), rate)
		srv := httptest.NewServer(x)
		e.t.Cleanup(srv.Close)
		tn.exporters[name] = x
		targets = append(targets, strings.TrimPrefix(srv.URL, "http://"))
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
	tn.prom = prom
	return tn
}

// trafficLabel marks the nodes that have an exporter, so that the pods of
// these tests stay on them.
const trafficLabel = "e2e.yardmaster.io/traffic"

func (tn *trafficEnv) node(name string) string { return tn.e.ns + "-" + name }

func (tn *trafficEnv) pod(name string) *frameworktest.PodWrapper {
	return tn.e.pod(name).NodeSelector(map[string]string{trafficLabel: tn.e.ns})
}

func (tn *trafficEnv) setRate(name string, rate float64) { tn.exporters[name].SetRate(rate) }

// args returns the plugin's arguments as the configuration file sets them,
// defaulted.
func (tn *trafficEnv) args(t testing.TB, mutate func(*networktraffic.Args)) *networktraffic.Args {
	t.Helper()
	a := &networktraffic.Args{
		PrometheusAddress: tn.prom.URL,
		DeviceName:        "eth0",
		TimeRange:         prommetric.Duration{Duration: 5 * time.Second},
		Timeout:           prommetric.Duration{Duration: time.Second},
	}
	if mutate != nil {
		mutate(a)
	}
	a.SetDefaults()
	if err := networktraffic.ValidateArgs(a); err != nil {
		t.Fatal(err)
	}
	return a
}

// waitTraffic polls Prometheus with the plugin's own query until every
// node's traffic is within 10% of its exporter's rate. Right after a start
// or a change the rate() window holds too few samples (or old ones) and
// the values are off, though mostly in the right order.
func (tn *trafficEnv) waitTraffic() {
	t := tn.e.t
	t.Helper()
	src, err := networktraffic.NewSource(tn.args(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	deadline := time.Now().Add(60 * time.Second)
	var last map[string]float64
	var lastErr error
	for time.Now().Before(deadline) {
		s, err := src.Fetch(tn.e.ctx, time.Now())
		lastErr = err
		if err == nil {
			last = map[string]float64{}
			for name := range tn.exporters {
				if bw, found := s.Bandwidth[tn.node(name)]; found {
					last[name] = bw
				}
			}
			if tn.accurate(last) {
				t.Logf("traffic in Prometheus (bytes/s): %v", last)
				return
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Prometheus never showed the expected traffic: last %v, %v; query %s\nPrometheus log:\n%s",
		last, lastErr, src.Query(), tn.prom.LogTail())
}

// accurate reports whether bw has every node within 10% of its rate.
func (tn *trafficEnv) accurate(bw map[string]float64) bool {
	for name, x := range tn.exporters {
		got, ok := bw[name]
		want := x.Rate()
		if !ok || got < 0.9*want || got > 1.1*want {
			return false
		}
	}
	return true
}

// startScheduler runs yardmaster with a NetworkTraffic-only profile.
func (tn *trafficEnv) startScheduler(refresh, staleAfter time.Duration, estimate float64) {
	e := tn.e
	path := filepath.Join(e.t.TempDir(), "scheduler.yaml")
	file := fmt.Sprintf(networkTrafficFile, e.scheduler, tn.prom.URL, refresh, staleAfter, int64(estimate))
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		e.t.Fatal(err)
	}
	// The file must load on its own; a failure past this point is in the
	// scheduler, not in the file.
	if _, err := config.Load(path); err != nil {
		e.t.Fatalf("load %s: %v", path, err)
	}
	e.startScheduler(func(o *app.Options) {
		o.ConfigFile = path
		o.Overrides.SchedulerName = nil // the file names the profile
	})
}

// waitFirstSample waits until the scheduler runs and its NetworkTraffic
// has had time for its first query: a probe pod that adds no traffic is
// bound (the plugin's Run starts with the scheduling loop), then the query
// timeout passes.
func (tn *trafficEnv) waitFirstSample() {
	p := tn.pod("probe")
	p.Annotations = map[string]string{networktraffic.BandwidthAnnotation: "0"}
	tn.e.createPod(p)
	tn.e.waitBound(30*time.Second, "probe")
	time.Sleep(1500 * time.Millisecond)
}
