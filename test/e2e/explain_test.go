package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/internal/testca"
	"github.com/yardmaster-io/yardmaster/scheduler"
)

// ownVerdicts returns node → "plugin: reasons" ("" when feasible) for the
// nodes of this test (the shared control plane may hold others).
func (e *env) ownVerdicts(x *explain.Explanation) map[string]string {
	out := map[string]string{}
	for _, v := range x.Verdicts {
		if !strings.HasPrefix(v.Node, e.ns+"-") {
			continue
		}
		name := strings.TrimPrefix(v.Node, e.ns+"-")
		if v.Rejected == nil {
			out[name] = ""
			continue
		}
		out[name] = v.Rejected.Plugin + ": " + strings.Join(v.Rejected.Reasons, "; ")
	}
	return out
}

// explainConfig is the configuration of this test's scheduler.
func (e *env) explainConfig() *config.Config {
	e.t.Helper()
	c := config.Default()
	if err := c.Apply(config.Overrides{SchedulerName: ptr(e.scheduler)}); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// A pod pending for three reasons (one node short of cpu, one tainted, one
// cordoned), explained from a snapshot read from the API and from the
// running scheduler's /debug/explain; a pod that was placed, explained
// where it went. The answers are the running scheduler's: the same
// reasons as its PodScheduled condition, the node it bound the pod to.
func TestExplainPendingAndPlaced(t *testing.T) {
	e := newEnv(t)
	mine := map[string]string{testLabel: e.ns}
	e.addNode(e.node("small").Capacity("1", "4Gi", 110))
	e.addNode(e.node("tainted").Capacity("8", "16Gi", 110).Taint("gpu", "true", v1.TaintEffectNoSchedule))
	e.addNode(e.node("cordoned").Capacity("8", "16Gi", 110).Unschedulable())

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, cp.AdminToken); err != nil {
		t.Fatal(err)
	}
	d := e.startScheduler(func(o *app.Options) {
		o.Secure = app.NewSecureServing()
		o.Secure.Serving.BindAddress = net.IPv4(127, 0, 0, 1)
		o.Secure.Serving.BindPort = 0
		o.Secure.Authentication.RemoteKubeConfigFile = kubeconfig
		o.Secure.Authorization.RemoteKubeConfigFile = kubeconfig
	})
	e.createPod(e.pod("big").Req("2", "1Gi").NodeSelector(mine))
	condition := e.waitUnschedulableCondition("big")
	// The simulator's annotations are off by default.
	if p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "big", metav1.GetOptions{}); err != nil || p.Annotations[scheduler.AnnotationFilterResult] != "" {
		t.Errorf("annotations without the switch: %v %v", err, p.Annotations)
	}

	want := map[string]string{
		"small":    "NodeResourcesFit: Insufficient cpu",
		"tainted":  "TaintToleration: node(s) had untolerated taint {gpu: true}",
		"cordoned": "NodeUnschedulable: node(s) were unschedulable",
	}
	snap, err := app.ExplainSnapshot(e.ctx, cp.RESTConfig(cp.AdminToken), e.explainConfig(), e.ns, "big")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, e.ownVerdicts(snap)); diff != "" {
		t.Errorf("snapshot verdicts (-want +got):\n%s", diff)
	}
	for _, reason := range []string{"Insufficient cpu", "node(s) had untolerated taint(s)", "node(s) were unschedulable"} {
		if !strings.Contains(condition, reason) || !strings.Contains(snap.Message, reason) {
			t.Errorf("%q: the scheduler says %q, explain %q", reason, condition, snap.Message)
		}
	}
	if !strings.HasPrefix(snap.Summary, "Fits nowhere") {
		t.Errorf("summary: %s", snap.Summary)
	}

	// The same from the running scheduler, authorized as a /debug path.
	path := "/debug/explain?" + url.Values{"namespace": {e.ns}, "name": {"big"}}.Encode()
	code, body := testca.HTTPSGet(t, d.SecureAddr(), path, cp.AdminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	var live explain.Explanation
	if err := json.Unmarshal([]byte(body), &live); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, e.ownVerdicts(&live)); diff != "" {
		t.Errorf("live verdicts (-want +got):\n%s", diff)
	}
	if live.Source != explain.SourceLive {
		t.Errorf("source %q", live.Source)
	}
	if code, body := testca.HTTPSGet(t, d.SecureAddr(), path, "", nil); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %d %s", code, body)
	}
	if code, body := testca.HTTPSGet(t, d.SecureAddr(), path, noRBACToken, nil); code != http.StatusForbidden {
		t.Errorf("without RBAC: %d %s", code, body)
	}

	// The scheduler kept its last attempt: reasons per plugin, no cycle run.
	code, body = testca.HTTPSGet(t, d.SecureAddr(), path+"&kept=true", cp.AdminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s&kept=true: %d %s", path, code, body)
	}
	var kept explain.Explanation
	if err := json.Unmarshal([]byte(body), &kept); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, c := range kept.Kept.Counts {
		found[c.Plugin+": "+c.Reason] = true
	}
	// The kept reasons are the scheduler's, which name no taint.
	wantKept := maps.Clone(want)
	wantKept["tainted"] = "TaintToleration: node(s) had untolerated taint(s)"
	for _, v := range wantKept {
		if !found[v] {
			t.Errorf("kept counts lack %q: %+v", v, kept.Kept.Counts)
		}
	}

	// A node that fits: the pod is bound there, and explain says why.
	e.addNode(e.node("big").Capacity("4", "16Gi", 110))
	bound := e.waitBound(30*time.Second, "big")["big"]
	placed, err := app.ExplainSnapshot(e.ctx, cp.RESTConfig(cp.AdminToken), e.explainConfig(), e.ns, "big")
	if err != nil {
		t.Fatal(err)
	}
	if placed.BoundTo != bound || placed.Selected != bound || len(placed.Best) != 1 {
		t.Errorf("bound to %s; explain: bound %q, selected %q, best %v", bound, placed.BoundTo, placed.Selected, placed.Best)
	}
	// Placed: nothing kept any more.
	if code, body := testca.HTTPSGet(t, d.SecureAddr(), path+"&kept=true", cp.AdminToken, nil); code != http.StatusNotFound {
		t.Errorf("kept after placing: %d %s", code, body)
	}
}

// simulate --capacity answers how many replicas fit; creating that many for
// real binds them all, and one more stays Pending.
func TestSimulateCapacityMatchesScheduler(t *testing.T) {
	e := newEnv(t)
	mine := map[string]string{testLabel: e.ns}
	// 2 + 3 + 1.5 cpus of 600m pods: 3 + 5 + 2 = 10 replicas (cpu runs
	// out first: memory holds 16).
	e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	e.addNode(e.node("b").Capacity("3", "8Gi", 110))
	e.addNode(e.node("c").Capacity("1500m", "4Gi", 110))
	replica := e.pod("web").Req("600m", "256Mi").NodeSelector(mine).Obj()

	n, limit, err := app.SimulateCapacity(e.ctx, cp.RESTConfig(cp.AdminToken), e.explainConfig(), replica)
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("capacity %d, want 10", n)
	}
	if limit == nil || !strings.Contains(limit.Message, "Insufficient cpu") {
		t.Errorf("what runs out: %+v", limit)
	}
	// simulate wrote nothing: no pod in the namespace.
	if pods, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{}); err != nil || len(pods.Items) != 0 {
		t.Fatalf("pods after simulate: %v %v", err, pods)
	}

	e.startScheduler()
	var names []string
	for i := range n + 1 {
		name := fmt.Sprintf("web-%d", i)
		names = append(names, name)
		e.createPod(e.pod(name).Req("600m", "256Mi").NodeSelector(mine))
	}
	bound := e.waitAllBound(60*time.Second, n)
	if len(bound) != n {
		t.Fatalf("%d bound, want %d", len(bound), n)
	}
	for _, name := range names {
		if _, ok := bound[name]; !ok {
			e.expectPending(name, 3*time.Second)
		}
	}
	e.assertNoOvercommit()
}

// On a random cluster, each pod the scheduler places goes to a node that
// explain, run with the same configuration on a snapshot that follows the
// cluster, counts among the best. Pods are created one at a time and each
// is explained just before (the same pod object, not yet created), so
// both see the same cluster: the scheduler breaks ties at random, so the
// node is compared with explain's set of best nodes rather than its pick,
// and the next pod starts from where the scheduler really put this one.
// Below 100 nodes the scheduler scores every feasible node, as explain
// does. Pods that fit nowhere are compared by their message.
func TestExplainPlacementsMatchScheduler(t *testing.T) {
	e := newEnv(t)
	mine := map[string]string{testLabel: e.ns}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 42))
	for i := range 8 {
		n := e.node(fmt.Sprintf("n%d", i)).
			Capacity(fmt.Sprint(2+rng.IntN(7)), fmt.Sprintf("%dGi", 4+rng.IntN(28)), 110).
			Label(v1.LabelTopologyZone, fmt.Sprintf("z%d", i%3))
		if rng.IntN(5) == 0 {
			n.Taint("dedicated", "batch", v1.TaintEffectNoSchedule)
		}
		e.addNode(n)
	}
	e.startScheduler()
	s, stop, err := app.SnapshotScheduler(e.ctx, cp.RESTConfig(cp.AdminToken), e.explainConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	for i := range 30 {
		name := fmt.Sprintf("p%02d", i)
		w := e.pod(name).Req(fmt.Sprintf("%dm", 100+rng.IntN(1500)), fmt.Sprintf("%dMi", 128+rng.IntN(3000))).NodeSelector(mine).Label("app", "web")
		switch rng.IntN(4) {
		case 1:
			w.Toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)
		case 2:
			w.PreferredNodeAffinity(int32(1+rng.IntN(100)), v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{fmt.Sprintf("z%d", rng.IntN(3))}},
			}})
		}
		x, err := s.Explain(e.ctx, w.Obj())
		if err != nil {
			t.Fatal(err)
		}
		e.createPod(w)
		if x.Selected == "" {
			msg := e.waitUnschedulableCondition(name)
			if !strings.HasPrefix(msg, strings.SplitN(x.Message, " preemption:", 2)[0]) {
				t.Errorf("%s: the scheduler says %q, explain %q", name, msg, x.Message)
			}
			continue
		}
		node := e.waitBound(30*time.Second, name)[name]
		if !slices.Contains(x.Best, node) {
			t.Errorf("%s: bound to %s, explain's best are %v (summary: %s)", name, node, x.Best, x.Summary)
		}
		// The snapshot sees the binding before the next pod is explained:
		// in its informer, and in its cache, which the informer's
		// handlers fill after the informer's store shows the pod bound.
		p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := s.ExplainPod(ctx, e.ns, name)
			return err == nil && got.BoundTo == node && s.Cache.HasPod(p.UID), nil
		}); err != nil {
			t.Fatalf("the snapshot never saw %s bound to %s: %v", name, node, err)
		}
	}
}

// With Explain's simulatorAnnotations, each attempt's results are written
// on the pod in kube-scheduler-simulator's format: a pending pod's filter
// results, a placed pod's scores and selected node.
func TestSimulatorAnnotationsWritten(t *testing.T) {
	e := newEnv(t)
	mine := map[string]string{testLabel: e.ns}
	e.addNode(e.node("a").Capacity("2", "8Gi", 110))
	e.addNode(e.node("b").Capacity("4", "8Gi", 110))
	path := filepath.Join(t.TempDir(), "config.yaml")
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: %s
  pluginConfig:
  - name: Explain
    args: {simulatorAnnotations: true}
`, e.scheduler)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.startScheduler(func(o *app.Options) { o.ConfigFile = path })
	e.createPod(e.pod("fits").Req("1", "1Gi").NodeSelector(mine))
	e.createPod(e.pod("too-big").Req("5", "1Gi").NodeSelector(mine))
	node := e.waitBound(30*time.Second, "fits")["fits"]

	annotations := func(name string) map[string]string {
		var got map[string]string
		if err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := e.client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			got = p.Annotations
			return got[scheduler.AnnotationFilterResult] != "", nil
		}); err != nil {
			t.Fatalf("%s: no filter-result annotation: %v", name, err)
		}
		return got
	}
	placed := annotations("fits")
	if placed[scheduler.AnnotationSelectedNode] != node {
		t.Errorf("selected-node %q, bound to %s", placed[scheduler.AnnotationSelectedNode], node)
	}
	var final map[string]map[string]string
	if err := json.Unmarshal([]byte(placed[scheduler.AnnotationFinalScoreResult]), &final); err != nil || final[node]["TaintToleration"] != "300" {
		t.Errorf("finalscore-result %q: %v", placed[scheduler.AnnotationFinalScoreResult], err)
	}
	pending := annotations("too-big")
	var filter map[string]map[string]string
	if err := json.Unmarshal([]byte(pending[scheduler.AnnotationFilterResult]), &filter); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if got := filter[e.ns+"-"+n]["NodeResourcesFit"]; got != "Insufficient cpu" {
			t.Errorf("filter-result for %s: %v", n, filter[e.ns+"-"+n])
		}
	}
	if _, ok := pending[scheduler.AnnotationSelectedNode]; ok {
		t.Errorf("a pending pod has a selected node: %v", pending)
	}
}
