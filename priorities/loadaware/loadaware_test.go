package loadaware

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	testclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

func TestTargetScore(t *testing.T) {
	// target 40, capacity 4000m: u = util + 100 × (recent + pod) / 4000.
	tests := []struct {
		name              string
		util, recent, pod float64
		want              int64
	}{
		{"idle node, no pod: the target", 0, 0, 0, 40},
		{"u = 20: 60 × 20 / 40 + 40", 20, 0, 0, 70},
		{"u = 10 + 750m/4000m = 28.75: 60 × 28.75 / 40 + 40 = 83.1", 10, 0, 750, 83},
		{"at the target: 100", 40, 0, 0, 100},
		{"u = 70: 40 × 30 / 60", 70, 0, 0, 20},
		{"recent pods count: 10 + 1200m/4000m = 40", 10, 1200, 0, 100},
		{"past 100%: 0", 99, 0, 400, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := targetScore(tt.util, tt.recent, tt.pod, 4000, 40); got != tt.want {
				t.Errorf("targetScore = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTargetLoadPacking(t *testing.T) {
	clk := testclock.NewFakeClock(t0)
	pl, err := NewTargetLoadPacking(&TargetLoadPackingArgs{SourceArgs: source("http://127.0.0.1:1")}, nil, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	table(pl.set.metrics[0], t0, 1, map[string]float64{"idle": 0, "warm": 30, "hot": 80})
	// The pod requests 500m without a limit: 750m predicted, 18.75% of 4 CPUs.
	pod := assumed("p", "500m", "1Gi")
	got := scoreAll(t, pl, pod, node("idle"), node("warm"), node("hot"), node("unknown"))
	want := map[string]int64{
		"idle":    68, // u = 18.75: 60 × 18.75 / 40 + 40 = 68.1
		"warm":    34, // u = 48.75: 40 × 51.25 / 60 = 34.2
		"hot":     1,  // u = 98.75: 40 × 1.25 / 60 = 0.8
		"unknown": 50, // missingMetricsPolicy neutral
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}

	// A pod placed on idle since the table (1000m request: 1500m, 37.5%)
	// takes it to 56.25% with the new pod: past the target.
	busy := node("idle", assumed("before", "1", "1Gi"))
	if got, want := scoreAll(t, pl, pod, busy)["idle"], int64(math.Round(40*(100-56.25)/60)); got != want {
		t.Errorf("idle with a pod placed since: score %d, want %d", got, want)
	}
	// The same pod bound 30s before the table is still counted: the 60s
	// rate window holds it only in part.
	recent := node("idle", boundAt(assumed("before", "1", "1Gi"), t0.Add(-30*time.Second)))
	if got, want := scoreAll(t, pl, pod, recent)["idle"], int64(math.Round(40*(100-56.25)/60)); got != want {
		t.Errorf("idle with a pod bound 30s before the table: score %d, want %d", got, want)
	}
	// Bound two minutes before, it is in the measurement already.
	old := node("idle", boundAt(assumed("before", "1", "1Gi"), t0.Add(-2*time.Minute)))
	if got := scoreAll(t, pl, pod, old)["idle"]; got != 68 {
		t.Errorf("idle with a pod bound before the table's window: score %d, want 68", got)
	}

	// Stale data: PreScore skips, every node alike.
	clk.Step(3 * time.Minute)
	if got := scoreAll(t, pl, pod, node("idle"), node("hot")); got != nil {
		t.Errorf("stale: scores %v, want PreScore to skip", got)
	}
}

func TestCPUPrediction(t *testing.T) {
	c := cpuPredictor{defaultMilli: 1000, multiplier: 1.5}
	pod := assumed("p", "200m", "1Gi")
	pod.Spec.Containers = append(pod.Spec.Containers, pod.Spec.Containers[0], pod.Spec.Containers[0])
	pod.Spec.Containers[1].Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m")}
	pod.Spec.Containers[2].Resources.Requests = nil
	// 200m × 1.5 + the 300m limit + the 1000m default.
	if got := c.predict(pod); got != 300+300+1000 {
		t.Errorf("predict = %v, want 1600", got)
	}
}

func TestRiskScore(t *testing.T) {
	tests := []struct {
		name         string
		s            riskStats
		margin, sens float64
		want         float64
	}{
		// mu = (200 + 100) / 1000 = 0.3, sigma = 0.1: (1 − 0.4 / 2) × 100.
		{"Trimaran defaults", riskStats{avg: 200, std: 100, request: 100, capacity: 1000}, 1, 1, 80},
		// sigma = sqrt(0.1) = 0.3162: (1 − 0.6162 / 2) × 100.
		{"sensitivity 2", riskStats{avg: 200, std: 100, request: 100, capacity: 1000}, 1, 2, (1 - (0.3+math.Sqrt(0.1))/2) * 100},
		// sigma = 0.2.
		{"margin 2", riskStats{avg: 200, std: 100, request: 100, capacity: 1000}, 2, 1, 75},
		// recent pods add to the mean: mu = 0.5.
		{"recent pods", riskStats{avg: 200, std: 0, recent: 200, request: 100, capacity: 1000}, 1, 1, 75},
		{"over capacity clamps", riskStats{avg: 2000, std: 2000, capacity: 1000}, 1, 1, 0},
		{"no capacity", riskStats{avg: 1}, 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := riskScore(tt.s, tt.margin, tt.sens); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("riskScore = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLoadVariationRiskBalancing(t *testing.T) {
	clk := testclock.NewFakeClock(t0)
	pl, err := NewLoadVariationRiskBalancing(&LoadVariationRiskBalancingArgs{SourceArgs: source("http://127.0.0.1:1")}, nil, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	// steady: CPU 30% ± 0, memory 20% ± 0; swinging: CPU 20% ± 30, memory 20% ± 0.
	table(pl.set.metrics[cpuAvg], t0, 1, map[string]float64{"steady": 30, "swinging": 20})
	table(pl.set.metrics[cpuStd], t0, 1, map[string]float64{"steady": 0, "swinging": 30})
	table(pl.set.metrics[memAvg], t0, 1, map[string]float64{"steady": 20, "swinging": 20, "memonly": 50})
	table(pl.set.metrics[memStd], t0, 1, map[string]float64{"steady": 0, "swinging": 0})
	pod := assumed("p", "400m", "1.6Gi") // 10% of 4 CPUs, 10% of 16Gi
	got := scoreAll(t, pl, pod, node("steady"), node("swinging"), node("memonly"), node("none"))
	want := map[string]int64{
		// CPU: mu 0.4, sigma 0: 80; memory: mu 0.3: 85; the lower.
		"steady": 80,
		// CPU: mu 0.3, sigma 0.3: 70; memory 85.
		"swinging": 70,
		// memory only: mu 0.6: 70.
		"memonly": 70,
		"none":    50,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

func TestPrometheusScoreNormalizations(t *testing.T) {
	values := map[string]float64{"a": 0.1, "b": 0.3, "c": 0.5}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name   string
		mutate func(*PrometheusScoreArgs)
		want   map[string]int64
	}{
		{"defaults: lower is better, minMax", nil, map[string]int64{"a": 100, "b": 50, "c": 0, "missing": 50}},
		{"higher is better", func(a *PrometheusScoreArgs) { a.Direction = HigherIsBetter },
			map[string]int64{"a": 0, "b": 50, "c": 100, "missing": 50}},
		// 100 − 100 × v / 0.5.
		{"ratio", func(a *PrometheusScoreArgs) { a.Normalization = prommetric.NormalizationRatio },
			map[string]int64{"a": 80, "b": 40, "c": 0, "missing": 50}},
		// 100 − 100 × v / 1.
		{"range [0, 1]", func(a *PrometheusScoreArgs) {
			a.Normalization, a.Min, a.Max = prommetric.NormalizationRange, f(0), f(1)
		}, map[string]int64{"a": 90, "b": 70, "c": 50, "missing": 50}},
		{"missing lowest", func(a *PrometheusScoreArgs) { a.MissingMetricsPolicy = prommetric.MissingMetricsLowest },
			map[string]int64{"a": 100, "b": 50, "c": 0, "missing": 0}},
		// 0.1 per pod placed since: a has two, 0.3 like b, and the range
		// is now [0.3, 0.5].
		{"pod estimate", func(a *PrometheusScoreArgs) { a.PodEstimate = 0.1 },
			map[string]int64{"a": 100, "b": 100, "c": 0, "missing": 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := &PrometheusScoreArgs{SourceArgs: source("http://127.0.0.1:1"), Query: "load"}
			if tt.mutate != nil {
				tt.mutate(args)
			}
			pl, err := NewPrometheusScore(args, nil, WithClock(testclock.NewFakeClock(t0)))
			if err != nil {
				t.Fatal(err)
			}
			table(pl.set.metrics[0], t0, 1, values)
			a := node("a", assumed("x", "1", "1Gi"), assumed("y", "1", "1Gi"))
			got := scoreAll(t, pl, assumed("p", "1", "1Gi"), a, node("b"), node("c"), node("missing"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadHotSpot(t *testing.T) {
	clk := testclock.NewFakeClock(t0)
	pl, err := NewLoadHotSpot(&LoadHotSpotArgs{SourceArgs: source("http://127.0.0.1:1"),
		CPUUtilizationAbove: 80, MemoryUtilizationAbove: 90}, nil, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	table(pl.set.metrics[hotCPU], t0, 1, map[string]float64{"cool": 50, "hot": 85, "warm": 70, "full": 10})
	table(pl.set.metrics[hotMem], t0, 1, map[string]float64{"cool": 50, "hot": 50, "warm": 50, "full": 95})
	pod := assumed("p", "100m", "1Gi")
	nodes := []*framework.NodeInfo{
		node("cool"), node("hot"), node("full"), node("unknown"),
		// 70% + a 500m pod placed since (750m, 18.75%) = 88.75%.
		node("warm", assumed("new", "500m", "1Gi")),
	}
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(t.Context(), state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Err())
	}
	got := map[string]string{}
	for _, ni := range nodes {
		if st := pl.Filter(t.Context(), state, pod, ni); st != nil {
			got[ni.NodeName()] = st.Message()
		}
	}
	want := map[string]string{"hot": ReasonCPUHotSpot, "full": ReasonMemoryHotSpot, "warm": ReasonCPUHotSpot}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rejections (-want +got):\n%s", diff)
	}

	clk.Step(3 * time.Minute)
	if _, st := pl.PreFilter(t.Context(), framework.NewCycleState(), pod, nodes); !st.IsSkip() {
		t.Errorf("stale data: PreFilter %v, want Skip (nothing filtered)", st)
	}

	off, err := NewLoadHotSpot(&LoadHotSpotArgs{SourceArgs: source("http://127.0.0.1:1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, st := off.PreFilter(t.Context(), framework.NewCycleState(), pod, nodes); !st.IsSkip() {
		t.Errorf("thresholds off: PreFilter %v, want Skip", st)
	}
}

// Plugins that send one query to one Prometheus share it: one query per
// refresh, however many plugins read it.
func TestPoolSharesQueries(t *testing.T) {
	stub := newPromStub(t, func(string) map[string]string { return map[string]string{"a": "10"} })
	pool := prommetric.NewPool()
	src := source(stub.URL)
	tlp, err := NewTargetLoadPacking(&TargetLoadPackingArgs{SourceArgs: src}, nil, WithPool(pool))
	if err != nil {
		t.Fatal(err)
	}
	hot, err := NewLoadHotSpot(&LoadHotSpotArgs{SourceArgs: src, CPUUtilizationAbove: 90}, nil, WithPool(pool))
	if err != nil {
		t.Fatal(err)
	}
	if tlp.set.metrics[0] != hot.set.metrics[hotCPU] {
		t.Fatalf("TargetLoadPacking and LoadHotSpot have two CPU metrics, want one shared")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{}, 2)
	go func() { tlp.Run(ctx); done <- struct{}{} }()
	go func() { hot.Run(ctx); done <- struct{}{} }()
	deadline := time.Now().Add(10 * time.Second)
	for tlp.set.metrics[0].Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no answer")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	<-done
	want := map[string]int{tlpQuery(&tlp.args): 1}
	if diff := cmp.Diff(want, stub.counts()); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestBuiltInQueries(t *testing.T) {
	if got, want := CPUQuery("nodename", model.Duration(time.Minute)),
		`max by (nodename) ((100 * (1 - avg by (instance, job) (rate(node_cpu_seconds_total{mode="idle"}[1m])))) * on (instance, job) group_left (nodename) node_uname_info)`; got != want {
		t.Errorf("CPUQuery =\n%s\nwant\n%s", got, want)
	}
	if got, want := MemoryQuery("instance"),
		`100 * (1 - sum by (instance) (node_memory_MemAvailable_bytes) / sum by (instance) (node_memory_MemTotal_bytes))`; got != want {
		t.Errorf("MemoryQuery =\n%s\nwant\n%s", got, want)
	}
	ca, cs, _, _ := VariationQueries("nodename", model.Duration(15*time.Minute), model.Duration(time.Minute))
	if !strings.HasPrefix(ca, `max by (nodename) ((avg_over_time((100 * (1 - avg by (instance, job) (rate(node_cpu_seconds_total{mode="idle"}[1m]))))[15m:1m]))`) {
		t.Errorf("cpu mean query %s", ca)
	}
	if !strings.Contains(cs, "stddev_over_time(") {
		t.Errorf("cpu deviation query %s", cs)
	}
}
