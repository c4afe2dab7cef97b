package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newRegistered(t *testing.T, pending PendingPodsFunc) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := New()
	if err := m.Register(reg, pending); err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// text returns the named families of g in the text exposition format.
func text(t *testing.T, g prometheus.Gatherer, name string) string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if mf.GetName() == name {
			if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.String()
}

// series returns the metrics of family name in g keyed by their labels
// ("a=x,b=y", in label-name order).
func series(t *testing.T, g prometheus.Gatherer, name string) map[string]*dto.Metric {
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

func compareText(t *testing.T, g prometheus.Gatherer, name, want string) {
	t.Helper()
	if diff := cmp.Diff(strings.TrimPrefix(want, "\n"), text(t, g, name)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestPendingPods(t *testing.T) {
	var c queue.Census
	c.Pods[queue.ActiveQ], c.Pods[queue.BackoffQ], c.Pods[queue.UnschedulablePods] = 3, 1, 2
	_, reg := newRegistered(t, func() queue.Census { return c })
	// kube-scheduler v1.37's series: "incomplete" and "pending" are pods
	// of pod groups, none here.
	want := `
# HELP scheduler_pending_pods Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated; 'incomplete' means number of pods in incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods.
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 3
scheduler_pending_pods{queue="backoff"} 1
scheduler_pending_pods{queue="gated"} 0
scheduler_pending_pods{queue="incomplete"} 0
scheduler_pending_pods{queue="pending"} 0
scheduler_pending_pods{queue="unschedulable"} 2
`
	compareText(t, reg, "scheduler_pending_pods", want)
	// No groups: every entity is a pod, the same counts by queue.
	wantEntities := `
# HELP scheduler_queued_entities Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual pods that are not members of any podgroup) by the queue type. 'active' means number of entities in activeQ; 'backoff' means number of entities in backoffQ; 'unschedulable' means number of entities in unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable entities that the scheduler never attempted to schedule because they are gated.
# TYPE scheduler_queued_entities gauge
scheduler_queued_entities{queue="active",type="pod"} 3
scheduler_queued_entities{queue="active",type="podgroup"} 0
scheduler_queued_entities{queue="backoff",type="pod"} 1
scheduler_queued_entities{queue="backoff",type="podgroup"} 0
scheduler_queued_entities{queue="gated",type="pod"} 0
scheduler_queued_entities{queue="gated",type="podgroup"} 0
scheduler_queued_entities{queue="unschedulable",type="pod"} 2
scheduler_queued_entities{queue="unschedulable",type="podgroup"} 0
`
	compareText(t, reg, "scheduler_queued_entities", wantEntities)

	// Read at scrape time, not cached: now two groups of 2 and a pod are
	// active, one of them with a third member gated, and two members of a
	// group without its PodGroup are held back.
	c = queue.Census{Incomplete: 2}
	c.Pods[queue.ActiveQ], c.Members[queue.ActiveQ], c.Groups[queue.ActiveQ] = 5, 4, 2
	c.Pods[queue.GatedPods], c.Members[queue.GatedPods], c.Groups[queue.GatedPods] = 1, 1, 1
	compareText(t, reg, "scheduler_pending_pods", strings.NewReplacer(
		`"active"} 3`, `"active"} 5`, `"backoff"} 1`, `"backoff"} 0`, `"unschedulable"} 2`, `"unschedulable"} 0`,
		`"gated"} 0`, `"gated"} 1`, `"incomplete"} 0`, `"incomplete"} 2`).Replace(want))
	compareText(t, reg, "scheduler_queued_entities", strings.NewReplacer(
		`"active",type="pod"} 3`, `"active",type="pod"} 1`, `"active",type="podgroup"} 0`, `"active",type="podgroup"} 2`,
		`"backoff",type="pod"} 1`, `"backoff",type="pod"} 0`, `"unschedulable",type="pod"} 2`, `"unschedulable",type="pod"} 0`,
		`"gated",type="podgroup"} 0`, `"gated",type="podgroup"} 1`).Replace(wantEntities))
}

func TestRegisterTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := New().Register(reg, nil); err != nil {
		t.Fatal(err)
	}
	if err := New().Register(reg, nil); err == nil {
		t.Error("a second scheduler's metrics registered on the same registry")
	}
}

func TestPodQueued(t *testing.T) {
	m, reg := newRegistered(t, nil)
	m.PodQueued(queue.ActiveQ, queue.UnscheduledPodAdd)
	m.EntityQueued(queue.ActiveQ, queue.UnscheduledPodAdd)
	m.PodQueued(queue.ActiveQ, queue.UnscheduledPodAdd)
	m.EntityQueued(queue.ActiveQ, queue.UnscheduledPodAdd)
	m.PodQueued(queue.UnschedulablePods, queue.ScheduleAttemptFailure)
	m.PodQueued(queue.BackoffQ, queue.NodeAdd)
	// A gated pod is counted in kube-scheduler's unschedulable pool.
	m.PodQueued(queue.GatedPods, queue.UnscheduledPodAdd)
	m.EntityQueued(queue.GatedPods, queue.UnscheduledPodAdd)
	want := `
# HELP scheduler_queue_incoming_pods_total Number of pods added to scheduling queues by event and queue type.
# TYPE scheduler_queue_incoming_pods_total counter
scheduler_queue_incoming_pods_total{event="NodeAdd",queue="backoff"} 1
scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue="unschedulable"} 1
scheduler_queue_incoming_pods_total{event="UnscheduledPodAdd",queue="active"} 2
scheduler_queue_incoming_pods_total{event="UnscheduledPodAdd",queue="unschedulable"} 1
`
	compareText(t, reg, "scheduler_queue_incoming_pods_total", want)
	wantEntities := `
# HELP scheduler_queue_incoming_entities_total Number of scheduling entities added to scheduling queues by event, queue type, and entity type. Entity types are either 'pod' (for individual pods that are not members of any podgroup) or 'podgroup'.
# TYPE scheduler_queue_incoming_entities_total counter
scheduler_queue_incoming_entities_total{event="UnscheduledPodAdd",queue="active",type="pod"} 2
scheduler_queue_incoming_entities_total{event="UnscheduledPodAdd",queue="unschedulable",type="pod"} 1
`
	compareText(t, reg, "scheduler_queue_incoming_entities_total", wantEntities)
}

func TestProfile(t *testing.T) {
	m, reg := newRegistered(t, nil)
	p := m.Profile("packer")
	m.Profile("spreader") // its attempt series exist at zero
	p.PodScheduled(3 * time.Millisecond)
	p.PodScheduled(5 * time.Millisecond)
	p.PodUnschedulable(time.Millisecond)
	p.ExtensionPoint(Filter, framework.Success, 200*time.Microsecond)
	p.ExtensionPoint(Filter, framework.Success, 300*time.Microsecond)
	p.ExtensionPoint(PreFilter, framework.UnschedulableAndUnresolvable, 100*time.Microsecond)

	want := `
# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="packer",result="error"} 0
scheduler_schedule_attempts_total{profile="packer",result="scheduled"} 2
scheduler_schedule_attempts_total{profile="packer",result="unschedulable"} 1
scheduler_schedule_attempts_total{profile="spreader",result="error"} 0
scheduler_schedule_attempts_total{profile="spreader",result="scheduled"} 0
scheduler_schedule_attempts_total{profile="spreader",result="unschedulable"} 0
`
	compareText(t, reg, "scheduler_schedule_attempts_total", want)
	counts := func(name string) map[string]uint64 {
		out := map[string]uint64{}
		for k, m := range series(t, reg, name) {
			out[k] = m.GetHistogram().GetSampleCount()
		}
		return out
	}
	if diff := cmp.Diff(map[string]uint64{
		"profile=packer,result=error":           0,
		"profile=packer,result=scheduled":       2,
		"profile=packer,result=unschedulable":   1,
		"profile=spreader,result=error":         0,
		"profile=spreader,result=scheduled":     0,
		"profile=spreader,result=unschedulable": 0,
	}, counts("scheduler_scheduling_attempt_duration_seconds")); diff != "" {
		t.Errorf("attempt durations (-want +got):\n%s", diff)
	}
	// Only the outcomes that happened have a series.
	if diff := cmp.Diff(map[string]uint64{
		"extension_point=Filter,profile=packer,status=Success":                         2,
		"extension_point=PreFilter,profile=packer,status=UnschedulableAndUnresolvable": 1,
	}, counts("scheduler_framework_extension_point_duration_seconds")); diff != "" {
		t.Errorf("extension point durations (-want +got):\n%s", diff)
	}
}

// A pod group's attempts: kube-scheduler's pod group series, only for the
// results that happened, none before the first group.
func TestPodGroupAttempt(t *testing.T) {
	m, reg := newRegistered(t, nil)
	p := m.Profile("gangs")
	if got := series(t, reg, "scheduler_podgroup_schedule_attempts_total"); len(got) != 0 {
		t.Errorf("pod group attempt series before any group: %v", got)
	}
	p.PodGroupAttempt(UnschedulableResult, 2*time.Millisecond)
	p.PodGroupAttempt(WaitingOnPreemptionResult, 3*time.Millisecond)
	p.PodGroupAttempt(ScheduledResult, 4*time.Millisecond)
	p.PodGroupAttempt(ScheduledResult, 5*time.Millisecond)
	m.PodGroupAlgorithmDuration(time.Millisecond)

	want := `
# HELP scheduler_podgroup_schedule_attempts_total Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group could not be scheduled, while 'error' means an internal scheduler problem.
# TYPE scheduler_podgroup_schedule_attempts_total counter
scheduler_podgroup_schedule_attempts_total{profile="gangs",result="scheduled"} 2
scheduler_podgroup_schedule_attempts_total{profile="gangs",result="unschedulable"} 1
scheduler_podgroup_schedule_attempts_total{profile="gangs",result="waiting_on_preemption"} 1
`
	compareText(t, reg, "scheduler_podgroup_schedule_attempts_total", want)
	durations := map[string]uint64{}
	for k, m := range series(t, reg, "scheduler_podgroup_scheduling_attempt_duration_seconds") {
		durations[k] = m.GetHistogram().GetSampleCount()
	}
	if diff := cmp.Diff(map[string]uint64{
		"profile=gangs,result=scheduled":             2,
		"profile=gangs,result=unschedulable":         1,
		"profile=gangs,result=waiting_on_preemption": 1,
	}, durations); diff != "" {
		t.Errorf("group attempt durations (-want +got):\n%s", diff)
	}
	if got := series(t, reg, "scheduler_podgroup_scheduling_algorithm_duration_seconds")[""].GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("%d group algorithm durations, want 1", got)
	}
}

func TestPodBoundAndBinding(t *testing.T) {
	m, reg := newRegistered(t, nil)
	m.PodBound(1, 20*time.Millisecond)
	m.PodBound(3, time.Second)
	m.PodBound(40, time.Minute)
	m.PodBound(2, 0) // first attempt unknown: attempts only
	m.BindingStarted()
	m.BindingStarted()
	m.BindingDone(10*time.Millisecond, nil)

	if got := series(t, reg, "scheduler_goroutines")["operation=binding"].GetGauge().GetValue(); got != 1 {
		t.Errorf("binding goroutines %v, want 1", got)
	}
	sli := map[string]uint64{}
	for k, m := range series(t, reg, "scheduler_pod_scheduling_sli_duration_seconds") {
		sli[k] = m.GetHistogram().GetSampleCount()
	}
	if diff := cmp.Diff(map[string]uint64{"attempts=1": 1, "attempts=3": 1, "attempts=15+": 1}, sli); diff != "" {
		t.Errorf("SLI observations (-want +got):\n%s", diff)
	}
	if c := series(t, reg, "scheduler_pod_scheduling_attempts")[""].GetHistogram().GetSampleCount(); c != 4 {
		t.Errorf("pod_scheduling_attempts: %d observations, want 4", c)
	}
	bind := map[string]uint64{}
	for k, m := range series(t, reg, "yardmaster_binding_duration_seconds") {
		bind[k] = m.GetHistogram().GetSampleCount()
	}
	if diff := cmp.Diff(map[string]uint64{"result=success": 1, "result=error": 0}, bind); diff != "" {
		t.Errorf("binding durations (-want +got):\n%s", diff)
	}
}

// The hot path allocates nothing once a series is resolved.
func TestNoAllocations(t *testing.T) {
	m := New()
	pt := m.PluginTimer("NodeResourcesFit", Filter)
	p := m.Profile("p")
	pt.Observe(framework.Success, time.Microsecond)
	p.ExtensionPoint(Score, framework.Success, time.Microsecond)
	m.PodQueued(queue.ActiveQ, queue.UnscheduledPodAdd)
	if n := testing.AllocsPerRun(100, func() {
		pt.Observe(framework.Success, time.Microsecond)
		p.ExtensionPoint(Score, framework.Success, time.Microsecond)
		m.PodQueued(queue.ActiveQ, queue.UnscheduledPodAdd)
		m.EntityQueued(queue.ActiveQ, queue.UnscheduledPodAdd)
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

func TestPluginTimer(t *testing.T) {
	m, reg := newRegistered(t, nil)
	pt := m.PluginTimer("TaintToleration", Filter)
	pt.Observe(framework.Success, time.Microsecond)
	pt.Observe(framework.Unschedulable, time.Microsecond)
	pt.Observe(framework.Unschedulable, time.Microsecond)
	got := map[string]uint64{}
	for k, m := range series(t, reg, "scheduler_plugin_execution_duration_seconds") {
		got[k] = m.GetHistogram().GetSampleCount()
	}
	if diff := cmp.Diff(map[string]uint64{
		"extension_point=Filter,plugin=TaintToleration,status=Success":       1,
		"extension_point=Filter,plugin=TaintToleration,status=Unschedulable": 2,
	}, got); diff != "" {
		t.Errorf("plugin durations (-want +got):\n%s", diff)
	}
}

func BenchmarkPluginTimer(b *testing.B) {
	pt := New().PluginTimer("NodeResourcesFit", Filter)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			pt.Observe(framework.Success, time.Microsecond)
		}
	})
}

func BenchmarkPodQueued(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		m.PodQueued(queue.ActiveQ, queue.UnscheduledPodAdd)
	}
}

// The elector built through NewLeaderElector reports to its own
// LeaderElection, however many exist in the process.
func TestLeaderElection(t *testing.T) {
	client := fake.NewClientset()
	newElector := func(le *LeaderElection, id string) (*leaderelection.LeaderElector, context.CancelFunc, chan struct{}) {
		lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "kube-system", "yardmaster-test",
			client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
		if err != nil {
			t.Fatal(err)
		}
		el, err := le.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, Name: "yardmaster-test",
			LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); el.Run(ctx) }()
		return el, cancel, done
	}
	a, b := NewLeaderElection(), NewLeaderElection()
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	if err := a.Register(regA); err != nil {
		t.Fatal(err)
	}
	if err := b.Register(regB); err != nil {
		t.Fatal(err)
	}
	elA, cancelA, doneA := newElector(a, "a")
	waitFor(t, func() bool { return elA.IsLeader() })
	_, cancelB, doneB := newElector(b, "b")
	defer func() { cancelB(); <-doneB }()

	status := func(reg prometheus.Gatherer) float64 {
		return series(t, reg, "leader_election_master_status")["name=yardmaster-test"].GetGauge().GetValue()
	}
	waitFor(t, func() bool { return status(regA) == 1 })
	if got := status(regB); got != 0 {
		t.Errorf("standby's master status %v, want 0", got)
	}
	cancelA() // releases the lease
	<-doneA
	waitFor(t, func() bool { return status(regB) == 1 })
	// client-go leaves a leader that releases the lease on cancel at 1
	// (it only turns the gauge off when a renewal fails); the daemon turns
	// it off itself when it stops leading.
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatal("condition not met within 10s")
	}
}
