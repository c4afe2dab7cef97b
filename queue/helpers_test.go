package queue

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newTestQueue returns a queue on a fake clock with the default durations
// unless opts says otherwise.
func newTestQueue(opts Options) (*PriorityQueue, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(t0)
	opts.Clock = clk
	return New(opts), clk
}

func makePod(name string) *frameworktest.PodWrapper { return frameworktest.MakePod().Name(name) }

func uidOf(name string) types.UID { return makePod(name).Obj().UID }

// mustPop pops the head of a non-empty activeQ. The timeout is only a safety
// net against a broken Pop; no test relies on it for timing.
func mustPop(t *testing.T, q *PriorityQueue) *QueuedPodInfo {
	t.Helper()
	if active, _, _, _ := q.PendingPods(); active == 0 {
		t.Fatalf("Pop: activeQ is empty")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qpi, err := q.Pop(ctx)
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return qpi
}

// fail pops the head and hands it back as a failed attempt.
func fail(t *testing.T, q *PriorityQueue, unschedulable bool) *QueuedPodInfo {
	t.Helper()
	qpi := mustPop(t, q)
	if err := q.AddUnschedulable(qpi, q.SchedulingCycle(), unschedulable); err != nil {
		t.Fatalf("AddUnschedulable: %v", err)
	}
	return qpi
}

func wantLocation(t *testing.T, q *PriorityQueue, pod *v1.Pod, want Location) {
	t.Helper()
	if got := q.Locate(pod.UID); got != want {
		t.Errorf("pod %q is in %s, want %s", pod.Name, got, want)
	}
}

// checkInvariants verifies that every pod is in one place only and that both
// heaps are consistent: index map matches positions, heap order holds.
func (q *PriorityQueue) checkInvariants(t testing.TB) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	seen := map[types.UID]Location{}
	note := func(uid types.UID, loc Location) {
		if prev, ok := seen[uid]; ok {
			t.Errorf("pod %s is in both %s and %s", uid, prev, loc)
		}
		seen[uid] = loc
	}
	for _, h := range []struct {
		loc  Location
		heap *podHeap
	}{{ActiveQ, q.activeQ}, {BackoffQ, q.backoffQ}, {BackoffQ, q.errorBackoffQ}} {
		if len(h.heap.pos) != len(h.heap.items) {
			t.Errorf("%s: index has %d entries, heap %d", h.loc, len(h.heap.pos), len(h.heap.items))
		}
		for i, it := range h.heap.items {
			uid := it.pod.Pod.UID
			if h.heap.pos[uid] != it || it.index != i {
				t.Errorf("%s: pod %s at %d: index map or position (%d) disagree", h.loc, uid, i, it.index)
			}
			if i > 0 && h.heap.Less(i, (i-1)/2) {
				t.Errorf("%s: heap order broken at %d", h.loc, i)
			}
			note(uid, h.loc)
		}
	}
	var byRejector [64]int
	noRejector := 0
	for uid, qpi := range q.unschedulable {
		if qpi.Pod.UID != uid {
			t.Errorf("unschedulable: key %s holds pod %s", uid, qpi.Pod.UID)
		}
		note(uid, UnschedulablePods)
		if qpi.rejectors == 0 {
			noRejector++
		}
		for i := range 64 {
			if qpi.rejectors&(1<<i) != 0 {
				byRejector[i]++
			}
		}
	}
	if byRejector != q.byRejector || noRejector != q.noRejector {
		t.Errorf("rejector counts %v/%d, want %v/%d", q.byRejector, q.noRejector, byRejector, noRejector)
	}
	for uid, qpi := range q.gated {
		if qpi.Pod.UID != uid {
			t.Errorf("gated: key %s holds pod %s", uid, qpi.Pod.UID)
		}
		if !isGated(qpi.Pod) {
			t.Errorf("gated: pod %s has no gates", uid)
		}
		note(uid, GatedPods)
	}
	for uid := range q.inFlight {
		note(uid, InFlight)
	}
}

// Cluster events for the tests.
var (
	nodeAdd           = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	assignedPodDelete = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}
	pvcAdd            = framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}
)
