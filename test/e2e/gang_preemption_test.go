package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// Group preemption: a gang of higher priority that fits only by evicting
// lower-priority pods evicts as few as it needs, everywhere in the
// cluster, and takes their place.

// newPreemptionRig is an env with two nodes of 2 cpu and the
// PriorityClasses low (10) and high (1000).
func newPreemptionRig(t *testing.T) *env {
	e := newEnv(t)
	for _, n := range []string{"a", "b"} {
		e.addNode(e.node(n).Capacity("2", "4Gi", 110))
	}
	e.priorityClass("low", 10)
	e.priorityClass("high", 1000)
	return e
}

// gangMember creates a member of group in the priority class ns-class.
func (e *env) gangMember(name, group, class, cpu string) {
	e.t.Helper()
	p := e.pod(name).PodGroup(group).PriorityClassName(e.ns+"-"+class).Req(cpu, "")
	p.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
	e.createPod(p)
}

// gone counts the named pods that no longer exist.
func (e *env) gone(names []string) int {
	e.t.Helper()
	n := 0
	for _, name := range names {
		if _, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			n++
		}
	}
	return n
}

func TestGangPreemption(t *testing.T) {
	e := newPreemptionRig(t)
	d := e.startScheduler(func(o *app.Options) { o.HTTPBindAddress = "127.0.0.1:0" })
	var low []string
	for i := range 4 {
		low = append(low, fmt.Sprintf("low-%d", i))
		e.lowPod(low[i], "1")
	}
	e.waitBound(30*time.Second, low...)

	// Two members of 1 cpu, both or none: two low pods must go.
	e.createGangOf("train", 2, "high")
	e.gangMember("train-0", "train", "high", "1")
	e.gangMember("train-1", "train", "high", "1")
	e.waitBound(60*time.Second, "train-0", "train-1")
	if n := e.gone(low); n != 2 {
		t.Errorf("%d low pods evicted, want 2 (as few as the gang needs)", n)
	}
	e.waitGroupCondition("train", metav1.ConditionTrue, "Scheduled")
	e.assertNoOvercommit()
	// kube-scheduler's pod group metrics: the attempt that evicted, then
	// the one that placed the group.
	profile := "profile=" + e.scheduler
	e.waitMetrics(endpoint(d.HTTPAddr()), 10*time.Second, "a group attempt waiting on preemption, then one scheduled", func(s scraped) bool {
		return s.value("scheduler_podgroup_schedule_attempts_total", "result=waiting_on_preemption", profile) >= 1 &&
			s.value("scheduler_podgroup_schedule_attempts_total", "result=scheduled", profile) == 1
	})
}

// A victim whose PodGroup is disrupted all together (disruptionMode all)
// goes whole, its members on other nodes too, and its PodGroup is marked
// DisruptionTarget.
func TestGangPreemptionDisruptsWholeGroups(t *testing.T) {
	for _, byGang := range []bool{true, false} {
		name := "by a pod"
		if byGang {
			name = "by a gang"
		}
		t.Run(name, func(t *testing.T) { disruptsWholeGroup(t, byGang) })
	}
}

// disruptsWholeGroup is TestGangPreemptionDisruptsWholeGroups with the
// preemptor a gang of one, or a plain pod.
func disruptsWholeGroup(t *testing.T, byGang bool) {
	e := newPreemptionRig(t)
	e.startScheduler()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "batch"},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy:  schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}},
			DisruptionMode:    &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}},
			PriorityClassName: e.ns + "-low",
		},
	}
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Create(ctx, pg, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil // the class not in admission's cache yet
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("create PodGroup: %v", err)
	}
	e.gangMember("batch-0", "batch", "low", "2")
	e.gangMember("batch-1", "batch", "low", "2")
	e.waitBound(30*time.Second, "batch-0", "batch-1")

	// One node's room is enough, but the batch goes whole.
	p := e.pod("urgent").PriorityClassName(e.ns+"-high").Req("2", "")
	if byGang {
		e.createGangOf("urgent", 1, "high")
		p = p.PodGroup("urgent")
	}
	e.createPod(p)
	e.waitBound(60*time.Second, "urgent")
	err = wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return e.gone([]string{"batch-0", "batch-1"}) == 2, nil
	})
	if err != nil {
		t.Errorf("%d of the batch's 2 pods evicted, want both", e.gone([]string{"batch-0", "batch-1"}))
	}
	err = wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Get(ctx, "batch", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, schedulingv1beta1.DisruptionTarget)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == schedulingv1beta1.PodGroupReasonPreemptionByScheduler, nil
	})
	if err != nil {
		t.Errorf("the batch's PodGroup was not marked DisruptionTarget: %v", err)
	}
	e.assertNoOvercommit()
}

// Victims a PodDisruptionBudget protects are given back first: the gang
// evicts the pods without a budget. No disruption controller runs here,
// so the budget allows no disruption at all.
func TestGangPreemptionPrefersPodsWithoutBudget(t *testing.T) {
	e := newPreemptionRig(t)
	e.budgetOfOne("budget", "yes")
	e.startScheduler()
	// One unprotected and one protected pod on each node, bound there,
	// the unprotected first: among equals, the earlier would be given
	// back first but for the budget.
	for i, node := range []string{"a", "a", "b", "b"} {
		p := e.pod(fmt.Sprintf("low-%d", i)).PriorityClassName(e.ns+"-low").Req("1", "").Node(e.ns + "-" + node)
		if i%2 == 1 {
			p = p.Label("budget", "yes")
		}
		p.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
		e.createPod(p)
	}
	e.createGangOf("train", 2, "high")
	e.gangMember("train-0", "train", "high", "1")
	e.gangMember("train-1", "train", "high", "1")
	e.waitBound(60*time.Second, "train-0", "train-1")
	if n := e.gone([]string{"low-0", "low-2"}); n != 2 {
		t.Errorf("%d of the 2 pods without a budget evicted, want both", n)
	}
	if n := e.gone([]string{"low-1", "low-3"}); n != 0 {
		t.Errorf("%d protected pods evicted, want none", n)
	}
	e.assertNoOvercommit()
}
