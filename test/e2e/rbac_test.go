package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/deploy"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/internal/testca"
)

// The ServiceAccount of deploy/ as a static-token identity. The API server
// authenticates a ServiceAccount's own token to exactly this user and these
// groups, and RBAC binds the account by that user name, so the rules of
// deploy/ apply to it as they would in a cluster.
const (
	serviceAccountNamespace = "kube-system"
	serviceAccountName      = "yardmaster"
	serviceAccountUser      = "system:serviceaccount:" + serviceAccountNamespace + ":" + serviceAccountName
	// The control plane is on loopback and lives for one test run.
	serviceAccountToken = "e2e-yardmaster-service-account-token"
)

var serviceAccountGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + serviceAccountNamespace, "system:authenticated"}

// identities are the static-token users of the shared control plane besides
// its admin; TestMain passes them to controlplane.Start.
func identities() []controlplane.Token {
	return append([]controlplane.Token{{
		Token:  serviceAccountToken,
		User:   serviceAccountUser,
		UID:    "e2e-" + serviceAccountName,
		Groups: serviceAccountGroups,
	}}, secureServingIdentities()...)
}

// yardmaster runs as deploy/'s ServiceAccount, under nothing but deploy/'s
// RBAC and configuration, with leader election on: it takes its Lease,
// binds a pod that fits, and writes events and the PodScheduled condition
// for one that does not, without a single request refused.
func TestRBACOfDeployIsEnoughToSchedule(t *testing.T) {
	e := newEnv(t)
	objs, err := deploy.Render(deploy.Base)
	if err != nil {
		t.Fatalf("render deploy/: %v", err)
	}

	// The configuration the Deployment mounts, as a file, and the paths
	// its probes ask for.
	var cm *v1.ConfigMap
	var probes []*v1.HTTPGetAction
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.ConfigMap:
			cm = o
		case *appsv1.Deployment:
			for _, c := range o.Spec.Template.Spec.Containers {
				for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe} {
					if p != nil && p.HTTPGet != nil {
						probes = append(probes, p.HTTPGet)
					}
				}
			}
		}
	}
	if cm == nil || len(probes) == 0 {
		t.Fatalf("deploy/ renders no ConfigMap or no HTTP probes (probes %v)", probes)
	}
	configFile := filepath.Join(t.TempDir(), deploy.ConfigKey)
	if err := os.WriteFile(configFile, []byte(cm.Data[deploy.ConfigKey]), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(configFile)
	if err != nil {
		t.Fatalf("deploy/'s configuration: %v", err)
	}
	lease := cfg.LeaderElection
	if !lease.LeaderElect {
		t.Fatal("deploy/'s configuration turns leader election off")
	}

	// Cleanups run last registered first: the scheduler stops (releasing
	// its Lease under the RBAC under test), then refused requests are
	// reported, then the RBAC objects go.
	e.applyRBAC(objs, lease.ResourceNamespace, lease.ResourceName)
	e.waitAuthorized(lease.ResourceNamespace, lease.ResourceName)
	refused := &refusals{}
	t.Cleanup(func() {
		for _, r := range refused.list() {
			t.Errorf("refused as %s: %s", serviceAccountUser, r)
		}
	})

	e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	rc := cp.RESTConfig(serviceAccountToken)
	rc.WrapTransport = refused.wrap
	// The secure port's reviews and ConfigMap read go through clients of
	// k8s.io/apiserver's own, from a kubeconfig of the same identity; a
	// ConfigMap it may not read fails the start.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, serviceAccountToken); err != nil {
		t.Fatal(err)
	}
	secure := app.NewSecureServing()
	// The port the kubelet probes, on a port of its own.
	secure.Serving.BindAddress = net.IPv4(127, 0, 0, 1)
	secure.Serving.BindPort = 0
	secure.Authentication.RemoteKubeConfigFile = kubeconfig
	secure.Authorization.RemoteKubeConfigFile = kubeconfig
	secure.Authentication.TolerateInClusterLookupFailure = false
	d := e.startScheduler(func(o *app.Options) {
		// Nothing of the harness's own settings: deploy/'s file, deploy/'s
		// identity, leader election as the file has it (on).
		*o = app.Options{
			ConfigFile: configFile,
			RESTConfig: rc,
			// The profile takes this test's name so it sees only this
			// test's pods; the Lease keeps the name the file gives it,
			// which is the one the Role allows.
			Overrides:              config.Overrides{SchedulerName: ptr(e.scheduler)},
			Secure:                 secure,
			SchedulingStallTimeout: app.DefaultSchedulingStallTimeout,
		}
	})
	if got := d.Config.LeaderElection; got.ResourceNamespace != lease.ResourceNamespace || got.ResourceName != lease.ResourceName {
		t.Fatalf("the daemon's Lease is %s/%s, deploy/'s %s/%s", got.ResourceNamespace, got.ResourceName, lease.ResourceNamespace, lease.ResourceName)
	}

	e.createPod(e.pod("fits").Req("500m", "512Mi"))
	e.createPod(e.pod("too-big").Req("3", "512Mi"))

	node := e.waitBound(30*time.Second, "fits")["fits"]
	e.waitEvent("fits", "Scheduled", fmt.Sprintf("Successfully assigned %s/fits to %s", e.ns, node))
	e.waitFailedScheduling("too-big", "0/1 nodes are available", "Insufficient cpu")
	e.waitUnschedulableCondition("too-big")

	// Preemption: reading PodDisruptionBudgets, marking and deleting the
	// victim, nominating the node.
	e.priorityClass("low", 10)
	e.priorityClass("high", 1000)
	e.lowPod("low", "1400m")
	e.waitBound(30*time.Second, "low")
	e.createPod(e.pod("high").PriorityClassName(e.ns+"-high").Req("1", "512Mi"))
	e.waitBound(30*time.Second, "high")
	e.waitGone("low")

	// Volumes: a local volume bound (the volume's claimRef written), a
	// claim provisioned (its selected node written), both waited for.
	r := &volumeRun{e: e}
	r.prov = e.startProvisioner(r.provisionerName())
	r.localClass("local")
	r.provisionedClass("dynamic")
	e.addNode(e.node("b").Capacity("2", "4Gi", 110).Label(v1.LabelHostname, e.ns+"-b"))
	r.localVolume("local-pv", "local", "b", "1Gi")
	r.volumeClaim("local-data", "local", "1Gi")
	r.volumeClaim("dynamic-data", "dynamic", "1Gi")
	e.createPod(e.pod("with-volumes").Req("100m", "64Mi").PVC("local-data").PVC("dynamic-data"))
	if node := e.waitBound(60*time.Second, "with-volumes")["with-volumes"]; node != e.ns+"-b" {
		t.Errorf("with-volumes on %s, want b, where its local volume is", node)
	}

	// Devices: a claim allocated and reserved; an extended resource a
	// DeviceClass serves, through a claim the scheduler creates.
	dr := &draRun{e: e}
	dr.class("gpu", "e2e.yardmaster.io/rbac-gpu")
	dr.slice("b", gpus(2)...)
	dr.claim("gpu", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{dr.request("gpu", "gpu", 1, "")}})
	e.createPod(dr.podOf(draPod{name: "with-claim", claims: []string{"gpu"}}))
	e.createPod(dr.podOf(draPod{name: "with-extended", extended: map[v1.ResourceName]string{"e2e.yardmaster.io/rbac-gpu": "1"}}))
	e.waitBound(60*time.Second, "with-claim", "with-extended")

	l, err := e.client.CoordinationV1().Leases(lease.ResourceNamespace).Get(e.ctx, lease.ResourceName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Lease %s/%s: %v", lease.ResourceNamespace, lease.ResourceName, err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		t.Errorf("Lease %s/%s has no holder", lease.ResourceNamespace, lease.ResourceName)
	}

	// The kubelet would find the replica alive and ready: it probes
	// without credentials, and over HTTPS without checking the
	// certificate.
	for _, p := range probes {
		if p.Scheme != v1.URISchemeHTTPS {
			t.Errorf("probe of %s over %s, want HTTPS on the secure port", p.Path, p.Scheme)
			continue
		}
		if code, body := testca.HTTPSGet(t, d.SecureAddr(), p.Path, "", nil); code != http.StatusOK {
			t.Errorf("probe %s: %d %s", p.Path, code, body)
		}
	}
}

// applyRBAC creates deploy/'s ServiceAccount, roles and bindings with the
// admin client, checks they grant the identity TestMain registered, and
// deletes them (and the Lease) when the test ends.
func (e *env) applyRBAC(objs []runtime.Object, leaseNamespace, leaseName string) {
	e.t.Helper()
	ctx := e.ctx
	rbac := e.client.RbacV1()
	var deletes []func(context.Context) error
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		deletes = append(deletes, func(ctx context.Context) error {
			return e.client.CoordinationV1().Leases(leaseNamespace).Delete(ctx, leaseName, metav1.DeleteOptions{})
		})
		for _, del := range deletes {
			if err := ignoreNotFound(del(ctx)); err != nil {
				e.t.Errorf("cleanup: %v", err)
			}
		}
	})
	// A Lease left by an earlier run of this test would have to expire
	// before this one leads.
	if err := ignoreNotFound(e.client.CoordinationV1().Leases(leaseNamespace).Delete(ctx, leaseName, metav1.DeleteOptions{})); err != nil {
		e.t.Fatalf("delete Lease: %v", err)
	}

	var n int
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.ServiceAccount:
			if user := "system:serviceaccount:" + o.Namespace + ":" + o.Name; user != serviceAccountUser {
				e.t.Fatalf("deploy/'s ServiceAccount is %s; the test identity is %s", user, serviceAccountUser)
			}
			_, err = e.client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			deletes = append(deletes, func(ctx context.Context) error {
				return e.client.CoreV1().ServiceAccounts(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.ClusterRole:
			_, err = rbac.ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			deletes = append(deletes, func(ctx context.Context) error {
				return rbac.ClusterRoles().Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.ClusterRoleBinding:
			_, err = rbac.ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			deletes = append(deletes, func(ctx context.Context) error {
				return rbac.ClusterRoleBindings().Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.Role:
			_, err = rbac.Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			deletes = append(deletes, func(ctx context.Context) error {
				return rbac.Roles(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.RoleBinding:
			_, err = rbac.RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			deletes = append(deletes, func(ctx context.Context) error {
				return rbac.RoleBindings(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		default:
			continue
		}
		if err != nil {
			e.t.Fatalf("create %T: %v", o, err)
		}
		n++
	}
	if n != 6 {
		e.t.Fatalf("deploy/ has %d ServiceAccount and RBAC objects, want 6 (ServiceAccount, ClusterRole and Role, their bindings, and the binding of the authentication ConfigMap's reader)", n)
	}
}

// access is one request of the service account, as a SubjectAccessReview
// asks about it.
type access struct {
	verb, group, resource, subresource, namespace, name string
}

func (a access) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if a.name != "" {
		r += " " + a.name
	}
	if a.namespace != "" {
		r += " in " + a.namespace
	}
	return a.verb + " " + r
}

// allowed asks the API server's authorizer whether the service account may
// make the request.
func (e *env) allowed(ctx context.Context, a access) (bool, error) {
	sar, err := e.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   serviceAccountUser,
			Groups: serviceAccountGroups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource,
				Namespace: a.namespace, Name: a.name,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// waitAuthorized waits until the API server's authorizer has the new
// roles (it reads them from a cache, so a request made at once could be
// refused for a moment), then checks that the account may do nothing
// beyond yardmaster's needs: a sample of what a scheduler must never do.
// Whether the roles allow enough is left to yardmaster's own requests.
func (e *env) waitAuthorized(leaseNamespace, leaseName string) {
	e.t.Helper()
	// One rule of each role: the authorizer then has every role and
	// binding, each object whole.
	probes := []access{
		{verb: "list", resource: "pods"},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: leaseNamespace, name: leaseName},
		{verb: "watch", resource: "configmaps", namespace: "kube-system", name: "extension-apiserver-authentication"},
	}
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, a := range probes {
			if ok, err := e.allowed(ctx, a); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("deploy/'s RBAC never allowed %s %v: %v", serviceAccountUser, probes, err)
	}

	never := []access{
		{verb: "get", resource: "secrets", namespace: "kube-system", name: "any"},
		{verb: "list", resource: "secrets"},
		{verb: "list", resource: "configmaps"},
		{verb: "get", resource: "configmaps", namespace: "kube-system", name: "kube-proxy"},
		{verb: "create", resource: "pods", namespace: e.ns},
		{verb: "update", resource: "pods", namespace: e.ns},
		{verb: "create", resource: "pods", subresource: "eviction", namespace: e.ns},
		{verb: "update", resource: "nodes"},
		{verb: "patch", resource: "nodes", subresource: "status"},
		{verb: "delete", group: "events.k8s.io", resource: "events", namespace: e.ns},
		{verb: "update", group: "apps", resource: "deployments", namespace: "kube-system"},
		{verb: "list", group: "coordination.k8s.io", resource: "leases", namespace: leaseNamespace},
		{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: leaseNamespace, name: "kube-scheduler"},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: leaseNamespace, name: "kube-scheduler"},
		{verb: "delete", group: "coordination.k8s.io", resource: "leases", namespace: leaseNamespace, name: leaseName},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "default"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: "kube-system"},
	}
	for _, a := range never {
		ok, err := e.allowed(e.ctx, a)
		if err != nil {
			e.t.Fatalf("SubjectAccessReview %s: %v", a, err)
		}
		if ok {
			e.t.Errorf("%s may %s; yardmaster never needs to", serviceAccountUser, a)
		}
	}
}

// waitEvent waits for an event of the pod with this reason and message.
func (e *env) waitEvent(pod, reason, message string) {
	e.t.Helper()
	var last []string
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := e.client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + pod + ",reason=" + reason,
		})
		if err != nil {
			return false, err
		}
		last = last[:0]
		for _, ev := range evs.Items {
			if ev.Message == message {
				return true, nil
			}
			last = append(last, ev.Message)
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("no %s event for %s with message %q (got %q): %v", reason, pod, message, last, err)
	}
}

// refusals records every request the API server refused (401 or 403).
type refusals struct {
	mu  sync.Mutex
	got []string
}

// wrap is a rest.Config WrapTransport.
func (r *refusals) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized) {
			return resp, err
		}
		// Keep the body (the Status naming what was refused) for the
		// report, and hand the caller an unread copy.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		r.mu.Lock()
		// The body may be protobuf: quoted, its message still reads.
		r.got = append(r.got, fmt.Sprintf("%d %s %s: %q", resp.StatusCode, req.Method, req.URL.RequestURI(), body))
		r.mu.Unlock()
		return resp, nil
	})
}

func (r *refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
