package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// testLabel marks the nodes a test created, for cleanup.
const testLabel = "e2e.yardmaster.io/test"

// env is one test's slice of the shared control plane (or of one of its
// own, newEnvOn).
type env struct {
	t      *testing.T
	plane  *controlplane.ControlPlane
	ctx    context.Context
	client kubernetes.Interface
	ns     string
	// scheduler is the schedulerName of this test's pods and profile.
	scheduler string
	// beforeRun, when set, adjusts the daemon before it starts.
	beforeRun func(*app.Daemon)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, cp)
}

// newEnvOn is newEnv on plane.
func newEnvOn(t *testing.T, plane *controlplane.ControlPlane) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	client := plane.AdminClient()
	ns, err := controlplane.CreateNamespace(ctx, client, "e2e")
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	e := &env{t: t, plane: plane, ctx: ctx, client: client, ns: ns, scheduler: ns}
	t.Cleanup(e.cleanup)
	return e
}

// cleanup removes what the test made. Without a kubelet a pod only
// disappears with grace period 0. Claims and PodGroups go after the pods:
// their protection finalizers stay until the storage, DRA and PodGroup
// protection controllers see no pod using them, and then they release
// their volumes and devices. A plane that serves no PodGroups answers
// NotFound, which is nothing to clean. Without
// the namespace controller a namespace is never emptied, so what is left
// stays in a Terminating namespace.
func (e *env) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	zero := int64(0)
	if err := e.client.CoreV1().Pods(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		e.t.Logf("cleanup pods: %v", err)
	}
	if err := e.client.CoreV1().PersistentVolumeClaims(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		e.t.Logf("cleanup PersistentVolumeClaims: %v", err)
	}
	if err := e.client.ResourceV1().ResourceClaims(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		e.t.Logf("cleanup ResourceClaims: %v", err)
	}
	if err := e.client.SchedulingV1beta1().PodGroups(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Logf("cleanup PodGroups: %v", err)
	}
	if err := e.client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: testLabel + "=" + e.ns}); err != nil {
		e.t.Logf("cleanup nodes: %v", err)
	}
	if err := e.client.CoreV1().Namespaces().Delete(ctx, e.ns, metav1.DeleteOptions{}); err != nil {
		e.t.Logf("cleanup namespace: %v", err)
	}
}

// startScheduler runs an in-process yardmaster, wired exactly as
// `yardmaster run` wires it, for this test's scheduler name. It stops when
// the test ends.
func (e *env) startScheduler(mutate ...func(*app.Options)) *app.Daemon {
	e.t.Helper()
	d, stop := e.runScheduler(mutate...)
	e.t.Cleanup(func() {
		if err := stop(); err != nil {
			e.t.Errorf("scheduler exited: %v", err)
		}
	})
	return d
}

// runScheduler is startScheduler for tests that stop the daemon
// themselves: stop cancels it and returns what Run returned.
func (e *env) runScheduler(mutate ...func(*app.Options)) (d *app.Daemon, stop func() error) {
	e.t.Helper()
	// Tests run one scheduler per test with no standby, on a client fast
	// enough not to be the bottleneck.
	o := app.Options{
		RESTConfig: e.plane.RESTConfig(e.plane.AdminToken),
		Overrides: config.Overrides{
			SchedulerName: ptr(e.scheduler),
			LeaderElect:   ptr(false),
			QPS:           ptr[float32](500),
			Burst:         ptr(1000),
		},
	}
	for _, m := range mutate {
		m(&o)
	}
	d, err := app.NewDaemon(o, zaptest.NewLogger(e.t))
	if err != nil {
		e.t.Fatalf("new daemon: %v", err)
	}
	if e.beforeRun != nil {
		e.beforeRun(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	var runErr error
	return d, func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
}

// node returns a builder for a Ready node labelled for this test.
func (e *env) node(name string) *frameworktest.NodeWrapper {
	return frameworktest.MakeNode().Name(e.ns+"-"+name).Label(testLabel, e.ns)
}

// addNode creates a Ready node.
func (e *env) addNode(n *frameworktest.NodeWrapper) *v1.Node {
	e.t.Helper()
	node, err := controlplane.CreateReadyNode(e.ctx, e.client, n.Obj())
	if err != nil {
		e.t.Fatalf("create node %s: %v", n.Node.Name, err)
	}
	return node
}

// pod returns a builder for a pod of this test's scheduler.
func (e *env) pod(name string) *frameworktest.PodWrapper {
	return frameworktest.MakePod().Namespace(e.ns).Name(name).SchedulerName(e.scheduler)
}

// createPod creates a pod.
func (e *env) createPod(p *frameworktest.PodWrapper) *v1.Pod {
	e.t.Helper()
	obj := p.Obj().DeepCopy()
	obj.UID = ""
	got, err := e.client.CoreV1().Pods(e.ns).Create(e.ctx, obj, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create pod %s: %v", obj.Name, err)
	}
	return got
}

// waitBound waits until every named pod has a node and returns pod → node.
func (e *env) waitBound(timeout time.Duration, names ...string) map[string]string {
	e.t.Helper()
	got, err := e.pollBound(timeout, names)
	if err != nil {
		e.t.Fatalf("waiting for pods to be bound (got %v): %v", got, err)
	}
	return got
}

// pollBound waits until every named pod has a node; it returns pod →
// node for those that have one.
func (e *env) pollBound(timeout time.Duration, names []string) (map[string]string, error) {
	got := map[string]string{}
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			if _, ok := got[n]; ok {
				continue
			}
			p, err := e.client.CoreV1().Pods(e.ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Spec.NodeName == "" {
				return false, nil
			}
			got[n] = p.Spec.NodeName
		}
		return true, nil
	})
	return got, err
}

// waitAllBound waits until n pods of the namespace are bound and returns
// pod → node.
func (e *env) waitAllBound(timeout time.Duration, n int) map[string]string {
	e.t.Helper()
	var got map[string]string
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got = e.placements()
		return len(got) >= n, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %d bound pods (have %d): %v", n, len(got), err)
	}
	return got
}

// placements returns pod → node for every bound pod of the namespace.
func (e *env) placements() map[string]string {
	e.t.Helper()
	pods, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("list pods: %v", err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			out[p.Name] = p.Spec.NodeName
		}
	}
	return out
}

// expectPending checks that a pod stays unbound for d.
func (e *env) expectPending(name string, d time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatalf("get pod %s: %v", name, err)
		}
		if p.Spec.NodeName != "" {
			e.t.Fatalf("pod %s was bound to %s, want it pending", name, p.Spec.NodeName)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitFailedScheduling waits for a FailedScheduling event on the pod whose
// message contains every want substring, and returns the message.
func (e *env) waitFailedScheduling(pod string, want ...string) string {
	e.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := e.client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + pod + ",reason=FailedScheduling",
		})
		if err != nil {
			return false, err
		}
	events:
		for _, ev := range evs.Items {
			last = ev.Message
			for _, w := range want {
				if !strings.Contains(ev.Message, w) {
					continue events
				}
			}
			if ev.Type != v1.EventTypeWarning {
				return false, fmt.Errorf("FailedScheduling event of type %q", ev.Type)
			}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("no FailedScheduling event for %s containing %q (last message %q): %v", pod, want, last, err)
	}
	return last
}

// waitCondition waits for the pod's PodScheduled=False condition with reason
// Unschedulable and returns its message.
func (e *env) waitUnschedulableCondition(pod string) string {
	e.t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := e.client.CoreV1().Pods(e.ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
				msg = c.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("pod %s never got PodScheduled=False/Unschedulable: %v", pod, err)
	}
	return msg
}

// nodeRequests sums the requests of the pods bound to each node, from the
// API, the way the kubelet would count them.
func (e *env) nodeRequests() map[string]framework.Resource {
	e.t.Helper()
	pods, err := e.client.CoreV1().Pods(metav1.NamespaceAll).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("list pods: %v", err)
	}
	out := map[string]framework.Resource{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" {
			continue
		}
		r := out[p.Spec.NodeName]
		req := framework.NewPodInfo(p).Requests
		r.AddResource(&req, 1)
		r.AllowedPodNumber++
		out[p.Spec.NodeName] = r
	}
	return out
}

// assertNoOvercommit fails if any node of this test holds more than its
// allocatable cpu, memory or pod count.
func (e *env) assertNoOvercommit() {
	e.t.Helper()
	nodes, err := e.client.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + e.ns})
	if err != nil {
		e.t.Fatalf("list nodes: %v", err)
	}
	used := e.nodeRequests()
	for _, n := range nodes.Items {
		alloc := framework.NewResource(n.Status.Allocatable)
		u := used[n.Name]
		if u.MilliCPU > alloc.MilliCPU || u.Memory > alloc.Memory || u.AllowedPodNumber > alloc.AllowedPodNumber {
			e.t.Errorf("node %s overcommitted: requests cpu=%dm mem=%d pods=%d, allocatable cpu=%dm mem=%d pods=%d",
				n.Name, u.MilliCPU, u.Memory, u.AllowedPodNumber, alloc.MilliCPU, alloc.Memory, alloc.AllowedPodNumber)
		}
	}
}

// priorityClass creates PriorityClass ns-name, deleted when the test ends.
func (e *env) priorityClass(name string, value int32) {
	e.t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name}, Value: value}
	if _, err := e.client.SchedulingV1().PriorityClasses().Create(e.ctx, pc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create priority class: %v", err)
	}
	e.t.Cleanup(func() {
		_ = e.client.SchedulingV1().PriorityClasses().Delete(context.Background(), pc.Name, metav1.DeleteOptions{})
	})
}

func ptr[T any](v T) *T { return &v }

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
