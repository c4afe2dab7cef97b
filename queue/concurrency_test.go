package queue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

// trackedPod is one pod's truth as the test's fake informer and scheduler see
// it. Its mutex serializes the informer's events for the pod with the
// scheduler's binding, as a real informer delivers one object's events in
// order and stops delivering "pending pod" events once the pod is bound.
type trackedPod struct {
	mu      sync.Mutex
	pod     *v1.Pod
	deleted bool
	bound   int // times bound; must end at most 1
}

// TestConcurrentNoDuplicateNoLoss runs informers (Add/Update/Delete), several
// scheduling loops (Pop, then bind or fail), cluster events and backoff
// flushes at once, then checks that no pod was handed out twice, none was
// lost, and none outlived its deletion. Run it with -race.
func TestConcurrentNoDuplicateNoLoss(t *testing.T) {
	const (
		informers  = 8
		schedulers = 4
		// podsPerInformer live pods per informer at most; the informer
		// replaces bound and deleted ones, so the schedulers never run dry.
		podsPerInformer = 100
		// cycles is how many Pops the test runs for.
		cycles = 6000
	)
	clk := testingclock.NewFakeClock(t0)
	q := New(Options{Clock: clk, InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond, MaxUnschedulableStay: 50 * time.Millisecond})

	// pods is every pod ever created, for the schedulers' lookups and the
	// final check.
	var podsMu sync.Mutex
	pods := make(map[types.UID]*trackedPod)
	lookup := func(uid types.UID) *trackedPod {
		podsMu.Lock()
		defer podsMu.Unlock()
		return pods[uid]
	}
	create := func(informer, n int) *trackedPod {
		w := makePod(fmt.Sprintf("p-%d-%d", informer, n)).Priority(int32(n%5)).Label("gen", "1")
		if n%4 == 0 {
			w.SchedulingGate("example.com/gate")
		}
		p := w.Obj()
		p.ResourceVersion = "1"
		tp := &trackedPod{pod: p}
		podsMu.Lock()
		pods[p.UID] = tp
		podsMu.Unlock()
		return tp
	}

	// held: pods popped and not yet handed back; a second Pop of one is a duplicate.
	var heldMu sync.Mutex
	held := map[types.UID]bool{}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var schedWG, informerWG sync.WaitGroup
	stopInformers := make(chan struct{})
	for s := range schedulers {
		schedWG.Add(1)
		go func() {
			defer schedWG.Done()
			rng := rand.New(rand.NewPCG(uint64(s), 42))
			for {
				qpi, err := q.Pop(ctx)
				if err != nil {
					return
				}
				cycle := q.SchedulingCycle()
				uid := qpi.Pod.UID
				heldMu.Lock()
				if held[uid] {
					t.Errorf("pod %s popped while already in flight", uid)
				}
				held[uid] = true
				heldMu.Unlock()
				release := func() {
					heldMu.Lock()
					delete(held, uid)
					heldMu.Unlock()
				}

				// Let the informers in while the pod is in flight.
				for range rng.IntN(8) {
					runtime.Gosched()
				}
				switch rng.IntN(4) {
				case 0: // bound: the informer sees it assigned, i.e. gone from pending pods
					tp := lookup(uid)
					tp.mu.Lock()
					if !tp.deleted {
						tp.bound++
						tp.deleted = true
					}
					q.Delete(tp.pod)
					tp.mu.Unlock()
					release()
					q.Done(qpi)
				default: // misfit or error; release first, the pod may be popped again at once
					release()
					if err := q.AddUnschedulable(qpi, cycle, rng.IntN(3) != 0); err != nil {
						t.Errorf("AddUnschedulable: %v", err)
					}
					// A late Done, as deferred by a binding goroutine; the pod
					// may be in flight in another cycle by now.
					for range rng.IntN(8) {
						runtime.Gosched()
					}
					q.Done(qpi)
				}
			}
		}()
	}

	for i := range informers {
		informerWG.Add(1)
		go func() {
			defer informerWG.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			// mine holds the informer's pods, a fixed number of slots; a
			// slot whose pod is gone gets a new pod.
			mine := make([]*trackedPod, podsPerInformer)
			created := 0
			add := func(slot int) {
				tp := create(i, created)
				created++
				mine[slot] = tp
				tp.mu.Lock()
				q.Add(tp.pod)
				tp.mu.Unlock()
			}
			for slot := range mine {
				add(slot)
			}
			for {
				select {
				case <-stopInformers:
					return
				default:
				}
				runtime.Gosched() // informers are fast; leave the schedulers room
				slot := rng.IntN(len(mine))
				tp := mine[slot]
				tp.mu.Lock()
				if tp.deleted {
					tp.mu.Unlock()
					add(slot)
					continue
				}
				old := tp.pod
				p := old.DeepCopy()
				rv, _ := strconv.Atoi(p.ResourceVersion)
				p.ResourceVersion = strconv.Itoa(rv + 1)
				switch r := rng.IntN(100); {
				case r < 2:
					q.Delete(old)
					tp.deleted = true
				case r < 4:
					p = terminating(p)
					q.Update(old, p)
					tp.deleted = true
				case r < 20:
					p.Spec.SchedulingGates = nil
					q.Update(old, p)
				case r < 60:
					p.Labels["gen"] = p.ResourceVersion
					q.Update(old, p)
				default:
					p.Status.Message = p.ResourceVersion
					q.Update(old, p)
				}
				tp.pod = p
				tp.mu.Unlock()
			}
		}()
	}

	// Cluster events and the clock, until enough cycles ran.
	iterations := 0
	for i := 0; q.SchedulingCycle() < cycles; i++ {
		iterations++
		if i%3 == 0 {
			q.MoveAllToActiveOrBackoff(assignedPodDelete, nil, nil)
		}
		clk.Step(2 * time.Millisecond)
		q.flushBackoffCompleted()
		q.flushUnschedulableLeftover()
		if i%50 == 0 {
			q.checkInvariants(t)
		}
		runtime.Gosched()
	}
	close(stopInformers)
	informerWG.Wait()
	cancel()
	schedWG.Wait()
	q.checkInvariants(t)

	a, b, u, g := q.PendingPods()
	wantPending, bound := 0, 0
	for uid, tp := range pods {
		loc := q.Locate(uid)
		bound += tp.bound
		switch {
		case tp.bound > 1:
			t.Errorf("pod %s bound %d times", uid, tp.bound)
		case tp.deleted && loc != Nowhere:
			t.Errorf("deleted pod %s is still in %s", uid, loc)
		case !tp.deleted && (loc == Nowhere || loc == InFlight):
			t.Errorf("live pod %s is in %s, want a queue", uid, loc)
		case !tp.deleted && isGated(tp.pod) != (loc == GatedPods):
			t.Errorf("pod %s with gates %v is in %s", uid, tp.pod.Spec.SchedulingGates, loc)
		}
		if !tp.deleted {
			wantPending++
			if got := q.storedPod(uid); got != tp.pod {
				t.Errorf("pod %s: queue holds a stale object", uid)
			}
		}
	}
	if got := a + b + u + g; got != wantPending {
		t.Errorf("PendingPods sums to %d (%d+%d+%d+%d), want %d", got, a, b, u, g, wantPending)
	}
	t.Logf("%d driver iterations, %d pods, %d pops, %d bound; pending: %d active, %d backoff, %d unschedulable, %d gated",
		iterations, len(pods), q.SchedulingCycle(), bound, a, b, u, g)
	if bound == 0 {
		t.Errorf("no pod was bound")
	}
}

// storedPod returns the object the queue holds for uid, or nil.
func (q *PriorityQueue) storedPod(uid types.UID) *v1.Pod {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, ok := q.inFlight[uid]; ok {
		return e.pod
	}
	for _, h := range []*podHeap{q.activeQ, q.backoffQ, q.errorBackoffQ} {
		if qpi, ok := h.get(uid); ok {
			return qpi.Pod
		}
	}
	if qpi, ok := q.unschedulable[uid]; ok {
		return qpi.Pod
	}
	if qpi, ok := q.gated[uid]; ok {
		return qpi.Pod
	}
	return nil
}

func terminating(p *v1.Pod) *v1.Pod {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}
