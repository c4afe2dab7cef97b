package networktraffic

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	v1 "k8s.io/api/core/v1"
	testclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

const mb = 1e6 // bytes/s

func TestScore(t *testing.T) {
	abc := func() []*framework.NodeInfo {
		return []*framework.NodeInfo{makeNode("a"), makeNode("b"), makeNode("c")}
	}
	tests := []struct {
		name   string
		mutate func(*Args)
		// sample is nil for no sample at all.
		sample map[string]float64
		// age of the sample when the cycle runs.
		age   time.Duration
		nodes []*framework.NodeInfo
		// want nil means PreScore skips: every node scores the same.
		want map[string]int64
	}{
		{
			name:   "relative to the busiest feasible node",
			sample: map[string]float64{"a": 10 * mb, "b": 1 * mb, "c": 5 * mb},
			nodes:  abc(),
			// 100 − 100×10/10 = 0; 100 − 100×1/10 = 90; 100 − 100×5/10 = 50
			want: map[string]int64{"a": 0, "b": 90, "c": 50},
		},
		{
			name:   "rounded to the nearest integer",
			sample: map[string]float64{"a": 3, "b": 1, "c": 2},
			nodes:  abc(),
			// 100 − 100×1/3 = 66.67 → 67; 100 − 100×2/3 = 33.33 → 33
			want: map[string]int64{"a": 0, "b": 67, "c": 33},
		},
		{
			name:   "nodes outside the cluster do not set the maximum",
			sample: map[string]float64{"a": 4 * mb, "b": 2 * mb, "c": 1 * mb, "gone": 100 * mb},
			nodes:  abc(),
			// maxBW = 4: 0, 50, 75
			want: map[string]int64{"a": 0, "b": 50, "c": 75},
		},
		{
			name:   "only feasible nodes set the maximum",
			sample: map[string]float64{"a": 100 * mb, "b": 2 * mb, "c": 1 * mb},
			nodes:  []*framework.NodeInfo{makeNode("b"), makeNode("c")},
			// maxBW = 2: 0, 50
			want: map[string]int64{"b": 0, "c": 50},
		},
		{
			name:   "fixed maxBandwidth, clamped at 0",
			mutate: func(a *Args) { a.MaxBandwidth = 8 * mb },
			sample: map[string]float64{"a": 10 * mb, "b": 2 * mb, "c": 0},
			nodes:  abc(),
			// 100 − 125 → 0; 100 − 25 = 75; 100
			want: map[string]int64{"a": 0, "b": 75, "c": 100},
		},
		{
			name:   "every node idle: all score the same",
			sample: map[string]float64{"a": 0, "b": 0, "c": 0},
			nodes:  abc(),
			want:   map[string]int64{"a": 100, "b": 100, "c": 100},
		},
		{
			name:   "a node without data is neutral",
			sample: map[string]float64{"a": 10 * mb, "b": 1 * mb},
			nodes:  abc(),
			want:   map[string]int64{"a": 0, "b": 90, "c": 50},
		},
		{
			name:   "a node without data is lowest",
			mutate: func(a *Args) { a.MissingMetricsPolicy = prommetric.MissingMetricsLowest },
			sample: map[string]float64{"a": 10 * mb, "b": 1 * mb},
			nodes:  abc(),
			want:   map[string]int64{"a": 0, "b": 90, "c": 0},
		},
		{
			name:   "no feasible node has data",
			sample: map[string]float64{"x": 10 * mb},
			nodes:  abc(),
		},
		{
			name:  "no sample yet",
			nodes: abc(),
		},
		{
			name:   "a sample exactly staleAfter old is used",
			sample: map[string]float64{"a": 10 * mb, "b": 1 * mb, "c": 5 * mb},
			age:    2 * time.Minute,
			nodes:  abc(),
			want:   map[string]int64{"a": 0, "b": 90, "c": 50},
		},
		{
			name:   "a stale sample is not used",
			sample: map[string]float64{"a": 10 * mb, "b": 1 * mb, "c": 5 * mb},
			age:    2*time.Minute + time.Millisecond,
			nodes:  abc(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := newTestPlugin(t, "", tt.mutate)
			if tt.sample != nil {
				tp.setSample(tt.sample)
			}
			tp.clock.Step(tt.age)
			got := runCycle(t, tp.NetworkTraffic, tt.nodes, true)
			if diff := cmp.Diff(tt.want, got.scores); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			// A profile that enables the plugin only at score gets the
			// same ranking: equal scores where PreScore skips.
			noPre := runCycle(t, tp.NetworkTraffic, tt.nodes, false)
			want := tt.want
			if want == nil {
				want = map[string]int64{}
				for _, ni := range tt.nodes {
					want[ni.Node().Name] = neutralScore
				}
			}
			if diff := cmp.Diff(want, noPre.scores); diff != "" {
				t.Errorf("scores without PreScore (-want +got):\n%s", diff)
			}
		})
	}
}

// A burst of pods spreads: each pod the scheduler assumes adds the
// estimate to its node until the next sample.
func TestPileOn(t *testing.T) {
	tp := newTestPlugin(t, "", func(a *Args) { a.PodBandwidthEstimate = 6 * mb })
	tp.setSample(map[string]float64{"a": 10 * mb, "b": 1 * mb, "c": 5 * mb})
	nodes := map[string]*framework.NodeInfo{"a": makeNode("a"), "b": makeNode("b"), "c": makeNode("c")}
	list := []*framework.NodeInfo{nodes["a"], nodes["b"], nodes["c"]}

	// The expected arithmetic, cycle by cycle (bandwidths in MB/s):
	//  1: a 10, b 1, c 5    max 10: 0, 90, 50          → b
	//  2: a 10, b 7, c 5    max 10: 0, 30, 50          → c
	//  3: a 10, b 7, c 11   max 11: 9.1→9, 36.4→36, 0  → b
	//  4: a 10, b 13, c 11  max 13: 23.1→23, 0, 15.4→15 → a
	wantScores := []map[string]int64{
		{"a": 0, "b": 90, "c": 50},
		{"a": 0, "b": 30, "c": 50},
		{"a": 9, "b": 36, "c": 0},
		{"a": 23, "b": 0, "c": 15},
	}
	var placed []string
	for i, want := range wantScores {
		got := runCycle(t, tp.NetworkTraffic, list, true)
		if diff := cmp.Diff(want, got.scores); diff != "" {
			t.Fatalf("cycle %d scores (-want +got):\n%s", i+1, diff)
		}
		node := best(got.scores)
		placed = append(placed, node)
		nodes[node].AddPodInfo(framework.NewPodInfo(assumedPod(fmt.Sprintf("p%d", i), node)))
	}
	if diff := cmp.Diff([]string{"b", "c", "b", "a"}, placed); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}

	// The bindings are confirmed a second later; the next sample, taken
	// after them, is what counts from then on.
	for _, ni := range list {
		for _, pi := range append([]*framework.PodInfo(nil), ni.Pods...) {
			if err := ni.RemovePod(pi.Pod); err != nil {
				t.Fatal(err)
			}
			ni.AddPodInfo(framework.NewPodInfo(boundPod(pi.Pod.Name, ni.Node().Name, t0.Add(time.Second))))
		}
	}
	// a 16, b 13, c 11, max 16: 0, 18.75→19, 31.25→31
	got := runCycle(t, tp.NetworkTraffic, list, true)
	if diff := cmp.Diff(map[string]int64{"a": 0, "b": 19, "c": 31}, got.scores); diff != "" {
		t.Errorf("confirmed pods before the next sample (-want +got):\n%s", diff)
	}
	tp.clock.Step(15 * time.Second)
	tp.setSample(map[string]float64{"a": 10 * mb, "b": 1 * mb, "c": 5 * mb})
	got = runCycle(t, tp.NetworkTraffic, list, true)
	if diff := cmp.Diff(wantScores[0], got.scores); diff != "" {
		t.Errorf("after the next sample (-want +got):\n%s", diff)
	}
}

func TestRecentPods(t *testing.T) {
	tp := newTestPlugin(t, "", func(a *Args) { a.PodBandwidthEstimate = 1000 })
	s := tp.setSample(map[string]float64{"n": 0}) // taken at t0 = 10:00:00.5
	tests := []struct {
		name string
		pod  *v1.Pod
		want float64
	}{
		{"assumed, not yet confirmed", assumedPod("p", "n"), 1000},
		{"bound a second before the sample", boundPod("p", "n", t0.Add(-time.Second)), 0},
		{"bound in the sample's second, before it", boundPod("p", "n", t0.Add(-400*time.Millisecond)), 1000},
		{"bound after the sample", boundPod("p", "n", t0.Add(3*time.Second)), 1000},
		{"annotation overrides the estimate", annotated(assumedPod("p", "n"), "12.5M"), 12.5e6},
		{"binary suffix", annotated(assumedPod("p", "n"), "1Ki"), 1024},
		{"zero annotation", annotated(assumedPod("p", "n"), "0"), 0},
		{"invalid annotation falls back", annotated(assumedPod("p", "n"), "fast"), 1000},
		{"negative annotation falls back", annotated(assumedPod("p", "n"), "-5M"), 1000},
		{"annotation of an old pod", annotated(boundPod("p", "n", t0.Add(-time.Minute)), "1G"), 0},
		{"PodScheduled=False is not a binding", func() *v1.Pod {
			p := boundPod("p", "n", t0.Add(-time.Minute))
			p.Status.Conditions[0].Status = v1.ConditionFalse
			return p
		}(), 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tp.scorer.bandwidth(tableOf(s), "n", makeNode("n", tt.pod))
			if !ok || got != tt.want {
				t.Errorf("bandwidth = %v, %v; want %v", got, ok, tt.want)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	threshold := func(a *Args) {
		a.FilterAbove = 8 * mb
		a.PodBandwidthEstimate = 4 * mb
	}
	nodes := func() []*framework.NodeInfo {
		return []*framework.NodeInfo{
			makeNode("busy"),
			makeNode("quiet"),
			makeNode("filling", assumedPod("x", "filling")), // 5 + 4 = 9 MB/s
			makeNode("at-threshold"),
			makeNode("unknown"),
		}
	}
	sample := map[string]float64{"busy": 10 * mb, "quiet": 1 * mb, "filling": 5 * mb, "at-threshold": 8 * mb}

	tp := newTestPlugin(t, "", threshold)
	tp.setSample(sample)
	for _, withPre := range []bool{true, false} {
		got := runCycle(t, tp.NetworkTraffic, nodes(), withPre)
		want := map[string]string{"busy": ReasonTrafficAboveThreshold, "filling": ReasonTrafficAboveThreshold}
		if diff := cmp.Diff(want, got.filtered); diff != "" {
			t.Errorf("withPre=%v: filtered (-want +got):\n%s", withPre, diff)
		}
	}

	t.Run("stale data filters nothing", func(t *testing.T) {
		tp := newTestPlugin(t, "", threshold)
		tp.setSample(sample)
		tp.clock.Step(3 * time.Minute)
		_, st := tp.PreFilter(t.Context(), framework.NewCycleState(), nil, nodes())
		if !st.IsSkip() {
			t.Errorf("PreFilter = %v, want Skip", st.Code())
		}
		if got := runCycle(t, tp.NetworkTraffic, nodes(), false); len(got.filtered) != 0 {
			t.Errorf("filtered %v", got.filtered)
		}
	})
	t.Run("no filterAbove filters nothing", func(t *testing.T) {
		tp := newTestPlugin(t, "", nil)
		tp.setSample(sample)
		_, st := tp.PreFilter(t.Context(), framework.NewCycleState(), nil, nodes())
		if !st.IsSkip() {
			t.Errorf("PreFilter = %v, want Skip", st.Code())
		}
		if got := runCycle(t, tp.NetworkTraffic, nodes(), false); len(got.filtered) != 0 {
			t.Errorf("filtered %v", got.filtered)
		}
	})
}

// A cycle keeps the sample PreFilter pinned even when a refresh swaps in
// another one halfway.
func TestCyclePinsSample(t *testing.T) {
	tp := newTestPlugin(t, "", func(a *Args) { a.FilterAbove = 100 * mb })
	tp.setSample(map[string]float64{"a": 10 * mb, "b": 1 * mb})
	state := framework.NewCycleState()
	nodes := []*framework.NodeInfo{makeNode("a"), makeNode("b")}
	if _, st := tp.PreFilter(t.Context(), state, nil, nodes); !st.IsSuccess() {
		t.Fatal(st.Err())
	}
	tp.setSample(map[string]float64{"a": 1 * mb, "b": 10 * mb})
	if st := tp.PreScore(t.Context(), state, nil, nodes); !st.IsSuccess() {
		t.Fatal(st.Err())
	}
	scores := framework.NodeScoreList{}
	for _, ni := range nodes {
		v, _ := tp.Score(t.Context(), state, nil, ni)
		scores = append(scores, framework.NodeScore{Name: ni.Node().Name, Score: v})
	}
	tp.NormalizeScore(t.Context(), state, nil, scores)
	if diff := cmp.Diff(framework.NodeScoreList{{Name: "a", Score: 0}, {Name: "b", Score: 90}}, scores); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

// Failures are logged once per streak, recovery once, stale data once; the
// metrics count every query.
func TestRefreshFailureStreak(t *testing.T) {
	stub := newPromStub(t, nil)
	tp := newTestPlugin(t, stub.URL, func(a *Args) { a.Timeout.Duration = 300 * time.Millisecond })
	ok := vector(nodeSeries("a", "1000"), nodeSeries("b", "2000"))
	fail := respond(http.StatusInternalServerError, "down")
	steps := []struct {
		advance time.Duration
		handler http.HandlerFunc
	}{
		{0, ok},                      // t0: data received
		{15 * time.Second, fail},     // failure streak starts: warning
		{15 * time.Second, hang},     // timeout: debug only
		{15 * time.Second, vector()}, // no series: debug only
		{2 * time.Minute, respond(200, `{"status":"success","data":{"resultType":"scalar","result":[0,"1"]}}`)}, // data now stale: one warning
		{15 * time.Second, fail}, // nothing new
		{15 * time.Second, ok},   // recovery
		{15 * time.Second, fail}, // a new streak: warning again
	}
	for i, s := range steps {
		tp.clock.Step(s.advance)
		stub.set(s.handler)
		tp.refresh(t.Context())
		if i == 0 {
			if got := metricValue(t, tp.reg, dataAgeMetric); got != 0 {
				t.Errorf("data age after the first answer = %v, want 0", got)
			}
		}
	}

	want := []string{
		"INFO network traffic data received",
		"WARN Prometheus query failed; scoring with the last network traffic data until it is older than staleAfter, then every node alike",
		"WARN network traffic data is older than staleAfter; every node scores alike until Prometheus answers",
		"INFO Prometheus query succeeded again",
		"WARN Prometheus query failed; scoring with the last network traffic data until it is older than staleAfter, then every node alike",
	}
	if diff := cmp.Diff(want, tp.logLines(zapcore.InfoLevel)); diff != "" {
		t.Errorf("log lines at info and above (-want +got):\n%s", diff)
	}
	for _, e := range tp.logs.FilterMessage("Prometheus query succeeded again").All() {
		if got := e.ContextMap()["failedQueries"]; got != int64(5) {
			t.Errorf("failedQueries = %v, want 5", got)
		}
	}

	if got := metricValue(t, tp.reg, queryErrorsMetric); got != 6 {
		t.Errorf("%s = %v, want 6", queryErrorsMetric, got)
	}
	if got := metricValue(t, tp.reg, queryDurationMetric); got != float64(len(steps)) {
		t.Errorf("%s count = %v, want %d", queryDurationMetric, got, len(steps))
	}
	// The last good answer came 15s ago.
	if got := metricValue(t, tp.reg, dataAgeMetric); got != 15 {
		t.Errorf("%s = %v, want 15", dataAgeMetric, got)
	}
	if got := len(stub.received()); got != len(steps) {
		t.Errorf("%d queries, want %d", got, len(steps))
	}
}

func TestDataAgeBeforeFirstAnswer(t *testing.T) {
	tp := newTestPlugin(t, "", nil)
	if got := metricValue(t, tp.reg, dataAgeMetric); !math.IsInf(got, 1) {
		t.Errorf("%s = %v, want +Inf", dataAgeMetric, got)
	}
}

// Prometheus down from the start: one warning, no stale warning (there was
// never data), and scheduling sees no data.
func TestPrometheusDownFromStart(t *testing.T) {
	tp := newTestPlugin(t, "", func(a *Args) { a.Timeout.Duration = time.Second })
	for range 3 {
		tp.refresh(t.Context())
		tp.clock.Step(time.Minute)
	}
	if got := tp.logLines(zapcore.InfoLevel); len(got) != 1 || !strings.HasPrefix(got[0], "WARN Prometheus query failed") {
		t.Errorf("log lines %q, want one warning", got)
	}
	if got := runCycle(t, tp.NetworkTraffic, []*framework.NodeInfo{makeNode("a"), makeNode("b")}, true); got.scores != nil {
		t.Errorf("scores %v, want PreScore to skip", got.scores)
	}
}

// Run queries at once, then on every tick, and never from a cycle.
func TestRun(t *testing.T) {
	stub := newPromStub(t, vector(nodeSeries("a", "1000"), nodeSeries("b", "3000")))
	tp := newTestPlugin(t, stub.URL, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); tp.Run(ctx) }()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("the first sample", func() bool { return sampleOf(tp.metric.Load()) != nil })

	nodes := []*framework.NodeInfo{makeNode("a"), makeNode("b")}
	for range 100 {
		if got := runCycle(t, tp.NetworkTraffic, nodes, true); best(got.scores) != "a" {
			t.Fatalf("scores %v, want a best", got.scores)
		}
	}
	if n := len(stub.received()); n != 1 {
		t.Errorf("%d queries after 100 cycles, want the 1 of Run", n)
	}

	stub.set(vector(nodeSeries("a", "5000"), nodeSeries("b", "3000")))
	tp.clock.Step(15 * time.Second)
	waitFor("the second sample", func() bool { return sampleOf(tp.metric.Load()).Bandwidth["a"] == 5000 })
	if got := runCycle(t, tp.NetworkTraffic, nodes, true); best(got.scores) != "b" {
		t.Errorf("after the refresh: scores %v, want b best", got.scores)
	}

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// Two profiles with NetworkTraffic share one registry.
func TestTwoInstancesShareMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := &frameworktest.Handle{Registry: reg, Log: zap.NewNop()}
	var pls []*NetworkTraffic
	for range 2 {
		pl, err := New(&Args{PrometheusAddress: "http://127.0.0.1:1"}, h, WithClock(testclock.NewFakeClock(t0)))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(pl.source.Close)
		pls = append(pls, pl)
	}
	pls[0].metric.Store(tableOf(&Sample{Time: t0, Bandwidth: map[string]float64{"a": 1}}))
	pls[1].metric.Store(tableOf(&Sample{Time: t0.Add(-time.Minute), Bandwidth: map[string]float64{"a": 1}}))
	pls[0].refresh(t.Context())
	pls[1].refresh(t.Context())
	if got := metricValue(t, reg, queryErrorsMetric); got != 2 {
		t.Errorf("%s = %v, want 2", queryErrorsMetric, got)
	}
	if got := metricValue(t, reg, dataAgeMetric); got != 60 {
		t.Errorf("%s = %v, want the older instance's 60", dataAgeMetric, got)
	}
}

func TestNewRejectsBadArgs(t *testing.T) {
	for name, args := range map[string]*Args{
		"no address":   {},
		"bad regexp":   {PrometheusAddress: "http://p:9090", DeviceName: "eth0("},
		"missing CA":   {PrometheusAddress: "https://p:9090", TLSCAFile: "/nonexistent/ca.pem"},
		"bad duration": {PrometheusAddress: "http://p:9090", RefreshInterval: prommetric.Duration{Duration: time.Millisecond}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(args, nil); err == nil {
				t.Error("New succeeded")
			}
		})
	}
	pl, err := New(&Args{IP: "10.0.0.1:9090"}, nil)
	if err != nil {
		t.Fatalf("New with the deprecated ip: %v", err)
	}
	defer pl.source.Close()
	if got := pl.Source().Address(); got != "http://10.0.0.1:9090" {
		t.Errorf("address %q from ip", got)
	}
}

func TestExplain(t *testing.T) {
	tp := newTestPlugin(t, "", func(a *Args) {
		a.PodBandwidthEstimate = 2 * mb
		a.FilterAbove = 9 * mb
	})
	tp.setSample(map[string]float64{"a": 10 * mb, "b": 1 * mb, "c": 3 * mb})
	tp.clock.Step(20 * time.Second)
	nodes := []*framework.NodeInfo{makeNode("c", assumedPod("p", "c")), makeNode("a"), makeNode("b"), makeNode("new")}
	age := 20 * time.Second
	want := []NodeBandwidth{
		// max 10: 100 − 100×10/10 = 0
		{Node: "a", HasData: true, Measured: 10 * mb, Bandwidth: 10 * mb, Age: age, Score: 0, Filtered: true},
		// 100 − 100×1/10 = 90
		{Node: "b", HasData: true, Measured: 1 * mb, Bandwidth: 1 * mb, Age: age, Score: 90},
		// 3 + 2: 100 − 100×5/10 = 50
		{Node: "c", HasData: true, Measured: 3 * mb, Recent: 2 * mb, Bandwidth: 5 * mb, Age: age, Score: 50},
		{Node: "new", Age: age, Score: neutralScore},
	}
	if diff := cmp.Diff(want, tp.Explain(nodes)); diff != "" {
		t.Errorf("Explain (-want +got):\n%s", diff)
	}

	// Without nodes: the sample's, without pods.
	args := tp.args
	got := Explain(&args, sampleOf(tp.metric.Load()), tp.clock.Now(), nil)
	var names []string
	for _, nb := range got {
		names = append(names, fmt.Sprintf("%s=%d", nb.Node, nb.Score))
	}
	// max 10: 0, 90, 70
	if diff := cmp.Diff([]string{"a=0", "b=90", "c=70"}, names); diff != "" {
		t.Errorf("Explain(nil) (-want +got):\n%s", diff)
	}

	tp.clock.Step(5 * time.Minute)
	for _, nb := range tp.Explain(nodes) {
		if !nb.Stale || nb.HasData || nb.Score != neutralScore {
			t.Errorf("stale sample: %+v", nb)
		}
	}
}

// BenchmarkScore scores 5000 nodes with 30 running pods each, as a cycle
// does after PreScore.
func BenchmarkScore(b *testing.B) {
	pl, err := New(&Args{PrometheusAddress: "http://127.0.0.1:1", PodBandwidthEstimate: mb}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer pl.source.Close()
	bw := map[string]float64{}
	var nodes []*framework.NodeInfo
	for i := range 5000 {
		name := fmt.Sprintf("node-%d", i)
		bw[name] = float64(i) * 1000
		var pods []*v1.Pod
		for j := range 30 {
			pods = append(pods, boundPod(fmt.Sprintf("p-%d-%d", i, j), name, time.Now().Add(-time.Hour)))
		}
		nodes = append(nodes, makeNode(name, pods...))
	}
	now := time.Now()
	pl.metric.Store(tableOf(&Sample{Time: now, since: prommetric.BindTimeResolution(now), Bandwidth: bw}))
	state := framework.NewCycleState()
	ctx := context.Background()
	if st := pl.PreScore(ctx, state, nil, nodes); !st.IsSuccess() {
		b.Fatal(st.Err())
	}
	scores := make(framework.NodeScoreList, len(nodes))
	b.ReportAllocs()
	for b.Loop() {
		for i, ni := range nodes {
			v, _ := pl.Score(ctx, state, nil, ni)
			scores[i] = framework.NodeScore{Name: ni.Node().Name, Score: v}
		}
		pl.NormalizeScore(ctx, state, nil, scores)
	}
}
