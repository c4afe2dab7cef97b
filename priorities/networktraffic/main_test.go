package networktraffic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// t0 is the fake clock's start: half a second into a second, so that the
// rounding of bind times to whole seconds shows.
var t0 = time.Date(2026, 3, 1, 10, 0, 0, 500_000_000, time.UTC)

// promStub is a Prometheus HTTP API that answers /api/v1/query with the
// handler of the moment and records every request.
type promStub struct {
	*httptest.Server
	mu       sync.Mutex
	handler  http.HandlerFunc
	requests []stubRequest
}

type stubRequest struct {
	query, timeout, auth string
}

func newPromStub(t *testing.T, h http.HandlerFunc) *promStub {
	t.Helper()
	s := &promStub{handler: h}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *promStub) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, stubRequest{query: r.Form.Get("query"), timeout: r.Form.Get("timeout"), auth: r.Header.Get("Authorization")})
	h := s.handler
	s.mu.Unlock()
	h(w, r)
}

func (s *promStub) set(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

func (s *promStub) received() []stubRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stubRequest(nil), s.requests...)
}

// series is one series of a vector answer.
type series struct {
	labels map[string]string
	value  string
}

// nodeSeries is a series labelled nodename=node.
func nodeSeries(node, value string) series {
	return series{labels: map[string]string{"nodename": node}, value: value}
}

// vector answers with an instant vector.
func vector(ss ...series) http.HandlerFunc {
	type result struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	res := []result{}
	for _, s := range ss {
		res = append(res, result{Metric: s.labels, Value: [2]any{1772359200.5, s.value}})
	}
	body, err := json.Marshal(map[string]any{
		"status": "success",
		"data":   map[string]any{"resultType": "vector", "result": res},
	})
	if err != nil {
		panic(err)
	}
	return respond(http.StatusOK, string(body))
}

// respond answers with a status and a JSON body.
func respond(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// hang answers only when the client gives up.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// testPlugin is a plugin with a fake clock, its own registry and an
// observed logger.
type testPlugin struct {
	*NetworkTraffic
	clock *testclock.FakeClock
	reg   *prometheus.Registry
	logs  *observer.ObservedLogs
}

// newTestPlugin builds a plugin on address (nothing listens on the
// default) with args changed by mutate.
func newTestPlugin(t *testing.T, address string, mutate func(*Args)) *testPlugin {
	t.Helper()
	if address == "" {
		address = "http://127.0.0.1:1"
	}
	args := &Args{PrometheusAddress: address}
	if mutate != nil {
		mutate(args)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	reg := prometheus.NewRegistry()
	clk := testclock.NewFakeClock(t0)
	pl, err := New(args, &frameworktest.Handle{Registry: reg, Log: zap.New(core)}, WithClock(clk))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(pl.source.Close)
	return &testPlugin{NetworkTraffic: pl, clock: clk, reg: reg, logs: logs}
}

// setSample publishes a sample taken at the clock's now.
func (tp *testPlugin) setSample(bw map[string]float64) *Sample {
	now := tp.clock.Now()
	s := &Sample{Time: now, since: prommetric.BindTimeResolution(now), Bandwidth: bw}
	tp.metric.Store(tableOf(s))
	return s
}

// logLines returns the messages logged at level or above.
func (tp *testPlugin) logLines(level zapcore.Level) []string {
	var out []string
	for _, e := range tp.logs.All() {
		if e.Level >= level {
			out = append(out, e.Level.CapitalString()+" "+e.Message)
		}
	}
	return out
}

// metricValue returns a counter's or gauge's value, or a histogram's
// sample count, from reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		if len(mf.Metric) != 1 {
			t.Fatalf("%s has %d series, want 1", name, len(mf.Metric))
		}
		m := mf.Metric[0]
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount())
		}
		t.Fatalf("%s has type %v", name, mf.GetType())
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// makeNode returns a NodeInfo for node name holding pods.
func makeNode(name string, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(frameworktest.MakeNode().Name(name).Obj())
	return ni
}

// assumedPod is a pod the scheduler assumed on node: no PodScheduled
// condition yet.
func assumedPod(name, node string) *v1.Pod {
	return frameworktest.MakePod().Name(name).UID(name).Node(node).Obj()
}

// boundPod is a pod the API server bound to node at t.
func boundPod(name, node string, t time.Time) *v1.Pod {
	p := assumedPod(name, node)
	p.Status.Conditions = []v1.PodCondition{{
		Type: v1.PodScheduled, Status: v1.ConditionTrue,
		// The API keeps whole seconds.
		LastTransitionTime: metav1.NewTime(t.Truncate(time.Second)),
	}}
	return p
}

// annotated sets the bandwidth annotation.
func annotated(p *v1.Pod, bw string) *v1.Pod {
	p.Annotations = map[string]string{BandwidthAnnotation: bw}
	return p
}

// cycleResult is what one simulated scheduling cycle did.
type cycleResult struct {
	// filtered are the nodes Filter rejected, with the reason.
	filtered map[string]string
	// scores are the normalized scores; nil when PreScore skipped.
	scores map[string]int64
}

// runCycle runs the plugin's extension points on nodes as the scheduler
// does. withPre false runs Filter and Score without PreFilter and PreScore,
// as in a profile that enables the plugin only at filter and score.
func runCycle(t *testing.T, pl *NetworkTraffic, nodes []*framework.NodeInfo, withPre bool) cycleResult {
	t.Helper()
	ctx := t.Context()
	pod := frameworktest.MakePod().Name("incoming").Obj()
	state := framework.NewCycleState()
	res := cycleResult{filtered: map[string]string{}}

	skipFilter := false
	if withPre {
		_, st := pl.PreFilter(ctx, state, pod, nodes)
		switch {
		case st.IsSkip():
			skipFilter = true
		case !st.IsSuccess():
			t.Fatalf("PreFilter: %v", st.Err())
		}
	}
	var feasible []*framework.NodeInfo
	for _, ni := range nodes {
		if !skipFilter {
			if st := pl.Filter(ctx, state, pod, ni); !st.IsSuccess() {
				if st.Code() != framework.Unschedulable {
					t.Fatalf("Filter(%s): code %v", ni.Node().Name, st.Code())
				}
				res.filtered[ni.Node().Name] = st.Message()
				continue
			}
		}
		feasible = append(feasible, ni)
	}
	if withPre {
		st := pl.PreScore(ctx, state, pod, feasible)
		if st.IsSkip() {
			return res
		}
		if !st.IsSuccess() {
			t.Fatalf("PreScore: %v", st.Err())
		}
	}
	scores := make(framework.NodeScoreList, len(feasible))
	for i, ni := range feasible {
		v, st := pl.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Node().Name, st.Err())
		}
		scores[i] = framework.NodeScore{Name: ni.Node().Name, Score: v}
	}
	if st := pl.ScoreExtensions().NormalizeScore(ctx, state, pod, scores); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st.Err())
	}
	res.scores = map[string]int64{}
	for _, s := range scores {
		res.scores[s.Name] = s.Score
	}
	return res
}

// best returns the node with the highest score (the first by name among
// equals), as a scheduler without random tie-breaking would pick.
func best(scores map[string]int64) string {
	var name string
	for n, s := range scores {
		if name == "" || s > scores[name] || (s == scores[name] && n < name) {
			name = n
		}
	}
	return name
}

// The query metrics, which prommetric registers for every metric plugin.
const (
	queryDurationMetric = "yardmaster_prometheus_query_duration_seconds"
	queryErrorsMetric   = "yardmaster_prometheus_query_errors_total"
	dataAgeMetric       = "yardmaster_prometheus_data_age_seconds"
)
