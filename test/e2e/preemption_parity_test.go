package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// startKubeScheduler runs the upstream kube-scheduler (bin/kube-scheduler,
// built by the Makefile from the same k8s.io/kubernetes module as the API
// server) with one profile named after this test's scheduler, stopped
// when the test ends. profile, when given, is YAML appended to the
// profile's entry (its pluginConfig, say), indented by four spaces.
func (e *env) startKubeScheduler(profile ...string) {
	e.t.Helper()
	e.startKubeSchedulerWith("", profile...)
}

// startKubeSchedulerWith is startKubeScheduler with top, YAML of the
// configuration's top level (its extenders, say), added to the file.
func (e *env) startKubeSchedulerWith(top string, profile ...string) {
	e.t.Helper()
	e.startKubeSchedulerFlags(nil, top, profile...)
}

// Feature gates of kube-scheduler v1.37.2 for startKubeSchedulerFlags.
// With GenericWorkload its default profile appends GangScheduling to
// multiPoint and it watches PodGroups; TopologyAwareWorkloadScheduling
// (which needs GenericWorkload) appends TopologyPlacementGenerator and
// PodGroupPodsCount too. The API server must serve PodGroups (the shared
// control plane does: main_test.go).
var (
	kubeSchedulerGangFlags         = []string{"--feature-gates=GenericWorkload=true"}
	kubeSchedulerTopologyGangFlags = []string{"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"}
)

// startKubeSchedulerFlags is startKubeSchedulerWith with flags, such as
// kubeSchedulerGangFlags, added to kube-scheduler's command line. It runs
// as the admin user, so its RBAC does not limit what it reads.
func (e *env) startKubeSchedulerFlags(flags []string, top string, profile ...string) {
	e.t.Helper()
	bin, err := controlplane.BinaryPath("kube-scheduler")
	if err != nil {
		e.t.Fatalf("kube-scheduler: %v (make control-plane builds it)", err)
	}
	dir := e.t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	data := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
%sprofiles:
- schedulerName: %s
%s`, e.plane.AdminKubeconfig, top, e.scheduler, strings.Join(profile, ""))
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		e.t.Fatal(err)
	}
	port, err := procgroup.FreePort()
	if err != nil {
		e.t.Fatal(err)
	}
	args := append([]string{"--config", cfg, "--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port)}, flags...)
	p, err := procgroup.Start("kube-scheduler", bin, args, filepath.Join(dir, "kube-scheduler.log"))
	if err != nil {
		e.t.Fatalf("start kube-scheduler: %v", err)
	}
	e.t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			e.t.Errorf("stop kube-scheduler: %v", err)
		}
	})
}

// preemptionCase is a cluster of lower-priority pods and a pod of high
// priority that fits only once some are gone.
type preemptionCase struct {
	name  string
	nodes []string // each 1 cpu
	// low are the pods placed first: name → node index, cpu, labels.
	low  []lowSpec
	pdb  map[string]string // a budget's selector (it allows no disruption)
	high func(e *env) *frameworktest.PodWrapper
}

type lowSpec struct {
	name     string
	node     int
	cpu      string
	priority string // PriorityClass suffix: "low" (10) or "mid" (500)
	labels   map[string]string
}

// outcome is what a scheduler did: where the high pod went, which pods
// it evicted, and the FailedScheduling message it wrote for the high pod
// before its preemption (node names without the namespace prefix).
type outcome struct {
	node    string
	evicted []string
	message string
}

// runPreemptionCase plays c with the given scheduler and returns what
// happened. Low pods are pinned (spec.nodeName) so both schedulers start
// from the same placement.
func runPreemptionCase(t *testing.T, c preemptionCase, kube bool) outcome {
	e := newEnv(t)
	for _, n := range c.nodes {
		e.addNode(e.node(n).Capacity("1", "2Gi", 110).Label(v1.LabelHostname, e.ns+"-"+n))
	}
	e.priorityClass("low", 10)
	e.priorityClass("mid", 500)
	e.priorityClass("high", 1000)
	if c.pdb != nil {
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "budget"},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptrIntOrString(1),
				Selector:     &metav1.LabelSelector{MatchLabels: c.pdb},
			},
		}
		if _, err := e.client.PolicyV1().PodDisruptionBudgets(e.ns).Create(e.ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range c.low {
		w := e.pod(l.name).PriorityClassName(e.ns+"-"+l.priority).Req(l.cpu, "")
		for k, v := range l.labels {
			w.Label(k, v)
		}
		w.Spec.NodeName = e.ns + "-" + c.nodes[l.node]
		w.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
		e.createPod(w)
	}
	if kube {
		e.startKubeScheduler()
	} else {
		e.startScheduler()
	}
	e.createPod(c.high(e).PriorityClassName(e.ns + "-high"))
	node := e.waitBound(60*time.Second, "high")["high"]
	var out outcome
	out.node = node[len(e.ns)+1:]
	out.message = strings.ReplaceAll(e.waitFailedScheduling("high", "preemption: "), e.ns+"-", "")
	for _, l := range c.low {
		_, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, l.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out.evicted = append(out.evicted, l.name)
		case err != nil:
			t.Fatal(err)
		}
	}
	slices.Sort(out.evicted)
	return out
}

// yardmaster and kube-scheduler v1.37, given the same cluster, evict the
// same pods, place the preemptor on the same node, and tell it so in the
// same words ("... preemption: found a potential placement for pod on
// node a, preempting 1 victims").
func TestPreemptionMatchesKubeScheduler(t *testing.T) {
	highPod := func(cpu string) func(e *env) *frameworktest.PodWrapper {
		return func(e *env) *frameworktest.PodWrapper { return e.pod("high").Req(cpu, "") }
	}
	cases := []preemptionCase{{
		name:  "only the pods that must go",
		nodes: []string{"a"},
		low:   []lowSpec{{"small", 0, "200m", "low", nil}, {"big", 0, "700m", "low", nil}},
		high:  highPod("500m"),
	}, {
		name:  "the lowest priority victims",
		nodes: []string{"a", "b"},
		low:   []lowSpec{{"mid", 0, "800m", "mid", nil}, {"low", 1, "800m", "low", nil}},
		high:  highPod("500m"),
	}, {
		name:  "fewest victims",
		nodes: []string{"a", "b"},
		low:   []lowSpec{{"a1", 0, "400m", "low", nil}, {"a2", 0, "400m", "low", nil}, {"b1", 1, "800m", "low", nil}},
		high:  highPod("800m"),
	}, {
		name:  "a pod no budget protects",
		nodes: []string{"a", "b"},
		low: []lowSpec{
			{"protected", 0, "800m", "low", map[string]string{"budget": "yes"}},
			{"free", 1, "600m", "low", nil}, {"free2", 1, "300m", "low", nil},
		},
		pdb:  map[string]string{"budget": "yes"},
		high: highPod("800m"),
	}, {
		name:  "the target of the pod's anti-affinity",
		nodes: []string{"a"},
		low:   []lowSpec{{"target", 0, "100m", "low", map[string]string{"role": "db"}}, {"bystander", 0, "100m", "low", nil}},
		high: func(e *env) *frameworktest.PodWrapper {
			return e.pod("high").Req("100m", "").
				RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("role", "db").Obj())
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got, want outcome
			t.Run("kube-scheduler", func(t *testing.T) { want = runPreemptionCase(t, c, true) })
			t.Run("yardmaster", func(t *testing.T) { got = runPreemptionCase(t, c, false) })
			if t.Failed() {
				return
			}
			if got.node != want.node || !slices.Equal(got.evicted, want.evicted) {
				t.Errorf("yardmaster put high on %s evicting %v; kube-scheduler on %s evicting %v",
					got.node, got.evicted, want.node, want.evicted)
			}
			if got.message != want.message {
				t.Errorf("yardmaster told high %q; kube-scheduler %q", got.message, want.message)
			}
			if len(want.evicted) == 0 {
				t.Errorf("kube-scheduler evicted nothing: the case does not test preemption")
			}
		})
	}
}
