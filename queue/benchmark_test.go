package queue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
)

const benchPods = 10_000

// benchmarkPods returns n pods with priorities spread over 0..99, so the heap
// does real work, in a fixed order.
func benchmarkPods(n int) []*v1.Pod {
	rng := rand.New(rand.NewPCG(1, 2))
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = makePod(fmt.Sprintf("p%d", i)).Priority(rng.Int32N(100)).Req("100m", "128Mi").Obj()
	}
	return pods
}

// BenchmarkAddPop adds 10,000 pods and pops them all, each followed by Done
// (a bound pod). One op is the whole round; ns/pod is per pod.
func BenchmarkAddPop(b *testing.B) {
	pods := benchmarkPods(benchPods)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		q := New(Options{Clock: testingclock.NewFakeClock(t0)})
		for _, p := range pods {
			q.Add(p)
		}
		for range pods {
			qpi, err := q.Pop(ctx)
			if err != nil {
				b.Fatal(err)
			}
			q.Done(qpi)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchPods), "ns/pod")
}

// BenchmarkFailAndMove fails 10,000 popped pods as unschedulable, moves them
// all back with one cluster event and pops them again: the retry path.
func BenchmarkFailAndMove(b *testing.B) {
	pods := benchmarkPods(benchPods)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		clk := testingclock.NewFakeClock(t0)
		q := New(Options{Clock: clk})
		for _, p := range pods {
			q.Add(p)
		}
		b.StartTimer()
		for range pods {
			qpi, err := q.Pop(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := q.AddUnschedulable(qpi, q.SchedulingCycle(), true); err != nil {
				b.Fatal(err)
			}
		}
		clk.Step(time.Second) // backoff over: straight to activeQ
		q.MoveAllToActiveOrBackoff(nodeAdd, nil, nil)
		for range pods {
			qpi, err := q.Pop(ctx)
			if err != nil {
				b.Fatal(err)
			}
			q.Done(qpi)
		}
	}
}

// BenchmarkUpdate delivers a status-only update to each of 10,000 queued pods.
func BenchmarkUpdate(b *testing.B) {
	pods := benchmarkPods(benchPods)
	updated := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		p.ResourceVersion = "1"
		u := p.DeepCopy()
		u.ResourceVersion = "2"
		u.Status.Message = "updated"
		updated[i] = u
	}
	q := New(Options{Clock: testingclock.NewFakeClock(t0)})
	for _, p := range pods {
		q.Add(p)
	}
	b.ReportAllocs()
	flip := false
	for b.Loop() {
		from, to := pods, updated
		if flip {
			from, to = updated, pods
		}
		for i := range from {
			q.Update(from[i], to[i])
		}
		flip = !flip
	}
}
