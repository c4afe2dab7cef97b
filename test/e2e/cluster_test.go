package e2e

// Tests on a control plane that behaves like a cluster: KWOK plays the
// kubelet of every node (pods go Running and Ready, Jobs' pods succeed,
// deleted pods terminate), and kube-controller-manager runs the workload
// controllers, so pods come from Jobs, Deployments and StatefulSets, as
// users make them, and are replaced when they go.
//
// Each test checks, besides the outcome, that what should wake a waiting
// pod does so: a pod freed by a Job's pods finishing, a preemptor whose
// victims terminated, a rollout that needs the old pods' room must bind
// within requeueBound of the change. Without a requeue they would wait for
// the unschedulable pool's flush (queue.DefaultMaxUnschedulableStay, 5
// minutes): the bound is a correctness bound, far from either, not a
// measure of speed.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/queue"
)

// requeueBound is how long a pod may wait, once what kept it out is gone,
// before it must be bound: its backoff (at most 10 s) and a loaded
// machine's delays, a tenth of the unschedulable pool's flush.
const requeueBound = queue.DefaultMaxUnschedulableStay / 10

// clusterPlane is the control plane of this file's tests, started by the
// first of them and stopped by TestMain (stopClusterPlane). It is not the
// package's shared one: node-lifecycle-controller would mark the plain
// nodes of the other tests, which no kubelet renews, Unknown and taint
// them, and the garbage and pod collectors would remove the pods those
// tests make with made-up owners or nodes. Every node here is a KWOK node.
var clusterPlane struct {
	once  sync.Once
	plane *controlplane.ControlPlane
	err   error
}

// newClusterEnv is newEnv on the cluster control plane.
func newClusterEnv(t *testing.T) *env {
	t.Helper()
	clusterPlane.once.Do(func() {
		clusterPlane.plane, clusterPlane.err = controlplane.Start(context.Background(), controlplane.Options{
			Tokens:      identities(),
			KWOK:        true,
			Controllers: append(controlplane.WorkloadControllers(), controlplane.StorageControllers()...),
		})
	})
	if clusterPlane.err != nil {
		t.Fatalf("start the cluster control plane: %v", clusterPlane.err)
	}
	return newEnvOn(t, clusterPlane.plane)
}

// stopClusterPlane stops the cluster control plane if a test started it.
func stopClusterPlane() error {
	if clusterPlane.plane == nil {
		return nil
	}
	return clusterPlane.plane.Stop()
}

// addKWOKNode creates a node that KWOK runs.
func (e *env) addKWOKNode(n *frameworktest.NodeWrapper) *v1.Node {
	e.t.Helper()
	node, err := controlplane.CreateKWOKNode(e.ctx, e.client, n.Obj())
	if err != nil {
		e.t.Fatalf("create KWOK node %s: %v", n.Node.Name, err)
	}
	return node
}

// podTemplate makes a pod template of this test's scheduler from a pod
// builder: its labels, annotations and spec.
func (e *env) podTemplate(p *frameworktest.PodWrapper) v1.PodTemplateSpec {
	pod := p.SchedulerName(e.scheduler).Obj()
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations},
		Spec:       pod.Spec,
	}
}

// podsWith lists the namespace's pods with label app=name.
func (e *env) podsWith(app string) []v1.Pod {
	e.t.Helper()
	pods, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatalf("list pods of %s: %v", app, err)
	}
	return pods.Items
}

// podEvent is one event of a podWatch, with the time the test received it.
type podEvent struct {
	typ  watch.EventType
	pod  *v1.Pod
	seen time.Time
}

// podWatch records every change to the namespace's pods, in the API
// server's order (one watch delivers its events in resourceVersion
// order), so a test can tell what happened before what.
type podWatch struct {
	mu     sync.Mutex
	events []podEvent
	done   chan struct{}
}

// watchPods starts recording; it stops when the test ends.
func (e *env) watchPods() *podWatch {
	e.t.Helper()
	w, err := e.client.CoreV1().Pods(e.ns).Watch(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("watch pods: %v", err)
	}
	pw := &podWatch{done: make(chan struct{})}
	go func() {
		defer close(pw.done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue // an error status; the test's checks will miss what follows
			}
			pw.mu.Lock()
			pw.events = append(pw.events, podEvent{typ: ev.Type, pod: pod, seen: time.Now()})
			pw.mu.Unlock()
		}
	}()
	e.t.Cleanup(func() { w.Stop(); <-pw.done })
	return pw
}

// snapshot returns the events so far.
func (pw *podWatch) snapshot() []podEvent {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return slices.Clone(pw.events)
}

// jobPodsRunFor is how long each Job pod runs on its KWOK node before it
// succeeds (controlplane.KWOKRunDurationAnnotation): long enough for the
// waiting pod to be tried and found unschedulable first, on a loaded
// machine too.
const jobPodsRunFor = 10 * time.Second

// A pod that fits only once a Job's pods have finished is bound as soon
// as they have: their completion (phase Succeeded, which the scheduler's
// informer sees as the pod leaving) must wake it from the unschedulable
// pool, and the pod must not be bound while they still run.
func TestPodFitsOnceJobPodsFinish(t *testing.T) {
	e := newClusterEnv(t)
	e.addKWOKNode(e.node("a").Capacity("2", "4Gi", 110))
	e.startScheduler()

	// 2 Job pods × 1 cpu fill the node's 2 cpu.
	job := frameworktest.MakePod().Label("app", "batch").Req("1", "256Mi")
	job.Spec.RestartPolicy = v1.RestartPolicyNever
	template := e.podTemplate(job)
	template.Annotations = map[string]string{controlplane.KWOKRunDurationAnnotation: jobPodsRunFor.String()}
	two := int32(2)
	if _, err := e.client.BatchV1().Jobs(e.ns).Create(e.ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "batch"},
		Spec:       batchv1.JobSpec{Parallelism: &two, Completions: &two, Template: template},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create job: %v", err)
	}
	e.waitPhase("batch", 2, v1.PodRunning)

	e.createPod(e.pod("waiting").Req("2", "256Mi"))
	e.waitFailedScheduling("waiting", "0/1 nodes are available", "1 Insufficient cpu")
	// The attempt that failed must have seen the Job's pods running, or
	// this test would not be testing the wake-up.
	for _, p := range e.podsWith("batch") {
		if p.Status.Phase != v1.PodRunning {
			t.Fatalf("Job pod %s is %s before the waiting pod was found unschedulable: raise jobPodsRunFor", p.Name, p.Status.Phase)
		}
	}

	finished := e.waitPhase("batch", 2, v1.PodSucceeded)
	node := e.waitBoundWithin("waiting", requeueBound, "of the Job's pods finishing")
	t.Logf("bound %s after the Job's pods were seen finished", time.Since(finished).Round(100*time.Millisecond))
	if node != e.ns+"-a" {
		t.Errorf("waiting pod on %q, want %s-a", node, e.ns)
	}
	// Listed after the binding: a Job pod not Succeeded now was running
	// when the scheduler bound 2 cpu beside it.
	for _, p := range e.podsWith("batch") {
		if p.Status.Phase != v1.PodSucceeded {
			t.Errorf("the waiting pod was bound while Job pod %s was %s: node overcommitted", p.Name, p.Status.Phase)
		}
	}
	e.waitPhase("", 1, v1.PodRunning)
}

// waitBoundWithin waits at most bound for the pod to be bound and returns
// its node; after says since what, for the failure message.
func (e *env) waitBoundWithin(pod string, bound time.Duration, after string) string {
	e.t.Helper()
	var node string
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, bound, true, func(ctx context.Context) (bool, error) {
		p, err := e.client.CoreV1().Pods(e.ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	if err != nil {
		e.t.Fatalf("%s not bound within %s %s: the change did not wake it (%v)", pod, bound, after, err)
	}
	return node
}

// waitPhase waits until n pods with label app=app (any pod of the
// namespace when app is "") are in phase, and returns when it saw them.
func (e *env) waitPhase(app string, n int, phase v1.PodPhase) time.Time {
	e.t.Helper()
	var have int
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		opts := metav1.ListOptions{}
		if app != "" {
			opts.LabelSelector = "app=" + app
		}
		pods, err := e.client.CoreV1().Pods(e.ns).List(ctx, opts)
		if err != nil {
			return false, err
		}
		have = 0
		for _, p := range pods.Items {
			if p.Status.Phase == phase && p.DeletionTimestamp == nil {
				have++
			}
		}
		return have >= n, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %d pods of %q in phase %s (have %d): %v", n, app, phase, have, err)
	}
	return time.Now()
}

// deployment makes a Deployment of this test's scheduler whose pods carry
// app=name.
func (e *env) deployment(name string, replicas int32, p *frameworktest.PodWrapper) *appsv1.Deployment {
	e.t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: e.podTemplate(p.Label("app", name)),
		},
	}
	got, err := e.client.AppsV1().Deployments(e.ns).Create(e.ctx, d, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create deployment %s: %v", name, err)
	}
	return got
}

// A pod that fits only where lower-priority pods run preempts them: they
// get a deletionTimestamp and a DisruptionTarget condition, KWOK
// terminates them, and the preemptor, nominated to their node meanwhile,
// is bound there within requeueBound of the last one going. The
// ReplicaSet replaces the victims; the replacements, of lower priority,
// must not take the room the preemptor was nominated for.
func TestPreemptionVictimsTerminate(t *testing.T) {
	e := newClusterEnv(t)
	e.addKWOKNode(e.node("a").Capacity("2", "4Gi", 110))
	e.priorityClass("low", 10)
	e.priorityClass("high", 1000)
	e.startScheduler()

	e.deployment("low", 2, frameworktest.MakePod().PriorityClassName(e.ns+"-low").Req("1", "256Mi"))
	e.waitPhase("low", 2, v1.PodRunning)
	var victims []string
	for _, p := range e.podsWith("low") {
		victims = append(victims, p.Name)
	}
	slices.Sort(victims)

	w := e.watchPods()
	e.createPod(e.pod("critical").PriorityClassName(e.ns+"-high").Req("2", "256Mi"))
	for _, v := range victims {
		e.waitGone(v)
	}
	node := e.waitBoundWithin("critical", requeueBound, "of its victims going")
	if node != e.ns+"-a" {
		t.Fatalf("critical on %q, want %s-a", node, e.ns)
	}

	// Read the history: each victim was marked (deletionTimestamp and
	// DisruptionTarget) and then deleted; the preemptor was nominated to
	// the node before any of that, and bound after the last deletion.
	var nominated, bound time.Time
	var victimsGone time.Time
	marked, deleted := map[string]bool{}, map[string]bool{}
	for _, ev := range w.snapshot() {
		p := ev.pod
		switch {
		case p.Name == "critical":
			if nominated.IsZero() && p.Status.NominatedNodeName == node && p.Spec.NodeName == "" {
				nominated = ev.seen
			}
			if bound.IsZero() && p.Spec.NodeName != "" {
				bound = ev.seen
				if len(deleted) != len(victims) {
					t.Errorf("critical bound while victims %v were not all gone (gone: %v)", victims, deleted)
				}
			}
		case slices.Contains(victims, p.Name):
			if ev.typ == watch.Deleted {
				if !marked[p.Name] {
					t.Errorf("victim %s deleted without first being marked for graceful termination", p.Name)
				}
				deleted[p.Name] = true
				victimsGone = ev.seen
			} else if p.DeletionTimestamp != nil && hasDisruptionTarget(p) {
				if nominated.IsZero() {
					t.Errorf("victim %s marked before critical was nominated to %s", p.Name, node)
				}
				marked[p.Name] = true
			}
		}
	}
	if nominated.IsZero() {
		t.Errorf("critical was never seen with status.nominatedNodeName=%s before its binding", node)
	}
	if len(deleted) != len(victims) {
		t.Fatalf("victims deleted: %v, want all of %v", deleted, victims)
	}
	if d := bound.Sub(victimsGone); d > requeueBound {
		t.Errorf("critical bound %s after its last victim went, want at most %s: the deletion did not wake it", d, requeueBound)
	} else {
		t.Logf("critical bound %s after its last victim went", d.Round(10*time.Millisecond))
	}

	// The ReplicaSet made replacements, which wait: nothing of lower
	// priority took the room.
	e.waitPhase("", 1, v1.PodRunning)
	var replacements int
	for _, p := range e.podsWith("low") {
		if slices.Contains(victims, p.Name) {
			t.Errorf("victim %s still exists", p.Name)
			continue
		}
		replacements++
		if p.Spec.NodeName != "" {
			t.Errorf("replacement %s bound to %s, where critical was nominated", p.Name, p.Spec.NodeName)
		}
	}
	if replacements != len(victims) {
		t.Errorf("%d replacements, want %d: the ReplicaSet did not see its pods go", replacements, len(victims))
	}
}

func hasDisruptionTarget(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

// rolloutBound is how long a 4-replica rollout may take: about four
// waves, each waiting for an old pod to go and a new one to be bound and
// Ready.
const rolloutBound = 4 * requeueBound

// A Deployment is rolled out: its replicas run, on the nodes yardmaster
// chose; a new template replaces them all. The cluster holds exactly the
// replicas, so every new pod (the surge one included) waits for an old
// one to go: the rollout completes only if each deletion wakes the
// pending new pods.
func TestDeploymentRollout(t *testing.T) {
	e := newClusterEnv(t)
	e.addKWOKNode(e.node("a").Capacity("2", "4Gi", 110))
	e.addKWOKNode(e.node("b").Capacity("2", "4Gi", 110))
	e.startScheduler()

	// 2 nodes × 2 cpu = 4 replicas × 1 cpu. The default strategy: 25%
	// surge (1 pod) and 25% unavailable (1 pod).
	const replicas = 4
	d := e.deployment("web", replicas, frameworktest.MakePod().Req("1", "256Mi").Label("version", "v1"))
	e.waitRolledOut(d.Name, d.Generation, replicas, requeueBound+time.Minute)
	old := e.checkReplicas("web", "v1", replicas)

	cur, err := e.client.AppsV1().Deployments(e.ns).Get(e.ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Template.Labels["version"] = "v2"
	cur, err = e.client.AppsV1().Deployments(e.ns).Update(e.ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update the template: %v", err)
	}
	start := time.Now()
	e.waitRolledOut(d.Name, cur.Generation, replicas, rolloutBound)
	t.Logf("rolled out in %s", time.Since(start).Round(100*time.Millisecond))
	for _, p := range e.checkReplicas("web", "v2", replicas) {
		if slices.Contains(old, p) {
			t.Errorf("pod %s of the old template is still there", p)
		}
	}
	e.assertNoOvercommit()
}

// waitRolledOut waits until the Deployment has observed generation and
// has exactly replicas pods, all of the current template, Ready and
// available.
func (e *env) waitRolledOut(name string, generation int64, replicas int32, timeout time.Duration) {
	e.t.Helper()
	var s appsv1.DeploymentStatus
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		d, err := e.client.AppsV1().Deployments(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s = d.Status
		return s.ObservedGeneration >= generation && s.Replicas == replicas && s.UpdatedReplicas == replicas &&
			s.ReadyReplicas == replicas && s.AvailableReplicas == replicas, nil
	})
	if err != nil {
		e.t.Fatalf("deployment %s not rolled out within %s (status %+v): %v", name, timeout, s, err)
	}
}

// checkReplicas checks that the pods of app are exactly n, each of the
// template labelled version, Running and Ready on a node of this test, at
// most 2 per node, and returns their names.
func (e *env) checkReplicas(app, version string, n int) []string {
	e.t.Helper()
	var names []string
	perNode := map[string]int{}
	for _, p := range e.podsWith(app) {
		names = append(names, p.Name)
		if p.Labels["version"] != version || p.Status.Phase != v1.PodRunning || !podReady(&p) || p.DeletionTimestamp != nil {
			e.t.Errorf("pod %s: version %s, phase %s, ready %t, deleting %t; want %s, Running, Ready",
				p.Name, p.Labels["version"], p.Status.Phase, podReady(&p), p.DeletionTimestamp != nil, version)
		}
		perNode[p.Spec.NodeName]++
	}
	if len(names) != n {
		e.t.Errorf("%d pods of %s (%v), want %d", len(names), app, names, n)
	}
	for node, c := range perNode {
		if node != e.ns+"-a" && node != e.ns+"-b" {
			e.t.Errorf("%d pods of %s on %q, not a node of this test", c, app, node)
		}
	}
	return names
}

func podReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// A StatefulSet with a volumeClaimTemplate on local volumes
// (WaitForFirstConsumer): each replica's claim is made by the StatefulSet
// controller, yardmaster places the pod on the node of a volume that
// fits and binds it in PreBind, the PV controller completes the binding,
// and KWOK runs the pod, which lets the next replica be made.
func TestStatefulSetWithLocalVolumes(t *testing.T) {
	e := newClusterEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		e.addKWOKNode(e.node(n).Capacity("4", "8Gi", 110))
	}
	r := &volumeRun{e: e}
	r.localClass("local")
	// One 10Gi volume on a and one on b; c has none.
	r.localVolume("pv-a", "local", "a", "10Gi")
	r.localVolume("pv-b", "local", "b", "10Gi")
	e.startScheduler()

	class := e.ns + "-local"
	replicas := int32(2)
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "store"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "store",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "store"}},
			Template:    e.podTemplate(frameworktest.MakePod().Label("app", "store").Req("500m", "256Mi").PVC("data")),
			VolumeClaimTemplates: []v1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: v1.PersistentVolumeClaimSpec{
					AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					StorageClassName: &class,
					Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("5Gi")}},
				},
			}},
		},
	}
	if _, err := e.client.AppsV1().StatefulSets(e.ns).Create(e.ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create statefulset: %v", err)
	}
	e.waitPhase("store", 2, v1.PodRunning)

	seen := map[string]string{}
	for i := range replicas {
		pod := fmt.Sprintf("store-%d", i)
		p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		claim, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(e.ctx, "data-"+pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := e.ns + "-pv-" + p.Spec.NodeName[len(e.ns)+1:]
		if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName != want {
			t.Errorf("claim of %s on %s: phase %s, volume %q; want Bound to %s", pod, p.Spec.NodeName, claim.Status.Phase, claim.Spec.VolumeName, want)
		}
		if other, ok := seen[p.Spec.NodeName]; ok {
			t.Errorf("%s and %s both on %s, which has one volume", other, pod, p.Spec.NodeName)
		}
		seen[p.Spec.NodeName] = pod
	}
}
