package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Gangs side by side: the same cluster played under kube-scheduler
// v1.37.2 (started with the GenericWorkload gate, so it schedules
// PodGroups) and under yardmaster, each in its own namespace with its own
// nodes, one after the other (sideBySide). Node names carry the
// namespace as prefix; what is compared has it removed.

// startGangScheduler starts kube-scheduler with the gang gates, or
// yardmaster.
func (e *env) startGangScheduler(kube bool) {
	e.t.Helper()
	if kube {
		e.startKubeSchedulerFlags(kubeSchedulerGangFlags, "")
		return
	}
	e.startScheduler()
}

// createGangOf creates a PodGroup of the gang policy with minCount and,
// unless empty, priority class ns-class (the API server fills
// spec.priority from it).
func (e *env) createGangOf(name string, minCount int32, class string) {
	e.t.Helper()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount},
		}},
	}
	if class != "" {
		pg.Spec.PriorityClassName = e.ns + "-" + class
	}
	// The API server's admission of PodGroups finds the class in its
	// informer's cache, which may not have the class just created yet
	// ("no PriorityClass with name ... was found"): retry that.
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Create(ctx, pg, metav1.CreateOptions{})
		if class != "" && apierrors.IsForbidden(err) && strings.Contains(err.Error(), "no PriorityClass") {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		e.t.Fatalf("create PodGroup %s: %v", name, err)
	}
}

// unprefixed removes the namespace prefix of this test's node names
// from s.
func (e *env) unprefixed(s string) string {
	return strings.ReplaceAll(s, e.ns+"-", "")
}

// perNode counts the members of names bound to each node, by the node's
// name without the namespace prefix.
func (e *env) perNode(names []string) map[string]int {
	e.t.Helper()
	placed := e.placements()
	out := map[string]int{}
	for _, n := range names {
		if node, ok := placed[n]; ok {
			out[e.unprefixed(node)]++
		}
	}
	return out
}

// groupCondition is a PodGroup's PodGroupInitiallyScheduled condition,
// as compared between the schedulers.
type groupCondition struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// currentGroupCondition returns the PodGroup's PodGroupInitiallyScheduled
// condition, if any.
func (e *env) currentGroupCondition(name string) (groupCondition, bool) {
	e.t.Helper()
	pg, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get PodGroup %s: %v", name, err)
	}
	c := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
	if c == nil {
		return groupCondition{}, false
	}
	return groupCondition{Status: c.Status, Reason: c.Reason, Message: e.unprefixed(c.Message)}, true
}

// podScheduled returns the pod's PodScheduled condition as
// "status/reason: message", or "" without one.
func (e *env) podScheduled(name string) string {
	e.t.Helper()
	p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get pod %s: %v", name, err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, e.unprefixed(c.Message))
		}
	}
	return ""
}

// settledMembers waits until every member has a PodScheduled condition
// and the members' conditions read the same twice in a row, a second
// apart (a retry that rewrites them half way through is not compared),
// and returns them sorted: the multiset, since which member fitted may
// differ between the schedulers.
func (e *env) settledMembers(names []string) []string {
	e.t.Helper()
	var last []string
	err := wait.PollUntilContextTimeout(e.ctx, time.Second, 60*time.Second, true, func(context.Context) (bool, error) {
		got := make([]string, 0, len(names))
		for _, n := range names {
			c := e.podScheduled(n)
			if c == "" {
				last = nil
				return false, nil
			}
			got = append(got, c)
		}
		slices.Sort(got)
		same := slices.Equal(got, last)
		last = got
		return same, nil
	})
	if err != nil {
		e.t.Fatalf("members %v: conditions never settled (last %q): %v", names, last, err)
	}
	return last
}

// waitingGroup is what a scheduler wrote for a gang it did not place:
// the PodGroup's condition and each member's PodScheduled condition.
type waitingGroup struct {
	Group   groupCondition
	Members []string
}

// waitingOutcome waits for the PodGroup's condition and its members'
// settled conditions, checks that no member is bound, and returns them.
func (e *env) waitingOutcome(group string, names []string) waitingGroup {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		_, ok := e.currentGroupCondition(group)
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("PodGroup %s never got a %s condition: %v", group, schedulingv1beta1.PodGroupInitiallyScheduled, err)
	}
	members := e.settledMembers(names)
	e.expectNoneBound(names, time.Second)
	// Read after the members settled: the last attempt's condition.
	c, _ := e.currentGroupCondition(group)
	out := waitingGroup{Group: c, Members: members}
	e.t.Logf("PodGroup %s: %+v; members: %q", group, out.Group, out.Members)
	return out
}

// writtenOnPods is what a scheduler wrote on the named pods: their
// PodScheduled conditions and their events, "reason: message".
type writtenOnPods struct {
	Conditions []string
	Events     []string
	Group      *groupCondition
}

func (w writtenOnPods) empty() bool {
	return len(w.Conditions) == 0 && len(w.Events) == 0 && w.Group == nil
}

// written collects what was written on the named pods and on PodGroup
// group.
func (e *env) written(group string, names []string) writtenOnPods {
	e.t.Helper()
	var out writtenOnPods
	for _, n := range names {
		if c := e.podScheduled(n); c != "" {
			out.Conditions = append(out.Conditions, n+" "+c)
		}
	}
	evs, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("list events: %v", err)
	}
	for _, ev := range evs.Items {
		if slices.Contains(names, ev.InvolvedObject.Name) || ev.InvolvedObject.Name == group {
			out.Events = append(out.Events, fmt.Sprintf("%s %s %s: %s", ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, e.unprefixed(ev.Message)))
		}
	}
	if c, ok := e.currentGroupCondition(group); ok {
		out.Group = &c
	}
	return out
}

// yardmaster and kube-scheduler v1.37.2 schedule native gangs alike:
// where homogeneous gangs go on nodes whose scores never tie, and what
// they write on a gang they cannot place, on its PodGroup and on each of
// its members.
func TestGangParity(t *testing.T) {
	// Nodes of 4, 6 and 10 cpu with 2Gi a cpu, and members of 1 cpu and
	// 2Gi: every node's cpu and memory fill alike, so BalancedAllocation
	// scores every node the same (75), and the nodes differ only by
	// NodeResourcesFit's share left free once the member is placed.
	// Placing the 7 members of "big" one by one (a/b/c, in percent):
	// 75/83/90 → c, 75/83/80 → b, 75/66/80 → c, 75/66/70 → a,
	// 50/66/70 → c, 50/66/60 → b, 50/50/60 → c: c 4, b 2, a 1, with at
	// least 3 points between the best node and the next at every step
	// (no tie for the random tie-break to settle). Then the 3 members of
	// "small", 500m and 1Gi: 62/58/55 → a, 50/58/55 → b, 50/50/55 → c.
	t.Run("homogeneous gangs", func(t *testing.T) {
		sideBySide(t, func(t *testing.T, kube bool) map[string]map[string]int {
			e := newEnv(t)
			e.addNode(e.node("a").Capacity("4", "8Gi", 110))
			e.addNode(e.node("b").Capacity("6", "12Gi", 110))
			e.addNode(e.node("c").Capacity("10", "20Gi", 110))
			e.createGangOf("big", 7, "")
			var big []string
			for i := range 7 {
				big = append(big, fmt.Sprintf("big-%d", i))
				e.createPod(e.pod(big[i]).PodGroup("big").Req("1", "2Gi"))
			}
			e.startGangScheduler(kube)
			e.waitBound(60*time.Second, big...)
			e.waitGroupCondition("big", metav1.ConditionTrue, "Scheduled")

			e.createGangOf("small", 3, "")
			var small []string
			for i := range 3 {
				small = append(small, fmt.Sprintf("small-%d", i))
				e.createPod(e.pod(small[i]).PodGroup("small").Req("500m", "1Gi"))
			}
			e.waitBound(60*time.Second, small...)
			e.waitGroupCondition("small", metav1.ConditionTrue, "Scheduled")
			e.assertNoOvercommit()
			got := map[string]map[string]int{"big": e.perNode(big), "small": e.perNode(small)}
			// The arithmetic above, checked under both schedulers: a tie
			// would make the comparison a matter of luck.
			want := map[string]map[string]int{"big": {"a": 1, "b": 2, "c": 4}, "small": {"a": 1, "b": 1, "c": 1}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("members per node differ from the scores worked out by hand (-want +got):\n%s", diff)
			}
			return got
		})
	})

	// A gang of 3 members of 1 cpu on a node of 2 cpu: two fit, the
	// third does not, and minCount 3 cannot be met.
	t.Run("a gang that does not fit", func(t *testing.T) {
		sideBySide(t, func(t *testing.T, kube bool) waitingGroup {
			e := newEnv(t)
			e.addNode(e.node("a").Capacity("2", "4Gi", 110))
			e.createGangOf("mpi", 3, "")
			names := e.createMembers("mpi", 3, "1")
			e.startGangScheduler(kube)
			return e.waitingOutcome("mpi", names)
		})
	})

	// A gang of 4 members of 1 cpu, minCount 4, on a node of 1 cpu: the
	// first fits, the second does not, and then minCount cannot be met
	// (1 scheduled, 2 remaining): the cycle stops, and the last two
	// members are never tried.
	t.Run("a gang that stops at its first misfit", func(t *testing.T) {
		sideBySide(t, func(t *testing.T, kube bool) waitingGroup {
			e := newEnv(t)
			e.addNode(e.node("a").Capacity("1", "4Gi", 110))
			e.createGangOf("tight", 4, "")
			names := e.createMembers("tight", 4, "1")
			e.startGangScheduler(kube)
			return e.waitingOutcome("tight", names)
		})
	})

	// The PodGroup has priority 1000 (its class); one member has it too,
	// the other none (0): kube-scheduler's validatePodGroup refuses the
	// group with a SchedulerError.
	t.Run("priority mismatch", func(t *testing.T) {
		sideBySide(t, func(t *testing.T, kube bool) waitingGroup {
			e := newEnv(t)
			e.addNode(e.node("a").Capacity("4", "8Gi", 110))
			e.priorityClass("high", 1000)
			e.createGangOf("mixed", 2, "high")
			e.createPod(e.pod("mixed-0").PodGroup("mixed").Req("100m", "100Mi").PriorityClassName(e.ns + "-high"))
			e.createPod(e.pod("mixed-1").PodGroup("mixed").Req("100m", "100Mi"))
			e.startGangScheduler(kube)
			return e.waitingOutcome("mixed", []string{"mixed-0", "mixed-1"})
		})
	})

	// A gang of minCount 3 with 2 members: GangScheduling's PreEnqueue
	// holds them back. kube-scheduler writes nothing then, neither on the
	// pods (no condition, no event) nor on the PodGroup; what yardmaster
	// writes is logged, not required (a reason for gated members may come).
	t.Run("minCount larger than its members", func(t *testing.T) {
		var kubeWrote, ymWrote writtenOnPods
		play := func(t *testing.T, kube bool) writtenOnPods {
			e := newEnv(t)
			e.addNode(e.node("a").Capacity("4", "8Gi", 110))
			e.createGangOf("short", 3, "")
			names := e.createMembers("short", 2, "100m")
			// A pod of no group, created last: once it is bound, the
			// scheduler has seen the members.
			e.createPod(e.pod("solo").Req("100m", "100Mi"))
			e.startGangScheduler(kube)
			e.waitBound(60*time.Second, "solo")
			e.expectNoneBound(names, 3*time.Second)
			return e.written("short", names)
		}
		t.Run("kube-scheduler", func(t *testing.T) { kubeWrote = play(t, true) })
		t.Run("yardmaster", func(t *testing.T) { ymWrote = play(t, false) })
		if t.Failed() {
			return
		}
		if !kubeWrote.empty() {
			t.Errorf("kube-scheduler wrote on a gang short of minCount: %+v, want nothing", kubeWrote)
		}
		if diff := cmp.Diff(kubeWrote, ymWrote); diff != "" {
			t.Logf("yardmaster writes on a gang short of minCount what kube-scheduler does not (-kube-scheduler +yardmaster):\n%s", diff)
		} else {
			t.Logf("yardmaster, like kube-scheduler, wrote nothing on a gang short of minCount")
		}
	})
}
