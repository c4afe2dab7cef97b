package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/internal/testca"
)

// A gang of three 1-cpu pods on a node of 2 cpus: the running scheduler
// leaves it Pending; explain of the group and of a member, from a
// snapshot, from the running scheduler's /debug/explain and as kubectl
// yardmaster (exit code 2, -o json valid against the schema), give the
// scheduler's reason, word for word, and the counts: 2 of 3 fit, on that
// node. simulate --capacity of a gang of two 1-cpu pods fits one copy
// (the pending gang holds nothing). A second node: the scheduler places
// the gang, and explain has nothing left to place (exit code 0).
func TestExplainPodGroup(t *testing.T) {
	e := newEnv(t)
	node := e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, cp.AdminToken); err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configFile, fmt.Appendf(nil, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: %s\n", e.scheduler), 0o600); err != nil {
		t.Fatal(err)
	}
	d := e.startScheduler(func(o *app.Options) {
		o.Secure = app.NewSecureServing()
		o.Secure.Serving.BindAddress = net.IPv4(127, 0, 0, 1)
		o.Secure.Serving.BindPort = 0
		o.Secure.Authentication.RemoteKubeConfigFile = kubeconfig
		o.Secure.Authorization.RemoteKubeConfigFile = kubeconfig
	})
	e.createGang("mpi", 3)
	names := e.createMembers("mpi", 3, "1")
	c := e.waitGroupCondition("mpi", metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonUnschedulable)

	check := func(how string, g *explain.PodGroupExplanation) {
		t.Helper()
		if g.Placed || g.Fit != 2 || g.Pending != 3 || g.Members != 3 || g.Scheduled != 0 || g.MinCount != 3 || !g.Gang || g.PodGroup != e.ns+"/mpi" {
			t.Errorf("%s: placed %v, fit %d, pending %d, members %d, scheduled %d, minCount %d, gang %v, group %s; want 2 of 3 pending fit, minCount 3",
				how, g.Placed, g.Fit, g.Pending, g.Members, g.Scheduled, g.MinCount, g.Gang, g.PodGroup)
		}
		if g.Message != c.Message {
			t.Errorf("%s: message %q, the PodGroup's condition %q", how, g.Message, c.Message)
		}
		if g.Blocker == nil || !strings.Contains(g.Blocker.Message, "Insufficient cpu") {
			t.Errorf("%s: what stops the third: %+v", how, g.Blocker)
		}
		want := fmt.Sprintf("Would stay Pending: 3 pending pods need 1 cpu and 100Mi memory each; the cluster has room for 2 of them (%s: 2): minCount (3) cannot be satisfied", node.Name)
		if !strings.Contains(g.Summary, want) {
			t.Errorf("%s: summary lacks %q:\n%s", how, want, g.Summary)
		}
	}
	snap, err := app.ExplainPodGroupSnapshot(e.ctx, cp.RESTConfig(cp.AdminToken), e.explainConfig(), e.ns, "mpi", "")
	if err != nil {
		t.Fatal(err)
	}
	check("snapshot", snap)

	path := "/debug/explain?" + url.Values{"namespace": {e.ns}, "podgroup": {"mpi"}}.Encode()
	code, body := testca.HTTPSGet(t, d.SecureAddr(), path, cp.AdminToken, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	var live explain.PodGroupExplanation
	if err := json.Unmarshal([]byte(body), &live); err != nil {
		t.Fatal(err)
	}
	check("live", &live)
	if live.Source != explain.SourceLive || live.Kind != explain.KindPodGroupExplanation {
		t.Errorf("live: source %q, kind %q", live.Source, live.Kind)
	}

	member, err := app.ExplainSnapshot(e.ctx, cp.RESTConfig(cp.AdminToken), e.explainConfig(), e.ns, names[0])
	if err != nil {
		t.Fatal(err)
	}
	if member.PodGroup == nil || member.Placed() {
		t.Fatalf("member: placed %v, group %+v", member.Placed(), member.PodGroup)
	}
	check("member", member.PodGroup)

	plugin := kubectlPlugin(t)
	run := func(args ...string) pluginResult {
		return plugin(append(args, "-n", e.ns, "--kubeconfig", kubeconfig, "--config", configFile)...)
	}
	for _, args := range [][]string{{"explain", "podgroup/mpi"}, {"explain", "pg", "mpi"}, {"explain", names[0]}} {
		if got := run(args...); got.code != app.ExitPending || !strings.Contains(got.stdout, "Would stay Pending") {
			t.Errorf("%v: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", args, got.code, app.ExitPending, got.stdout, got.stderr)
		}
	}
	got := run("explain", "podgroups/mpi", "-o", "json")
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(got.stdout))
	if err != nil {
		t.Fatalf("-o json: %v\n%s\n%s", err, got.stdout, got.stderr)
	}
	if err := compileOutputSchema(t).Validate(doc); err != nil {
		t.Errorf("-o json does not validate: %v\n%s", err, got.stdout)
	}
	if got := run("explain", "pg/nothere"); got.code != app.ExitError || !strings.Contains(got.stderr, "no such PodGroup") {
		t.Errorf("a PodGroup that is not there: exit code %d, stderr %s", got.code, got.stderr)
	}

	// Room for one more gang of two 1-cpu pods: the pending gang holds
	// nothing.
	pair := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "pair"}, Spec: schedulingv1beta1.PodGroupSpec{
		SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}}}}
	pods := []*v1.Pod{e.pod("pair-0").Req("1", "100Mi").Obj(), e.pod("pair-1").Req("1", "100Mi").Obj()}
	n, limit, err := app.SimulatePodGroupCapacity(e.ctx, cp.RESTConfig(cp.AdminToken), e.explainConfig(), pair, pods)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || limit == nil || limit.Message != "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, pod group preemption: No preemption victims found for incoming preemptor" {
		t.Errorf("capacity %d, the next copy: %+v", n, limit)
	}

	e.addNode(e.node("b").Capacity("2", "4Gi", 110))
	e.waitBound(30*time.Second, names...)
	e.waitGroupCondition("mpi", metav1.ConditionTrue, "Scheduled")
	after, err := app.ExplainPodGroupSnapshot(e.ctx, cp.RESTConfig(cp.AdminToken), e.explainConfig(), e.ns, "mpi", "")
	if err != nil {
		t.Fatal(err)
	}
	if after.Pending != 0 || after.Scheduled != 3 || !strings.HasPrefix(after.Summary, "Nothing to place") {
		t.Errorf("after: pending %d, scheduled %d, summary %q", after.Pending, after.Scheduled, after.Summary)
	}
	if got := run("explain", "podgroup/mpi"); got.code != app.ExitPlaced {
		t.Errorf("placed: exit code %d\n%s\n%s", got.code, got.stdout, got.stderr)
	}
}
