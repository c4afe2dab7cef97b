package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// placementScenario is nodes, a profile and pods, played under each
// scheduler: where each pod goes, or why it waits.
type placementScenario struct {
	name string
	// profile is YAML appended to the profile of both schedulers,
	// indented by four spaces.
	profile string
	// nodes makes the cluster: the nodes, and whatever else the pods
	// refer to (claims, classes, other namespaces and their pods).
	nodes func(e *env)
	pods  func(e *env) []*frameworktest.PodWrapper
}

func (sc placementScenario) play(t *testing.T, kube bool) map[string]string {
	e := newEnv(t)
	sc.nodes(e)
	if kube {
		e.startKubeScheduler(sc.profile)
	} else {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		data := fmt.Sprintf("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: %s\n%s", e.scheduler, sc.profile)
		if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		e.startScheduler(func(o *app.Options) { o.ConfigFile = cfg })
	}
	out := map[string]string{}
	for _, p := range sc.pods(e) {
		name := e.createPod(p).Name
		node, why := e.settle(name)
		out[name] = node
		if node == "" {
			out[name] = "pending: " + why
			e.expectPending(name, time.Second)
		}
	}
	return out
}

// yardmaster and kube-scheduler v1.37 agree on the filters of the default
// profile that kube-scheduler's feature gates add or change:
// NodeDeclaredFeatures (beta, on), and NodeAffinityArgs.addedAffinity.
func TestPlacementMatchesKubeScheduler(t *testing.T) {
	restartAll := func(p *frameworktest.PodWrapper) *frameworktest.PodWrapper {
		never := v1.ContainerRestartPolicyNever
		p.Spec.Containers[0].RestartPolicy = &never
		p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{
			Action:    v1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
		}}
		return p
	}
	scenarios := []placementScenario{{
		name: "NodeDeclaredFeatures",
		nodes: func(e *env) {
			declares := e.node("declares").Capacity("1", "16Gi", 110)
			declares.Status.DeclaredFeatures = []string{"RestartAllContainersOnContainerExits"}
			e.addNode(declares)
			e.addNode(e.node("plain").Capacity("8", "16Gi", 110))
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			return []*frameworktest.PodWrapper{
				// The plain node has more room, but lacks the feature.
				restartAll(e.pod("needs-feature").Req("100m", "64Mi")),
				restartAll(e.pod("too-big-for-it").Req("2", "64Mi")),
				e.pod("plain-pod").Req("2", "64Mi"),
			}
		},
	}, {
		name: "addedAffinity",
		profile: `  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: pool, operator: In, values: [batch]}
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          preference:
            matchExpressions:
            - {key: disk, operator: In, values: [ssd]}
`,
		nodes: func(e *env) {
			e.addNode(e.node("batch-hdd").Label("pool", "batch").Label("disk", "hdd").Capacity("8", "16Gi", 110))
			e.addNode(e.node("batch-ssd").Label("pool", "batch").Label("disk", "ssd").Capacity("8", "16Gi", 110))
			e.addNode(e.node("web").Label("pool", "web").Capacity("8", "16Gi", 110))
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			return []*frameworktest.PodWrapper{
				e.pod("prefers-ssd").Req("100m", "64Mi"),
				e.pod("wants-web").Req("100m", "64Mi").NodeSelector(map[string]string{"pool": "web"}),
			}
		},
	}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sideBySide(t, sc.play) })
	}
}

// sideBySide plays a scenario under kube-scheduler, then under yardmaster,
// each on fresh objects, and requires the same outcome.
func sideBySide[O any](t *testing.T, play func(t *testing.T, kube bool) O) {
	t.Helper()
	var want, got O
	t.Run("kube-scheduler", func(t *testing.T) { want = play(t, true) })
	t.Run("yardmaster", func(t *testing.T) { got = play(t, false) })
	if t.Failed() {
		return
	}
	t.Logf("kube-scheduler: %+v", want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("yardmaster differs from kube-scheduler (-kube-scheduler +yardmaster):\n%s", diff)
	}
}
