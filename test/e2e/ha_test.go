package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// leaseTiming is a replica's leaderElection durations. The tests use short
// ones to stay fast; the relations client-go requires still hold
// (renewDeadline < leaseDuration, renewDeadline > 1.2 × retryPeriod).
type leaseTiming struct {
	lease, renew, retry time.Duration
}

// TestLeaderElection runs yardmaster as a Deployment does: separate
// processes of the real binary on one Lease.
func TestLeaderElection(t *testing.T) {
	bin := yardmasterBinary(t)
	t.Run("KillLeaderMidBacklog", func(t *testing.T) { testKillLeaderMidBacklog(t, bin) })
	t.Run("SIGTERMHandsOver", func(t *testing.T) { testSIGTERMHandsOver(t, bin) })
	t.Run("LostLeaseExitsNonZero", func(t *testing.T) { testLostLeaseExitsNonZero(t, bin) })
	t.Run("DelayCacheUntilActive", func(t *testing.T) { testDelayCacheUntilActive(t, bin) })
}

// Two replicas, 2,000 pending pods that fill 20 nodes exactly. Only the
// leader binds; kill -9 it when about 30% are bound: the standby takes over
// within leaseDuration plus a few seconds and binds the rest. Every pod ends
// bound and no node is overcommitted — two leaders at once, or a leader
// that placed pods with a stale cache, would overcommit a node or leave
// pods pending, because the capacity is exactly enough.
func testKillLeaderMidBacklog(t *testing.T, bin string) {
	e := newEnv(t)
	const nodes, perNode = 20, 100 // 10 cpu / 100m = 100 pods per node (pods limit 110)
	const pods = nodes * perNode
	for i := range nodes {
		e.addNode(e.node(fmt.Sprintf("n%02d", i)).Capacity("10", "64Gi", 110))
	}
	e.createPods(pods, "100m")

	timing := leaseTiming{lease: 4 * time.Second, renew: 3 * time.Second, retry: 500 * time.Millisecond}
	a := e.startReplica(bin, "a", timing)
	b := e.startReplica(bin, "b", timing)
	a.waitReady()
	b.waitReady()
	leader, standby := e.leader(a, b)

	scheduled := func(s scraped) float64 {
		return s.value("scheduler_schedule_attempts_total", "result=scheduled", "profile="+e.scheduler)
	}
	s := e.waitMetrics(leader.ep, 60*time.Second, "30% of the pods bound", func(s scraped) bool { return scheduled(s) >= pods*30/100 })
	boundByLeader := scheduled(s)
	ss, err := standby.ep.scrape()
	if err != nil {
		t.Fatal(err)
	}
	if got := scheduled(ss); got != 0 {
		t.Fatalf("the standby bound %v pods while %s led", got, leader.name)
	}
	if got := ss.value("scheduler_pending_pods", "queue=active"); got == 0 {
		t.Errorf("the standby's queue is empty: its informers should keep it warm")
	}

	killed := time.Now()
	leader.kill()
	e.waitMetrics(standby.ep, timing.lease+10*time.Second, "the standby to lead", func(s scraped) bool {
		return s.value("leader_election_master_status", "name="+e.ns) == 1
	})
	took := time.Since(killed)
	t.Logf("%s killed with %v pods bound; %s led %v later", leader.name, boundByLeader, standby.name, took.Round(time.Millisecond))
	// The standby waits out the lease it last saw renewed, then polls
	// every retryPeriod (jittered up to 2.2×).
	if limit := timing.lease + 4*time.Second; took > limit {
		t.Errorf("takeover took %v, want at most leaseDuration + 4s = %v", took, limit)
	}
	// A warm standby binds its first pod within a second of leading.
	led := time.Now()
	e.waitMetrics(standby.ep, 3*time.Second, "the new leader's first binding", func(s scraped) bool { return scheduled(s) > 0 })
	t.Logf("%s bound its first pod %v after leading", standby.name, time.Since(led).Round(time.Millisecond))

	placements := e.waitAllBound(90*time.Second, pods)
	e.assertNoOvercommit()
	perNodeCount := map[string]int{}
	for _, node := range placements {
		perNodeCount[node]++
	}
	for node, n := range perNodeCount {
		if n != perNode {
			t.Errorf("node %s holds %d pods, want exactly %d", node, n, perNode)
		}
	}
	// The new leader bound only what the old one had not.
	s = e.waitMetrics(standby.ep, 30*time.Second, "the new leader's bindings counted", func(s scraped) bool {
		return s.value("scheduler_goroutines", "operation=binding") == 0
	})
	if got, most := scheduled(s), float64(pods)-boundByLeader; got > most {
		t.Errorf("the new leader bound %v pods, but at most %v were left", got, most)
	}
	e.assertScheduledAtMostOnce()
}

// SIGTERM on the leader: it finishes, releases the Lease and exits 0; the
// standby takes over within about one retryPeriod, far sooner than the
// leaseDuration it would wait out otherwise.
func testSIGTERMHandsOver(t *testing.T, bin string) {
	e := newEnv(t)
	e.addNode(e.node("n").Capacity("10", "16Gi", 110))
	timing := leaseTiming{lease: 10 * time.Second, renew: 6 * time.Second, retry: 500 * time.Millisecond}
	a := e.startReplica(bin, "a", timing)
	b := e.startReplica(bin, "b", timing)
	a.waitReady()
	b.waitReady()
	leader, standby := e.leader(a, b)

	e.createPod(e.pod("before").Req("100m", ""))
	e.waitBound(30*time.Second, "before")

	signalled := time.Now()
	leader.signal(syscall.SIGTERM)
	e.waitMetrics(standby.ep, timing.lease+10*time.Second, "the standby to lead", func(s scraped) bool {
		return s.value("leader_election_master_status", "name="+e.ns) == 1
	})
	took := time.Since(signalled)
	t.Logf("%s took over %v after SIGTERM to %s", standby.name, took.Round(time.Millisecond), leader.name)
	// The released lease is free at the standby's next attempt, within
	// 2.2 × retryPeriod; a second more for the leader to stop.
	if limit := 22*timing.retry/10 + 2*time.Second; took > limit {
		t.Errorf("takeover took %v after SIGTERM, want at most %v (leaseDuration is %v)", took, limit, timing.lease)
	}
	if err := leader.waitExit(30 * time.Second); err != nil {
		t.Errorf("%s after SIGTERM: %v, want exit status 0", leader.name, err)
	}

	e.createPod(e.pod("after").Req("100m", ""))
	e.waitBound(30*time.Second, "after")
	e.waitMetrics(standby.ep, 30*time.Second, "the new leader's binding counted", func(s scraped) bool {
		return s.value("scheduler_schedule_attempts_total", "result=scheduled", "profile="+e.scheduler) == 1
	})
}

// With delayCacheUntilActive (kube-scheduler's field) a standby starts no
// informer: it is not ready and its queue is empty, while the leader's
// holds a pod that fits nowhere. Killed, the leader hands over to the
// standby, which fills its cache on taking over, becomes ready, binds a
// new pod and holds the waiting one.
func testDelayCacheUntilActive(t *testing.T, bin string) {
	e := newEnv(t)
	e.addNode(e.node("n").Capacity("10", "16Gi", 110))
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\ndelayCacheUntilActive: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	timing := leaseTiming{lease: 4 * time.Second, renew: 3 * time.Second, retry: 500 * time.Millisecond}
	a := e.startReplica(bin, "a", timing, "--config", cfg)
	b := e.startReplica(bin, "b", timing, "--config", cfg)
	leader, standby := e.leader(a, b)
	leader.waitReady()

	e.createPod(e.pod("before").Req("100m", ""))
	e.waitBound(30*time.Second, "before")
	e.createPod(e.pod("waits").Req("100", ""))
	unschedulable := func(s scraped) float64 { return s.value("scheduler_pending_pods", "queue=unschedulable") }
	e.waitMetrics(leader.ep, 30*time.Second, "the leader to hold the pod that fits nowhere", func(s scraped) bool { return unschedulable(s) == 1 })
	code, body, err := standby.ep.get("/readyz")
	if err != nil || code == http.StatusOK || !strings.Contains(body, "informer caches not synced") {
		t.Errorf("the standby's /readyz: %d %q (%v), want not ready: informer caches not synced", code, body, err)
	}
	ss, err := standby.ep.scrape()
	if err != nil {
		t.Fatal(err)
	}
	if n := unschedulable(ss) + ss.value("scheduler_pending_pods", "queue=active"); n != 0 {
		t.Errorf("the standby's queue holds %v pods: it should have no informers", n)
	}

	leader.kill()
	e.waitMetrics(standby.ep, timing.lease+10*time.Second, "the standby to lead", func(s scraped) bool {
		return s.value("leader_election_master_status", "name="+e.ns) == 1
	})
	standby.waitReady()
	e.createPod(e.pod("after").Req("100m", ""))
	e.waitBound(30*time.Second, "after")
	e.waitMetrics(standby.ep, 30*time.Second, "the new leader to hold the pod that fits nowhere", func(s scraped) bool { return unschedulable(s) == 1 })
}

// A leader whose Lease is taken from it exits non-zero, so that its
// Deployment restarts it, within about renewDeadline.
func testLostLeaseExitsNonZero(t *testing.T, bin string) {
	e := newEnv(t)
	timing := leaseTiming{lease: 4 * time.Second, renew: 3 * time.Second, retry: 500 * time.Millisecond}
	a := e.startReplica(bin, "a", timing)
	a.waitReady()
	e.leader(a)

	stolen := time.Now()
	e.stealLease()
	err := a.waitExit(timing.renew + 15*time.Second)
	took := time.Since(stolen)
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("after losing its lease: %v, want exit status 1", err)
	}
	t.Logf("exited with status 1 %v after its lease was taken", took.Round(time.Millisecond))
	if limit := timing.renew + 22*timing.retry/10 + 3*time.Second; took > limit {
		t.Errorf("exited %v after losing the lease, want within %v", took, limit)
	}
	l, err := e.client.CoordinationV1().Leases(e.ns).Get(e.ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Spec.HolderIdentity; h == nil || *h != "thief" {
		t.Errorf("the Lease's holder is %v after the replica exited, want it left to thief", h)
	}
}

// A leader that loses its Lease stops binding at once: a Binding waiting to
// be posted when the loss is noticed is never posted, and Run returns
// ErrLostLease.
func TestLostLeaseAbortsBindings(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("only").Capacity("2", "4Gi", 110))
	timing := leaseTiming{lease: 4 * time.Second, renew: 3 * time.Second, retry: 500 * time.Millisecond}
	// Hold the Binding past the moment the loss is noticed (at most
	// renewDeadline + 2.2 × retryPeriod after the theft, 4.1s), then let
	// it go.
	const hold = 8 * time.Second
	entered := make(chan struct{})
	d, err := app.NewDaemon(app.Options{
		RESTConfig: cp.RESTConfig(cp.AdminToken),
		Overrides: config.Overrides{
			SchedulerName:     ptr(e.scheduler),
			LeaderElect:       ptr(true),
			ResourceNamespace: ptr(e.ns),
			ResourceName:      ptr(e.ns),
			LeaseDuration:     ptr(timing.lease),
			RenewDeadline:     ptr(timing.renew),
			RetryPeriod:       ptr(timing.retry),
		},
		HTTPBindAddress: "127.0.0.1:0",
	}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	d.Binder.BeforeBind = func(*v1.Pod, string) {
		once.Do(func() {
			close(entered)
			time.Sleep(hold)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runErr error
	done := make(chan struct{})
	go func() { runErr = d.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Run did not return")
		}
	})
	ep := endpoint(d.HTTPAddr())
	e.waitMetrics(ep, 30*time.Second, "leading", func(s scraped) bool {
		return s.value("leader_election_master_status", "name="+e.ns) == 1
	})

	e.createPod(e.pod("held").Req("1", ""))
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the pod was never assumed")
	}
	stolen := time.Now()
	e.stealLease()
	select {
	case <-done:
		if !errors.Is(runErr, app.ErrLostLease) {
			t.Errorf("Run: %v, want ErrLostLease", runErr)
		}
		t.Logf("Run returned %v after the theft", time.Since(stolen).Round(time.Millisecond))
	case <-time.After(hold + 10*time.Second):
		t.Fatal("Run did not return after the lease was lost")
	}
	// Run has returned: nothing of the daemon is left to bind.
	p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" {
		t.Errorf("the held pod was bound to %s after the lease was lost", p.Spec.NodeName)
	}
}

// yardmasterBinary returns the yardmaster binary: $YARDMASTER_BINARY (make
// e2e builds it), else one built now into a temporary directory.
func yardmasterBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("YARDMASTER_BINARY"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "yardmaster")
	cmd := exec.Command("go", "build", "-o", out, "github.com/yardmaster-io/yardmaster/cmd/yardmaster")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build yardmaster: %v\n%s", err, b)
	}
	return out
}

// replicaLogTail is how much of a replica's log a failure shows: about
// forty console lines.
const replicaLogTail = 8 << 10

// replica is one yardmaster process.
type replica struct {
	t    *testing.T
	name string
	proc *procgroup.Process
	ep   endpoint
}

// startReplica starts `yardmaster run` for this test's profile on the
// Lease e.ns/e.ns, with extra arguments after the test's, killed with its
// process group when the test ends.
func (e *env) startReplica(bin, name string, timing leaseTiming, extra ...string) *replica {
	e.t.Helper()
	dir := e.t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, cp.AdminToken); err != nil {
		e.t.Fatal(err)
	}
	port, err := procgroup.FreePort()
	if err != nil {
		e.t.Fatal(err)
	}
	ep := endpoint(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	proc, err := procgroup.Start(name, bin, append([]string{"run",
		"--kubeconfig", kubeconfig,
		"--scheduler-name", e.scheduler,
		"--leader-elect=true",
		"--leader-elect-resource-namespace", e.ns,
		"--leader-elect-resource-name", e.ns,
		"--leader-elect-lease-duration", timing.lease.String(),
		"--leader-elect-renew-deadline", timing.renew.String(),
		"--leader-elect-retry-period", timing.retry.String(),
		// Fast enough to drain 2,000 pods in seconds.
		"--kube-api-qps", "300",
		"--kube-api-burst", "600",
		"--http-bind-address", string(ep),
		"--log-format", "console",
	}, extra...), filepath.Join(dir, name+".log"))
	if err != nil {
		e.t.Fatal(err)
	}
	r := &replica{t: e.t, name: name, proc: proc, ep: ep}
	e.t.Cleanup(func() {
		// Its state is the API server's; nothing is lost without SIGTERM.
		if err := proc.Stop(0); err != nil {
			e.t.Error(err)
		}
		if e.t.Failed() {
			e.t.Logf("end of %s's log:\n%s", name, proc.LogTail(replicaLogTail))
		}
	})
	return r
}

// waitReady waits for /readyz to answer 200.
func (r *replica) waitReady() {
	r.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		if ended, err := r.proc.Exited(); ended {
			return false, fmt.Errorf("exited: %v", err)
		}
		code, _, err := r.ep.get("/readyz")
		return err == nil && code == 200, nil
	})
	if err != nil {
		r.t.Fatalf("%s never ready: %v\n%s", r.name, err, r.proc.LogTail(replicaLogTail))
	}
}

// kill sends SIGKILL to the replica alone, as a node failure would, and
// waits for it to exit.
func (r *replica) kill() {
	r.t.Helper()
	r.signal(syscall.SIGKILL)
	<-r.proc.Done()
}

func (r *replica) signal(sig os.Signal) {
	r.t.Helper()
	if err := r.proc.Signal(sig); err != nil {
		r.t.Fatal(err)
	}
}

// waitExit waits for the process to exit and returns its status (nil for 0).
func (r *replica) waitExit(timeout time.Duration) error {
	r.t.Helper()
	select {
	case <-r.proc.Done():
		_, err := r.proc.Exited()
		return err
	case <-time.After(timeout):
		r.t.Fatalf("%s still running %v later", r.name, timeout)
		return nil
	}
}

// leader waits until exactly one replica reports that it holds the Lease
// and returns it, then the others.
func (e *env) leader(rs ...*replica) (*replica, *replica) {
	e.t.Helper()
	var leader *replica
	var others []*replica
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		leader, others = nil, nil
		for _, r := range rs {
			s, err := r.ep.scrape()
			if err != nil {
				return false, nil
			}
			if s.value("leader_election_master_status", "name="+e.ns) == 1 {
				if leader != nil {
					return false, fmt.Errorf("%s and %s both lead", leader.name, r.name)
				}
				leader = r
				continue
			}
			others = append(others, r)
		}
		return leader != nil, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for one leader: %v", err)
	}
	l, err := e.client.CoordinationV1().Leases(e.ns).Get(e.ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if h := l.Spec.HolderIdentity; h == nil || !strings.Contains(*h, "_") {
		e.t.Errorf("Lease holder %v, want hostname_<random>", h)
	}
	var standby *replica
	if len(others) > 0 {
		standby = others[0]
	}
	return leader, standby
}

// stealLease makes "thief" the holder of the Lease e.ns/e.ns for an hour,
// as a replica with another identity would.
func (e *env) stealLease() {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		l, err := e.client.CoordinationV1().Leases(e.ns).Get(e.ctx, e.ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity = ptr("thief")
		l.Spec.LeaseDurationSeconds = ptr[int32](3600)
		l.Spec.AcquireTime, l.Spec.RenewTime = &now, &now
		_, err = e.client.CoordinationV1().Leases(e.ns).Update(e.ctx, l, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("steal the lease: %v", err)
	}
}

// createPods creates n pods p0000… requesting cpu each, in parallel.
func (e *env) createPods(n int, cpu string) {
	e.t.Helper()
	const workers = 16
	names := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				obj := e.pod(name).Req(cpu, "").Obj().DeepCopy()
				obj.UID = ""
				if _, err := e.client.CoreV1().Pods(e.ns).Create(e.ctx, obj, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create pod %s: %w", name, err)
					return
				}
			}
		}()
	}
	var err error
	for i := 0; i < n && err == nil; i++ {
		select {
		case names <- fmt.Sprintf("p%04d", i):
		case err = <-errs:
		}
	}
	close(names)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

// assertScheduledAtMostOnce fails if any pod has more than one Scheduled
// event (events of a killed replica may be missing, never doubled).
func (e *env) assertScheduledAtMostOnce() {
	e.t.Helper()
	evs, err := e.client.EventsV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "reason=Scheduled"})
	if err != nil {
		e.t.Fatalf("list events: %v", err)
	}
	perPod := map[string]int{}
	for _, ev := range evs.Items {
		n := 1
		if ev.Series != nil {
			n = int(ev.Series.Count)
		}
		perPod[ev.Regarding.Name] += n
	}
	for pod, n := range perPod {
		if n > 1 {
			e.t.Errorf("pod %s was reported Scheduled %d times", pod, n)
		}
	}
}
