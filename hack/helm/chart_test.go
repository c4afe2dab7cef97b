package helm_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/yardmaster-io/yardmaster/deploy"
	"github.com/yardmaster-io/yardmaster/hack/helm"
)

// The install the README gives: helm install yardmaster
// deploy/helm/yardmaster -n kube-system.
const (
	releaseName = "yardmaster"
	namespace   = "kube-system"
	configKey   = deploy.ConfigKey
)

// template renders the chart with values (nil: the defaults) as the README
// installs it, and decodes every object strictly with client-go's scheme
// (deploy.Decode), or fails the test.
func template(t *testing.T, values map[string]any) []runtime.Object {
	t.Helper()
	return templateAs(t, releaseName, namespace, values)
}

func templateAs(t *testing.T, release, ns string, values map[string]any) []runtime.Object {
	t.Helper()
	manifest, _, err := helm.Template(context.Background(), helm.Chart, release, ns, values)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Decode([]byte(manifest))
	if err != nil {
		t.Fatalf("chart's objects: %v\n%s", err, manifest)
	}
	return objs
}

// values parses a values file.
func values(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("values %q: %v", s, err)
	}
	return v
}

// kustomize renders a kustomization of deploy/ or fails the test.
func kustomize(t *testing.T, dir string) []runtime.Object {
	t.Helper()
	objs, err := deploy.Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// byKey keys each object by its Go type, namespace and name, and holds it
// as YAML: two renders compare as sets, whatever order each emits (Helm
// sorts by kind, kustomize by its own order).
func byKey(t *testing.T, objs []runtime.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		m, err := meta.Accessor(o)
		if err != nil {
			t.Fatalf("%T: %v", o, err)
		}
		kind := reflect.TypeOf(o).String()
		if u, ok := o.(*unstructured.Unstructured); ok {
			kind = u.GetAPIVersion() + " " + u.GetKind()
		}
		key := kind + " " + m.GetNamespace() + "/" + m.GetName()
		if _, dup := out[key]; dup {
			t.Errorf("two objects %s", key)
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out[key] = string(b)
	}
	return out
}

// With the default values the chart makes the kustomize base: the same
// objects, names (the ConfigMap's hash included), namespaces, labels and
// fields. Helm adds its ownership label and annotations
// (app.kubernetes.io/managed-by, meta.helm.sh/release-*) when it applies
// them, not in the templates.
func TestDefaultValuesMakeTheKustomizeBase(t *testing.T) {
	want := byKey(t, kustomize(t, deploy.Base))
	got := byKey(t, template(t, nil))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chart with default values differs from deploy/base (-kustomize +helm):\n%s", diff)
	}
}

// The chart's default configuration is a copy of the base's (a chart
// cannot read a file outside its directory): an edit of one is made in
// both.
func TestConfigFileIsTheBases(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("../../deploy", deploy.Base, configKey))
	if err != nil {
		t.Fatal(err)
	}
	chart, err := os.ReadFile(filepath.Join(helm.Chart, "files", configKey))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(base), string(chart)); diff != "" {
		t.Errorf("deploy/helm/yardmaster/files/config.yaml differs from deploy/base/config.yaml (-base +chart); copy it:\n%s", diff)
	}
}

// dashboard.enabled makes deploy/overlays/grafana-dashboard: the base plus
// the dashboard's ConfigMap, as deploy/grafana makes it.
func TestDashboardMakesTheOverlay(t *testing.T) {
	want := byKey(t, kustomize(t, deploy.DashboardOverlay))
	got := byKey(t, template(t, values(t, `dashboard: {enabled: true}`)))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chart with dashboard.enabled differs from %s (-kustomize +helm):\n%s", deploy.DashboardOverlay, diff)
	}
}

// The chart's dashboard is a copy of deploy/grafana's, the one source (a
// chart cannot read a file outside its directory; kustomize reads it
// where it is).
func TestDashboardFileIsDeploys(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("../../deploy", deploy.Dashboard, deploy.DashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	chart, err := os.ReadFile(filepath.Join(helm.Chart, "files", deploy.DashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(src) != string(chart) {
		t.Errorf("deploy/helm/yardmaster/files/%[1]s differs from deploy/grafana/%[1]s, its source; copy it:\n  cp deploy/grafana/%[1]s deploy/helm/yardmaster/files/", deploy.DashboardFile)
	}
}

// checkDashboardData checks that d holds the dashboard file as it is.
func checkDashboardData(t *testing.T, d *v1.ConfigMap) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(helm.Chart, "files", deploy.DashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Data) != 1 || d.Data[deploy.DashboardFile] != string(want) {
		t.Errorf("dashboard ConfigMap keys %v; want %s alone, the chart's file as it is", slices.Collect(maps.Keys(d.Data)), deploy.DashboardFile)
	}
}

// A plugin name the image does not have renders (the chart cannot know an
// image's plugins) and is refused by yardmaster itself, as at start, with
// the name, the closest one it has and the list.
func TestUnknownPluginRefusedByYardmaster(t *testing.T) {
	vals := values(t, `plugins: {enabled: [NetworkTrafic], disabled: [ImageLocality]}`)
	r := inspect(t, template(t, vals))
	_, stderr, err := runValidate(t, r.config)
	if err == nil {
		t.Fatalf("yardmaster config validate accepted an unknown plugin:\n%s", r.config)
	}
	for _, want := range []string{`unknown plugin "NetworkTrafic"`, `did you mean "NetworkTraffic"`} {
		if !strings.Contains(string(stderr), want) {
			t.Errorf("yardmaster config validate said %q, want it to say %s", stderr, want)
		}
	}
}

// serviceMonitor.enabled makes deploy/overlays/servicemonitor: the base
// plus the ServiceMonitor and the metrics reader for kube-prometheus's
// Prometheus.
func TestServiceMonitorMakesTheOverlay(t *testing.T) {
	want := byKey(t, kustomize(t, deploy.ServiceMonitorOverlay))
	got := byKey(t, template(t, values(t, `serviceMonitor: {enabled: true}`)))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chart with serviceMonitor.enabled differs from %s (-kustomize +helm):\n%s", deploy.ServiceMonitorOverlay, diff)
	}
}

// NOTES.txt renders, and names the profiles the pods must ask for.
func TestNotes(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         []string
	}{
		{"default", ``, []string{"  - yardmaster\n", "rollout status deployment/yardmaster"}},
		{"profiles", `config: {profiles: [{schedulerName: batch}, {schedulerName: web}]}`, []string{"  - batch\n", "  - web\n"}},
		{"serviceMonitor", `serviceMonitor: {enabled: true}`, []string{"ServiceMonitor kube-system/yardmaster", "monitoring/prometheus-k8s"}},
		{"dashboard", `dashboard: {enabled: true, namespace: monitoring}`, []string{"ConfigMap monitoring/yardmaster-dashboard", `grafana_dashboard: "1"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, notes, err := helm.Template(context.Background(), helm.Chart, releaseName, namespace, values(t, tc.values))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(notes, w) {
					t.Errorf("NOTES.txt has no %q:\n%s", w, notes)
				}
			}
		})
	}
}

// A case of TestValues: values, as a values file, and what they change.
type valuesCase struct {
	name    string
	release string // "": releaseName in namespace
	ns      string
	values  string
	check   func(t *testing.T, r *rendered)
}

// Values other than the defaults render objects that decode strictly, hang
// together (checkCoherent) and lint clean, and change what they say.
func TestValues(t *testing.T) {
	for _, tc := range []valuesCase{{
		name:  "defaults",
		check: func(*testing.T, *rendered) {},
	}, {
		name:   "replicas",
		values: `replicas: 3`,
		check: func(t *testing.T, r *rendered) {
			if got := *r.deployment.Spec.Replicas; got != 3 {
				t.Errorf("replicas = %d, want 3", got)
			}
			if got := r.pdb.Spec.MinAvailable.IntValue(); got != 1 {
				t.Errorf("PodDisruptionBudget minAvailable = %d, want 1", got)
			}
		},
	}, {
		name:   "one replica without a disruption budget",
		values: `{replicas: 1, podDisruptionBudget: {enabled: false}}`,
		check: func(t *testing.T, r *rendered) {
			if r.pdb != nil {
				t.Errorf("PodDisruptionBudget %s with podDisruptionBudget.enabled false", r.pdb.Name)
			}
		},
	}, {
		name:   "disruption budget by maxUnavailable",
		values: `{replicas: 1, podDisruptionBudget: {maxUnavailable: 1}}`,
		check: func(t *testing.T, r *rendered) {
			if r.pdb.Spec.MinAvailable != nil || r.pdb.Spec.MaxUnavailable == nil || r.pdb.Spec.MaxUnavailable.IntValue() != 1 {
				t.Errorf("PodDisruptionBudget minAvailable %v, maxUnavailable %v; want maxUnavailable 1 alone", r.pdb.Spec.MinAvailable, r.pdb.Spec.MaxUnavailable)
			}
		},
	}, {
		name:   "ServiceMonitor off, a metrics reader of one's own",
		values: `{serviceMonitor: {enabled: false}, secureServing: {metricsReaders: [{kind: ServiceAccount, name: vmagent, namespace: monitoring}]}}`,
		check: func(t *testing.T, r *rendered) {
			if len(r.monitors) != 0 {
				t.Errorf("%d ServiceMonitors with serviceMonitor.enabled false", len(r.monitors))
			}
			want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "vmagent", Namespace: "monitoring"}}
			if r.metricsReader == nil {
				t.Fatal("no metrics reader ClusterRoleBinding")
			}
			if diff := cmp.Diff(want, r.metricsReader.Subjects); diff != "" {
				t.Errorf("metrics reader subjects (-want +got):\n%s", diff)
			}
		},
	}, {
		name:   "ServiceMonitor for kube-prometheus-stack",
		values: `serviceMonitor: {enabled: true, labels: {release: prom}, interval: 15s, prometheusServiceAccount: {name: prom-prometheus, namespace: prom}}`,
		check: func(t *testing.T, r *rendered) {
			if len(r.monitors) != 1 {
				t.Fatalf("%d ServiceMonitors, want 1", len(r.monitors))
			}
			sm := r.monitors[0]
			if sm.GetLabels()["release"] != "prom" {
				t.Errorf("ServiceMonitor labels %v, want release: prom", sm.GetLabels())
			}
			eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			if len(eps) != 1 || eps[0].(map[string]any)["interval"] != "15s" {
				t.Errorf("ServiceMonitor endpoints %v, want one with interval 15s", eps)
			}
			want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prom-prometheus", Namespace: "prom"}}
			if r.metricsReader == nil {
				t.Fatal("no metrics reader ClusterRoleBinding")
			}
			if diff := cmp.Diff(want, r.metricsReader.Subjects); diff != "" {
				t.Errorf("metrics reader subjects (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "profiles",
		values: `
config:
  profiles:
  - schedulerName: yardmaster
    plugins:
      multiPoint:
        enabled: [{name: NetworkTraffic, weight: 2}]
    pluginConfig:
    - name: NetworkTraffic
      args: {prometheusAddress: "http://prometheus-k8s.monitoring.svc:9090", maxBandwidth: 1250000000}
  - schedulerName: yardmaster-binpack
    plugins:
      score:
        disabled: [{name: NodeResourcesBalancedAllocation}]
    pluginConfig:
    - name: NodeResourcesFit
      args:
        scoringStrategy:
          type: MostAllocated
`,
		check: func(t *testing.T, r *rendered) {
			var c struct {
				Profiles []struct {
					SchedulerName string `json:"schedulerName"`
				} `json:"profiles"`
				LeaderElection map[string]any `json:"leaderElection"`
			}
			if err := yaml.Unmarshal([]byte(r.config), &c); err != nil {
				t.Fatal(err)
			}
			if len(c.Profiles) != 2 || c.Profiles[1].SchedulerName != "yardmaster-binpack" {
				t.Errorf("profiles %+v, want yardmaster and yardmaster-binpack", c.Profiles)
			}
			// A large number stays an integer (values are JSON numbers to
			// Helm), or yardmaster would refuse the file.
			if !strings.Contains(r.config, "maxBandwidth: 1250000000\n") {
				t.Errorf("maxBandwidth not written as an integer:\n%s", r.config)
			}
			// The rest of the file stays.
			if c.LeaderElection["resourceName"] != "yardmaster" {
				t.Errorf("leaderElection %v, want the file's", c.LeaderElection)
			}
			if r.configMap.Name == baseConfigMapName(t) {
				t.Errorf("ConfigMap %s: the name did not change with the content, the pods would not roll", r.configMap.Name)
			}
		},
	}, {
		name:   "override",
		values: `config: {override: {clientConnection: {qps: 200, burst: 400}, percentageOfNodesToScore: 50}}`,
		check: func(t *testing.T, r *rendered) {
			var c struct {
				ClientConnection         map[string]any `json:"clientConnection"`
				PercentageOfNodesToScore int            `json:"percentageOfNodesToScore"`
				EnableProfiling          *bool          `json:"enableProfiling"`
			}
			if err := yaml.Unmarshal([]byte(r.config), &c); err != nil {
				t.Fatal(err)
			}
			if c.ClientConnection["qps"] != float64(200) || c.ClientConnection["burst"] != float64(400) || c.PercentageOfNodesToScore != 50 {
				t.Errorf("clientConnection %v, percentageOfNodesToScore %d; want qps 200, burst 400, 50", c.ClientConnection, c.PercentageOfNodesToScore)
			}
			if c.EnableProfiling == nil || *c.EnableProfiling {
				t.Errorf("enableProfiling %v, want the file's false", c.EnableProfiling)
			}
		},
	}, {
		name: "whole file with its own Lease",
		values: `
config:
  file: |
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    leaderElection:
      resourceNamespace: scheduling
      resourceName: ym
    profiles:
    - schedulerName: batch
`,
		check: func(t *testing.T, r *rendered) {
			if !strings.HasPrefix(r.config, "apiVersion: kubescheduler.config.k8s.io/v1\n") || !strings.Contains(r.config, "- schedulerName: batch\n") {
				t.Errorf("config is not config.file verbatim:\n%s", r.config)
			}
			if r.leaderElection == nil || r.leaderElection.Namespace != "scheduling" {
				t.Fatalf("leader election Role %v, want it in scheduling, the Lease's namespace", r.leaderElection)
			}
		},
	}, {
		name:   "Lease named after the profile",
		values: `config: {file: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: batch\n"}`,
		check: func(t *testing.T, r *rendered) {
			if r.leaderElection == nil || r.leaderElection.Namespace != "kube-system" {
				t.Fatalf("leader election Role %v, want it in kube-system, yardmaster's default", r.leaderElection)
			}
		},
	}, {
		name:   "secure port and certificate",
		values: `secureServing: {port: 8443, tlsSecretName: yardmaster-tls}`,
		check: func(t *testing.T, r *rendered) {
			c := r.deployment.Spec.Template.Spec.Containers[0]
			wantArgs := []string{"run", "--config", "/etc/yardmaster/config.yaml", "--log-format", "json",
				"--secure-port", "8443", "--tls-cert-file", "/etc/yardmaster-tls/tls.crt", "--tls-private-key-file", "/etc/yardmaster-tls/tls.key"}
			if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if c.Ports[0].ContainerPort != 8443 || r.service.Spec.Ports[0].Port != 8443 {
				t.Errorf("container port %d, Service port %d, want 8443", c.Ports[0].ContainerPort, r.service.Spec.Ports[0].Port)
			}
			var secret string
			for _, v := range r.deployment.Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					secret = v.Secret.SecretName
				}
			}
			if secret != "yardmaster-tls" || !slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool { return m.MountPath == "/etc/yardmaster-tls" && m.ReadOnly }) {
				t.Errorf("Secret %q mounted %v, want yardmaster-tls at /etc/yardmaster-tls", secret, c.VolumeMounts)
			}
		},
	}, {
		name:   "image and resources",
		values: `{image: {repository: registry.example.com/yardmaster, tag: v0.2.0, pullPolicy: Always}, imagePullSecrets: [{name: regcred}], resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: null, memory: 4Gi}}, extraArgs: [--v, "4"]}`,
		check: func(t *testing.T, r *rendered) {
			spec := r.deployment.Spec.Template.Spec
			c := spec.Containers[0]
			if c.Image != "registry.example.com/yardmaster:v0.2.0" || c.ImagePullPolicy != v1.PullAlways {
				t.Errorf("image %s, pull policy %s", c.Image, c.ImagePullPolicy)
			}
			if len(spec.ImagePullSecrets) != 1 || spec.ImagePullSecrets[0].Name != "regcred" {
				t.Errorf("imagePullSecrets %v", spec.ImagePullSecrets)
			}
			if c.Resources.Requests.Cpu().String() != "500m" || c.Resources.Limits.Memory().String() != "4Gi" || !c.Resources.Limits.Cpu().IsZero() {
				t.Errorf("resources %+v, want requests 500m/1Gi and a memory limit of 4Gi alone (null removes the default cpu limit)", c.Resources)
			}
			if !slices.Equal(c.Args[len(c.Args)-2:], []string{"--v", "4"}) {
				t.Errorf("args %v, want --v 4 last", c.Args)
			}
		},
	}, {
		name: "environment and extra volumes",
		values: `
env: [{name: GOGC, value: "200"}]
extraVolumes: [{name: prometheus-ca, configMap: {name: prometheus-ca}}]
extraVolumeMounts: [{name: prometheus-ca, mountPath: /etc/prometheus-ca, readOnly: true}]
`,
		check: func(t *testing.T, r *rendered) {
			spec := r.deployment.Spec.Template.Spec
			c := spec.Containers[0]
			if len(c.Env) != 1 || c.Env[0].Name != "GOGC" || c.Env[0].Value != "200" {
				t.Errorf("env %v, want GOGC=200", c.Env)
			}
			if !slices.ContainsFunc(spec.Volumes, func(v v1.Volume) bool {
				return v.Name == "prometheus-ca" && v.ConfigMap != nil && v.ConfigMap.Name == "prometheus-ca"
			}) || !slices.ContainsFunc(spec.Volumes, func(v v1.Volume) bool { return v.Name == "config" }) {
				t.Errorf("volumes %v, want config and prometheus-ca", spec.Volumes)
			}
			if !slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool {
				return m.Name == "prometheus-ca" && m.MountPath == "/etc/prometheus-ca" && m.ReadOnly
			}) || !slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool { return m.MountPath == "/etc/yardmaster" }) {
				t.Errorf("volume mounts %v, want /etc/yardmaster and /etc/prometheus-ca", c.VolumeMounts)
			}
		},
	}, {
		name: "plugins shorthand",
		values: `
plugins:
  enabled: [{name: NetworkTraffic, weight: 5}]
  disabled: [ImageLocality]
pluginConfig:
- name: NetworkTraffic
  args: {prometheusAddress: "http://prometheus-k8s.monitoring.svc:9090", maxBandwidth: 1250000000}
`,
		check: func(t *testing.T, r *rendered) {
			if len(r.resolved.Profiles) != 1 {
				t.Fatalf("%d profiles, want the file's one", len(r.resolved.Profiles))
			}
			p := r.resolved.Profiles[0]
			if p.SchedulerName != "yardmaster" {
				t.Errorf("schedulerName %q, want the file's yardmaster", p.SchedulerName)
			}
			if w := p.weight("NetworkTraffic"); w != 5 {
				t.Errorf("NetworkTraffic score weight %d, want 5", w)
			}
			if pts := p.points("ImageLocality"); len(pts) != 0 {
				t.Errorf("ImageLocality runs at %v, want nowhere", pts)
			}
			// The other default plugins stay.
			if pts := p.points("NodeResourcesFit"); !slices.Contains(pts, "filter") {
				t.Errorf("NodeResourcesFit runs at %v, want filter among them", pts)
			}
			if got := p.args("NetworkTraffic")["prometheusAddress"]; got != "http://prometheus-k8s.monitoring.svc:9090" {
				t.Errorf("NetworkTraffic prometheusAddress %v", got)
			}
			// A large number stays an integer, or yardmaster would refuse
			// the file.
			if !strings.Contains(r.config, "maxBandwidth: 1250000000\n") {
				t.Errorf("maxBandwidth not written as an integer:\n%s", r.config)
			}
			if r.resolved.LeaderElection.ResourceName != "yardmaster" {
				t.Errorf("Lease %s, want the file's yardmaster", r.resolved.LeaderElection.ResourceName)
			}
			if r.configMap.Name == baseConfigMapName(t) {
				t.Errorf("ConfigMap %s: the name did not change with the content, the pods would not roll", r.configMap.Name)
			}
		},
	}, {
		name:   "plugins by name",
		values: `{plugins: {enabled: [NetworkTraffic]}, pluginConfig: [{name: NetworkTraffic, args: {prometheusAddress: "http://prometheus:9090"}}]}`,
		check: func(t *testing.T, r *rendered) {
			p := r.resolved.Profiles[0]
			if pts := p.points("NetworkTraffic"); !slices.Contains(pts, "score") {
				t.Errorf("NetworkTraffic runs at %v, want score among them", pts)
			}
			if !strings.Contains(r.config, "- name: NetworkTraffic\n") {
				t.Errorf("a name alone is not written as {name: ...}:\n%s", r.config)
			}
		},
	}, {
		// The shorthand comes last, over config.profiles, in every
		// profile; what it names replaces the profiles' own entries for
		// that plugin at multiPoint and in pluginConfig.
		name: "plugins shorthand over profiles",
		values: `
config:
  profiles:
  - schedulerName: yardmaster
    plugins:
      multiPoint:
        enabled: [{name: NetworkTraffic, weight: 2}]
    pluginConfig:
    - name: NetworkTraffic
      args: {prometheusAddress: "http://old:9090", timeRange: 2m}
    - name: NodeResourcesFit
      args: {scoringStrategy: {type: MostAllocated}}
  - schedulerName: yardmaster-batch
    plugins:
      multiPoint:
        disabled: [{name: ImageLocality}]
plugins:
  enabled: [{name: NetworkTraffic, weight: 7}, ImageLocality]
  disabled: [NodeResourcesBalancedAllocation]
pluginConfig:
- name: NetworkTraffic
  args: {prometheusAddress: "http://new:9090"}
`,
		check: func(t *testing.T, r *rendered) {
			if len(r.resolved.Profiles) != 2 {
				t.Fatalf("%d profiles, want 2", len(r.resolved.Profiles))
			}
			for _, p := range r.resolved.Profiles {
				if w := p.weight("NetworkTraffic"); w != 7 {
					t.Errorf("profile %s: NetworkTraffic weight %d, want 7 (the shorthand's)", p.SchedulerName, w)
				}
				if pts := p.points("ImageLocality"); !slices.Contains(pts, "score") {
					t.Errorf("profile %s: ImageLocality runs at %v, want score (enabled by the shorthand over the profile's disabled)", p.SchedulerName, pts)
				}
				if pts := p.points("NodeResourcesBalancedAllocation"); len(pts) != 0 {
					t.Errorf("profile %s: NodeResourcesBalancedAllocation runs at %v, want nowhere", p.SchedulerName, pts)
				}
				// args replaced whole: timeRange back to its default.
				want := map[string]any{"prometheusAddress": "http://new:9090"}
				got := p.args("NetworkTraffic")
				if got["prometheusAddress"] != want["prometheusAddress"] || got["timeRange"] == "2m0s" || got["timeRange"] == "2m" {
					t.Errorf("profile %s: NetworkTraffic args %v, want the shorthand's, whole", p.SchedulerName, got)
				}
			}
			if got := r.resolved.Profiles[0].args("NodeResourcesFit"); fmt.Sprint(got["scoringStrategy"]) == "" || !strings.Contains(fmt.Sprint(got["scoringStrategy"]), "MostAllocated") {
				t.Errorf("profile yardmaster: NodeResourcesFit args %v, want the profile's MostAllocated kept", got)
			}
			if n := strings.Count(r.config, "name: NetworkTraffic\n"); n != 4 {
				t.Errorf("NetworkTraffic named %d times in the file, want 4 (enabled and configured once per profile):\n%s", n, r.config)
			}
		},
	}, {
		name:   "dashboard",
		values: `dashboard: {enabled: true, namespace: monitoring, labels: {team: scheduling}, annotations: {grafana_folder: Kubernetes}}`,
		check: func(t *testing.T, r *rendered) {
			d := r.dashboard
			if d == nil {
				t.Fatal("no dashboard ConfigMap with dashboard.enabled")
			}
			want := map[string]string{
				"app.kubernetes.io/name":      "yardmaster",
				"app.kubernetes.io/component": "dashboard",
				"grafana_dashboard":           "1",
				"team":                        "scheduling",
			}
			if diff := cmp.Diff(want, d.Labels); diff != "" {
				t.Errorf("dashboard labels (-want +got):\n%s", diff)
			}
			if d.Namespace != "monitoring" || d.Annotations["grafana_folder"] != "Kubernetes" {
				t.Errorf("dashboard in %q with annotations %v, want monitoring and grafana_folder: Kubernetes", d.Namespace, d.Annotations)
			}
			checkDashboardData(t, d)
		},
	}, {
		name:   "dashboard labels that repeat the chart's and the sidecar's",
		values: `dashboard: {enabled: true, labels: {grafana_dashboard: "0", app.kubernetes.io/component: other, team: scheduling}}`,
		check: func(t *testing.T, r *rendered) {
			d := r.dashboard
			if d == nil {
				t.Fatal("no dashboard ConfigMap with dashboard.enabled")
			}
			want := map[string]string{
				"app.kubernetes.io/name":      "yardmaster",
				"app.kubernetes.io/component": "dashboard",
				"grafana_dashboard":           "1",
				"team":                        "scheduling",
			}
			if diff := cmp.Diff(want, d.Labels); diff != "" {
				t.Errorf("dashboard labels (-want +got):\n%s", diff)
			}
		},
	}, {
		name:   "dashboard under another sidecar label",
		values: `dashboard: {enabled: true, label: dashboards, labelValue: yardmaster}`,
		check: func(t *testing.T, r *rendered) {
			d := r.dashboard
			if d == nil {
				t.Fatal("no dashboard ConfigMap with dashboard.enabled")
			}
			if _, ok := d.Labels["grafana_dashboard"]; ok || d.Labels["dashboards"] != "yardmaster" {
				t.Errorf("dashboard labels %v, want dashboards: yardmaster and no grafana_dashboard", d.Labels)
			}
			if d.Namespace != namespace {
				t.Errorf("dashboard in %q, want the release's %s", d.Namespace, namespace)
			}
		},
	}, {
		name:   "image by digest",
		values: `image: {digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`,
		check: func(t *testing.T, r *rendered) {
			if want := "yardmaster@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"; r.deployment.Spec.Template.Spec.Containers[0].Image != want {
				t.Errorf("image %s, want %s", r.deployment.Spec.Template.Spec.Containers[0].Image, want)
			}
		},
	}, {
		name: "placement",
		values: `
nodeSelector: {node-role.kubernetes.io/control-plane: ""}
tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
podAntiAffinity: preferred
podAnnotations: {example.com/team: scheduling}
podLabels: {team: scheduling}
priorityClassName: ""
`,
		check: func(t *testing.T, r *rendered) {
			tpl := r.deployment.Spec.Template
			if _, ok := tpl.Spec.NodeSelector["node-role.kubernetes.io/control-plane"]; !ok || len(tpl.Spec.Tolerations) != 1 {
				t.Errorf("nodeSelector %v, tolerations %v", tpl.Spec.NodeSelector, tpl.Spec.Tolerations)
			}
			aa := tpl.Spec.Affinity.PodAntiAffinity
			if len(aa.RequiredDuringSchedulingIgnoredDuringExecution) != 0 || len(aa.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Errorf("pod anti-affinity %+v, want one preferred term", aa)
			}
			if tpl.Annotations["example.com/team"] != "scheduling" || tpl.Labels["team"] != "scheduling" {
				t.Errorf("pod annotations %v, labels %v", tpl.Annotations, tpl.Labels)
			}
			if tpl.Spec.PriorityClassName != "" {
				t.Errorf("priorityClassName %q, want none", tpl.Spec.PriorityClassName)
			}
		},
	}, {
		name:   "affinity replaces the anti-affinity",
		values: `affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]}]}}}`,
		check: func(t *testing.T, r *rendered) {
			a := r.deployment.Spec.Template.Spec.Affinity
			if a.NodeAffinity == nil || a.PodAntiAffinity != nil {
				t.Errorf("affinity %+v, want the node affinity given and nothing else", a)
			}
		},
	}, {
		name:   "existing service account",
		values: `serviceAccount: {create: false, name: scheduler}`,
		check: func(t *testing.T, r *rendered) {
			if r.serviceAccount != nil {
				t.Errorf("ServiceAccount %s made with serviceAccount.create false", r.serviceAccount.Name)
			}
			if got := r.deployment.Spec.Template.Spec.ServiceAccountName; got != "scheduler" {
				t.Errorf("serviceAccountName %q, want scheduler", got)
			}
		},
	}, {
		name:    "another release name and namespace",
		release: "ym",
		ns:      "scheduling",
		check: func(t *testing.T, r *rendered) {
			if r.deployment.Name != "ym-yardmaster" || r.deployment.Namespace != "scheduling" {
				t.Errorf("Deployment %s/%s, want scheduling/ym-yardmaster", r.deployment.Namespace, r.deployment.Name)
			}
			// The Lease stays where the configuration puts it, and the
			// client CAs are read where the API server publishes them.
			if r.leaderElection.Namespace != "kube-system" || r.authReader.Namespace != "kube-system" {
				t.Errorf("leader election Role in %q, authentication reader in %q; want kube-system", r.leaderElection.Namespace, r.authReader.Namespace)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			release, ns := tc.release, tc.ns
			if release == "" {
				release, ns = releaseName, namespace
			}
			vals := values(t, tc.values)
			r := inspect(t, templateAs(t, release, ns, vals))
			checkCoherent(t, r, ns)
			tc.check(t, r)
			if err := helm.Lint(helm.Chart, ns, vals); err != nil {
				t.Error(err)
			}
		})
	}
}

// Values that would install something broken are refused: by the schema
// (wrong types, unknown keys, out of range), in helm lint, helm template
// and helm install alike; or by the chart's templates (a disruption budget
// that blocks every drain, two leaders, a configuration that is not YAML),
// in helm template and helm install. helm lint renders with `fail` turned
// into a log line, so it passes those.
func TestBadValuesRefused(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         string // in the error
		template     bool   // refused by a template, not by the schema
	}{
		{"replicas zero", `replicas: 0`, "replicas", false},
		{"replicas not a number", `replicas: two`, "replicas", false},
		{"misspelt key", `replica: 3`, "replica", false},
		{"misspelt nested key", `serviceMonitor: {enable: true}`, "enable", false},
		{"pull policy", `image: {pullPolicy: Sometimes}`, "pullPolicy", false},
		{"port out of range", `secureServing: {port: 70000}`, "port", false},
		{"ServiceMonitor enabled not a bool", `serviceMonitor: {enabled: "yes"}`, "enabled", false},
		{"anti-affinity", `podAntiAffinity: hard`, "podAntiAffinity", false},
		{"env not a list", `env: {GOGC: "200"}`, "env", false},
		{"volume mount without a path", `extraVolumeMounts: [{name: x}]`, "mountPath", false},
		{"profiles not a list", `config: {profiles: {schedulerName: x}}`, "profiles", false},
		{"plugins misspelt", `plugins: {enable: [NetworkTraffic]}`, "enable", false},
		{"plugin weight misspelt", `plugins: {enabled: [{name: NetworkTraffic, weigth: 5}]}`, "plugins", false},
		{"plugin weight zero", `plugins: {enabled: [{name: NetworkTraffic, weight: 0}]}`, "plugins", false},
		{"plugin name not a name", `plugins: {disabled: ["Image Locality"]}`, "plugins", false},
		{"pluginConfig without args", `pluginConfig: [{name: NetworkTraffic}]`, "args", false},
		{"dashboard label empty", `dashboard: {enabled: true, label: ""}`, "label", false},
		{"budget blocks drains", `replicas: 1`, "block every drain", true},
		{"two leaders", `config: {override: {leaderElection: {leaderElect: false}}}`, "leaderElect", true},
		{"config not YAML", `config: {file: "profiles: [", profiles: [{schedulerName: x}]}`, "not a YAML mapping", true},
		{"config not YAML, verbatim", `config: {file: "profiles: ["}`, "not a YAML mapping", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := values(t, tc.values)
			_, _, err := helm.Template(context.Background(), helm.Chart, releaseName, namespace, vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template: error %v, want one about %q", err, tc.want)
			}
			if tc.template {
				return
			}
			err = helm.Lint(helm.Chart, namespace, vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm lint: error %v, want one about %q", err, tc.want)
			}
		})
	}
}

// rendered is a render's objects by role.
type rendered struct {
	objs           []runtime.Object
	deployment     *appsv1.Deployment
	configMap      *v1.ConfigMap
	config         string // the configuration file in configMap
	service        *v1.Service
	serviceAccount *v1.ServiceAccount
	pdb            *policyv1.PodDisruptionBudget
	clusterRole    *rbacv1.ClusterRole
	clusterBinding *rbacv1.ClusterRoleBinding
	leaderElection *rbacv1.Role
	leaderBinding  *rbacv1.RoleBinding
	authReader     *rbacv1.RoleBinding
	metricsReader  *rbacv1.ClusterRoleBinding
	monitors       []*unstructured.Unstructured
	dashboard      *v1.ConfigMap // with dashboard.enabled
	resolved       *resolved     // the configuration as yardmaster resolves it (checkCoherent)
}

// inspect sorts objs into a rendered, failing on an object of a kind the
// chart does not make or made twice.
func inspect(t *testing.T, objs []runtime.Object) *rendered {
	t.Helper()
	r := &rendered{objs: objs}
	set := func(dst any, o runtime.Object) {
		p := reflect.ValueOf(dst).Elem()
		if !p.IsNil() {
			t.Fatalf("two %T", o)
		}
		p.Set(reflect.ValueOf(o))
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			set(&r.deployment, o)
		case *v1.ConfigMap:
			if o.Labels["app.kubernetes.io/component"] == "dashboard" {
				set(&r.dashboard, o)
				continue
			}
			set(&r.configMap, o)
			r.config = o.Data[configKey]
		case *v1.Service:
			set(&r.service, o)
		case *v1.ServiceAccount:
			set(&r.serviceAccount, o)
		case *policyv1.PodDisruptionBudget:
			set(&r.pdb, o)
		case *rbacv1.ClusterRole:
			if len(o.Rules) > 0 && len(o.Rules[0].NonResourceURLs) > 0 {
				continue // the metrics reader's
			}
			set(&r.clusterRole, o)
		case *rbacv1.ClusterRoleBinding:
			if o.RoleRef.Name == o.Name && strings.HasSuffix(o.Name, "-metrics-reader") {
				set(&r.metricsReader, o)
				continue
			}
			set(&r.clusterBinding, o)
		case *rbacv1.Role:
			set(&r.leaderElection, o)
		case *rbacv1.RoleBinding:
			if o.RoleRef.Kind == "Role" && o.RoleRef.Name == "extension-apiserver-authentication-reader" {
				set(&r.authReader, o)
				continue
			}
			set(&r.leaderBinding, o)
		case *unstructured.Unstructured:
			if o.GetKind() != "ServiceMonitor" {
				t.Fatalf("unexpected %s %s", o.GetKind(), o.GetName())
			}
			r.monitors = append(r.monitors, o)
		default:
			t.Fatalf("unexpected %T", o)
		}
	}
	if r.deployment == nil || r.configMap == nil || r.service == nil || r.clusterRole == nil || r.clusterBinding == nil || r.authReader == nil {
		t.Fatalf("missing objects: Deployment %v, ConfigMap %v, Service %v, ClusterRole %v, ClusterRoleBinding %v, authentication reader %v",
			r.deployment != nil, r.configMap != nil, r.service != nil, r.clusterRole != nil, r.clusterBinding != nil, r.authReader != nil)
	}
	return r
}

// checkCoherent checks what must hold whatever the values: the
// configuration loads as yardmaster loads it; the Deployment mounts that
// ConfigMap; its selector, the Service's, the disruption budget's and the
// ServiceMonitor's find the pods; every binding names the service account
// the pods run as; and the leader election Role grants the Lease the
// configuration names.
func checkCoherent(t *testing.T, r *rendered, ns string) {
	t.Helper()
	r.resolved = validateConfig(t, r.config)
	le := r.resolved.LeaderElection

	spec := r.deployment.Spec.Template.Spec
	podLabels := labels.Set(r.deployment.Spec.Template.Labels)
	if !slices.ContainsFunc(spec.Volumes, func(v v1.Volume) bool { return v.ConfigMap != nil && v.ConfigMap.Name == r.configMap.Name }) {
		t.Errorf("ConfigMap %s is not a volume of the Deployment: %+v", r.configMap.Name, spec.Volumes)
	}
	for what, sel := range map[string]*metav1.LabelSelector{
		"Deployment":          r.deployment.Spec.Selector,
		"Service":             {MatchLabels: r.service.Spec.Selector},
		"PodDisruptionBudget": pdbSelector(r.pdb),
	} {
		if sel == nil {
			continue
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || s.Empty() || !s.Matches(podLabels) {
			t.Errorf("%s selector %v does not match the pods' labels %v (%v)", what, sel, podLabels, err)
		}
	}
	for _, sm := range r.monitors {
		sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		if len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(labels.Set(r.service.Labels)) {
			t.Errorf("ServiceMonitor selects %v; the Service has %v", sel, r.service.Labels)
		}
	}
	c := spec.Containers[0]
	if p := r.service.Spec.Ports[0].TargetPort.StrVal; len(c.Ports) != 1 || c.Ports[0].Name != p {
		t.Errorf("Service targets port %q; the container has %+v", p, c.Ports)
	}

	sa := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: spec.ServiceAccountName, Namespace: ns}}
	if r.serviceAccount != nil && (r.serviceAccount.Name != spec.ServiceAccountName || r.serviceAccount.Namespace != ns) {
		t.Errorf("ServiceAccount %s/%s; the pods run as %s/%s", r.serviceAccount.Namespace, r.serviceAccount.Name, ns, spec.ServiceAccountName)
	}
	for _, b := range []struct {
		name     string
		subjects []rbacv1.Subject
	}{
		{"ClusterRoleBinding", r.clusterBinding.Subjects},
		{"leader election RoleBinding", r.leaderBinding.Subjects},
		{"authentication reader RoleBinding", r.authReader.Subjects},
	} {
		if diff := cmp.Diff(sa, b.subjects); diff != "" {
			t.Errorf("%s subjects (-want +got):\n%s", b.name, diff)
		}
	}
	if r.clusterBinding.RoleRef.Name != r.clusterRole.Name {
		t.Errorf("ClusterRoleBinding binds %s, the ClusterRole is %s", r.clusterBinding.RoleRef.Name, r.clusterRole.Name)
	}

	if r.leaderElection == nil || r.leaderBinding == nil {
		t.Fatalf("no leader election Role and RoleBinding")
	}
	if r.leaderElection.Namespace != le.ResourceNamespace || r.leaderBinding.Namespace != le.ResourceNamespace || r.leaderBinding.RoleRef.Name != r.leaderElection.Name {
		t.Errorf("leader election Role %s/%s, RoleBinding %s/%s to %s; the Lease is in %s",
			r.leaderElection.Namespace, r.leaderElection.Name, r.leaderBinding.Namespace, r.leaderBinding.Name, r.leaderBinding.RoleRef.Name, le.ResourceNamespace)
	}
	if !slices.ContainsFunc(r.leaderElection.Rules, func(p rbacv1.PolicyRule) bool {
		return slices.Equal(p.ResourceNames, []string{le.ResourceName}) && slices.Contains(p.Verbs, "update")
	}) {
		t.Errorf("leader election Role rules %+v do not let yardmaster update the Lease %s", r.leaderElection.Rules, le.ResourceName)
	}
}

func pdbSelector(pdb *policyv1.PodDisruptionBudget) *metav1.LabelSelector {
	if pdb == nil {
		return nil
	}
	return pdb.Spec.Selector
}

// resolved is what `yardmaster config validate` prints: the configuration
// as yardmaster resolved it, every profile's plugins listed per extension
// point.
type resolved struct {
	LeaderElection struct {
		ResourceNamespace string `json:"resourceNamespace"`
		ResourceName      string `json:"resourceName"`
	} `json:"leaderElection"`
	Profiles []resolvedProfile `json:"profiles"`
}

type resolvedPlugin struct {
	Name   string `json:"name"`
	Weight *int64 `json:"weight"`
}

type resolvedProfile struct {
	SchedulerName string `json:"schedulerName"`
	Plugins       map[string]struct {
		Enabled []resolvedPlugin `json:"enabled"`
	} `json:"plugins"`
	PluginConfig []struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"pluginConfig"`
}

// points returns the extension points that run plugin, sorted.
func (p resolvedProfile) points(plugin string) []string {
	var out []string
	for point, set := range p.Plugins {
		if slices.ContainsFunc(set.Enabled, func(e resolvedPlugin) bool { return e.Name == plugin }) {
			out = append(out, point)
		}
	}
	slices.Sort(out)
	return out
}

// weight returns plugin's score weight, 0 if it does not score.
func (p resolvedProfile) weight(plugin string) int64 {
	for _, e := range p.Plugins["score"].Enabled {
		if e.Name == plugin && e.Weight != nil {
			return *e.Weight
		}
	}
	return 0
}

// args returns plugin's arguments, nil if none.
func (p resolvedProfile) args(plugin string) map[string]any {
	for _, c := range p.PluginConfig {
		if c.Name == plugin {
			return c.Args
		}
	}
	return nil
}

// validateConfig checks config as `yardmaster run --config` would, with
// `yardmaster config validate` (yardmaster's config package does not build
// against Helm's k8s.io modules, so not in this process), and returns what
// it resolves to.
func validateConfig(t *testing.T, config string) *resolved {
	t.Helper()
	out, stderr, err := runValidate(t, config)
	if err != nil {
		t.Fatalf("yardmaster config validate: %v\n%s\nconfiguration:\n%s", err, stderr, config)
	}
	var r resolved
	if err := yaml.Unmarshal(out, &r); err != nil {
		t.Fatalf("yardmaster config validate printed: %v\n%s", err, out)
	}
	return &r
}

// runValidate runs `yardmaster config validate` on config.
func runValidate(t *testing.T, config string) (stdout, stderr []byte, err error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), configKey)
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(yardmaster, "config", "validate", file)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	return out, []byte(errBuf.String()), err
}

// yardmaster is the binary validateConfig runs: $YARDMASTER_BINARY (make
// helm-test passes bin/yardmaster), else one TestMain builds from this
// checkout.
var yardmaster = os.Getenv("YARDMASTER_BINARY")

func TestMain(m *testing.M) {
	if yardmaster != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "yardmaster-helm-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	yardmaster = filepath.Join(dir, "yardmaster")
	cmd := exec.Command("go", "build", "-o", yardmaster, "./cmd/yardmaster")
	cmd.Dir = "../.."
	code := 1
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build yardmaster: %v\n%s", err, out)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// baseConfigMapName is the kustomize base's ConfigMap name.
func baseConfigMapName(t *testing.T) string {
	t.Helper()
	for _, o := range kustomize(t, deploy.Base) {
		if cm, ok := o.(*v1.ConfigMap); ok {
			return cm.Name
		}
	}
	t.Fatal("no ConfigMap in the base")
	return ""
}
