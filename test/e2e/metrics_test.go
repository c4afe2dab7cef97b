package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// endpoint is a yardmaster HTTP endpoint (host:port) seen from a test.
type endpoint string

// httpClient has a timeout, so a wedged endpoint fails the test instead of
// hanging it.
var httpClient = &http.Client{Timeout: 10 * time.Second}

// get returns the status and body of path.
func (ep endpoint) get(path string) (int, string, error) {
	resp, err := httpClient.Get("http://" + string(ep) + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// scrape returns the endpoint's /metrics, parsed.
func (ep endpoint) scrape() (scraped, error) {
	resp, err := httpClient.Get("http://" + string(ep) + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// scraped is one scrape of /metrics.
type scraped map[string]*dto.MetricFamily

// series returns the metric of family name whose labels include labels
// ("k=v" pairs), or nil.
func (s scraped) series(name string, labels ...string) *dto.Metric {
	mf := s[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// value is the value of a counter or gauge (0 when absent).
func (s scraped) value(name string, labels ...string) float64 {
	m := s.series(name, labels...)
	switch {
	case m == nil:
		return 0
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	default:
		return m.GetGauge().GetValue()
	}
}

// count sums the observation counts of every histogram series of family
// name whose labels include labels.
func (s scraped) count(name string, labels ...string) uint64 {
	var n uint64
	mf := s[name]
	if mf == nil {
		return 0
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			if have[k] != v {
				continue next
			}
		}
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// waitMetrics scrapes ep until cond holds and returns that scrape.
func (e *env) waitMetrics(ep endpoint, timeout time.Duration, what string, cond func(scraped) bool) scraped {
	e.t.Helper()
	var last scraped
	var lastErr error
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		s, err := ep.scrape()
		if err != nil {
			lastErr = err
			return false, nil
		}
		last = s
		return cond(s), nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s on %s/metrics: %v (last scrape error: %v)", what, ep, err, lastErr)
	}
	return last
}

// /metrics agrees with what happened on the API: kube-scheduler's names,
// one scheduled attempt per pod bound, the unschedulable pod in the
// unschedulable queue; and the health endpoints answer.
func TestMetricsAgreeWithScheduledPods(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.addNode(e.node(fmt.Sprintf("n%d", i)).Capacity("2", "4Gi", 110))
	}
	d := e.startScheduler(func(o *app.Options) { o.HTTPBindAddress = "127.0.0.1:0" })
	ep := endpoint(d.HTTPAddr())

	// 10 × 500m on 3 × 2 cpu: all fit; "huge" fits nowhere.
	const fitting = 10
	var names []string
	for i := range fitting {
		name := fmt.Sprintf("p%d", i)
		names = append(names, name)
		e.createPod(e.pod(name).Req("500m", "128Mi"))
	}
	e.createPod(e.pod("huge").Req("3", "128Mi"))
	e.waitBound(60*time.Second, names...)
	e.waitFailedScheduling("huge", "Insufficient cpu")

	profile := "profile=" + e.scheduler
	s := e.waitMetrics(ep, 30*time.Second, "10 scheduled, huge unschedulable", func(s scraped) bool {
		return s.value("scheduler_schedule_attempts_total", "result=scheduled", profile) == fitting &&
			s.value("scheduler_pending_pods", "queue=unschedulable") == 1 &&
			s.value("scheduler_goroutines", "operation=binding") == 0
	})
	if got := len(e.placements()); got != fitting {
		t.Errorf("%d pods bound on the API, want %d", got, fitting)
	}
	for _, c := range []struct {
		what string
		got  float64
		want float64
	}{
		{"error attempts", s.value("scheduler_schedule_attempts_total", "result=error", profile), 0},
		{"active pods", s.value("scheduler_pending_pods", "queue=active"), 0},
		{"gated pods", s.value("scheduler_pending_pods", "queue=gated"), 0},
		{"pods added to activeQ", s.value("scheduler_queue_incoming_pods_total", "queue=active", "event=UnscheduledPodAdd"), fitting + 1},
		{"pod entities added to activeQ", s.value("scheduler_queue_incoming_entities_total", "queue=active", "event=UnscheduledPodAdd", "type=pod"), fitting + 1},
		{"active pod entities", s.value("scheduler_queued_entities", "queue=active", "type=pod"), 0},
		{"SLI observations", float64(s.count("scheduler_pod_scheduling_sli_duration_seconds")), fitting},
		{"scheduled attempt durations", float64(s.count("scheduler_scheduling_attempt_duration_seconds", "result=scheduled", profile)), fitting},
		{"successful bindings timed", float64(s.count("yardmaster_binding_duration_seconds", "result=success")), fitting},
		{"Bind extension point", float64(s.count("scheduler_framework_extension_point_duration_seconds", "extension_point=Bind", "status=Success", profile)), fitting},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	// Every attempt filtered the nodes once; the unschedulable one was
	// tried at least once.
	unschedulable := s.value("scheduler_schedule_attempts_total", "result=unschedulable", profile)
	if unschedulable < 1 {
		t.Errorf("%v unschedulable attempts, want ≥ 1", unschedulable)
	}
	if got, want := s.count("scheduler_framework_extension_point_duration_seconds", "extension_point=Filter", "status=Success", profile), uint64(fitting+unschedulable); got != want {
		t.Errorf("Filter observed %d times, want once per attempt (%d)", got, want)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "scheduler_scheduling_algorithm_duration_seconds", "scheduler_pod_scheduling_attempts"} {
		if s[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}

	for _, c := range []struct {
		path string
		code int
	}{{"/healthz", 200}, {"/livez", 200}, {"/readyz", 200}, {"/debug/pprof/", 404}} {
		code, body, err := ep.get(c.path)
		if err != nil || code != c.code {
			t.Errorf("GET %s: %d %q %v, want %d", c.path, code, body, err, c.code)
		}
	}
}

// /readyz answers 503 until the informer caches are synced, while /livez
// and /metrics already answer; then 200.
func TestReadyzWaitsForCacheSync(t *testing.T) {
	e := newEnv(t)
	// The daemon reaches the API server through a proxy that holds every
	// request until the gate opens, so its caches cannot sync before.
	gate := make(chan struct{})
	target, err := url.Parse(cp.APIServerURL)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cp.RESTConfig(cp.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})

	d := e.startScheduler(func(o *app.Options) {
		o.RESTConfig = &rest.Config{Host: srv.URL}
		o.HTTPBindAddress = "127.0.0.1:0"
	})
	ep := endpoint(d.HTTPAddr())

	// Held for 2 seconds: never ready meanwhile, always alive.
	deadline := time.Now().Add(2 * time.Second)
	probed := 0
	for time.Now().Before(deadline) {
		code, body, err := ep.get("/readyz")
		if err != nil {
			// Run may not serve yet; the port is already bound.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "[-]informer-sync failed") {
			t.Fatalf("/readyz before the caches synced: %d %q", code, body)
		}
		if code, body, err := ep.get("/livez"); err != nil || code != http.StatusOK {
			t.Fatalf("/livez before the caches synced: %d %q %v", code, body, err)
		}
		probed++
		time.Sleep(100 * time.Millisecond)
	}
	if probed == 0 {
		t.Fatal("the endpoint never answered while the caches were held")
	}
	if _, err := ep.scrape(); err != nil {
		t.Fatalf("/metrics before the caches synced: %v", err)
	}

	close(gate)
	err = wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		code, _, err := ep.get("/readyz")
		return err == nil && code == http.StatusOK, nil
	})
	if err != nil {
		code, body, _ := ep.get("/readyz?verbose")
		t.Fatalf("/readyz never became ready once the API server answered: %d %q", code, body)
	}
}

// /debug/pprof needs --enable-profiling, and the file can still turn it off.
func TestProfilingNeedsFlagAndFile(t *testing.T) {
	e := newEnv(t)
	file := func(profiling bool) string {
		path := filepath.Join(t.TempDir(), "config.yaml")
		// No contention profiling: it would slow every later test of this
		// process.
		data := fmt.Sprintf("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nenableProfiling: %v\nenableContentionProfiling: false\n", profiling)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name       string
		flag, file bool
		want       int
	}{
		{"flag and file", true, true, http.StatusOK},
		{"file says no", true, false, http.StatusNotFound},
		{"no flag", false, true, http.StatusNotFound},
	} {
		d := e.startScheduler(func(o *app.Options) {
			o.ConfigFile = file(tc.file)
			o.EnableProfiling = tc.flag
			o.HTTPBindAddress = "127.0.0.1:0"
		})
		ep := endpoint(d.HTTPAddr())
		var code int
		err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			var err error
			code, _, err = ep.get("/debug/pprof/")
			return err == nil, nil
		})
		if err != nil || code != tc.want {
			t.Errorf("%s: GET /debug/pprof/: %d %v, want %d", tc.name, code, err, tc.want)
		}
	}
}
