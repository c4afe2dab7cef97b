package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// Gangs: scheduling.k8s.io/v1beta1 PodGroups with a gang policy, placed
// all or nothing by the group cycle, against the real API server (the
// shared control plane serves PodGroups: main_test.go).

// createMembers creates n pods of group, named group-0 … group-(n-1), each
// requesting cpu, and returns their names.
func (e *env) createMembers(group string, n int, cpu string) []string {
	e.t.Helper()
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("%s-%d", group, i)
		e.createPod(e.pod(names[i]).PodGroup(group).Req(cpu, "100Mi"))
	}
	return names
}

// waitGroupCondition waits for the PodGroup's PodGroupInitiallyScheduled
// condition with status and a reason, and returns it.
func (e *env) waitGroupCondition(name string, status metav1.ConditionStatus, reason string) metav1.Condition {
	e.t.Helper()
	var got metav1.Condition
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pg, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
		if c == nil {
			return false, nil
		}
		got = *c
		return c.Status == status && c.Reason == reason, nil
	})
	if err != nil {
		e.t.Fatalf("PodGroup %s: want condition %s=%s/%s, have %+v: %v", name, schedulingv1beta1.PodGroupInitiallyScheduled, status, reason, got, err)
	}
	return got
}

// boundOf counts the bound pods among names.
func (e *env) boundOf(names []string) int {
	e.t.Helper()
	placed := e.placements()
	n := 0
	for _, name := range names {
		if _, ok := placed[name]; ok {
			n++
		}
	}
	return n
}

// waitOneGroupWhole waits until every pod of one group (left or right,
// named leftName and rightName) is bound and none of the other's, and
// returns the first's pods, the second's and the second's name. Pods of
// both bound fail the test at once.
func (e *env) waitOneGroupWhole(left, right []string, leftName, rightName string) (first, second []string, secondGroup string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		l, r := e.boundOf(left), e.boundOf(right)
		switch {
		case l == len(left) && r == 0:
			first, second, secondGroup = left, right, rightName
			return true, nil
		case r == len(right) && l == 0:
			first, second, secondGroup = right, left, leftName
			return true, nil
		case l != 0 && r != 0:
			return false, fmt.Errorf("both groups partly bound: %d of %s, %d of %s", l, leftName, r, rightName)
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("want one group placed whole and the other not at all: %v", err)
	}
	return first, second, secondGroup
}

// expectNoneBound checks that none of names is bound for d: a group that
// does not fit holds nothing, not even for a moment.
func (e *env) expectNoneBound(names []string, d time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if n := e.boundOf(names); n != 0 {
			e.t.Fatalf("%d of the group's pods %v were bound, want none", n, names)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestGangFits(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		e.addNode(e.node(n).Capacity("2", "4Gi", 110))
	}
	e.startScheduler()
	e.watchGangs(5*time.Second, nil)
	e.createGang("train", 4)
	names := e.createMembers("train", 4, "1")
	got := e.waitBound(30*time.Second, names...)
	if len(got) != 4 {
		t.Fatalf("bound %v, want all 4", got)
	}
	e.waitGroupCondition("train", metav1.ConditionTrue, "Scheduled")
	e.assertNoOvercommit()
}

// A gang that cannot fit holds nothing and tells why, on every member and
// on its PodGroup; room made later places it whole.
func TestGangWaitsWhole(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	d := e.startScheduler(func(o *app.Options) { o.HTTPBindAddress = "127.0.0.1:0" })
	e.watchGangs(5*time.Second, nil)
	e.createGang("mpi", 3)
	names := e.createMembers("mpi", 3, "1")
	c := e.waitGroupCondition("mpi", metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonUnschedulable)
	// kube-scheduler v1.37.2's words: the group's reason, then what its
	// preemption found (gang_parity_test.go compares them side by side).
	if want := "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"; c.Message != want {
		t.Errorf("PodGroup condition message %q, want %q", c.Message, want)
	}
	// The two members that fitted carry the group's reason; the third its own.
	var own int
	for _, name := range names {
		msg := e.waitUnschedulableCondition(name)
		switch {
		case msg == "pod group is unschedulable, "+c.Message:
		case strings.HasPrefix(msg, "0/1 nodes are available: 1 Insufficient cpu"):
			own++
		default:
			t.Errorf("pod %s: PodScheduled message %q, want the group's or its own", name, msg)
		}
	}
	if own != 1 {
		t.Errorf("%d members with their own reason, want 1", own)
	}
	e.expectNoneBound(names, 2*time.Second)

	e.addNode(e.node("b").Capacity("2", "4Gi", 110))
	e.waitBound(30*time.Second, names...)
	e.waitGroupCondition("mpi", metav1.ConditionTrue, "Scheduled")
	e.assertNoOvercommit()

	// kube-scheduler's pod group metrics: one attempt per group cycle,
	// beside each member's own.
	profile := "profile=" + e.scheduler
	s := e.waitMetrics(endpoint(d.HTTPAddr()), 10*time.Second, "the group's attempts", func(s scraped) bool {
		return s.value("scheduler_podgroup_schedule_attempts_total", "result=scheduled", profile) == 1
	})
	unschedulable := s.value("scheduler_podgroup_schedule_attempts_total", "result=unschedulable", profile)
	if unschedulable < 1 {
		t.Errorf("%v unschedulable group attempts, want ≥ 1", unschedulable)
	}
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"group attempt durations", float64(s.count("scheduler_podgroup_scheduling_attempt_duration_seconds", profile)), unschedulable + 1},
		{"group algorithm durations", float64(s.count("scheduler_podgroup_scheduling_algorithm_duration_seconds")), unschedulable + 1},
		{"error group attempts", s.value("scheduler_podgroup_schedule_attempts_total", "result=error", profile), 0},
		{"members scheduled", s.value("scheduler_schedule_attempts_total", "result=scheduled", profile), 3},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// Two gangs that each need 60% of the cluster: one is placed whole, the
// other waits whole with its reason, and is placed when the first is gone
// (the deadlock of interleaved gangs, scheduler-plugins#117, cannot
// happen: no member holds room while its group is undecided).
func TestGangsOfSixtyPercent(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		e.addNode(e.node(fmt.Sprint(i)).Capacity("2", "4Gi", 110))
	}
	e.startScheduler()
	e.watchGangs(5*time.Second, nil)
	e.createGang("left", 6)
	e.createGang("right", 6)
	// Interleave the two gangs' pods, as two controllers would.
	var left, right []string
	for i := range 6 {
		left = append(left, fmt.Sprintf("left-%d", i))
		right = append(right, fmt.Sprintf("right-%d", i))
		e.createPod(e.pod(left[i]).PodGroup("left").Req("1", "100Mi"))
		e.createPod(e.pod(right[i]).PodGroup("right").Req("1", "100Mi"))
	}
	first, second, secondGroup := e.waitOneGroupWhole(left, right, "left", "right")
	c := e.waitGroupCondition(secondGroup, metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonUnschedulable)
	if !strings.Contains(c.Message, "minCount (6) cannot be satisfied") {
		t.Errorf("waiting gang's reason %q", c.Message)
	}
	e.expectNoneBound(second, 2*time.Second)

	// The first job finishes: its pods go, and the second gang fits.
	zero := int64(0)
	for _, name := range first {
		if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	e.waitBound(60*time.Second, second...)
	e.assertNoOvercommit()
}

// A member whose PodGroup does not exist waits until it does; a gang
// with fewer members than minCount waits for the last one. Other pods are
// scheduled meanwhile.
func TestGangWaitsForItsGroupAndMembers(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("8", "16Gi", 110))
	d := e.startScheduler(func(o *app.Options) { o.HTTPBindAddress = "127.0.0.1:0" })
	e.watchGangs(5*time.Second, nil)
	early := e.createMembers("late", 2, "100m")
	e.createPod(e.pod("solo").Req("100m", "100Mi"))
	e.waitBound(30*time.Second, "solo")
	e.expectNoneBound(early, time.Second)
	// kube-scheduler writes nothing on such pods; yardmaster says why.
	if msg := e.waitUnschedulableCondition(early[0]); msg != `waiting for pods's pod group "late" to appear in scheduling queue` {
		t.Errorf("member without its PodGroup: PodScheduled message %q", msg)
	}
	// kube-scheduler's queue metrics: members without their PodGroup are
	// "incomplete", not gated; then, with too few of them, one gated
	// pod group of two pods.
	m := endpoint(d.HTTPAddr())
	e.waitMetrics(m, 10*time.Second, "2 incomplete pods", func(s scraped) bool {
		return s.value("scheduler_pending_pods", "queue=incomplete") == 2 && s.value("scheduler_pending_pods", "queue=gated") == 0 &&
			s.value("scheduler_queued_entities", "queue=gated", "type=podgroup") == 0
	})

	e.createGang("late", 3)
	e.expectNoneBound(early, 2*time.Second)
	if err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return e.waitUnschedulableCondition(early[1]) == "waiting for minCount pods from a gang to appear in scheduling queue", nil
	}); err != nil {
		t.Errorf("member of a gang short of minCount: PodScheduled message %q", e.waitUnschedulableCondition(early[1]))
	}
	e.waitMetrics(m, 10*time.Second, "a gated pod group of 2 pods", func(s scraped) bool {
		return s.value("scheduler_pending_pods", "queue=incomplete") == 0 && s.value("scheduler_pending_pods", "queue=gated") == 2 &&
			s.value("scheduler_queued_entities", "queue=gated", "type=podgroup") == 1 &&
			s.value("scheduler_queued_entities", "queue=gated", "type=pod") == 0
	})
	e.createPod(e.pod("late-2").PodGroup("late").Req("100m", "100Mi"))
	e.waitBound(30*time.Second, append(early, "late-2")...)
}

// Members beyond minCount are placed when they fit, and those that do not
// fit stay Pending with their own reason while the gang binds.
func TestGangBeyondMinCount(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("3", "4Gi", 110))
	e.startScheduler()
	e.watchGangs(5*time.Second, nil)
	e.createGang("elastic", 2)
	names := e.createMembers("elastic", 4, "1")
	e.waitGroupCondition("elastic", metav1.ConditionTrue, "Scheduled")
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return e.boundOf(names) == 3, nil
	})
	if err != nil {
		t.Fatalf("bound %d of 4, want 3 (the node's room)", e.boundOf(names))
	}
	var pending string
	placed := e.placements()
	for _, n := range names {
		if _, ok := placed[n]; !ok {
			pending = n
		}
	}
	e.waitFailedScheduling(pending, "Insufficient cpu")
	e.assertNoOvercommit()
}

// Members must share their PodGroup's priority, as kube-scheduler
// requires: the group is refused with a SchedulerError, on each member
// and on the PodGroup.
func TestGangPriorityMismatch(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.priorityClass("high", 1000)
	e.startScheduler()
	e.watchGangs(5*time.Second, nil)
	e.createGang("mixed", 2)
	e.createPod(e.pod("mixed-0").PodGroup("mixed").Req("100m", "100Mi"))
	e.createPod(e.pod("mixed-1").PodGroup("mixed").Req("100m", "100Mi").PriorityClassName(e.ns + "-high"))
	c := e.waitGroupCondition("mixed", metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonSchedulerError)
	if !strings.Contains(c.Message, "same priority as the pod group's priority") {
		t.Errorf("condition message %q", c.Message)
	}
	e.waitFailedScheduling("mixed-0", "same priority as the pod group's priority")
	e.expectNoneBound([]string{"mixed-0", "mixed-1"}, time.Second)
}
