package queue

import (
	"maps"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
)

// parkMembers parks g-parked in the unschedulable pool and g-backoff in
// backoffQ, as failed attempts do; Pop takes by Timestamp, so it pops
// until each one comes and puts the others back.
func parkMembers(t *testing.T, q *PriorityQueue) {
	t.Helper()
	for _, park := range []struct {
		name          string
		unschedulable bool
	}{{"g-parked", true}, {"g-backoff", false}} {
		for {
			qpi := mustPop(t, q)
			if qpi.Pod.Name == park.name {
				if err := q.AddUnschedulable(qpi, q.SchedulingCycle(), park.unschedulable); err != nil {
					t.Fatal(err)
				}
				break
			}
			q.Done(qpi)
			q.Add(qpi.Pod)
		}
	}
}

// TakeGroup takes the group's members from activeQ, backoffQ and the
// unschedulable pool, not its gated members nor other pods, and puts them
// in flight.
func TestTakeGroup(t *testing.T) {
	held := map[string]bool{"g-gated": true}
	q, _ := newTestQueue(Options{PreEnqueue: func(p *v1.Pod) bool { return !held[p.Name] }})
	member := func(name, group string) *v1.Pod { return makePod(name).Namespace("ns").PodGroup(group).Obj() }
	for _, p := range []*v1.Pod{member("g-active", "g"), member("g-parked", "g"), member("g-backoff", "g"), member("g-gated", "g"),
		member("h-0", "h"), makePod("loner").Namespace("ns").Obj()} {
		q.Add(p)
	}
	parkMembers(t, q)
	taken := q.TakeGroup(framework.PodGroupKey{Namespace: "ns", Name: "g"})
	var names []string
	for _, qpi := range taken {
		names = append(names, qpi.Pod.Name)
		if got := q.Locate(qpi.Pod.UID); got != InFlight {
			t.Errorf("%s is in %s after TakeGroup, want in flight", qpi.Pod.Name, got)
		}
		if qpi.Attempts == 0 {
			t.Errorf("%s: attempts not counted", qpi.Pod.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"g-active", "g-backoff", "g-parked"}; !slices.Equal(names, want) {
		t.Errorf("TakeGroup took %v, want %v", names, want)
	}
	if got := q.Locate(uidOf("g-gated")); got != GatedPods {
		t.Errorf("gated member is in %s, want still gated", got)
	}
	// Each taken member's cycle ends as a popped pod's does.
	for _, qpi := range taken {
		if err := q.AddUnschedulable(qpi, q.SchedulingCycle(), true); err != nil {
			t.Errorf("AddUnschedulable(%s): %v", qpi.Pod.Name, err)
		}
	}
	// Activate asks PreEnqueue again for the gated member, and moves the
	// parked ones to activeQ.
	held["g-gated"] = false
	var uids []types.UID
	for _, n := range []string{"g-active", "g-parked", "g-backoff", "g-gated", "loner"} {
		uids = append(uids, uidOf(n))
	}
	q.Activate(uids, ForceActivate)
	for _, n := range []string{"g-active", "g-parked", "g-backoff", "g-gated"} {
		if got := q.Locate(uidOf(n)); got != ActiveQ {
			t.Errorf("%s is in %s after Activate, want activeQ", n, got)
		}
	}
}

// Census counts the pods in each part of the queue, the group members
// among them and the groups; gated members of a group whose object is
// missing are counted apart, and a pod whose group is not scheduled as
// one (its API not served) counts as a pod of no group.
func TestCensus(t *testing.T) {
	held := map[string]bool{"g-gated": true, "lost-0": true, "lost-1": true}
	q, _ := newTestQueue(Options{PreEnqueue: func(p *v1.Pod) bool { return !held[p.Name] }})
	member := func(name, group string) *v1.Pod { return makePod(name).Namespace("ns").PodGroup(group).Obj() }
	for _, p := range []*v1.Pod{member("g-active", "g"), member("g-parked", "g"), member("g-backoff", "g"), member("g-gated", "g"),
		member("h-0", "h"), member("h-1", "h"), member("lost-0", "lost"), member("lost-1", "lost"),
		makePod("loner").Namespace("ns").Obj(),
		makePod("labelled").Namespace("ns").Label(framework.CoschedulingPodGroupLabel, "c").Obj()} {
		q.Add(p)
	}
	parkMembers(t, q)
	asked := map[string]int{}
	got := q.Census(func(p *v1.Pod) (framework.PodGroupKey, bool) {
		key, ok := framework.PodGroupOf(p)
		return key, ok && key.API == framework.NativePodGroups
	}, func(key framework.PodGroupKey) bool {
		asked[key.Name]++
		return key.Name == "lost"
	})
	var want Census
	want.Incomplete = 2
	for _, c := range []struct {
		l                     Location
		pods, members, groups int
	}{{ActiveQ, 5, 3, 2}, {BackoffQ, 1, 1, 1}, {UnschedulablePods, 1, 1, 1}, {GatedPods, 1, 1, 1}} {
		want.Pods[c.l], want.Members[c.l], want.Groups[c.l] = c.pods, c.members, c.groups
	}
	if got != want {
		t.Errorf("Census() = %+v, want %+v", got, want)
	}
	if want := map[string]int{"g": 1, "lost": 1}; !maps.Equal(asked, want) {
		t.Errorf("missing asked %v, want once per gated group %v", asked, want)
	}
}
