package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

func TestPopOrder(t *testing.T) {
	type add struct {
		pod   *v1.Pod
		after time.Duration // clock step before the Add
	}
	tests := []struct {
		name string
		adds []add
		want []string
	}{
		{
			name: "higher priority first",
			adds: []add{
				{pod: makePod("low").Priority(1).Obj()},
				{pod: makePod("high").Priority(100).Obj(), after: time.Second},
				{pod: makePod("mid").Priority(10).Obj(), after: time.Second},
			},
			want: []string{"high", "mid", "low"},
		},
		{
			name: "equal priority: earlier Timestamp first",
			adds: []add{
				{pod: makePod("a").Priority(5).Obj()},
				{pod: makePod("b").Priority(5).Obj(), after: time.Millisecond},
				{pod: makePod("c").Priority(5).Obj(), after: time.Millisecond},
			},
			want: []string{"a", "b", "c"},
		},
		{
			name: "equal priority and Timestamp: insertion order",
			adds: []add{
				{pod: makePod("a").Obj()}, {pod: makePod("b").Obj()}, {pod: makePod("c").Obj()},
				{pod: makePod("d").Obj()}, {pod: makePod("e").Obj()}, {pod: makePod("f").Obj()},
			},
			want: []string{"a", "b", "c", "d", "e", "f"},
		},
		{
			name: "nil priority counts as 0",
			adds: []add{
				{pod: makePod("negative").Priority(-1).Obj()},
				{pod: makePod("nil").Obj(), after: time.Second},
				{pod: makePod("zero").Priority(0).Obj(), after: time.Second},
				{pod: makePod("one").Priority(1).Obj(), after: time.Second},
			},
			want: []string{"one", "nil", "zero", "negative"},
		},
		{
			name: "priority beats age",
			adds: []add{
				{pod: makePod("old-low").Priority(0).Obj()},
				{pod: makePod("old-high").Priority(1000).Obj(), after: time.Second},
				{pod: makePod("new-high").Priority(1000).Obj(), after: time.Hour},
				{pod: makePod("new-low").Priority(0).Obj(), after: time.Second},
			},
			want: []string{"old-high", "new-high", "old-low", "new-low"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, clk := newTestQueue(Options{})
			for _, a := range tc.adds {
				clk.Step(a.after)
				q.Add(a.pod)
			}
			var got []string
			for range tc.adds {
				qpi := mustPop(t, q)
				got = append(got, qpi.Pod.Name)
				q.Done(qpi)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pop order (-want +got):\n%s", diff)
			}
			q.checkInvariants(t)
		})
	}
}

func TestBackoffDuration(t *testing.T) {
	tests := []struct {
		name             string
		initial, max     time.Duration
		attempts         int
		want             time.Duration
		wantWithDefaults bool
	}{
		{name: "never tried", attempts: 0, want: 0},
		{name: "first failure: initial", attempts: 1, want: 1 * time.Second},
		{name: "second: 1s×2", attempts: 2, want: 2 * time.Second},
		{name: "third: 1s×4", attempts: 3, want: 4 * time.Second},
		{name: "fourth: 1s×8", attempts: 4, want: 8 * time.Second},
		{name: "fifth: 1s×16 capped at 10s", attempts: 5, want: 10 * time.Second},
		{name: "many: capped", attempts: 62, want: 10 * time.Second},
		{name: "shift past 63 bits: capped", attempts: 1000, want: 10 * time.Second},
		{name: "custom: 100ms×2^3", initial: 100 * time.Millisecond, max: time.Second, attempts: 4, want: 800 * time.Millisecond},
		{name: "custom: 100ms×2^4 capped at 1s", initial: 100 * time.Millisecond, max: time.Second, attempts: 5, want: time.Second},
		{name: "initial above max: max", initial: 30 * time.Second, max: 10 * time.Second, attempts: 1, want: 10 * time.Second},
		{name: "cap not a power of two: 3s×2^1 capped at 5s", initial: 3 * time.Second, max: 5 * time.Second, attempts: 2, want: 5 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newTestQueue(Options{InitialBackoff: tc.initial, MaxBackoff: tc.max})
			if got := q.backoffDuration(tc.attempts); got != tc.want {
				t.Errorf("backoffDuration(%d) = %v, want %v", tc.attempts, got, tc.want)
			}
		})
	}
}

// TestBackoffTiming fails a pod n times and checks that after the n-th
// failure it leaves backoffQ exactly when its backoff ends, not a nanosecond
// earlier. As in kube-scheduler, the end is that of the second in which the
// failure time plus the backoff falls: the pod fails on a whole second
// here, so a whole-second backoff ends one second after it.
func TestBackoffTiming(t *testing.T) {
	tests := []struct {
		name          string
		opts          Options
		failures      int
		unschedulable bool // true: failures follow a move event, so they back off too
		want          time.Duration
	}{
		{name: "1 error: 1s, ends at 2s", failures: 1, want: 2 * time.Second},
		{name: "2 errors: 2s, ends at 3s", failures: 2, want: 3 * time.Second},
		{name: "3 errors: 4s, ends at 5s", failures: 3, want: 5 * time.Second},
		{name: "4 errors: 8s, ends at 9s", failures: 4, want: 9 * time.Second},
		{name: "5 errors: 16s capped at 10s, ends at 11s", failures: 5, want: 11 * time.Second},
		{name: "8 errors: capped at 10s, ends at 11s", failures: 8, want: 11 * time.Second},
		{name: "3 misfits after move events: 4s, ends at 5s", failures: 3, unschedulable: true, want: 5 * time.Second},
		{name: "custom 200ms, 3 errors: 800ms, ends at 1s", opts: Options{InitialBackoff: 200 * time.Millisecond, MaxBackoff: time.Minute}, failures: 3, want: 1 * time.Second},
		{name: "custom max 3s, 3 errors: 3s, ends at 4s", opts: Options{MaxBackoff: 3 * time.Second}, failures: 3, want: 4 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, clk := newTestQueue(tc.opts)
			pod := makePod("p").Obj()
			q.Add(pod)
			for i := 1; i <= tc.failures; i++ {
				qpi := mustPop(t, q)
				if qpi.Attempts != i {
					t.Fatalf("attempt %d: Attempts = %d", i, qpi.Attempts)
				}
				cycle := q.SchedulingCycle()
				if tc.unschedulable {
					q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
				}
				if err := q.AddUnschedulable(qpi, cycle, tc.unschedulable); err != nil {
					t.Fatal(err)
				}
				wantLocation(t, q, pod, BackoffQ)
				if i < tc.failures {
					clk.Step(time.Hour)
					q.flushBackoffCompleted()
				}
			}
			// The pod failed at the current time; its backoff ends at now+want.
			wait := q.flushBackoffCompleted()
			if want := min(tc.want, backoffFlushPeriod); wait != want {
				t.Errorf("flush asks to wait %v, want %v", wait, want)
			}
			clk.Step(tc.want - time.Nanosecond)
			q.flushBackoffCompleted()
			wantLocation(t, q, pod, BackoffQ)
			clk.Step(time.Nanosecond)
			q.flushBackoffCompleted()
			wantLocation(t, q, pod, ActiveQ)
			q.checkInvariants(t)
		})
	}
}

func TestBackoffQueueOrder(t *testing.T) {
	// a fails twice (backoff 2s), b once (1s), c once 1s later (1s); each
	// backoff ends with the second it falls in.
	q, clk := newTestQueue(Options{})
	a, b, c := makePod("a").Priority(10).Obj(), makePod("b").Obj(), makePod("c").Obj()
	q.Add(a)
	fail(t, q, false)
	clk.Step(time.Hour)
	q.flushBackoffCompleted()
	fail(t, q, false) // a: 2 errors, 2s, ends t+3s
	q.Add(b)
	fail(t, q, false) // b: 1s, ends t+2s
	clk.Step(time.Second)
	q.Add(c)
	fail(t, q, false) // c: failed at t+1s, ends t+3s
	if wait := q.flushBackoffCompleted(); wait != time.Second {
		t.Errorf("wait = %v, want 1s (b's backoff ends first)", wait)
	}
	var got []string
	for _, step := range []time.Duration{time.Second, time.Second} {
		clk.Step(step)
		q.flushBackoffCompleted()
		for {
			if active, _, _, _ := q.PendingPods(); active == 0 {
				break
			}
			qpi := mustPop(t, q)
			got = append(got, qpi.Pod.Name)
			q.Done(qpi)
		}
	}
	// a and c leave together; a's priority puts it first in activeQ.
	if diff := cmp.Diff([]string{"b", "a", "c"}, got); diff != "" {
		t.Errorf("order out of backoff (-want +got):\n%s", diff)
	}
}

func TestMoveAllToActiveOrBackoff(t *testing.T) {
	tests := []struct {
		name       string
		beforeMove time.Duration // time between the failure and the event
		want       Location
	}{
		// The 1s backoff of a failure on a whole second ends a second
		// later, with the second it falls in.
		{name: "still backing off: backoffQ", beforeMove: 2*time.Second - time.Nanosecond, want: BackoffQ},
		{name: "backoff over: activeQ", beforeMove: 2 * time.Second, want: ActiveQ},
		{name: "long after: activeQ", beforeMove: time.Minute, want: ActiveQ},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, clk := newTestQueue(Options{})
			pod := makePod("p").Obj()
			gatedPod := makePod("gated").SchedulingGate("example.com/wait").Obj()
			q.Add(pod)
			q.Add(gatedPod)
			fail(t, q, true)
			wantLocation(t, q, pod, UnschedulablePods)

			clk.Step(tc.beforeMove)
			q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
			wantLocation(t, q, pod, tc.want)
			wantLocation(t, q, gatedPod, GatedPods)
			q.checkInvariants(t)
		})
	}
}

func TestUnschedulableMaxStay(t *testing.T) {
	tests := []struct {
		name  string
		stay  time.Duration // Options.MaxUnschedulableStay; 0 = default 5m
		after time.Duration
		want  Location
	}{
		{name: "default: 5m is not over", after: 5 * time.Minute, want: UnschedulablePods},
		{name: "default: over after 5m", after: 5*time.Minute + time.Nanosecond, want: ActiveQ},
		{name: "custom 1m: 59s is not over", stay: time.Minute, after: 59 * time.Second, want: UnschedulablePods},
		{name: "custom 1m: over after 61s", stay: time.Minute, after: 61 * time.Second, want: ActiveQ},
		{name: "stay shorter than backoff: backoffQ", stay: 100 * time.Millisecond, after: 500 * time.Millisecond, want: BackoffQ},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, clk := newTestQueue(Options{MaxUnschedulableStay: tc.stay})
			pod := makePod("p").Obj()
			q.Add(pod)
			fail(t, q, true)
			clk.Step(tc.after)
			q.flushUnschedulableLeftover()
			wantLocation(t, q, pod, tc.want)
			q.checkInvariants(t)
		})
	}
}

func TestAddUnschedulableAfterEvents(t *testing.T) {
	tests := []struct {
		name          string
		moveBeforePop bool
		moveInFlight  bool
		update        func(p *v1.Pod) // applied to the in-flight pod
		unschedulable bool
		want          Location
	}{
		{name: "misfit, no event: unschedulable", unschedulable: true, want: UnschedulablePods},
		{name: "misfit, event before the pop: unschedulable", moveBeforePop: true, unschedulable: true, want: UnschedulablePods},
		{name: "misfit, event in flight: backoffQ", moveInFlight: true, unschedulable: true, want: BackoffQ},
		{name: "error: backoffQ", want: BackoffQ},
		{name: "error, event in flight: backoffQ", moveInFlight: true, want: BackoffQ},
		{
			name:          "misfit, pod's requests changed in flight: backoffQ",
			update:        func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = v1.ResourceList{} },
			unschedulable: true, want: BackoffQ,
		},
		{
			name:          "misfit, pod's status changed in flight: unschedulable",
			update:        func(p *v1.Pod) { p.Status.Phase = v1.PodPending },
			unschedulable: true, want: UnschedulablePods,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newTestQueue(Options{})
			pod := makePod("p").Req("1", "1Gi").Obj()
			q.Add(pod)
			if tc.moveBeforePop {
				q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
			}
			qpi := mustPop(t, q)
			cycle := q.SchedulingCycle()
			wantLocation(t, q, pod, InFlight)
			if tc.moveInFlight {
				q.MoveAllToActiveOrBackoff(assignedPodDelete, nil, nil)
			}
			if tc.update != nil {
				newPod := pod.DeepCopy()
				newPod.ResourceVersion = "2"
				tc.update(newPod)
				q.Update(pod, newPod)
			}
			if err := q.AddUnschedulable(qpi, cycle, tc.unschedulable); err != nil {
				t.Fatal(err)
			}
			wantLocation(t, q, pod, tc.want)
			q.Done(qpi) // a no-op now
			wantLocation(t, q, pod, tc.want)
			q.checkInvariants(t)
		})
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name string
		// setup brings pod p to where it is deleted.
		setup func(t *testing.T, q *PriorityQueue) *QueuedPodInfo
		// deleteBy removes the pod: Delete, or an Add/Update of it terminating.
		deleteBy string
	}{
		{name: "from activeQ", setup: func(*testing.T, *PriorityQueue) *QueuedPodInfo { return nil }},
		{name: "from backoffQ", setup: func(t *testing.T, q *PriorityQueue) *QueuedPodInfo { fail(t, q, false); return nil }},
		{name: "from unschedulable", setup: func(t *testing.T, q *PriorityQueue) *QueuedPodInfo { fail(t, q, true); return nil }},
		{name: "in flight", setup: func(t *testing.T, q *PriorityQueue) *QueuedPodInfo { return mustPop(t, q) }},
		{name: "update to terminating, from activeQ", deleteBy: "update", setup: func(*testing.T, *PriorityQueue) *QueuedPodInfo { return nil }},
		{name: "update to terminating, in flight", deleteBy: "update", setup: func(t *testing.T, q *PriorityQueue) *QueuedPodInfo { return mustPop(t, q) }},
		{name: "add of terminating, from unschedulable", deleteBy: "add", setup: func(t *testing.T, q *PriorityQueue) *QueuedPodInfo { fail(t, q, true); return nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newTestQueue(Options{})
			pod := makePod("p").Obj()
			other := makePod("other").Priority(-1).Obj()
			q.Add(pod)
			q.Add(other)
			inFlight := tc.setup(t, q)

			terminating := pod.DeepCopy()
			terminating.ResourceVersion = "2"
			terminating = (&frameworktest.PodWrapper{Pod: *terminating}).Terminating().Obj()
			switch tc.deleteBy {
			case "update":
				q.Update(pod, terminating)
			case "add":
				q.Add(terminating)
			default:
				q.Delete(pod)
			}
			if inFlight != nil {
				// The cycle still owns the pod; its failure must drop it.
				wantLocation(t, q, pod, InFlight)
				if err := q.AddUnschedulable(inFlight, q.SchedulingCycle(), true); err != nil {
					t.Fatal(err)
				}
			}
			wantLocation(t, q, pod, Nowhere)
			wantLocation(t, q, other, ActiveQ)
			q.checkInvariants(t)
		})
	}
}

func TestDeleteInFlightThenDone(t *testing.T) {
	q, _ := newTestQueue(Options{})
	pod := makePod("p").Obj()
	q.Add(pod)
	qpi := mustPop(t, q)
	q.Delete(pod)
	q.Done(qpi)
	wantLocation(t, q, pod, Nowhere)
	if a, b, u, g := q.PendingPods(); a+b+u+g != 0 {
		t.Errorf("PendingPods = %d, %d, %d, %d, want all 0", a, b, u, g)
	}
}

func TestUpdateInFlightKeepsNewerObject(t *testing.T) {
	tests := []struct {
		name          string
		unschedulable bool
		want          Location
	}{
		{name: "misfit", unschedulable: true, want: BackoffQ}, // the spec changed in flight
		{name: "error", unschedulable: false, want: BackoffQ},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, clk := newTestQueue(Options{})
			pod := makePod("p").Req("2", "2Gi").Obj()
			pod.ResourceVersion = "1"
			q.Add(pod)
			qpi := mustPop(t, q)
			cycle := q.SchedulingCycle()

			v2 := makePod("p").Req("1", "1Gi").Label("v", "2").Obj()
			v2.ResourceVersion = "2"
			v3 := makePod("p").Req("500m", "512Mi").Label("v", "3").Obj()
			v3.ResourceVersion = "3"
			q.Update(pod, v2)
			q.Update(v2, v3)
			if qpi.Pod != pod {
				t.Fatalf("the popped QueuedPodInfo changed while in flight")
			}
			if err := q.AddUnschedulable(qpi, cycle, tc.unschedulable); err != nil {
				t.Fatal(err)
			}
			wantLocation(t, q, pod, tc.want)
			if qpi.Pod != pod || !qpi.Timestamp.Equal(t0) {
				t.Errorf("AddUnschedulable changed the caller's QueuedPodInfo")
			}

			clk.Step(time.Minute)
			q.flushBackoffCompleted()
			got := mustPop(t, q)
			if got.Pod != v3 {
				t.Errorf("popped resourceVersion %q, want %q", got.Pod.ResourceVersion, v3.ResourceVersion)
			}
			// 500m cpu, 512Mi memory: the PodInfo was derived from v3.
			if got.Requests.MilliCPU != 500 || got.Requests.Memory != 512<<20 {
				t.Errorf("requests = %d mCPU, %d B; want 500, %d", got.Requests.MilliCPU, got.Requests.Memory, 512<<20)
			}
			if got.Attempts != 2 {
				t.Errorf("Attempts = %d, want 2", got.Attempts)
			}
		})
	}
}

func TestUpdateQueuedPod(t *testing.T) {
	q, _ := newTestQueue(Options{})
	pod := makePod("p").Req("1", "").Obj()
	q.Add(pod)
	newPod := makePod("p").Req("3", "").Obj()
	newPod.ResourceVersion = "2"
	q.Update(pod, newPod)
	got := mustPop(t, q)
	if got.Pod != newPod || got.Requests.MilliCPU != 3000 {
		t.Errorf("popped %d mCPU of %q, want the update with 3000", got.Requests.MilliCPU, got.Pod.ResourceVersion)
	}
}

func TestUpdateUnschedulablePod(t *testing.T) {
	tests := []struct {
		name        string
		afterFail   time.Duration
		update      func(p *v1.Pod)
		sameVersion bool
		want        Location
	}{
		{name: "labels changed", update: func(p *v1.Pod) { p.Labels = map[string]string{"app": "x"} }, want: BackoffQ},
		{name: "labels changed, backoff over", afterFail: 2 * time.Second, update: func(p *v1.Pod) { p.Labels = map[string]string{"app": "x"} }, want: ActiveQ},
		{name: "requests changed", update: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests = frameworktest.MakePod().Req("1", "").Obj().Spec.Containers[0].Resources.Requests
		}, want: BackoffQ},
		{name: "toleration added", update: func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}}
		}, want: BackoffQ},
		{name: "node selector changed", update: func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }, want: BackoffQ},
		{name: "affinity added", update: func(p *v1.Pod) { p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{}} }, want: BackoffQ},
		{name: "status only", update: func(p *v1.Pod) {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse}}
		}, want: UnschedulablePods},
		{name: "annotations only", update: func(p *v1.Pod) { p.Annotations = map[string]string{"a": "b"} }, want: UnschedulablePods},
		// The claims generated for the pod, recorded in its status, are
		// what DynamicResources waits for (kube-scheduler's
		// UpdatePodGeneratedResourceClaim).
		{name: "generated claim recorded", update: func(p *v1.Pod) {
			p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("p-gpu-x7")}}
		}, want: BackoffQ},
		{name: "extended resource claim recorded", update: func(p *v1.Pod) {
			p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "p-extended-resources-x7"}
		}, want: BackoffQ},
		{name: "resync, same version", sameVersion: true, update: func(*v1.Pod) {}, want: UnschedulablePods},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, clk := newTestQueue(Options{})
			pod := makePod("p").Req("500m", "").Obj()
			pod.ResourceVersion = "1"
			q.Add(pod)
			fail(t, q, true)
			clk.Step(tc.afterFail)

			newPod := pod.DeepCopy()
			if !tc.sameVersion {
				newPod.ResourceVersion = "2"
			}
			tc.update(newPod)
			q.Update(pod, newPod)
			wantLocation(t, q, pod, tc.want)
			q.checkInvariants(t)
		})
	}
}

func TestGatedPods(t *testing.T) {
	q, clk := newTestQueue(Options{})
	pod := makePod("p").SchedulingGate("a").SchedulingGate("b").Obj()
	pod.ResourceVersion = "1"
	q.Add(pod)
	wantLocation(t, q, pod, GatedPods)
	if a, b, u, g := q.PendingPods(); a != 0 || b != 0 || u != 0 || g != 1 {
		t.Errorf("PendingPods = %d, %d, %d, %d, want 0, 0, 0, 1", a, b, u, g)
	}

	// Cluster events and time do not release gated pods.
	clk.Step(time.Hour)
	q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
	q.flushUnschedulableLeftover()
	q.flushBackoffCompleted()
	wantLocation(t, q, pod, GatedPods)

	oneGate := pod.DeepCopy()
	oneGate.ResourceVersion = "2"
	oneGate.Spec.SchedulingGates = oneGate.Spec.SchedulingGates[1:]
	q.Update(pod, oneGate)
	wantLocation(t, q, pod, GatedPods)

	ungated := oneGate.DeepCopy()
	ungated.ResourceVersion = "3"
	ungated.Spec.SchedulingGates = nil
	q.Update(oneGate, ungated)
	wantLocation(t, q, pod, ActiveQ)
	got := mustPop(t, q)
	if got.Pod != ungated {
		t.Errorf("popped version %q, want 3", got.Pod.ResourceVersion)
	}
	if want := t0.Add(time.Hour); !got.InitialAttemptTimestamp.Equal(want) {
		t.Errorf("InitialAttemptTimestamp = %v, want %v (when the gates went)", got.InitialAttemptTimestamp, want)
	}
}

// A pod the PreEnqueue plugins turn away waits with the gated pods, and is
// asked again on an update of the pod and on every cluster event; one that
// fails an attempt and is moved back is asked again too.
func TestPreEnqueue(t *testing.T) {
	ready := map[string]bool{}
	q, clk := newTestQueue(Options{PreEnqueue: func(pod *v1.Pod) bool { return ready[pod.Name] }})
	pod := makePod("p").Obj()
	pod.ResourceVersion = "1"
	q.Add(pod)
	wantLocation(t, q, pod, GatedPods)
	q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
	wantLocation(t, q, pod, GatedPods)

	ready["p"] = true
	q.MoveAllToActiveOrBackoff(pvcAdd, nil, nil)
	wantLocation(t, q, pod, ActiveQ)

	// Turned away again when it comes back from a failed attempt.
	fail(t, q, true)
	ready["p"] = false
	clk.Step(time.Hour)
	q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
	wantLocation(t, q, pod, GatedPods)

	// An update of the pod asks again.
	ready["p"] = true
	updated := pod.DeepCopy()
	updated.ResourceVersion = "2"
	q.Update(pod, updated)
	wantLocation(t, q, pod, ActiveQ)
}

// The periodic flush asks the PreEnqueue plugins again about a pod that
// waited with the gated pods for MaxUnschedulableStay (5 min), and then
// not before another stay, as kube-scheduler v1.37's flush with its
// FlushTimestamp: no event need come for a pod a plugin turned away to be
// retried. Each time a pod is asked and turned away it is counted as
// kube-scheduler counts it, an UnschedulableTimeout into its pool.
func TestFlushAsksPreEnqueueAgain(t *testing.T) {
	asked := map[string]int{}
	ready := map[string]bool{}
	m := &recordingMetrics{}
	q, clk := newTestQueue(Options{Metrics: m, PreEnqueue: func(pod *v1.Pod) bool {
		asked[pod.Name]++
		return ready[pod.Name]
	}})
	waiting := makePod("waiting").Obj()
	gates := makePod("gates").SchedulingGate("x").Obj()
	q.Add(waiting) // asked once: turned away
	q.Add(gates)   // gates: never asked
	type step struct {
		after     time.Duration // clock step before the flush
		ready     bool
		wantAsked int
		want      Location
	}
	for i, st := range []step{
		{after: 4 * time.Minute, wantAsked: 1, want: GatedPods},              // 4 min: not yet
		{after: 2 * time.Minute, wantAsked: 2, want: GatedPods},              // 6 min: asked, turned away
		{after: 30 * time.Second, wantAsked: 2, want: GatedPods},             // 6.5 min: 30 s after the last ask
		{after: 4 * time.Minute, ready: true, wantAsked: 2, want: GatedPods}, // 10.5 min: 4.5 min after it
		{after: time.Minute, ready: true, wantAsked: 4, want: ActiveQ},       // 11.5 min: asked (and asked again by pushActive)
	} {
		ready["waiting"] = st.ready
		clk.Step(st.after)
		q.flushUnschedulableLeftover()
		if asked["waiting"] != st.wantAsked {
			t.Errorf("step %d: PreEnqueue asked %d times, want %d", i, asked["waiting"], st.wantAsked)
		}
		wantLocation(t, q, waiting, st.want)
		wantLocation(t, q, gates, GatedPods)
	}
	if asked["gates"] != 0 {
		t.Errorf("a pod with scheduling gates was asked %d times", asked["gates"])
	}
	// At 6 min both pods were asked and turned away (or gated) and
	// counted into the pool; at 11.5 min the one with gates again, and
	// the other let through into activeQ; each as an entity arriving.
	timeouts := map[Location]int{}
	for _, e := range m.events {
		if e.Event == UnschedulableTimeout {
			timeouts[e.Queue]++
			if !e.Entity {
				t.Errorf("%s into %s not counted as an entity", e.Event, e.Queue)
			}
		}
	}
	if diff := cmp.Diff(map[Location]int{GatedPods: 3, ActiveQ: 1}, timeouts); diff != "" {
		t.Errorf("UnschedulableTimeout moves by queue (-want +got):\n%s", diff)
	}
	q.checkInvariants(t)
}

func TestAddKnownPodIsUpdate(t *testing.T) {
	q, _ := newTestQueue(Options{})
	pod := makePod("p").Obj()
	q.Add(pod)
	again := pod.DeepCopy()
	again.ResourceVersion = "2"
	q.Add(again)
	if a, _, _, _ := q.PendingPods(); a != 1 {
		t.Errorf("activeQ holds %d pods, want 1", a)
	}
	if got := mustPop(t, q); got.Pod != again {
		t.Errorf("popped the old object")
	}
	// Unknown pods delivered as updates are added.
	other := makePod("other").Obj()
	q.Update(nil, other)
	wantLocation(t, q, other, ActiveQ)
}

func TestAddUnschedulableNotInFlight(t *testing.T) {
	q, _ := newTestQueue(Options{})
	pod := makePod("p").Obj()
	q.Add(pod)
	qpi := mustPop(t, q)
	cycle := q.SchedulingCycle()
	q.Done(qpi)
	err := q.AddUnschedulable(qpi, cycle, true)
	if !errors.Is(err, ErrNotInFlight) {
		t.Errorf("AddUnschedulable after Done: err = %v, want ErrNotInFlight", err)
	}
	wantLocation(t, q, pod, Nowhere)

	// A pod re-added by the informer meanwhile is not queued twice.
	q.Add(pod)
	if err := q.AddUnschedulable(qpi, cycle, true); !errors.Is(err, ErrNotInFlight) {
		t.Errorf("AddUnschedulable of a queued pod: err = %v, want ErrNotInFlight", err)
	}
	wantLocation(t, q, pod, ActiveQ)
	q.checkInvariants(t)
}

// TestStaleCycle: a cycle's late Done or AddUnschedulable must not end a
// later cycle of the same pod.
func TestStaleCycle(t *testing.T) {
	q, clk := newTestQueue(Options{})
	pod := makePod("p").Obj()
	q.Add(pod)
	first := mustPop(t, q)
	if err := q.AddUnschedulable(first, q.SchedulingCycle(), false); err != nil {
		t.Fatal(err)
	}
	clk.Step(2 * time.Second)
	q.flushBackoffCompleted()
	second := mustPop(t, q)
	if second == first {
		t.Fatalf("Pop returned the same QueuedPodInfo for two cycles")
	}

	q.Done(first) // e.g. deferred by the first cycle's binding goroutine
	wantLocation(t, q, pod, InFlight)
	if err := q.AddUnschedulable(first, 1, true); !errors.Is(err, ErrNotInFlight) {
		t.Errorf("AddUnschedulable of the first cycle: err = %v, want ErrNotInFlight", err)
	}
	wantLocation(t, q, pod, InFlight)

	if err := q.AddUnschedulable(second, q.SchedulingCycle(), true); err != nil {
		t.Errorf("AddUnschedulable of the second cycle: %v", err)
	}
	wantLocation(t, q, pod, UnschedulablePods)
	if first.Attempts != 1 || second.Attempts != 2 {
		t.Errorf("Attempts = %d, %d; want 1, 2", first.Attempts, second.Attempts)
	}
	q.checkInvariants(t)
}

func TestPopBlocksUntil(t *testing.T) {
	tests := []struct {
		name    string
		trigger func(q *PriorityQueue, cancel context.CancelFunc)
		wantPod bool
		wantErr []error
	}{
		{name: "a pod is added", trigger: func(q *PriorityQueue, _ context.CancelFunc) { q.Add(makePod("p").Obj()) }, wantPod: true},
		{name: "a gated pod is released", trigger: func(q *PriorityQueue, _ context.CancelFunc) {
			gated := makePod("p").SchedulingGate("g").Obj()
			q.Add(gated)
			q.Update(gated, makePod("p").Obj())
		}, wantPod: true},
		{name: "the queue is closed", trigger: func(q *PriorityQueue, _ context.CancelFunc) { q.Close() }, wantErr: []error{ErrClosed}},
		{name: "the context is cancelled", trigger: func(_ *PriorityQueue, cancel context.CancelFunc) { cancel() }, wantErr: []error{ErrClosed, context.Canceled}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newTestQueue(Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				qpi *QueuedPodInfo
				err error
			}
			done := make(chan result)
			// Several waiters: the trigger must reach each (Close, cancel)
			// or at least one (Add); the others are released by Close.
			const waiters = 3
			for range waiters {
				go func() {
					qpi, err := q.Pop(ctx)
					done <- result{qpi, err}
				}()
			}
			tc.trigger(q, cancel)
			first := <-done
			q.Close()
			for range waiters - 1 {
				if r := <-done; r.err == nil {
					t.Errorf("a second waiter popped %q", r.qpi.Pod.Name)
				}
			}
			if tc.wantPod {
				if first.err != nil || first.qpi.Pod.Name != "p" {
					t.Errorf("Pop = %v, %v; want pod p", first.qpi, first.err)
				}
				return
			}
			if first.qpi != nil {
				t.Errorf("Pop returned pod %q, want none", first.qpi.Pod.Name)
			}
			for _, want := range tc.wantErr {
				if !errors.Is(first.err, want) {
					t.Errorf("Pop error %v does not match %v", first.err, want)
				}
			}
		})
	}
}

func TestPopWhenClosedOrCancelled(t *testing.T) {
	q, _ := newTestQueue(Options{})
	q.Add(makePod("p").Obj())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Pop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Pop with a done context: err = %v, want context.Canceled", err)
	}
	q.Close()
	q.Close() // idempotent
	if _, err := q.Pop(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Pop after Close: err = %v, want ErrClosed", err)
	}
	wantLocation(t, q, makePod("p").Obj(), ActiveQ)
}

func TestRun(t *testing.T) {
	q, clk := newTestQueue(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan struct{})
	go func() { q.Run(ctx); close(stopped) }()
	// Run's backoff timer and unschedulable ticker.
	for clk.Waiters() < 2 {
		time.Sleep(time.Millisecond) // waiting for Run to start, not for a backoff
	}

	backedOff, unschedulable := makePod("backoff").Obj(), makePod("unschedulable").Obj()
	q.Add(backedOff)
	fail(t, q, false)
	q.Add(unschedulable)
	fail(t, q, true)

	// Pop blocks until Run moves the pod, which it must do once its 1s
	// backoff's second passed (a pod backing off after an error is never
	// popped early).
	clk.Step(2 * time.Second)
	popCtx, popCancel := context.WithTimeout(ctx, 10*time.Second) // a safety net only
	defer popCancel()
	qpi, err := q.Pop(popCtx)
	if err != nil || qpi.Pod.Name != "backoff" {
		t.Fatalf("Pop = %v, %v; want pod backoff after its backoff", qpi, err)
	}
	q.Done(qpi)
	wantLocation(t, q, unschedulable, UnschedulablePods)

	clk.Step(5 * time.Minute)
	qpi, err = q.Pop(popCtx)
	if err != nil || qpi.Pod.Name != "unschedulable" {
		t.Fatalf("Pop = %v, %v; want pod unschedulable after 5m", qpi, err)
	}
	q.Done(qpi)

	cancel()
	<-stopped
}

func TestRunStopsOnClose(t *testing.T) {
	q, _ := newTestQueue(Options{})
	stopped := make(chan struct{})
	go func() { q.Run(context.Background()); close(stopped) }()
	q.Close()
	<-stopped
}

type recordedEvent struct {
	Queue Location
	Event Event
	// Entity is set when the move counts as an entity arriving
	// (EntityMetrics).
	Entity bool
}

type recordingMetrics struct{ events []recordedEvent }

func (m *recordingMetrics) PodQueued(queue Location, event Event) {
	m.events = append(m.events, recordedEvent{Queue: queue, Event: event})
}

// EntityQueued marks the PodQueued just recorded: the queue calls both
// for the same move, PodQueued first.
func (m *recordingMetrics) EntityQueued(queue Location, event Event) {
	last := &m.events[len(m.events)-1]
	if last.Queue != queue || last.Event != event {
		panic(fmt.Sprintf("EntityQueued(%s, %s) after PodQueued(%s, %s)", queue, event, last.Queue, last.Event))
	}
	last.Entity = true
}

// The moves are counted under kube-scheduler v1.37's labels, and as an
// entity arriving as it counts scheduler_queue_incoming_entities_total:
// not when the pod lands where the move aimed (a failed attempt's pool or
// backoffQ, an event's backoffQ).
func TestMetrics(t *testing.T) {
	m := &recordingMetrics{}
	q, clk := newTestQueue(Options{Metrics: m})
	pod := makePod("p").Obj()
	q.Add(pod)                                    // active, UnscheduledPodAdd
	fail(t, q, true)                              // unschedulable, ScheduleAttemptFailure
	q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil) // backoff, NodeAdd
	clk.Step(2 * time.Second)
	q.flushBackoffCompleted() // active, BackoffComplete
	fail(t, q, true)          // unschedulable again: 2 s of backoff
	clk.Step(3 * time.Second)
	q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil) // active, NodeAdd: its backoff is over
	gated := makePod("g").SchedulingGate("x").Obj()
	q.Add(gated) // gated, UnscheduledPodAdd
	ungated := makePod("g").Label("app", "web").Obj()
	q.Update(gated, ungated) // active, TargetPodUpdatePodLabel: labels come first
	fresh := makePod("f").Obj()
	q.Update(fresh, fresh) // active, UnscheduledPodAdd: the queue did not hold it
	want := []recordedEvent{
		{ActiveQ, UnscheduledPodAdd, true},
		{UnschedulablePods, ScheduleAttemptFailure, false},
		{BackoffQ, NodeAdd, false},
		{ActiveQ, BackoffComplete, true},
		{UnschedulablePods, ScheduleAttemptFailure, false},
		{ActiveQ, NodeAdd, true},
		{GatedPods, UnscheduledPodAdd, true},
		{ActiveQ, targetPodEvent(framework.UpdatePodLabel), true},
		{ActiveQ, UnscheduledPodAdd, true},
	}
	if diff := cmp.Diff(want, m.events); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// The labels are kube-scheduler v1.37's (fwk.ClusterEvent.Label and the
// queue's custom labels).
func TestEventLabels(t *testing.T) {
	ev := func(r framework.EventResource, a framework.ActionType) string {
		return EventOf(framework.ClusterEvent{Resource: r, ActionType: a}).String()
	}
	tests := []struct{ got, want string }{
		{UnscheduledPodAdd.String(), "UnscheduledPodAdd"},
		{ev(framework.Node, framework.Add), "NodeAdd"},
		{ev(framework.Node, framework.Delete), "NodeDelete"},
		{ev(framework.Node, framework.UpdateNodeTaint), "NodeUpdateNodeTaint"},
		// Several changes at once: the first in kube-scheduler's order.
		{ev(framework.Node, framework.UpdateNodeLabel|framework.UpdateNodeTaint), "NodeUpdateNodeLabel"},
		{ev(framework.Node, framework.UpdateNodeDeclaredFeature|framework.UpdateNodePreemptionPolicy), "NodeUpdateNodePreemptionPolicy"},
		{ev(framework.AssignedPod, framework.UpdatePodScaleDown), "AssignedPodUpdatePodScaleDown"},
		{ev(framework.AssignedPod, framework.Delete), "AssignedPodDelete"},
		{ev(framework.PersistentVolumeClaim, framework.Add), "PersistentVolumeClaimAdd"},
		{ev(framework.PersistentVolume, framework.Update), "PersistentVolumeUpdate"},
		{ev(framework.StorageClass, framework.Update), "storage.k8s.io/StorageClassUpdate"},
		{ev(framework.VolumeAttachment, framework.Delete), "storage.k8s.io/VolumeAttachmentDelete"},
		{ev(framework.ResourceClaim, framework.Delete), "resource.k8s.io/ResourceClaimDelete"},
		{ev(framework.ResourceSlice, framework.Update), "resource.k8s.io/ResourceSliceUpdate"},
		{ev(framework.WildCard, framework.All), "ForceActivate"},
		{targetPodEvent(framework.UpdatePodSchedulingGatesEliminated).String(), "TargetPodUpdatePodSchedulingGatesEliminated"},
		// Gates before tolerations, as kube-scheduler splits an update.
		{targetPodEvent(framework.UpdatePodToleration | framework.UpdatePodSchedulingGatesEliminated).String(), "TargetPodUpdatePodSchedulingGatesEliminated"},
		{targetPodEvent(framework.UpdatePodScaleUp).String(), "TargetPodUpdatePodScaleUp"},
		{targetPodEvent(framework.Update).String(), "TargetPodUpdate"},
		{ScheduleAttemptFailure.String(), "ScheduleAttemptFailure"},
		{UnschedulableTimeout.String(), "UnschedulableTimeout"},
		{PopFromBackoffQ.String(), "PopFromBackoffQ"},
		{BackoffComplete.String(), "BackoffComplete"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("label %q, want %q", tc.got, tc.want)
		}
	}
}

func TestPendingPodsList(t *testing.T) {
	q, clk := newTestQueue(Options{})
	q.Add(makePod("unschedulable").Obj())
	fail(t, q, true)
	q.Add(makePod("backoff").Obj())
	fail(t, q, false)
	q.Add(makePod("flight").Obj())
	mustPop(t, q)
	clk.Step(time.Millisecond)
	q.Add(makePod("gated").SchedulingGate("x").Obj())
	q.Add(makePod("active-low").Obj())
	q.Add(makePod("active-high").Priority(1).Obj())

	type entry struct {
		Name     string
		Location Location
		Attempts int
	}
	var got []entry
	for _, p := range q.PendingPodsList() {
		got = append(got, entry{p.Pod.Name, p.Location, p.Attempts})
	}
	want := []entry{
		{"active-high", ActiveQ, 0},
		{"active-low", ActiveQ, 0},
		{"backoff", BackoffQ, 1},
		{"unschedulable", UnschedulablePods, 1},
		{"gated", GatedPods, 0},
		{"flight", InFlight, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PendingPodsList (-want +got):\n%s", diff)
	}
	if !q.Has(uidOf("flight")) || q.Has(types.UID("nope")) {
		t.Errorf("Has disagrees with the list")
	}
}

func TestNames(t *testing.T) {
	seen := map[string]Event{}
	for e := EventUnknown; int(e) < NumEvents(); e++ {
		s := e.String()
		if s == "" {
			t.Errorf("event %d has no name", int(e))
		}
		if prev, ok := seen[s]; ok {
			t.Errorf("events %d and %d are both %q", int(prev), int(e), s)
		}
		seen[s] = e
	}
	if got := Event(NumEvents()).String(); got != "Unknown" {
		t.Errorf("Event(NumEvents()) = %q", got)
	}
	for l := Nowhere; l < numLocations; l++ {
		if l.String() == "" {
			t.Errorf("location %d has no name", int(l))
		}
	}
	if got := Location(99).String(); got != "unknown" {
		t.Errorf("Location(99) = %q", got)
	}
}

// A queue-sort plugin's Less orders activeQ; pods it does not order come
// out in insertion order.
func TestPopOrderLess(t *testing.T) {
	byNameDesc := func(a, b *framework.QueuedPodInfo) bool { return a.Pod.Name > b.Pod.Name }
	q, clk := newTestQueue(Options{Less: byNameDesc})
	for _, name := range []string{"b", "d", "a", "c"} {
		clk.Step(time.Second)
		q.Add(makePod(name).Priority(int32(len(name))).Obj())
	}
	var got []string
	for range 4 {
		qpi := mustPop(t, q)
		got = append(got, qpi.Pod.Name)
		q.Done(qpi)
	}
	if diff := cmp.Diff([]string{"d", "c", "b", "a"}, got); diff != "" {
		t.Errorf("pop order (-want +got):\n%s", diff)
	}
	q.checkInvariants(t)

	never := func(a, b *framework.QueuedPodInfo) bool { return false }
	q, _ = newTestQueue(Options{Less: never})
	for _, name := range []string{"b", "d", "a"} {
		q.Add(makePod(name).Obj())
	}
	got = nil
	for range 3 {
		qpi := mustPop(t, q)
		got = append(got, qpi.Pod.Name)
		q.Done(qpi)
	}
	if diff := cmp.Diff([]string{"b", "d", "a"}, got); diff != "" {
		t.Errorf("pop order without any order (-want +got):\n%s", diff)
	}
}
