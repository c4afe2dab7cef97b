package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// newRunnableScheduler returns a scheduler whose Bindings go to a fake
// client that counts them, with its metrics on reg.
func newRunnableScheduler(t *testing.T, reg prometheus.Registerer, bindings *atomic.Int32, nodes ...*v1.Node) *Scheduler {
	t.Helper()
	client := fake.NewClientset()
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		bindings.Add(1)
		return true, nil, nil
	})
	s, err := New(Options{
		Client:            client,
		Binder:            binder.New(client, nil, nil),
		Registry:          registry.NewInTree(),
		Profiles:          []framework.Profile{registry.DefaultProfile("yardmaster")},
		MetricsRegisterer: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		s.Cache.AddNode(n)
	}
	return s
}

func runScheduler(t *testing.T, s *Scheduler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return")
		}
	}
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// family returns the metrics of the named family keyed by their labels
// ("a=x,b=y" in label-name order).
func family(t *testing.T, g prometheus.Gatherer, name string) map[string]*dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.Metric{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(ls, ",")] = m
		}
	}
	return out
}

func podWithUID(name, cpu string) *v1.Pod {
	p := frameworktest.MakePod().Namespace("default").Name(name).SchedulerName("yardmaster").Req(cpu, "").Obj()
	p.UID = types.UID("uid-" + name)
	return p
}

func TestCycleMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	var bindings atomic.Int32
	s := newRunnableScheduler(t, reg, &bindings,
		frameworktest.MakeNode().Name("a").Capacity("2", "4Gi", 110).Obj(),
		frameworktest.MakeNode().Name("b").Capacity("2", "4Gi", 110).Obj(),
	)
	for _, p := range []*v1.Pod{podWithUID("p1", "1"), podWithUID("p2", "1"), podWithUID("p3", "1"), podWithUID("huge", "3")} {
		s.Queue.Add(p)
	}
	stop := runScheduler(t, s)
	attempts := func(result string) float64 {
		return family(t, reg, "scheduler_schedule_attempts_total")["profile=yardmaster,result="+result].GetCounter().GetValue()
	}
	poll(t, "3 bound and 1 unschedulable", func() bool { return attempts("scheduled") == 3 && attempts("unschedulable") >= 1 })
	stop()

	if got := bindings.Load(); got != 3 {
		t.Errorf("%d Bindings posted, want 3", got)
	}
	if got := attempts("error"); got != 0 {
		t.Errorf("%v error attempts, want 0", got)
	}
	pending := family(t, reg, "scheduler_pending_pods")
	if got := pending["queue=unschedulable"].GetGauge().GetValue() + pending["queue=backoff"].GetGauge().GetValue(); got != 1 {
		t.Errorf("%v pods waiting after a failed attempt, want 1 (huge)", got)
	}
	if got := family(t, reg, "scheduler_queue_incoming_pods_total")["event=UnscheduledPodAdd,queue=active"].GetCounter().GetValue(); got != 4 {
		t.Errorf("%v UnscheduledPodAdd into active, want 4", got)
	}
	if got := family(t, reg, "scheduler_queue_incoming_entities_total")["event=UnscheduledPodAdd,queue=active,type=pod"].GetCounter().GetValue(); got != 4 {
		t.Errorf("%v pod entities UnscheduledPodAdd into active, want 4", got)
	}
	// 3 bound: SLI and binding observed 3 times each; every cycle filtered.
	for name, want := range map[string]map[string]uint64{
		"scheduler_pod_scheduling_sli_duration_seconds": {"attempts=1": 3},
		"yardmaster_binding_duration_seconds":           {"result=success": 3, "result=error": 0},
		"scheduler_scheduling_attempt_duration_seconds": {
			"profile=yardmaster,result=scheduled": 3, "profile=yardmaster,result=error": 0,
			"profile=yardmaster,result=unschedulable": uint64(attempts("unschedulable")),
		},
	} {
		got := map[string]uint64{}
		for k, m := range family(t, reg, name) {
			got[k] = m.GetHistogram().GetSampleCount()
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s{%s}: %d observations, want %d", name, k, got[k], w)
			}
		}
	}
	ext := family(t, reg, "scheduler_framework_extension_point_duration_seconds")
	cycles := 3 + uint64(attempts("unschedulable"))
	if got := ext["extension_point=Filter,profile=yardmaster,status=Success"].GetHistogram().GetSampleCount(); got != cycles {
		t.Errorf("Filter observed %d times, want once per cycle (%d)", got, cycles)
	}
	if got := ext["extension_point=Bind,profile=yardmaster,status=Success"].GetHistogram().GetSampleCount(); got != 3 {
		t.Errorf("Bind observed %d times, want 3", got)
	}
	if got := family(t, reg, "scheduler_goroutines")["operation=binding"].GetGauge().GetValue(); got != 0 {
		t.Errorf("%v binding goroutines after Run, want 0", got)
	}
}

// Plugins are timed in about one cycle in ten, never in the others.
func TestPluginMetricsSampled(t *testing.T) {
	reg := prometheus.NewRegistry()
	var bindings atomic.Int32
	s := newRunnableScheduler(t, reg, &bindings,
		frameworktest.MakeNode().Name("a").Capacity("64", "64Gi", 1000).Obj(),
		frameworktest.MakeNode().Name("b").Capacity("64", "64Gi", 1000).Obj(),
	)
	// Alike pods would get NodeResourcesFit's answers kept from earlier
	// cycles (signatures.go), which no plugin call makes or times.
	s.noShortcuts = true
	const pods = 400
	for i := range pods {
		s.Queue.Add(podWithUID(fmt.Sprintf("p%d", i), "10m"))
	}
	stop := runScheduler(t, s)
	poll(t, "all bound", func() bool { return bindings.Load() == pods })
	stop()

	// Each sampled cycle filters both nodes with NodeResourcesFit.
	got := family(t, reg, "scheduler_plugin_execution_duration_seconds")["extension_point=Filter,plugin=NodeResourcesFit,status=Success"].GetHistogram().GetSampleCount()
	sampled := got / 2
	// 400 cycles at 10%: 40 expected; 12..90 is far outside any plausible
	// binomial draw (σ = 6).
	if sampled < 12 || sampled > 90 {
		t.Errorf("%d of %d cycles sampled, want about %d", sampled, pods, pods*10/100)
	}
}

// Abort cancels a Binding that has not been posted yet: the pod is never
// bound, its assumption is forgotten, and nobody is told.
func TestAbortCancelsBindings(t *testing.T) {
	var bindings atomic.Int32
	s := newRunnableScheduler(t, prometheus.NewRegistry(), &bindings,
		frameworktest.MakeNode().Name("a").Capacity("2", "4Gi", 110).Obj())
	entered, release := make(chan struct{}), make(chan struct{})
	s.binder.BeforeBind = func(*v1.Pod, string) {
		close(entered)
		<-release
	}
	s.Queue.Add(podWithUID("p", "1"))
	stop := runScheduler(t, s)
	<-entered
	s.Abort()
	close(release)
	began := time.Now()
	stop()
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Run took %v to return after Abort", d)
	}
	if got := bindings.Load(); got != 0 {
		t.Errorf("%d Bindings posted after Abort, want 0", got)
	}
	if _, _, assumed := s.Cache.Counts(); assumed != 0 {
		t.Errorf("%d pods still assumed", assumed)
	}
	if loc := s.Queue.Locate("uid-p"); loc != queue.BackoffQ && loc != queue.ActiveQ {
		t.Errorf("aborted pod is in %v, want back in the queue", loc)
	}
}

// BenchmarkScheduleCycleMetrics is BenchmarkScheduleCycle's 1,000 nodes
// with every cycle sampled (plugins timed, on one node in
// metrics.NodeSampleStride) and with none: the difference is what a sampled
// cycle costs.
func BenchmarkScheduleCycleMetrics(b *testing.B) {
	for _, sampled := range []bool{false, true} {
		b.Run(fmt.Sprintf("sampled=%v", sampled), func(b *testing.B) { benchCycles(b, 1000, sampled) })
	}
}

// Backlogged says whether pods wait to be scheduled or bound: it holds the
// Scheduled events back (binder.ScheduledEvents) only while they do.
func TestBacklogged(t *testing.T) {
	var bindings atomic.Int32
	s := newRunnableScheduler(t, prometheus.NewRegistry(), &bindings,
		frameworktest.MakeNode().Name("a").Capacity("64", "64Gi", 1000).Obj())
	if s.Backlogged() {
		t.Fatal("backlogged with no pod")
	}
	const pods = 20
	for i := range pods {
		s.Queue.Add(podWithUID(fmt.Sprintf("p%d", i), "10m"))
	}
	if !s.Backlogged() {
		t.Fatal("not backlogged with pods in the active queue")
	}
	stop := runScheduler(t, s)
	defer stop()
	poll(t, "all bound", func() bool { return bindings.Load() == pods })
	poll(t, "no backlog", func() bool { return !s.Backlogged() })
}
