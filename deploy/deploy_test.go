package deploy_test

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/deploy"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// The names the manifests and yardmaster agree on.
const (
	namespace      = "kube-system"
	name           = "yardmaster"
	securePort     = 10259
	configDir      = "/etc/yardmaster"
	networkTraffic = "NetworkTraffic"
	// authReader binds the built-in Role that reads the
	// extension-apiserver-authentication ConfigMap.
	authReader = "yardmaster-authentication-reader"
	// metricsReader is the overlay's grant of get /metrics to Prometheus.
	metricsReader = "yardmaster-metrics-reader"
)

// render builds a kustomization of deploy/ or fails the test.
func render(t *testing.T, dir string) []runtime.Object {
	t.Helper()
	objs, err := deploy.Render(dir)
	if err != nil {
		t.Fatalf("render %s: %v", dir, err)
	}
	return objs
}

// all returns the objects of type T.
func all[T runtime.Object](objs []runtime.Object) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// one returns the only object of type T, or fails the test.
func one[T runtime.Object](t *testing.T, objs []runtime.Object) T {
	t.Helper()
	got := all[T](objs)
	if len(got) != 1 {
		var zero T
		t.Fatalf("want exactly one %T, got %d", zero, len(got))
	}
	return got[0]
}

// base is the rendered base, and the configuration its ConfigMap holds.
func base(t *testing.T) ([]runtime.Object, *config.Config) {
	t.Helper()
	objs := render(t, deploy.Base)
	cm := one[*v1.ConfigMap](t, objs)
	c, err := config.Decode([]byte(cm.Data[deploy.ConfigKey]))
	if err != nil {
		t.Fatalf("ConfigMap %s, key %s: %v", cm.Name, deploy.ConfigKey, err)
	}
	return objs, c
}

// `kubectl apply -k deploy/` applies the base unchanged, and the overlay is
// the base plus one ServiceMonitor that finds the metrics Service.
func TestKustomizationsRender(t *testing.T) {
	want := yamlOf(t, render(t, deploy.Base))
	if diff := cmp.Diff(want, yamlOf(t, render(t, deploy.Install))); diff != "" {
		t.Errorf("deploy/ differs from deploy/base (-base +deploy):\n%s", diff)
	}

	overlay := render(t, deploy.ServiceMonitorOverlay)
	var rest []runtime.Object
	var monitors []*unstructured.Unstructured
	var readerRole *rbacv1.ClusterRole
	var readerBinding *rbacv1.ClusterRoleBinding
	for _, o := range overlay {
		switch o := o.(type) {
		case *unstructured.Unstructured:
			if o.GetKind() == "ServiceMonitor" {
				monitors = append(monitors, o)
				continue
			}
		case *rbacv1.ClusterRole:
			if o.Name == metricsReader {
				readerRole = o
				continue
			}
		case *rbacv1.ClusterRoleBinding:
			if o.Name == metricsReader {
				readerBinding = o
				continue
			}
		}
		rest = append(rest, o)
	}
	if diff := cmp.Diff(want, yamlOf(t, rest)); diff != "" {
		t.Errorf("overlay without its ServiceMonitor and %s differs from the base (-base +overlay):\n%s", metricsReader, diff)
	}

	// The scraper's identity may get /metrics and nothing else.
	if readerRole == nil || readerBinding == nil {
		t.Fatalf("overlay has no ClusterRole and ClusterRoleBinding %s", metricsReader)
	}
	wantRules := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
	if diff := cmp.Diff(wantRules, readerRole.Rules); diff != "" {
		t.Errorf("ClusterRole %s rules (-want +got):\n%s", metricsReader, diff)
	}
	if diff := cmp.Diff(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReader}, readerBinding.RoleRef); diff != "" {
		t.Errorf("ClusterRoleBinding %s roleRef (-want +got):\n%s", metricsReader, diff)
	}
	if len(readerBinding.Subjects) != 1 || readerBinding.Subjects[0].Kind != rbacv1.ServiceAccountKind {
		t.Errorf("ClusterRoleBinding %s subjects %+v, want Prometheus's service account", metricsReader, readerBinding.Subjects)
	}
	if len(monitors) != 1 {
		t.Fatalf("overlay has %d ServiceMonitors, want 1", len(monitors))
	}
	sm := monitors[0]
	if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || sm.GetNamespace() != namespace {
		t.Errorf("ServiceMonitor is %s in %q, want monitoring.coreos.com/v1 in %q", sm.GetAPIVersion(), sm.GetNamespace(), namespace)
	}
	svc := one[*v1.Service](t, overlay)
	sel, _, err := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if err != nil || len(sel) == 0 {
		t.Fatalf("ServiceMonitor spec.selector.matchLabels: %v %v", sel, err)
	}
	if !labels.SelectorFromSet(sel).Matches(labels.Set(svc.Labels)) {
		t.Errorf("ServiceMonitor selects %v; Service %s has labels %v", sel, svc.Name, svc.Labels)
	}
	nss, _, _ := unstructured.NestedStringSlice(sm.Object, "spec", "namespaceSelector", "matchNames")
	if !slices.Equal(nss, []string{svc.Namespace}) {
		t.Errorf("ServiceMonitor namespaceSelector.matchNames = %v, want [%s]", nss, svc.Namespace)
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("ServiceMonitor has %d endpoints, want 1", len(endpoints))
	}
	ep, _ := endpoints[0].(map[string]any)
	if ep["port"] != svc.Spec.Ports[0].Name || ep["path"] != "/metrics" || ep["scheme"] != "https" {
		t.Errorf("ServiceMonitor endpoint %v, want port %q, path /metrics, scheme https", ep, svc.Spec.Ports[0].Name)
	}
	// The scrape authenticates with Prometheus's service account token,
	// and trusts the replicas' self-signed certificate.
	if ep["bearerTokenFile"] != "/var/run/secrets/kubernetes.io/serviceaccount/token" {
		t.Errorf("ServiceMonitor endpoint bearerTokenFile %v, want the service account token", ep["bearerTokenFile"])
	}
	if skip, _, _ := unstructured.NestedBool(ep, "tlsConfig", "insecureSkipVerify"); !skip {
		t.Errorf("ServiceMonitor endpoint tlsConfig %v: the certificate is self-signed, want insecureSkipVerify", ep["tlsConfig"])
	}
}

// yamlOf writes objects as YAML documents, for comparing renders.
func yamlOf(t *testing.T, objs []runtime.Object) []string {
	t.Helper()
	out := make([]string, len(objs))
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// deploy/grafana is one ConfigMap holding the dashboard file byte for
// byte, under the label Grafana's dashboard sidecar looks for, with a name
// that does not change with the content; the overlay is the base plus that
// ConfigMap.
func TestDashboardKustomizations(t *testing.T) {
	file, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	want := v1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      "yardmaster-dashboard",
			Namespace: namespace,
			Labels: map[string]string{
				"app.kubernetes.io/name":      name,
				"app.kubernetes.io/component": "dashboard",
				"grafana_dashboard":           "1",
			},
		},
		Data: map[string]string{deploy.DashboardFile: string(file)},
	}
	alone := render(t, deploy.Dashboard)
	if len(alone) != 1 {
		t.Fatalf("%s makes %d objects, want the ConfigMap alone", deploy.Dashboard, len(alone))
	}
	cm, ok := alone[0].(*v1.ConfigMap)
	if !ok {
		t.Fatalf("%s makes a %T, want a ConfigMap", deploy.Dashboard, alone[0])
	}
	if diff := cmp.Diff(&want, cm); diff != "" {
		t.Errorf("%s ConfigMap (-want +got):\n%s", deploy.Dashboard, diff)
	}

	wantOverlay := append(yamlOf(t, render(t, deploy.Base)), yamlOf(t, alone)...)
	if diff := cmp.Diff(wantOverlay, yamlOf(t, render(t, deploy.DashboardOverlay)), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("%s is not the base plus %s (-want +got):\n%s", deploy.DashboardOverlay, deploy.Dashboard, diff)
	}
}

// The base is the expected set of objects, all in kube-system, and nothing
// else (no example workloads).
func TestBaseObjects(t *testing.T) {
	objs, _ := base(t)
	var got []string
	for _, o := range objs {
		m, ok := o.(interface {
			GetName() string
			GetNamespace() string
		})
		if !ok {
			t.Fatalf("%T has no metadata", o)
		}
		kind := fmt.Sprintf("%T", o)
		got = append(got, kind+" "+path.Join(m.GetNamespace(), m.GetName()))
	}
	slices.Sort(got)
	cm := one[*v1.ConfigMap](t, objs)
	if !strings.HasPrefix(cm.Name, "yardmaster-config-") {
		t.Errorf("ConfigMap %q: want the generated yardmaster-config-<hash>", cm.Name)
	}
	want := []string{
		"*v1.ClusterRole yardmaster",
		"*v1.ClusterRoleBinding yardmaster",
		"*v1.ConfigMap kube-system/" + cm.Name,
		"*v1.Deployment kube-system/yardmaster",
		"*v1.PodDisruptionBudget kube-system/yardmaster",
		"*v1.Role kube-system/yardmaster-leader-election",
		"*v1.RoleBinding kube-system/" + authReader,
		"*v1.RoleBinding kube-system/yardmaster-leader-election",
		"*v1.Service kube-system/yardmaster-metrics",
		"*v1.ServiceAccount kube-system/yardmaster",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects of the base (-want +got):\n%s", diff)
	}
}

// rule keys what a role grants: one API group and resource, and the
// resourceNames it is limited to (comma-separated; empty for all).
type rule struct {
	group, resource string
	resourceNames   string
}

// flatten maps each (group, resource, resourceNames) of rules to its
// sorted verbs, failing on wildcards.
func flatten(t *testing.T, role string, rules []rbacv1.PolicyRule) map[rule][]string {
	t.Helper()
	out := map[rule][]string{}
	for i, r := range rules {
		for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames} {
			if slices.Contains(field, "*") || slices.ContainsFunc(field, func(s string) bool { return strings.Contains(s, "*") }) {
				t.Errorf("%s rule %d has a wildcard: %+v", role, i, r)
			}
		}
		if len(r.NonResourceURLs) > 0 {
			t.Errorf("%s rule %d grants non-resource URLs %v", role, i, r.NonResourceURLs)
		}
		names := strings.Join(r.ResourceNames, ",")
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				k := rule{g, res, names}
				out[k] = append(out[k], r.Verbs...)
				slices.Sort(out[k])
				out[k] = slices.Compact(out[k])
			}
		}
	}
	return out
}

// The ClusterRole grants exactly what yardmaster does, written out here
// verb by verb; the Role grants the Lease the configuration names and no
// other. test/e2e/rbac_test.go proves these are enough.
func TestRBACIsLeastPrivilege(t *testing.T) {
	objs, c := base(t)
	// What an audit log of the e2e tests shows yardmaster doing, and the
	// rarer paths of its code: informers list and watch, nothing gets
	// what an informer holds.
	read := []string{"list", "watch"}
	wantCluster := map[rule][]string{
		{"", "pods", ""}:                                  {"delete", "list", "watch"},
		{"policy", "poddisruptionbudgets", ""}:            read,
		{"", "nodes", ""}:                                 read,
		{"", "namespaces", ""}:                            read,
		{"", "persistentvolumeclaims", ""}:                {"list", "update", "watch"},
		{"", "persistentvolumes", ""}:                     {"list", "update", "watch"},
		{"", "services", ""}:                              read,
		{"", "replicationcontrollers", ""}:                read,
		{"apps", "replicasets", ""}:                       read,
		{"apps", "statefulsets", ""}:                      read,
		{"storage.k8s.io", "storageclasses", ""}:          read,
		{"storage.k8s.io", "csinodes", ""}:                read,
		{"storage.k8s.io", "volumeattachments", ""}:       read,
		{"resource.k8s.io", "deviceclasses", ""}:          read,
		{"resource.k8s.io", "resourceslices", ""}:         read,
		{"resource.k8s.io", "devicetaintrules", ""}:       read,
		{"resource.k8s.io", "resourceclaimtemplates", ""}: {"get", "list", "watch"}, // asked for by the DRA issue, as kube-scheduler has it
		{"resource.k8s.io", "resourceclaims", ""}:         {"create", "delete", "get", "list", "update", "watch"},
		{"resource.k8s.io", "resourceclaims/status", ""}:  {"patch", "update"},
		{"resource.k8s.io", "resourceclaims/binding", ""}: {"patch", "update"},
		{"storage.k8s.io", "csidrivers", ""}:              read,
		{"storage.k8s.io", "csistoragecapacities", ""}:    read,
		{"", "pods/binding", ""}:                          {"create"},
		{"", "pods/status", ""}:                           {"patch"},
		{"events.k8s.io", "events", ""}:                   {"create", "patch"},
		// Gangs: native PodGroups (whose status yardmaster writes) and
		// Workloads, and scheduler-plugins' PodGroup CRD.
		{"scheduling.k8s.io", "podgroups", ""}:        {"get", "list", "watch"},
		{"scheduling.k8s.io", "podgroups/status", ""}: {"patch", "update"},
		{"scheduling.k8s.io", "workloads", ""}:        {"get", "list", "watch"},
		{"scheduling.x-k8s.io", "podgroups", ""}:      {"get", "list", "watch"},
		// The secure port's delegated authentication and authorization.
		{"authentication.k8s.io", "tokenreviews", ""}:        {"create"},
		{"authorization.k8s.io", "subjectaccessreviews", ""}: {"create"},
	}
	cr := one[*rbacv1.ClusterRole](t, objs)
	if cr.AggregationRule != nil {
		t.Errorf("ClusterRole %s aggregates other roles", cr.Name)
	}
	if diff := cmp.Diff(wantCluster, flatten(t, "ClusterRole", cr.Rules), cmp.AllowUnexported(rule{})); diff != "" {
		t.Errorf("ClusterRole %s rules (-want +got):\n%s", cr.Name, diff)
	}

	le := c.LeaderElection
	if !le.LeaderElect {
		t.Errorf("the configuration turns leader election off; two replicas would both schedule")
	}
	role := one[*rbacv1.Role](t, objs)
	if role.Namespace != le.ResourceNamespace {
		t.Errorf("Role %s is in %q, the Lease in %q", role.Name, role.Namespace, le.ResourceNamespace)
	}
	wantRole := map[rule][]string{
		{"coordination.k8s.io", "leases", ""}:              {"create"},
		{"coordination.k8s.io", "leases", le.ResourceName}: {"get", "update"},
	}
	if diff := cmp.Diff(wantRole, flatten(t, "Role", role.Rules), cmp.AllowUnexported(rule{})); diff != "" {
		t.Errorf("Role %s rules (-want +got), Lease %s/%s:\n%s", role.Name, le.ResourceNamespace, le.ResourceName, diff)
	}

	sa := one[*v1.ServiceAccount](t, objs)
	wantSubjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}}
	crb := one[*rbacv1.ClusterRoleBinding](t, objs)
	bindings := map[string]*rbacv1.RoleBinding{}
	for _, rb := range all[*rbacv1.RoleBinding](objs) {
		bindings[rb.Name] = rb
	}
	rb, reader := bindings[role.Name], bindings[authReader]
	if rb == nil || reader == nil || len(bindings) != 2 {
		t.Fatalf("RoleBindings %v, want %s and %s", slices.Sorted(maps.Keys(bindings)), role.Name, authReader)
	}
	if rb.Namespace != role.Namespace {
		t.Errorf("RoleBinding in %q, Role in %q", rb.Namespace, role.Namespace)
	}
	// The API server publishes its client CAs in
	// kube-system/extension-apiserver-authentication; the built-in Role
	// reads that one ConfigMap.
	if reader.Namespace != "kube-system" {
		t.Errorf("RoleBinding %s in %q, want kube-system, where the ConfigMap is", reader.Name, reader.Namespace)
	}
	for _, b := range []struct {
		kind         string
		ref, wantRef rbacv1.RoleRef
		subjects     []rbacv1.Subject
	}{
		{"ClusterRoleBinding", crb.RoleRef, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name}, crb.Subjects},
		{"RoleBinding", rb.RoleRef, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, rb.Subjects},
		{"RoleBinding", reader.RoleRef, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"}, reader.Subjects},
	} {
		if diff := cmp.Diff(b.wantRef, b.ref); diff != "" {
			t.Errorf("%s roleRef (-want +got):\n%s", b.kind, diff)
		}
		if diff := cmp.Diff(wantSubjects, b.subjects); diff != "" {
			t.Errorf("%s subjects (-want +got):\n%s", b.kind, diff)
		}
	}
}

func TestDeployment(t *testing.T) {
	objs, _ := base(t)
	d := one[*appsv1.Deployment](t, objs)
	spec := d.Spec.Template.Spec
	podLabels := labels.Set(d.Spec.Template.Labels)

	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %s, want 2", ptrString(d.Spec.Replicas))
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || !sel.Matches(podLabels) {
		t.Errorf("selector %v does not match the pod labels %v (%v)", d.Spec.Selector, podLabels, err)
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxSurge == nil || ru.MaxSurge.IntValue() != 0 {
		t.Errorf("rolling update %+v: with one replica per node a surge pod needs a spare node; want maxSurge 0", ru)
	}
	if spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("priorityClassName = %q", spec.PriorityClassName)
	}
	if sa := one[*v1.ServiceAccount](t, objs); spec.ServiceAccountName != sa.Name {
		t.Errorf("serviceAccountName = %q, want %q", spec.ServiceAccountName, sa.Name)
	}

	// Required anti-affinity by hostname against its own replicas.
	var terms []v1.PodAffinityTerm
	if spec.Affinity != nil && spec.Affinity.PodAntiAffinity != nil {
		terms = spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(terms) != 1 || terms[0].TopologyKey != v1.LabelHostname {
		t.Errorf("required pod anti-affinity %+v, want one term on %s", terms, v1.LabelHostname)
	} else if s, err := metav1.LabelSelectorAsSelector(terms[0].LabelSelector); err != nil || !s.Matches(podLabels) {
		t.Errorf("anti-affinity selector %v does not match the replicas' labels %v (%v)", terms[0].LabelSelector, podLabels, err)
	}

	// The shutdown (stop taking pods, bindings finish within
	// scheduler.DefaultBindGracePeriod, events and HTTP requests flush
	// within 5s each, the Lease is released) is budgeted against the grace
	// period, so it is written down rather than left to the default.
	if g := spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < scheduler.TerminationGracePeriod {
		t.Errorf("terminationGracePeriodSeconds = %s, want it set, and at least scheduler.TerminationGracePeriod (%s), the shutdown's budget", ptrString(g), scheduler.TerminationGracePeriod)
	}

	psc := spec.SecurityContext
	if psc == nil || !isTrue(psc.RunAsNonRoot) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != v1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v, want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	if psc != nil && (psc.RunAsUser == nil || *psc.RunAsUser == 0) {
		t.Errorf("pod runAsUser %v: want distroless's nonroot uid, so the kubelet can check runAsNonRoot on a numeric user", psc.RunAsUser)
	}

	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	if want := "yardmaster:dev"; c.Image != want {
		t.Errorf("image = %q, want %q (kustomization images:)", c.Image, want)
	}
	wantArgs := []string{"run", "--config", configDir + "/" + deploy.ConfigKey, "--log-format", "json"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if len(c.Command) != 0 {
		t.Errorf("command %v overrides the image's entrypoint", c.Command)
	}

	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Errorf("container has no securityContext")
	default:
		if !isTrue(sc.RunAsNonRoot) {
			t.Errorf("container runAsNonRoot = %v", sc.RunAsNonRoot)
		}
		if !isTrue(sc.ReadOnlyRootFilesystem) {
			t.Errorf("readOnlyRootFilesystem = %v", sc.ReadOnlyRootFilesystem)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("allowPrivilegeEscalation = %v, want false", sc.AllowPrivilegeEscalation)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []v1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("capabilities = %+v, want drop [ALL] and no add", sc.Capabilities)
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != v1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("container seccompProfile = %+v, want RuntimeDefault", sc.SeccompProfile)
		}
		if isTrue(sc.Privileged) {
			t.Errorf("container is privileged")
		}
	}

	for _, tc := range []struct {
		name  string
		probe *v1.Probe
		path  string
	}{
		{"liveness", c.LivenessProbe, "/livez"},
		{"readiness", c.ReadinessProbe, "/readyz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.probe == nil || tc.probe.HTTPGet == nil {
				t.Fatalf("%s probe %+v, want httpGet", tc.name, tc.probe)
			}
			g := tc.probe.HTTPGet
			if g.Path != tc.path || g.Scheme != v1.URISchemeHTTPS || containerPort(c, g.Port) != securePort {
				t.Errorf("%s probe GET %s://:%s%s, want HTTPS://:%d%s", tc.name, g.Scheme, g.Port.String(), g.Path, securePort, tc.path)
			}
		})
	}

	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || lim.IsZero() {
			t.Errorf("%s: request %s, limit %s; want both", r, req.String(), lim.String())
		} else if req.Cmp(lim) > 0 {
			t.Errorf("%s: request %s above limit %s", r, req.String(), lim.String())
		}
	}

	// The configuration file is the generated ConfigMap, mounted where
	// --config looks.
	cm := one[*v1.ConfigMap](t, objs)
	var volume string
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			volume = v.Name
		}
	}
	mounted := slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool {
		return m.Name == volume && m.MountPath == configDir && m.ReadOnly && m.SubPath == ""
	})
	if volume == "" || !mounted {
		t.Errorf("ConfigMap %s is not mounted read-only at %s (volumes %+v, mounts %+v)", cm.Name, configDir, spec.Volumes, c.VolumeMounts)
	}
	if _, ok := cm.Data[deploy.ConfigKey]; !ok {
		t.Errorf("ConfigMap %s has no key %s", cm.Name, deploy.ConfigKey)
	}
}

// Both the metrics Service and the PodDisruptionBudget select the replicas.
func TestServiceAndDisruptionBudget(t *testing.T) {
	objs, _ := base(t)
	d := one[*appsv1.Deployment](t, objs)
	podLabels := labels.Set(d.Spec.Template.Labels)
	c := d.Spec.Template.Spec.Containers[0]

	svc := one[*v1.Service](t, objs)
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
		t.Errorf("Service %s selects %v; pods have %v", svc.Name, svc.Spec.Selector, podLabels)
	}
	if len(svc.Spec.Ports) != 1 || containerPort(c, svc.Spec.Ports[0].TargetPort) != securePort {
		t.Errorf("Service %s ports %+v, want one to container port %d", svc.Name, svc.Spec.Ports, securePort)
	}

	pdb := one[*policyv1.PodDisruptionBudget](t, objs)
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || !sel.Matches(podLabels) {
		t.Errorf("PodDisruptionBudget selector %v does not match %v (%v)", pdb.Spec.Selector, podLabels, err)
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget minAvailable = %v, want 1 (of 2 replicas)", pdb.Spec.MinAvailable)
	}
}

// The ConfigMap's configuration loads as yardmaster loads it, and says
// what the other objects assume.
func TestConfig(t *testing.T) {
	objs, c := base(t)
	if len(c.Profiles) != 1 || c.Profiles[0].SchedulerName != name {
		t.Errorf("profiles %v, want one named %q", c.Profiles, name)
	}
	if diff := cmp.Diff(config.Default().Profiles[0], c.Profiles[0], cmpopts.IgnoreFields(framework.Profile{}, "Args")); diff != "" {
		t.Errorf("profile is not the default profile (-want +got):\n%s", diff)
	}
	if c.LeaderElection.ResourceNamespace != namespace || c.LeaderElection.ResourceName != name {
		t.Errorf("lease %s/%s, want %s/%s", c.LeaderElection.ResourceNamespace, c.LeaderElection.ResourceName, namespace, name)
	}
	if c.EnableProfiling {
		t.Errorf("enableProfiling is on: /debug/pprof would be served on the secure port; nobody needs it routinely")
	}
	if c.ClientConnection.Kubeconfig != "" {
		t.Errorf("clientConnection.kubeconfig = %q; in the cluster yardmaster uses its service account", c.ClientConnection.Kubeconfig)
	}

	// The file in the repository is the ConfigMap's content, byte for byte.
	file, err := fs.ReadFile(deploy.FS, path.Join(deploy.Base, deploy.ConfigKey))
	if err != nil {
		t.Fatal(err)
	}
	if cm := one[*v1.ConfigMap](t, objs); cm.Data[deploy.ConfigKey] != string(file) {
		t.Errorf("ConfigMap %s differs from %s", cm.Name, path.Join(deploy.Base, deploy.ConfigKey))
	}
}

// The commented NetworkTraffic block, uncommented as its comment says,
// makes a valid configuration. Until the plugin is in the registry only its
// shape is checked.
func TestConfigNetworkTrafficBlock(t *testing.T) {
	file, err := fs.ReadFile(deploy.FS, path.Join(deploy.Base, deploy.ConfigKey))
	if err != nil {
		t.Fatal(err)
	}
	uncommented, err := uncomment(string(file), "# BEGIN "+networkTraffic, "# END "+networkTraffic)
	if err != nil {
		t.Fatal(err)
	}

	var shape struct {
		Profiles []struct {
			PluginConfig []struct {
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal([]byte(uncommented), &shape); err != nil {
		t.Fatalf("uncommented configuration is not YAML: %v\n%s", err, uncommented)
	}
	if len(shape.Profiles) != 1 || len(shape.Profiles[0].PluginConfig) != 1 || shape.Profiles[0].PluginConfig[0].Name != networkTraffic {
		t.Fatalf("uncommented configuration has no NetworkTraffic pluginConfig:\n%s", uncommented)
	}
	var got []string
	for k := range shape.Profiles[0].PluginConfig[0].Args {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{
		"bearerTokenFile", "deviceName", "direction", "filterAbove", "insecureSkipVerify", "maxBandwidth",
		"missingMetricsPolicy", "nodeNameLabel", "podBandwidthEstimate", "prometheusAddress", "query",
		"refreshInterval", "staleAfter", "timeRange", "timeout", "tlsCAFile",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NetworkTraffic args shown (-want +got):\n%s", diff)
	}

	if _, ok := registry.NewInTree()[networkTraffic]; !ok {
		t.Skip("NetworkTraffic is not in the registry yet: the block's shape is checked, not its values")
	}
	c, err := config.Decode([]byte(uncommented))
	if err != nil {
		t.Fatalf("uncommented configuration: %v\n%s", err, uncommented)
	}
	if !slices.ContainsFunc(c.Profiles[0].Score, func(p framework.WeightedPlugin) bool { return p.Name == networkTraffic }) {
		t.Errorf("NetworkTraffic does not score: %+v", c.Profiles[0].Score)
	}
}

// uncomment removes the first "# " of every line strictly between the
// lines that end with begin and end.
func uncomment(s, begin, end string) (string, error) {
	lines := strings.Split(s, "\n")
	in, seen := false, false
	for i, l := range lines {
		switch trimmed := strings.TrimSpace(l); {
		case trimmed == begin:
			in, seen = true, true
		case trimmed == end:
			in = false
		case in:
			j := strings.Index(l, "#")
			if j < 0 || strings.TrimSpace(l[:j]) != "" {
				return "", fmt.Errorf("line %d between %q and %q is not commented: %q", i+1, begin, end, l)
			}
			lines[i] = l[:j] + strings.TrimPrefix(l[j+1:], " ")
		}
	}
	if !seen || in {
		return "", fmt.Errorf("no block between %q and %q", begin, end)
	}
	return strings.Join(lines, "\n"), nil
}

// Every example workload decodes and asks for the profile the base runs.
func TestExamples(t *testing.T) {
	_, c := base(t)
	entries, err := fs.ReadDir(deploy.FS, deploy.Examples)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("no examples")
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			data, err := fs.ReadFile(deploy.FS, path.Join(deploy.Examples, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			objs, err := deploy.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 {
				t.Fatal("no objects")
			}
			for _, o := range objs {
				spec := podSpec(o)
				if spec == nil {
					t.Errorf("%T is not a workload", o)
					continue
				}
				if spec.SchedulerName != c.Profiles[0].SchedulerName {
					t.Errorf("%T schedulerName = %q, want %q", o, spec.SchedulerName, c.Profiles[0].SchedulerName)
				}
				for _, ctr := range spec.Containers {
					if ctr.Resources.Requests.Cpu().IsZero() || ctr.Resources.Requests.Memory().IsZero() {
						t.Errorf("container %s requests no cpu or memory: nothing for the scheduler to fit", ctr.Name)
					}
				}
			}
		})
	}
}

// podSpec returns the pod spec of a pod or of a workload's template.
func podSpec(o runtime.Object) *v1.PodSpec {
	switch w := o.(type) {
	case *v1.Pod:
		return &w.Spec
	case *appsv1.Deployment:
		return &w.Spec.Template.Spec
	case *appsv1.StatefulSet:
		return &w.Spec.Template.Spec
	case *appsv1.DaemonSet:
		return &w.Spec.Template.Spec
	}
	return nil
}

// containerPort resolves a numeric or named port of c.
func containerPort(c v1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return 0
}

func isTrue(b *bool) bool { return b != nil && *b }

func ptrString[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
