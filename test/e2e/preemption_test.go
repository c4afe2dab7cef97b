package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// lowPod is a pod of the "low" PriorityClass that, with no kubelet to wait
// for, is gone the moment it is deleted (a grace period of 0).
func (e *env) lowPod(name, cpu string) *v1.Pod {
	p := e.pod(name).PriorityClassName(e.ns+"-low").Label("tier", "low").Req(cpu, "")
	p.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
	return e.createPod(p)
}

// waitGone waits until the named pod no longer exists.
func (e *env) waitGone(name string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		e.t.Fatalf("pod %s was not deleted: %v", name, err)
	}
}

// A pod that fits nowhere evicts pods of lower priority, only as many as
// it needs, and takes their place; the victim gets a Preempted event.
func TestPreemption(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("only").Capacity("1", "2Gi", 110))
	e.priorityClass("low", 10)
	e.priorityClass("high", 1000)
	d := e.startScheduler(func(o *app.Options) { o.HTTPBindAddress = "127.0.0.1:0" })

	e.lowPod("small", "200m")
	e.lowPod("big", "700m")
	e.waitBound(30*time.Second, "small", "big")

	e.createPod(e.pod("high").PriorityClassName(e.ns+"-high").Req("500m", ""))
	got := e.waitBound(30*time.Second, "high")
	if got["high"] != e.ns+"-only" {
		t.Errorf("high on %q", got["high"])
	}
	e.waitGone("big")
	if _, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "small", metav1.GetOptions{}); err != nil {
		t.Errorf("small, which did not need to go, is gone: %v", err)
	}
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := e.client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=big,reason=Preempted"})
		return err == nil && len(evs.Items) > 0, err
	})
	if err != nil {
		t.Errorf("no Preempted event for the victim: %v", err)
	}
	e.assertNoOvercommit()
	if n := d.Scheduler.Scheduled(); n != 3 {
		t.Errorf("%d pods scheduled, want 3", n)
	}
	// kube-scheduler's preemption metrics: one attempt, one victim.
	e.waitMetrics(endpoint(d.HTTPAddr()), 10*time.Second, "the preemption metrics", func(s scraped) bool {
		m := s.series("scheduler_preemption_victims")
		return s.value("scheduler_preemption_attempts_total") >= 1 && m != nil &&
			m.GetHistogram().GetSampleCount() == 1 && m.GetHistogram().GetSampleSum() == 1
	})
}

// preemptionPolicy Never keeps a pod from evicting anything: it waits.
func TestPreemptionPolicyNever(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("only").Capacity("1", "2Gi", 110))
	e.priorityClass("low", 10)
	never := v1.PreemptNever
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-polite"}, Value: 1000, PreemptionPolicy: &never}
	if _, err := e.client.SchedulingV1().PriorityClasses().Create(e.ctx, pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.SchedulingV1().PriorityClasses().Delete(context.Background(), pc.Name, metav1.DeleteOptions{})
	})
	e.startScheduler()

	e.lowPod("low", "800m")
	e.waitBound(30*time.Second, "low")
	e.createPod(e.pod("polite").PriorityClassName(pc.Name).Req("500m", ""))
	e.waitFailedScheduling("polite", "Insufficient cpu", "preemption: not eligible due to preemptionPolicy=Never.")
	e.expectPending("polite", time.Second)
	if _, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "low", metav1.GetOptions{}); err != nil {
		t.Errorf("low was evicted: %v", err)
	}
}

// Between two nodes, preemption evicts the pod no PodDisruptionBudget
// protects. No disruption controller runs here, so the budget's status
// allows no disruption at all.
func TestPreemptionPrefersPodsWithoutBudget(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("1", "2Gi", 110))
	e.addNode(e.node("b").Capacity("1", "2Gi", 110))
	e.priorityClass("low", 10)
	e.priorityClass("high", 1000)
	e.budgetOfOne("budget", "yes")
	e.startScheduler()

	protected := e.pod("protected").PriorityClassName(e.ns+"-low").Label("budget", "yes").Req("800m", "")
	protected.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
	e.createPod(protected)
	e.lowPod("unprotected", "800m")
	got := e.waitBound(30*time.Second, "protected", "unprotected")
	if got["protected"] == got["unprotected"] {
		t.Fatalf("both low pods on %s; they must fill one node each", got["protected"])
	}

	e.createPod(e.pod("high").PriorityClassName(e.ns+"-high").Req("500m", ""))
	bound := e.waitBound(30*time.Second, "high")
	e.waitGone("unprotected")
	if bound["high"] != got["unprotected"] {
		t.Errorf("high on %s, want %s, the node of the pod without a budget", bound["high"], got["unprotected"])
	}
	if _, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "protected", metav1.GetOptions{}); err != nil {
		t.Errorf("the protected pod was evicted: %v", err)
	}
}

// budgetOfOne creates the PodDisruptionBudget "protected", minAvailable 1
// of the pods labelled key=value.
func (e *env) budgetOfOne(key, value string) {
	e.t.Helper()
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "protected"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptrIntOrString(1),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
		},
	}
	if _, err := e.client.PolicyV1().PodDisruptionBudgets(e.ns).Create(e.ctx, pdb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func ptrIntOrString(n int) *intstr.IntOrString {
	v := intstr.FromInt32(int32(n))
	return &v
}
