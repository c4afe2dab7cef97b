package controlplane_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// TestKWOK starts a control plane with KWOK and the workload controllers
// and no scheduler, binds pods itself and checks what KWOK and the
// controllers make of them on the API, then that Stop leaves nothing.
func TestKWOK(t *testing.T) {
	cp := startAll(t, controlplane.Options{LogDir: t.TempDir(), KWOK: true, Controllers: controlplane.WorkloadControllers()})[0]
	ctx := t.Context()
	client := cp.AdminClient()
	ns, err := controlplane.CreateNamespace(ctx, client, "kwok")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("node registered bare", func(t *testing.T) {
		// As a kubelet registers it, with no status: KWOK reports it
		// Ready with its default capacity, and node-lifecycle-controller
		// removes the not-ready taint that admission added.
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        "bare",
			Annotations: map[string]string{controlplane.KWOKNodeAnnotation: controlplane.KWOKNodeAnnotationValue},
		}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := waitNode(t, client, "bare", "Ready without the not-ready taint", func(n *v1.Node) bool {
			return isReady(n) && len(n.Spec.Taints) == 0
		})
		want := map[v1.ResourceName]string{v1.ResourceCPU: "1k", v1.ResourceMemory: "1Ti", v1.ResourcePods: "1M"}
		if diff := cmp.Diff(want, quantities(got.Status.Allocatable)); diff != "" {
			t.Errorf("allocatable (-want +got):\n%s", diff)
		}
	})

	node, err := controlplane.CreateKWOKNode(ctx, client, frameworktest.MakeNode().Name("kwok-0").Capacity("8", "16Gi", 110).Obj())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("lease renewed", func(t *testing.T) {
		// KWOK renews every quarter of DefaultNodeLeaseDuration (10s).
		var first *metav1.MicroTime
		pollFor(t, "a renewal of node kwok-0's lease", 2*controlplane.DefaultNodeLeaseDuration, func(ctx context.Context) (bool, error) {
			l, err := client.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, node.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			if l.Spec.RenewTime == nil {
				return false, nil
			}
			if first == nil {
				first = l.Spec.RenewTime
				if l.Spec.HolderIdentity == nil || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != node.UID {
					t.Errorf("lease: holder %v, owners %+v; want a holder and node %q as owner", l.Spec.HolderIdentity, l.OwnerReferences, node.Name)
				}
				return false, nil
			}
			return l.Spec.RenewTime.After(first.Time), nil
		})
		got := waitNode(t, client, node.Name, "Ready", isReady)
		if diff := cmp.Diff(quantities(node.Status.Allocatable), quantities(got.Status.Allocatable)); diff != "" {
			t.Errorf("allocatable changed (-created +now):\n%s", diff)
		}
	})

	// A node KWOK does not manage, and a pod bound to it: nothing runs it.
	plain, err := controlplane.CreateReadyNode(ctx, client, frameworktest.MakeNode().Name("plain").Capacity("8", "16Gi", 110).Obj())
	if err != nil {
		t.Fatal(err)
	}
	unmanaged := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unmanaged", Namespace: ns}, Spec: podSpec(v1.RestartPolicyAlways)}
	unmanaged.Spec.NodeName = plain.Name
	if _, err := client.CoreV1().Pods(ns).Create(ctx, unmanaged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var deploymentPods []v1.Pod
	t.Run("deployment", func(t *testing.T) {
		d := deployment(ns, "web", 3)
		if _, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deploymentPods = waitPods(t, client, ns, "app=web", 3)
		for _, p := range deploymentPods {
			bind(t, client, &p, node.Name)
		}
		for _, p := range deploymentPods {
			got := waitPod(t, client, ns, p.Name, "Running and Ready", func(p *v1.Pod) bool {
				return p.Status.Phase == v1.PodRunning && podReady(p)
			})
			if got.Status.PodIP == "" || got.Status.StartTime == nil || len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].State.Running == nil {
				t.Errorf("pod %q: podIP %q, startTime %v, containerStatuses %+v; want an IP, a start time and a running container", got.Name, got.Status.PodIP, got.Status.StartTime, got.Status.ContainerStatuses)
			}
		}
		poll(t, "deployment web to have 3 ready replicas", func(ctx context.Context) (bool, error) {
			d, err := client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && d.Status.ReadyReplicas == 3 && d.Status.AvailableReplicas == 3, err
		})
	})

	t.Run("pods of other nodes left alone", func(t *testing.T) {
		// Created before the deployment's pods, which KWOK has run since.
		got, err := client.CoreV1().Pods(ns).Get(ctx, unmanaged.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != v1.PodPending || len(got.Status.ContainerStatuses) != 0 {
			t.Errorf("pod on node %q that KWOK does not manage: phase %q, containerStatuses %+v; want Pending and none", plain.Name, got.Status.Phase, got.Status.ContainerStatuses)
		}
	})

	t.Run("run to completion", func(t *testing.T) {
		const runFor = 2 * time.Second
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "at-once", Namespace: ns},
			Spec:       batchv1.JobSpec{Template: v1.PodTemplateSpec{Spec: podSpec(v1.RestartPolicyNever)}},
		}
		if _, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		jobPod := waitPods(t, client, ns, batchv1.JobNameLabel+"=at-once", 1)[0]
		bind(t, client, &jobPod, node.Name)

		// Bare pods, created on the node. The one that restarts its
		// containers never completes, whatever the annotation says.
		timed := bareKWOKPod(ns, "timed", node.Name, v1.RestartPolicyNever, runFor.String())
		always := bareKWOKPod(ns, "always", node.Name, v1.RestartPolicyAlways, "1s")
		for _, p := range []*v1.Pod{always, timed} {
			if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}

		for _, name := range []string{jobPod.Name, timed.Name} {
			got := waitPod(t, client, ns, name, "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
			if podReady(got) || len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].State.Terminated == nil ||
				got.Status.ContainerStatuses[0].State.Terminated.ExitCode != 0 {
				t.Errorf("pod %q: conditions %+v, containerStatuses %+v; want not Ready, container terminated with exit code 0", name, got.Status.Conditions, got.Status.ContainerStatuses)
				continue
			}
			if name != timed.Name {
				continue
			}
			// API timestamps have whole seconds: the 2s are at least 1s
			// apart after truncation.
			ran := got.Status.ContainerStatuses[0].State.Terminated.FinishedAt.Sub(got.Status.StartTime.Time)
			if ran < runFor-time.Second {
				t.Errorf("pod %q ran %s from start to finish, want about %s", name, ran, runFor)
			}
		}
		poll(t, "job at-once to complete", func(ctx context.Context) (bool, error) {
			j, err := client.BatchV1().Jobs(ns).Get(ctx, "at-once", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range j.Status.Conditions {
				if c.Type == batchv1.JobComplete && c.Status == v1.ConditionTrue {
					return j.Status.Succeeded == 1, nil
				}
			}
			return false, nil
		})
		got, err := client.CoreV1().Pods(ns).Get(ctx, always.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != v1.PodRunning || !podReady(got) {
			t.Errorf("pod %q with restartPolicy Always: phase %q, conditions %+v; want Running and Ready", always.Name, got.Status.Phase, got.Status.Conditions)
		}
	})

	t.Run("deleted pod removed and replaced", func(t *testing.T) {
		if len(deploymentPods) == 0 {
			t.Skip("no deployment pods")
		}
		victim := deploymentPods[0]
		// The default grace period of 30s: KWOK does not wait for it.
		start := time.Now()
		if err := client.CoreV1().Pods(ns).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "pod "+victim.Name, func(ctx context.Context) error {
			_, err := client.CoreV1().Pods(ns).Get(ctx, victim.Name, metav1.GetOptions{})
			return err
		})
		t.Logf("pod gone %s after its deletion", time.Since(start).Round(time.Millisecond))
		pods := waitPods(t, client, ns, "app=web", 3)
		for _, p := range pods {
			if p.UID == victim.UID {
				t.Errorf("deleted pod %q still listed", p.Name)
			}
		}
	})

	t.Run("stop", func(t *testing.T) {
		pids := cp.PIDs()
		if len(pids) != 4 {
			t.Fatalf("PIDs() = %v, want 4: etcd, kube-apiserver, kube-controller-manager, kwok", pids)
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		for _, pid := range pids {
			for _, id := range []int{pid, -pid} {
				if err := syscall.Kill(id, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("kill(%d, 0) after Stop = %v, want ESRCH", id, err)
				}
			}
		}
		if _, err := os.Stat(cp.KWOKLog); err != nil {
			t.Errorf("kwok's log in LogDir after Stop: %v", err)
		}
	})
}

// TestStartMissingKWOK checks that kwok is looked up, before anything
// starts, only when Options.KWOK asks for it.
func TestStartMissingKWOK(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	missing := t.TempDir() + "/kwok"
	_, err = controlplane.Start(t.Context(), controlplane.Options{EtcdPath: exe, APIServerPath: exe, KWOKPath: missing, KWOK: true})
	if !errors.Is(err, controlplane.ErrBinaryNotFound) {
		t.Errorf("Start with a missing kwok: err = %v, want ErrBinaryNotFound", err)
	}
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	l := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec:       podSpec(v1.RestartPolicyAlways),
			},
		},
	}
}

func podSpec(restart v1.RestartPolicy) v1.PodSpec {
	return v1.PodSpec{
		RestartPolicy: restart,
		// No scheduler runs: the test binds.
		SchedulerName: "nobody",
		Containers:    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
	}
}

func bareKWOKPod(ns, name, node string, restart v1.RestartPolicy, runFor string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Annotations: map[string]string{controlplane.KWOKRunDurationAnnotation: runFor},
		},
		Spec: func() v1.PodSpec { s := podSpec(restart); s.NodeName = node; return s }(),
	}
}

// bind binds pod to node with a Binding, as a scheduler does.
func bind(t *testing.T, client kubernetes.Interface, pod *v1.Pod, node string) {
	t.Helper()
	b := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := client.CoreV1().Pods(pod.Namespace).Bind(t.Context(), b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding pod %q to %q: %v", pod.Name, node, err)
	}
}

// waitPods waits until exactly n pods not being deleted match selector,
// and returns them.
func waitPods(t *testing.T, client kubernetes.Interface, ns, selector string, n int) []v1.Pod {
	t.Helper()
	if _, err := labels.Parse(selector); err != nil {
		t.Fatal(err)
	}
	var pods []v1.Pod
	poll(t, fmt.Sprintf("%d pods %q", n, selector), func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		pods = pods[:0]
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				pods = append(pods, p)
			}
		}
		return len(pods) == n, nil
	})
	return pods
}

func waitPod(t *testing.T, client kubernetes.Interface, ns, name, what string, ok func(*v1.Pod) bool) *v1.Pod {
	t.Helper()
	var got *v1.Pod
	poll(t, "pod "+name+" "+what, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return ok(p), nil
	})
	return got
}

func waitNode(t *testing.T, client kubernetes.Interface, name, what string, ok func(*v1.Node) bool) *v1.Node {
	t.Helper()
	var got *v1.Node
	poll(t, "node "+name+" "+what, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = n
		return ok(n), nil
	})
	return got
}

func podReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// pollFor is poll with a deadline of its own.
func pollFor(t *testing.T, what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
