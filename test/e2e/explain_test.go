package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/internal/testca"
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
	for _, reason := range []string{"Insufficient cpu", "untolerated taint {gpu: true}", "node(s) were unschedulable"} {
		if !strings.Contains(condition, reason) || !strings.Contains(snap.Message, reason) {
			t.Errorf("%q: the scheduler says %q, explain %q", reason, condition, snap.Message)
		}
	}
	if !strings.Contains(snap.Summary, "The closest is "+e.ns+"-small: freeing 1 cpu") {
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
	for _, v := range want {
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
