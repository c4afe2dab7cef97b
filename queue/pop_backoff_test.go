package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// failRejected pops the head and hands it back as rejected by a plugin,
// with a cluster event during the attempt, so that it backs off in
// backoffQ rather than waiting in the unschedulable pool.
func failRejected(t *testing.T, q *PriorityQueue) *QueuedPodInfo {
	t.Helper()
	qpi := mustPop(t, q)
	cycle := q.SchedulingCycle()
	q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
	if err := q.AddUnschedulable(qpi, cycle, true); err != nil {
		t.Fatalf("AddUnschedulable: %v", err)
	}
	return qpi
}

// popNow pops without waiting for a backoff: it gives up after a short
// real-time wait, which only a Pop that has nothing to take needs.
func popNow(q *PriorityQueue) (*QueuedPodInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	return q.Pop(ctx)
}

// TestPopFromBackoffQ: with activeQ empty, Pop takes a pod a plugin
// rejected from backoffQ before its backoff ends, as kube-scheduler v1.37
// does (SchedulerPopFromBackoffQ, on by default), so an idle scheduler
// retries at once a pod an event may have helped. A pod backing off after
// an error waits its backoff out, and activeQ comes first.
func TestPopFromBackoffQ(t *testing.T) {
	m := &recordingMetrics{}
	q, clk := newTestQueue(Options{Metrics: m})
	rejected, errored, fresh := makePod("rejected").Obj(), makePod("errored").Obj(), makePod("fresh").Obj()
	q.Add(rejected)
	failRejected(t, q)
	q.Add(errored)
	fail(t, q, false)
	wantLocation(t, q, rejected, BackoffQ)
	wantLocation(t, q, errored, BackoffQ)

	q.Add(fresh)
	if qpi, err := popNow(q); err != nil || qpi.Pod.Name != "fresh" {
		t.Fatalf("Pop = %v, %v; want fresh, from activeQ", qpi, err)
	}
	qpi, err := popNow(q)
	if err != nil || qpi.Pod.Name != "rejected" {
		t.Fatalf("Pop = %v, %v; want rejected, from backoffQ", qpi, err)
	}
	if qpi.Attempts != 2 {
		t.Errorf("Attempts = %d, want 2", qpi.Attempts)
	}
	if last := m.events[len(m.events)-1]; last.Queue != ActiveQ || last.Event.String() != "PopFromBackoffQ" {
		t.Errorf("last metric %v, want active/PopFromBackoffQ", last)
	}
	if qpi, err := popNow(q); !errors.Is(err, ErrClosed) {
		t.Fatalf("Pop = %v, %v; want nothing: errored backs off", qpi, err)
	}
	wantLocation(t, q, errored, BackoffQ)
	clk.Step(2 * time.Second)
	q.flushBackoffCompleted()
	wantLocation(t, q, errored, ActiveQ)
	q.checkInvariants(t)
}

// TestPopWakesOnBackoffQ: a Pop waiting on empty queues takes a rejected
// pod that an event moves to backoffQ while it still backs off.
func TestPopWakesOnBackoffQ(t *testing.T) {
	q, _ := newTestQueue(Options{})
	pod := makePod("p").Obj()
	q.Add(pod)
	fail(t, q, true)
	wantLocation(t, q, pod, UnschedulablePods)
	done := make(chan *QueuedPodInfo)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a safety net only
	defer cancel()
	go func() {
		qpi, _ := q.Pop(ctx)
		done <- qpi
	}()
	q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
	if qpi := <-done; qpi == nil || qpi.Pod.Name != "p" {
		t.Fatalf("Pop = %v; want p, woken by its move to backoffQ", qpi)
	}
}

// TestBackoffQOrderInWindow: backoffQ orders pods whose backoff ends in the
// same second as activeQ does (priority, then time), and earlier seconds
// first; Pop takes them in that order while activeQ is empty.
func TestBackoffQOrderInWindow(t *testing.T) {
	q, clk := newTestQueue(Options{})
	clk.Step(100 * time.Millisecond)
	for _, p := range []struct {
		name     string
		priority int32
		after    time.Duration // since the previous failure
	}{
		{"low", 1, 0},                            // ends t0+2s
		{"high", 5, 100 * time.Millisecond},      // ends t0+2s
		{"mid", 3, 700 * time.Millisecond},       // fails at t0+900ms, ends t0+2s
		{"top", 10, 200 * time.Millisecond},      // fails at t0+1.1s, ends t0+3s
		{"mid-later", 3, 100 * time.Millisecond}, // ends t0+3s
	} {
		clk.Step(p.after)
		q.Add(makePod(p.name).Priority(p.priority).Obj())
		failRejected(t, q)
	}
	var got []string
	for range 5 {
		qpi, err := popNow(q)
		if err != nil {
			t.Fatalf("Pop: %v", err)
		}
		got = append(got, qpi.Pod.Name)
		q.Done(qpi)
	}
	if diff := cmp.Diff([]string{"high", "mid", "low", "top", "mid-later"}, got); diff != "" {
		t.Errorf("order out of backoffQ (-want +got):\n%s", diff)
	}
}

// TestBackoffCountsErrorsApart: the backoff grows with the errors in a
// row, else with the attempts that ended unschedulable, as kube-scheduler
// counts them (ConsecutiveErrorsCount, UnschedulableCount), not with every
// attempt.
func TestBackoffCountsErrorsApart(t *testing.T) {
	q, clk := newTestQueue(Options{})
	pod := makePod("p").Obj()
	q.Add(pod)
	// leaves waits out the backoff of the failure just recorded and
	// returns how long that took, to the second.
	leaves := func() time.Duration {
		t.Helper()
		for d := time.Second; d <= time.Minute; d += time.Second {
			clk.Step(time.Second)
			q.flushBackoffCompleted()
			if q.Locate(pod.UID) == ActiveQ {
				return d
			}
		}
		t.Fatalf("pod still in %s after a minute", q.Locate(pod.UID))
		return 0
	}
	for _, step := range []struct {
		unschedulable bool
		want          time.Duration // the backoff's end, a whole second after it
	}{
		{true, 2 * time.Second},  // 1 unschedulable: 1s
		{true, 3 * time.Second},  // 2: 2s
		{true, 5 * time.Second},  // 3: 4s
		{false, 2 * time.Second}, // 1 error in a row: 1s
		{false, 3 * time.Second}, // 2 errors: 2s
		{true, 9 * time.Second},  // 4 unschedulable, errors reset: 8s
		{false, 2 * time.Second}, // 1 error: 1s
	} {
		if step.unschedulable {
			failRejected(t, q)
		} else {
			fail(t, q, false)
		}
		if got := leaves(); got != step.want {
			t.Errorf("after a failure (unschedulable %v): left backoff after %v, want %v", step.unschedulable, got, step.want)
		}
	}
	q.checkInvariants(t)
}
