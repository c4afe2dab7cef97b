package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/deploy"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/internal/procgroup"
	"github.com/yardmaster-io/yardmaster/internal/testca"
)

// Identities of the secure port's tests, static tokens of the shared
// control plane (identities adds them).
const (
	// prometheusUser is the service account deploy/overlays/servicemonitor
	// grants get on /metrics: kube-prometheus's Prometheus.
	prometheusUser  = "system:serviceaccount:monitoring:prometheus-k8s"
	prometheusToken = "e2e-prometheus-token"
	// noRBACUser is authenticated and granted nothing.
	noRBACUser  = "e2e-no-rbac"
	noRBACToken = "e2e-no-rbac-token"
)

// secureServingIdentities are the tokens of prometheusUser and noRBACUser.
func secureServingIdentities() []controlplane.Token {
	return []controlplane.Token{
		{Token: prometheusToken, User: prometheusUser, UID: "e2e-prometheus",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:monitoring", "system:authenticated"}},
		{Token: noRBACToken, User: noRBACUser, UID: "e2e-no-rbac", Groups: []string{"system:authenticated"}},
	}
}

// The secure port, as deploy/ runs it: yardmaster's authentication and
// authorization go through its own service account under deploy/'s RBAC
// (TokenReview, SubjectAccessReview, the extension-apiserver-authentication
// ConfigMap), and the ServiceMonitor overlay's grant lets Prometheus in.
// A scrape without credentials gets 401, a token the API server does not
// know 401, a token without RBAC 403, Prometheus's token 200; a client
// certificate signed by a CA the ConfigMap publishes is an identity too;
// the health paths answer without credentials.
func TestSecureServing(t *testing.T) {
	e := newEnv(t)
	base, err := deploy.Render(deploy.Base)
	if err != nil {
		t.Fatalf("render deploy/: %v", err)
	}
	overlay, err := deploy.Render(deploy.ServiceMonitorOverlay)
	if err != nil {
		t.Fatalf("render the ServiceMonitor overlay: %v", err)
	}
	e.applyRBAC(base, "kube-system", "yardmaster")
	e.applyObjects(onlyNamed(overlay, "yardmaster-metrics-reader"))

	// A client CA published in the ConfigMap, as kube-apiserver's
	// --client-ca-file would be, and a user of its certificates granted
	// what Prometheus is granted.
	ca := testca.New(t, "yardmaster-e2e-client-ca")
	e.publishClientCA(ca.PEM)
	const certUser = "e2e-cert-reader"
	e.applyObjects([]runtime.Object{&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-cert-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "yardmaster-metrics-reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: certUser}},
	}})
	e.waitAllowedGet(prometheusUser, "/metrics")
	e.waitAllowedGet(certUser, "/metrics")

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, serviceAccountToken); err != nil {
		t.Fatal(err)
	}
	d := e.startScheduler(func(o *app.Options) {
		o.RESTConfig = cp.RESTConfig(serviceAccountToken)
		o.Secure = app.NewSecureServing()
		o.Secure.Serving.BindAddress = net.IPv4(127, 0, 0, 1)
		o.Secure.Serving.BindPort = 0
		o.Secure.Authentication.RemoteKubeConfigFile = kubeconfig
		o.Secure.Authorization.RemoteKubeConfigFile = kubeconfig
		// A ConfigMap yardmaster may not read fails the start instead
		// of leaving certificates unchecked.
		o.Secure.Authentication.TolerateInClusterLookupFailure = false
	})
	addr := d.SecureAddr()
	if addr == "" || d.HTTPAddr() != "" {
		t.Fatalf("secure endpoint %q, plain %q: want only the secure one", addr, d.HTTPAddr())
	}
	// The daemon works: it places a pod.
	e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	e.createPod(e.pod("p").Req("100m", "128Mi"))
	e.waitBound(30*time.Second, "p")

	reader := ca.ClientCert(t, certUser)
	stranger := ca.ClientCert(t, "e2e-cert-stranger")
	// The client CA is read from the ConfigMap by an informer that starts
	// with the server; a certificate presented before it has the CA waits
	// for it (internal/server's waitForClientCA), so the first request of
	// the table, made as soon as the pod is bound, gets its answer.
	tests := []struct {
		name, path, token string
		cert              *tls.Certificate
		want              int
	}{
		{name: "healthz without credentials", path: "/healthz", want: http.StatusOK},
		{name: "livez without credentials", path: "/livez", want: http.StatusOK},
		{name: "readyz without credentials", path: "/readyz", want: http.StatusOK},
		{name: "metrics without credentials", path: "/metrics", want: http.StatusUnauthorized},
		{name: "metrics with a token the API server does not know", path: "/metrics", token: "not-a-token", want: http.StatusUnauthorized},
		{name: "metrics with a token without RBAC", path: "/metrics", token: noRBACToken, want: http.StatusForbidden},
		{name: "metrics as yardmaster itself", path: "/metrics", token: serviceAccountToken, want: http.StatusForbidden},
		{name: "metrics as the ServiceMonitor's identity", path: "/metrics", token: prometheusToken, want: http.StatusOK},
		{name: "pprof as the ServiceMonitor's identity", path: "/debug/pprof/", token: prometheusToken, want: http.StatusForbidden},
		{name: "metrics with a client certificate granted get", path: "/metrics", cert: &reader, want: http.StatusOK},
		{name: "metrics with a client certificate without RBAC", path: "/metrics", cert: &stranger, want: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := testca.HTTPSGet(t, addr, tc.path, tc.token, tc.cert)
			if code != tc.want {
				t.Errorf("GET %s: %d, want %d\n%.500s", tc.path, code, tc.want, body)
			}
			if tc.want == http.StatusOK && tc.path == "/metrics" && !strings.Contains(body, "scheduler_schedule_attempts_total") {
				t.Errorf("GET /metrics: no scheduler_schedule_attempts_total in\n%.1000s", body)
			}
		})
	}
	// Plain HTTP on the secure port is not served.
	if resp, err := httpClient.Get("http://" + addr + "/healthz"); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP answered 200 on the secure port")
		}
	}
}

// A kube-scheduler command line, as kubeadm writes it for kube-scheduler
// (secure port, delegated authentication and authorization kubeconfigs,
// leader election, --v), runs the yardmaster binary unchanged, without
// `run`: it places a pod and answers /healthz over HTTPS on the port
// given, which the log tells.
func TestSecureServingKubeSchedulerCommandLine(t *testing.T) {
	e := newEnv(t)
	bin := yardmasterBinary(t)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "scheduler.conf")
	if err := cp.WriteKubeconfig(kubeconfig, cp.AdminToken); err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "config.yaml")
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceNamespace: %[1]s
  resourceName: %[1]s
profiles:
- schedulerName: %[1]s
`, e.ns)
	if err := os.WriteFile(configFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(configFile); err != nil {
		t.Fatalf("the test's configuration: %v", err)
	}
	port, err := procgroup.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "yardmaster.log")
	proc, err := procgroup.Start("yardmaster", bin, []string{
		"--config=" + configFile,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=true",
		"--secure-port=" + strconv.Itoa(port),
		"--v=2",
	}, logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := proc.Stop(10 * time.Second); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("end of yardmaster's log:\n%s", proc.LogTail(replicaLogTail))
		}
		_ = e.client.CoordinationV1().Leases(e.ns).Delete(context.Background(), e.ns, metav1.DeleteOptions{})
	})

	addr := waitServingAddr(t, proc)
	e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	e.createPod(e.pod("p").Req("100m", "128Mi"))
	e.waitBound(60*time.Second, "p")
	for path, want := range map[string]int{"/healthz": http.StatusOK, "/livez": http.StatusOK, "/readyz": http.StatusOK, "/metrics": http.StatusUnauthorized} {
		if code, body := testca.HTTPSGet(t, addr, path, "", nil); code != want {
			t.Errorf("GET %s: %d, want %d\n%.500s", path, code, want, body)
		}
	}
	// The admin's token (system:masters) may read the metrics.
	if code, body := testca.HTTPSGet(t, addr, "/metrics", cp.AdminToken, nil); code != http.StatusOK {
		t.Errorf("GET /metrics as admin: %d\n%.500s", code, body)
	}
}

// servingRE finds the secure port's address in the log: k8s.io/apiserver's
// "Serving securely on HOST:PORT".
var servingRE = regexp.MustCompile(`Serving securely on (127\.0\.0\.1:[0-9]+)`)

// waitServingAddr waits until the process logs the secure port's address.
func waitServingAddr(t *testing.T, proc *procgroup.Process) string {
	t.Helper()
	var addr string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		if exited, err := proc.Exited(); exited {
			return false, fmt.Errorf("yardmaster exited: %v", err)
		}
		b, err := os.ReadFile(proc.LogPath())
		if err != nil {
			return false, nil
		}
		if m := servingRE.FindSubmatch(b); m != nil {
			addr = string(m[1])
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the secure port's address never appeared in the log: %v\n%s", err, proc.LogTail(replicaLogTail))
	}
	return addr
}

// onlyNamed returns the objects named name.
func onlyNamed(objs []runtime.Object, name string) []runtime.Object {
	var out []runtime.Object
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok && m.GetName() == name {
			out = append(out, o)
		}
	}
	return out
}

// applyObjects creates cluster roles and bindings with the admin client and
// deletes them when the test ends.
func (e *env) applyObjects(objs []runtime.Object) {
	e.t.Helper()
	rbac := e.client.RbacV1()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			_, err = rbac.ClusterRoles().Create(e.ctx, o, metav1.CreateOptions{})
			e.t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.ClusterRoleBinding:
			_, err = rbac.ClusterRoleBindings().Create(e.ctx, o, metav1.CreateOptions{})
			e.t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		default:
			e.t.Fatalf("applyObjects: %T", o)
		}
		if err != nil {
			e.t.Fatalf("create %T: %v", o, err)
		}
	}
}

// waitAllowedGet waits until the API server's authorizer lets user get the
// non-resource path (it reads new bindings from a cache).
func (e *env) waitAllowedGet(user, path string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		sar, err := e.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "get", Path: path}},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return sar.Status.Allowed, nil
	})
	if err != nil {
		e.t.Fatalf("%s was never allowed get %s: %v", user, path, err)
	}
}

// publishClientCA adds caPEM to the client-ca-file of the ConfigMap
// kube-system/extension-apiserver-authentication, as kube-apiserver's
// --client-ca-file would, and restores the ConfigMap when the test ends.
// The local control plane has no client CA, so there may be no ConfigMap
// yet; a kube-apiserver that has one merges its own CAs into what it finds
// there, so the addition stays until the test ends.
func (e *env) publishClientCA(caPEM []byte) {
	e.t.Helper()
	cms := e.client.CoreV1().ConfigMaps("kube-system")
	const name = "extension-apiserver-authentication"
	cm, err := cms.Get(e.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &v1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
			Data:       map[string]string{"client-ca-file": string(caPEM)},
		}
		if _, err := cms.Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("create ConfigMap kube-system/%s: %v", name, err)
		}
		e.t.Cleanup(func() {
			if err := ignoreNotFound(cms.Delete(context.Background(), name, metav1.DeleteOptions{})); err != nil {
				e.t.Errorf("delete ConfigMap kube-system/%s: %v", name, err)
			}
		})
		return
	}
	if err != nil {
		e.t.Fatalf("ConfigMap kube-system/%s: %v", name, err)
	}
	original := cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["client-ca-file"] += string(caPEM)
	if _, err := cms.Update(e.ctx, cm, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("update ConfigMap kube-system/%s: %v", name, err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Data = original.Data
			_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			e.t.Errorf("restore ConfigMap kube-system/%s: %v", name, err)
		}
	})
}
