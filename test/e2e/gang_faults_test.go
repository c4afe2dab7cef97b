package e2e

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Gangs when things go wrong: a PodGroup that never comes, a minCount
// never reached, scheduler-plugins' CRD removed under waiting members, a
// member deleted while its group waits, and the leader killed while a
// placed group's Bindings are in flight. Every test watches the gangs
// with gangInvariant: all or nothing, at every poll.

// gangInvariant checks, in the background while a test runs, that every
// pod group of the test's namespace is all or nothing: at each poll its
// bound members are none or at least its minCount. A placed group is
// partly bound for a moment while its members' Bindings are in flight, so
// a group may be seen partly bound, but not for longer than grace: once a
// member is bound, every member placed with it must be bound within
// grace. When it stops (at the latest when the test ends) it waits up to
// grace for groups partly bound to settle and reports every breach.
type gangInvariant struct {
	e *env
	// client reads without logging the API server's deprecation
	// warning on every PodGroup list.
	client kubernetes.Interface
	dc     dynamic.Interface // nil: no scheduler-plugins PodGroups to read
	// grace is how long a group may stay partly bound.
	grace  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu sync.Mutex
	// tolerated are groups a test broke on purpose (its leader killed
	// mid-binding), not checked until seen whole or empty again.
	tolerated map[string]bool
	// Owned by the polling goroutine until done is closed.
	partialSince map[string]time.Time
	reported     map[string]bool
	violations   []string
	polls        int
	longest      time.Duration
}

// groupState is one group as one poll saw it.
type groupState struct {
	bound, members, minCount int
	exists                   bool
}

// partly reports whether the group is bound below its minCount (any
// member bound, for a group without its PodGroup).
func (g groupState) partly() bool {
	if g.bound == 0 {
		return false
	}
	return !g.exists || g.bound < g.minCount
}

func (g groupState) String() string {
	if !g.exists {
		return fmt.Sprintf("%d of %d members bound, no PodGroup", g.bound, g.members)
	}
	return fmt.Sprintf("%d of %d members bound, minCount %d", g.bound, g.members, g.minCount)
}

// watchGangs starts a gangInvariant on the test's namespace; dc, when
// set, reads scheduler-plugins' PodGroups. It stops when the test ends.
func (e *env) watchGangs(grace time.Duration, dc dynamic.Interface) *gangInvariant {
	cfg := rest.CopyConfig(e.plane.RESTConfig(e.plane.AdminToken))
	cfg.WarningHandler = rest.NoWarnings{}
	ctx, cancel := context.WithCancel(e.ctx)
	w := &gangInvariant{e: e, client: kubernetes.NewForConfigOrDie(cfg), dc: dc, grace: grace, cancel: cancel, done: make(chan struct{}),
		tolerated: map[string]bool{}, partialSince: map[string]time.Time{}, reported: map[string]bool{}}
	go func() {
		defer close(w.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			w.poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	e.t.Cleanup(w.stop)
	return w
}

// tolerate exempts group (its name) until it is seen whole or empty.
func (w *gangInvariant) tolerate(group string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, api := range []framework.PodGroupAPI{framework.NativePodGroups, framework.CoschedulingPodGroups} {
		w.tolerated[framework.PodGroupKey{API: api, Namespace: w.e.ns, Name: group}.String()+" ("+api.String()+")"] = true
	}
}

// stop ends the watch and fails the test for every breach (breaches).
func (w *gangInvariant) stop() {
	for _, b := range w.breaches() {
		w.e.t.Errorf("gang invariant: %s", b)
	}
}

// breaches ends the watch: it polls until no group is partly bound or
// grace has passed, and returns every breach seen, those at the end
// included. Later calls return nothing.
func (w *gangInvariant) breaches() []string {
	var out []string
	w.once.Do(func() {
		w.cancel()
		<-w.done
		ctx, cancel := context.WithTimeout(context.Background(), w.grace+10*time.Second)
		defer cancel()
		deadline := time.Now().Add(w.grace)
		var partial []string
		for {
			partial = partial[:0]
			groups, err := w.groups(ctx)
			if err != nil {
				partial = append(partial, fmt.Sprintf("final poll: %v", err))
				break
			}
			for _, key := range sortedKeys(groups) {
				if g := groups[key]; g.partly() && !w.isTolerated(key) {
					partial = append(partial, "at the end, group "+key+": "+g.String())
				}
			}
			if len(partial) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		out = append(w.violations, partial...)
		w.e.t.Logf("gang invariant: %d polls, longest partly bound stretch %v", w.polls, w.longest.Round(time.Millisecond))
	})
	return out
}

func (w *gangInvariant) isTolerated(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tolerated[key]
}

// poll checks every group once.
func (w *gangInvariant) poll(ctx context.Context) {
	groups, err := w.groups(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.violations = append(w.violations, fmt.Sprintf("poll: %v", err))
		}
		return
	}
	w.polls++
	now := time.Now()
	for key, g := range groups {
		if !g.partly() {
			delete(w.partialSince, key)
			delete(w.reported, key)
			w.mu.Lock()
			delete(w.tolerated, key)
			w.mu.Unlock()
			continue
		}
		since, ok := w.partialSince[key]
		if !ok {
			since = now
			w.partialSince[key] = now
		}
		w.longest = max(w.longest, now.Sub(since))
		if now.Sub(since) > w.grace && !w.reported[key] && !w.isTolerated(key) {
			w.reported[key] = true
			w.violations = append(w.violations, fmt.Sprintf("group %s partly bound for more than %v: %s", key, w.grace, g))
		}
	}
	for key := range w.partialSince {
		if _, ok := groups[key]; !ok {
			delete(w.partialSince, key)
		}
	}
}

// groups reads every pod group of the namespace that has members: its
// members bound and its minCount (1 for a group without a gang policy).
func (w *gangInvariant) groups(ctx context.Context) (map[string]groupState, error) {
	e := w.e
	pods, err := w.client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	out := map[string]groupState{}
	apiOf := map[string]framework.PodGroupKey{}
	for i := range pods.Items {
		key, ok := framework.PodGroupOf(&pods.Items[i])
		if !ok {
			continue
		}
		name := key.String() + " (" + key.API.String() + ")"
		apiOf[name] = key
		g := out[name]
		g.members++
		if pods.Items[i].Spec.NodeName != "" {
			g.bound++
		}
		out[name] = g
	}
	if len(out) == 0 {
		return out, nil
	}
	minCounts := map[framework.PodGroupKey]int{}
	pgs, err := w.client.SchedulingV1beta1().PodGroups(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list PodGroups: %w", err)
	}
	for _, pg := range pgs.Items {
		n := 1
		if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
			n = int(gang.MinCount)
		}
		minCounts[framework.PodGroupKey{API: framework.NativePodGroups, Namespace: e.ns, Name: pg.Name}] = n
	}
	if w.dc != nil {
		// The CRD may be gone (a test removes it): then no group exists.
		if list, err := w.dc.Resource(coschedulingGVR).Namespace(e.ns).List(ctx, metav1.ListOptions{}); err == nil {
			for _, u := range list.Items {
				m, _, _ := unstructuredInt(u.Object, "spec", "minMember")
				minCounts[framework.PodGroupKey{API: framework.CoschedulingPodGroups, Namespace: e.ns, Name: u.GetName()}] = int(max(m, 1))
			}
		}
	}
	for name, g := range out {
		g.minCount, g.exists = minCounts[apiOf[name]]
		out[name] = g
	}
	return out, nil
}

// unstructuredInt reads an integer field of an unstructured object.
func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		if cur, ok = m[f]; !ok {
			return 0, false, nil
		}
	}
	switch v := cur.(type) {
	case int64:
		return v, true, nil
	case float64:
		return int64(v), true, nil
	}
	return 0, false, fmt.Errorf("field %v is a %T", fields, cur)
}

// waitPodScheduledMessage waits until the pod's PodScheduled=False
// condition says one of want, and fails with the last message seen
// otherwise.
func (e *env) waitPodScheduledMessage(pod string, want ...string) {
	e.t.Helper()
	if last := e.waitPodScheduled(pod, func(msg string) bool { return slices.Contains(want, msg) }); !slices.Contains(want, last) {
		e.t.Fatalf("pod %s: PodScheduled message %q, want one of %q", pod, last, want)
	}
}

// waitPodScheduled waits until the pod's PodScheduled=False condition
// has a message ok accepts and returns it; it fails with the last one
// seen otherwise.
func (e *env) waitPodScheduled(pod string, ok func(string) bool) string {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = e.waitUnschedulableCondition(pod)
		return ok(last), nil
	})
	if err != nil {
		e.t.Fatalf("pod %s: PodScheduled message %q", pod, last)
	}
	return last
}

// deletePods deletes the named pods at once, as a kubelet-less cluster
// needs.
func (e *env) deletePods(names ...string) {
	e.t.Helper()
	zero := int64(0)
	for _, name := range names {
		if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			e.t.Fatalf("delete pod %s: %v", name, err)
		}
	}
}

// gangInvariant fails a gang left partly bound: one member of a gang of
// 3 bound by hand, the others pending with no scheduler to place them;
// and passes the same gang once all are bound.
func TestGangFaultInvariantCatchesPartlyBound(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.createGang("half", 3)
	w := e.watchGangs(time.Second, nil)
	e.createPod(e.pod("half-0").PodGroup("half").Req("100m", "100Mi").Node(e.ns + "-a"))
	e.createPod(e.pod("half-1").PodGroup("half").Req("100m", "100Mi"))
	e.createPod(e.pod("half-2").PodGroup("half").Req("100m", "100Mi"))
	time.Sleep(2 * time.Second)
	got := w.breaches()
	want := fmt.Sprintf("group %s/half (scheduling.k8s.io) partly bound for more than 1s: 1 of 3 members bound, minCount 3", e.ns)
	if !slices.Contains(got, want) || len(got) != 2 {
		t.Errorf("breaches %q, want %q and the same group at the end", got, want)
	}

	w = e.watchGangs(time.Second, nil)
	e.startScheduler()
	e.waitBound(30*time.Second, "half-1", "half-2")
	if got := w.breaches(); len(got) != 0 {
		t.Errorf("breaches %q once the gang is whole, want none", got)
	}
}

// A pod naming a PodGroup that never comes stays Pending and says why,
// while pods of no group and gangs that exist, created before and after
// it, are scheduled.
func TestGangFaultMissingPodGroup(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.startScheduler()
	e.watchGangs(5*time.Second, nil)
	ghosts := e.createMembers("ghost", 2, "100m")
	e.createPod(e.pod("before").Req("100m", "100Mi"))
	e.createGang("real", 2)
	real := e.createMembers("real", 2, "100m")
	e.waitBound(30*time.Second, append([]string{"before"}, real...)...)
	want := `waiting for pods's pod group "ghost" to appear in scheduling queue`
	for _, g := range ghosts {
		e.waitPodScheduledMessage(g, want)
	}
	e.createPod(e.pod("after").Req("100m", "100Mi"))
	e.waitBound(30*time.Second, "after")
	e.expectNoneBound(ghosts, 2*time.Second)
	for _, g := range ghosts {
		if msg := e.waitUnschedulableCondition(g); msg != want {
			t.Errorf("pod %s: PodScheduled message %q, want %q", g, msg, want)
		}
	}
}

// A gang whose minCount exceeds the members it has waits whole with
// kube-scheduler's reason, other pods scheduled meanwhile; lowering
// minCount (the API server lets spec.schedulingPolicy.gang.minCount
// change) places it.
func TestGangFaultMinCountNeverReached(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.startScheduler()
	e.watchGangs(5*time.Second, nil)
	e.createGang("big", 5)
	names := e.createMembers("big", 3, "1")
	for _, n := range names {
		e.waitPodScheduledMessage(n, "waiting for minCount pods from a gang to appear in scheduling queue")
	}
	e.createPod(e.pod("solo").Req("500m", "100Mi"))
	e.waitBound(30*time.Second, "solo")
	e.expectNoneBound(names, 2*time.Second)

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pg, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Get(e.ctx, "big", metav1.GetOptions{})
		if err != nil {
			return err
		}
		pg.Spec.SchedulingPolicy.Gang.MinCount = 3
		_, err = e.client.SchedulingV1beta1().PodGroups(e.ns).Update(e.ctx, pg, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("lower the gang's minCount to 3: %v", err)
	}
	e.waitBound(30*time.Second, names...)
	e.waitGroupCondition("big", metav1.ConditionTrue, "Scheduled")
	e.assertNoOvercommit()
}

// deleteCoschedulingCRD deletes scheduler-plugins' PodGroup CRD, which
// deletes its PodGroups, and waits until it is gone.
func (e *env) deleteCoschedulingCRD(dc dynamic.Interface) {
	e.t.Helper()
	name := coschedulingCRD(e.t).GetName()
	if err := dc.Resource(crdGVR).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatalf("delete the PodGroup CRD: %v", err)
	}
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dc.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("the PodGroup CRD is still there: %v", err)
	}
}

// scheduler-plugins' CRD removed while its members wait (their PodGroups
// go with it): they stay Pending, and once room is made they say that
// their PodGroup is missing instead of binding; other pods are
// scheduled. The CRD and the PodGroup back, the group is placed.
func TestGangFaultCoschedulingCRDRemoved(t *testing.T) {
	e := newEnv(t)
	dc := e.installCoscheduling()
	// Other tests of the package need the CRD, whatever happens here.
	t.Cleanup(func() {
		e.deleteCoschedulingCRD(dc)
		e.installCoscheduling()
	})
	e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	e.startScheduler()
	e.watchGangs(5*time.Second, dc)
	e.createCoschedulingGroup(dc, "spark", map[string]any{"minMember": int64(3)})
	names := e.createLabelled("spark", 3, "1")
	e.waitFailedScheduling(names[0], "minCount (3) cannot be satisfied")

	e.deleteCoschedulingCRD(dc)
	e.expectNoneBound(names, time.Second)
	// Room for the whole group: it wakes, and finds no PodGroup.
	e.addNode(e.node("b").Capacity("2", "4Gi", 110))
	want := `waiting for PodGroup "spark" (scheduling.x-k8s.io/v1alpha1) to exist`
	for _, n := range names {
		e.waitPodScheduledMessage(n, want)
	}
	e.createPod(e.pod("solo").Req("100m", "100Mi"))
	e.waitBound(30*time.Second, "solo")
	e.expectNoneBound(names, 2*time.Second)

	e.installCoscheduling()
	e.createCoschedulingGroup(dc, "spark", map[string]any{"minMember": int64(3)})
	e.waitBound(60*time.Second, names...)
	e.assertNoOvercommit()
}

// A member deleted while its group waits for room: with minCount still
// reachable, the rest are placed once there is room; with minCount out
// of reach, they wait with the minCount reason however much room there
// is, until a new member makes it up.
func TestGangFaultMemberDeleted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		minCount int32
		members  int
	}{
		// 4 members of 1 cpu, minCount 3, on 2 cpus: 2 fit. One
		// deleted, 3 are left, enough.
		{name: "StillReachable", minCount: 3, members: 4},
		// 3 members, minCount 3: one deleted, 2 are left.
		{name: "NoLongerReachable", minCount: 3, members: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.addNode(e.node("a").Capacity("2", "4Gi", 110))
			e.startScheduler()
			e.watchGangs(5*time.Second, nil)
			e.createGang("job", tc.minCount)
			names := e.createMembers("job", tc.members, "1")
			e.waitGroupCondition("job", metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonUnschedulable)
			e.deletePods(names[len(names)-1])
			rest := names[:len(names)-1]
			e.expectNoneBound(rest, time.Second)

			e.addNode(e.node("b").Capacity("2", "4Gi", 110))
			if len(rest) >= int(tc.minCount) {
				e.waitBound(30*time.Second, rest...)
				e.waitGroupCondition("job", metav1.ConditionTrue, "Scheduled")
				e.assertNoOvercommit()
				return
			}
			// Held back before a cycle (PreEnqueue), or refused by one:
			// the members were in backoffQ, let in while the third
			// existed, when it went (kube-scheduler asks PreEnqueue on the
			// way into backoffQ, not out of it).
			for _, n := range rest {
				e.waitPodScheduledMessage(n, "waiting for minCount pods from a gang to appear in scheduling queue",
					"minCount (3) cannot be satisfied: 0 scheduled, 2 remaining")
			}
			e.expectNoneBound(rest, 2*time.Second)
			e.createPod(e.pod("job-new").PodGroup("job").Req("1", "100Mi"))
			e.waitBound(30*time.Second, append(rest, "job-new")...)
			e.assertNoOvercommit()
		})
	}
}

// bindingGate is a proxy between yardmaster replicas and the API server
// that lets the first pass Bindings of a namespace through and then
// holds every other one until the gate opens or its client goes (a
// Binding held for a replica that was killed is never posted).
type bindingGate struct {
	t      *testing.T
	ns     string
	pass   int64
	srv    *httptest.Server
	opened chan struct{}
	once   sync.Once

	seen, passed, held, dropped atomic.Int64
}

// newBindingGate starts a gate in front of the shared control plane.
func newBindingGate(t *testing.T, ns string, pass int64) *bindingGate {
	t.Helper()
	// The fault proxy's passthrough, without its faults.
	p := newFaultProxy(t, cp, nil)
	g := &bindingGate{t: t, ns: ns, pass: pass, opened: make(chan struct{})}
	g.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pod := bindingPod(r)
		if pod == "" || !strings.HasPrefix(pod, ns+"/") {
			p.rp.ServeHTTP(w, r)
			return
		}
		if g.seen.Add(1) > pass {
			// Read the body first: only then does the server watch the
			// connection, and cancel the request's context when the
			// client goes.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			g.held.Add(1)
			select {
			case <-g.opened:
				g.held.Add(-1)
			case <-r.Context().Done():
				g.held.Add(-1)
				g.dropped.Add(1)
				return
			}
		}
		g.passed.Add(1)
		p.rp.ServeHTTP(w, r)
	}))
	// TLS: a kubeconfig's credentials are not sent to a plain-HTTP server.
	g.srv.StartTLS()
	t.Cleanup(g.srv.Close)
	// Close waits for the handlers: let the held ones go first.
	t.Cleanup(g.open)
	return g
}

// open lets every Binding through, those held included.
func (g *bindingGate) open() { g.once.Do(func() { close(g.opened) }) }

// kubeconfig writes a kubeconfig of the admin through the gate.
func (g *bindingGate) kubeconfig() string {
	g.t.Helper()
	path := filepath.Join(g.t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: g.srv.Certificate().Raw})
	cfg.Clusters["gate"] = &clientcmdapi.Cluster{Server: g.srv.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cp.AdminToken}
	cfg.Contexts["gate"] = &clientcmdapi.Context{Cluster: "gate", AuthInfo: "admin"}
	cfg.CurrentContext = "gate"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		g.t.Fatal(err)
	}
	return path
}

// Two replicas on one Lease; a gang of 20 that fills 5 nodes exactly.
// The leader's first 5 Bindings reach the API server, the others are
// held; the leader is killed with them in flight, and they are never
// posted. The standby takes over with 5 members bound and 15 pending,
// counts the bound ones as scheduled and places the rest: every member
// bound once, no node overcommitted. In RoomTakenMeanwhile, pods bound
// by someone else take 2 cpus while nobody leads: the new leader cannot
// place the rest and says so on the pending members, binding none of
// them; once the room is back it places them.
func TestGangFaultLeaderDiesMidBinding(t *testing.T) {
	bin := yardmasterBinary(t)
	for _, tc := range []struct {
		name      string
		takeRoom  bool
		tolerance time.Duration
	}{
		// Partly bound from the first Binding until the new leader,
		// at most leaseDuration + 4 s after the kill, binds the rest.
		{name: "RestStillFits", tolerance: 20 * time.Second},
		{name: "RoomTakenMeanwhile", takeRoom: true, tolerance: 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			const nodes, members, pass = 5, 20, 5
			for i := range nodes {
				e.addNode(e.node(fmt.Sprintf("n%d", i)).Capacity("4", "8Gi", 110))
			}
			w := e.watchGangs(tc.tolerance, nil)
			gate := newBindingGate(t, e.ns, pass)
			kubeconfig := gate.kubeconfig()
			timing := leaseTiming{lease: 4 * time.Second, renew: 3 * time.Second, retry: 500 * time.Millisecond}
			a := e.startReplica(bin, "a", timing, "--kubeconfig", kubeconfig)
			b := e.startReplica(bin, "b", timing, "--kubeconfig", kubeconfig)
			a.waitReady()
			b.waitReady()
			leader, standby := e.leader(a, b)

			e.createGang("gang", members)
			names := e.createMembers("gang", members, "1")
			// The leader placed the group: 5 Bindings committed, the rest
			// held.
			err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
				return e.boundOf(names) == pass && gate.held.Load() == members-pass, nil
			})
			if err != nil {
				t.Fatalf("waiting for %d members bound and %d Bindings held: %d bound, %d held", pass, members-pass, e.boundOf(names), gate.held.Load())
			}
			if tc.takeRoom {
				w.tolerate("gang")
			}
			leader.kill()
			err = wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				return gate.held.Load() == 0, nil
			})
			if err != nil {
				t.Fatalf("%d Bindings still held after %s was killed", gate.held.Load(), leader.name)
			}
			if got := e.boundOf(names); got != pass {
				t.Fatalf("%d members bound after the kill, want %d", got, pass)
			}
			t.Logf("%s killed with %d members bound, %d Bindings dropped", leader.name, pass, gate.dropped.Load())

			var intruders []string
			if tc.takeRoom {
				intruders = e.takeRoom(2)
			}
			gate.open()
			e.waitMetrics(standby.ep, timing.lease+10*time.Second, "the standby to lead", func(s scraped) bool {
				return s.value("leader_election_master_status", "name="+e.ns) == 1
			})
			if tc.takeRoom {
				// 15 pending members, room for 13: the group is refused.
				var pending []string
				placed := e.placements()
				for _, n := range names {
					if _, ok := placed[n]; !ok {
						pending = append(pending, n)
					}
				}
				// 5 bound and 13 placed, the 14th fits nowhere: the cycle
				// stops there. Members carry the group's reason, or their
				// own; the condition they had from the first leader ("waiting
				// for minCount pods ...") is replaced.
				groupReason := 0
				for _, n := range pending {
					msg := e.waitPodScheduled(n, func(msg string) bool {
						return strings.Contains(msg, "minCount (20) cannot be satisfied: 18 scheduled, 1 remaining") ||
							strings.Contains(msg, "Insufficient cpu")
					})
					if strings.Contains(msg, "minCount (20)") {
						groupReason++
					}
				}
				if groupReason == 0 {
					t.Errorf("no pending member carries the group's reason")
				}
				if got := e.boundOf(names); got != pass {
					t.Fatalf("%d members bound while the rest cannot fit, want %d", got, pass)
				}
				e.expectNoneBound(pending, 2*time.Second)
				e.deletePods(intruders...)
			}
			e.waitBound(60*time.Second, names...)
			e.assertNoOvercommit()
			e.assertScheduledAtMostOnce()
			e.waitGroupCondition("gang", metav1.ConditionTrue, "Scheduled")
			if n := gate.passed.Load(); n != members {
				t.Errorf("%d Bindings reached the API server, want %d (one per member)", n, members)
			}
		})
	}
}

// takeRoom binds n pods of 1 cpu, without a scheduler, to the nodes
// with the most free cpu, and returns their names.
func (e *env) takeRoom(n int) []string {
	e.t.Helper()
	nodes, err := e.client.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + e.ns})
	if err != nil {
		e.t.Fatal(err)
	}
	used := e.nodeRequests()
	free := map[string]int64{}
	var names []string
	for _, node := range nodes.Items {
		u := used[node.Name]
		free[node.Name] = node.Status.Allocatable.Cpu().MilliValue() - u.MilliCPU
		names = append(names, node.Name)
	}
	var out []string
	for i := range n {
		slices.SortFunc(names, func(a, b string) int { return int(free[b] - free[a]) })
		node := names[0]
		if free[node] < 1000 {
			e.t.Fatalf("no node with 1 cpu free: %v", free)
		}
		name := fmt.Sprintf("intruder-%d", i)
		e.createPod(e.pod(name).Req("1", "100Mi").Node(node).SchedulerName(v1.DefaultSchedulerName))
		free[node] -= 1000
		out = append(out, name)
	}
	return out
}

// Two groups naming each other's pods: each pod names one native
// PodGroup in spec.schedulingGroup and carries the other's
// scheduler-plugins label. A pod belongs to its native group (the one
// kube-scheduler, which reads no label, sees), so each group is decided
// from its own pods, never from a mix: with room for one group only, one
// is placed whole and the other waits whole with its reason, and is
// placed once the first is gone.
func TestGangFaultCrossedGroups(t *testing.T) {
	e := newEnv(t)
	dc := e.installCoscheduling()
	e.addNode(e.node("a").Capacity("3", "8Gi", 110))
	e.startScheduler()
	e.watchGangs(5*time.Second, dc)
	for _, g := range []string{"left", "right"} {
		e.createGang(g, 2)
		e.createCoschedulingGroup(dc, g, map[string]any{"minMember": int64(2)})
	}
	var left, right []string
	for i := range 2 {
		left = append(left, fmt.Sprintf("left-%d", i))
		right = append(right, fmt.Sprintf("right-%d", i))
		e.createPod(e.pod(left[i]).PodGroup("left").Label(framework.CoschedulingPodGroupLabel, "right").Req("1", "100Mi"))
		e.createPod(e.pod(right[i]).PodGroup("right").Label(framework.CoschedulingPodGroupLabel, "left").Req("1", "100Mi"))
	}
	// 3 cpus: either group's 2 × 1 cpu fits, not both, nor a mix that
	// would make each label's group whole.
	first, second, secondGroup := e.waitOneGroupWhole(left, right, "left", "right")
	c := e.waitGroupCondition(secondGroup, metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonUnschedulable)
	if !strings.HasPrefix(c.Message, "minCount (2) cannot be satisfied") {
		t.Errorf("PodGroup %s condition message %q, want minCount's reason", secondGroup, c.Message)
	}
	e.expectNoneBound(second, 2*time.Second)
	e.deletePods(first...)
	e.waitBound(30*time.Second, second...)
	e.waitGroupCondition(secondGroup, metav1.ConditionTrue, "Scheduled")
	e.assertNoOvercommit()
}
