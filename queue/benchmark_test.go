package queue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/noderesources"
	"github.com/yardmaster-io/yardmaster/predicates/nodeunschedulable"
	"github.com/yardmaster-io/yardmaster/predicates/tainttoleration"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
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
		clk.Step(2 * time.Second) // backoff over (its second too): straight to activeQ
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

// benchUnschedulable is the size of the unschedulable pool in the wake-up
// benchmarks, as in kube-scheduler's Unschedulable workload.
const benchUnschedulable = 20_000

// unschedulablePool returns a queue holding n unschedulable pods of the
// default profile, with the in-tree filters' hints, rejected as pods are
// on a full cluster: by NodeResourcesFit mostly, and when mixed some by
// TaintToleration, NodeAffinity and InterPodAffinity.
func unschedulablePool(b *testing.B, n int, mixed bool) *PriorityQueue {
	b.Helper()
	q := New(Options{Clock: testingclock.NewFakeClock(t0)})
	snap := cache.NewSnapshotFromNodes(nil, nil)
	ipa, err := interpodaffinity.NewFilter(frameworktest.NewHandle(snap))
	if err != nil {
		b.Fatal(err)
	}
	plugins := map[string][]framework.Plugin{
		noderesources.FitName:  {noderesources.NewFitFilter(nil)},
		tainttoleration.Name:   {tainttoleration.NewFilter()},
		nodeaffinity.Name:      {nodeaffinity.NewFilter(nil)},
		interpodaffinity.Name:  {ipa},
		nodeunschedulable.Name: {nodeunschedulable.NewFilter()},
	}
	hints, err := ProfileHints(context.Background(), plugins)
	if err != nil {
		b.Fatal(err)
	}
	q.SetProfileHints("yardmaster", hints)
	ctx := context.Background()
	for i := range n {
		p := makePod(fmt.Sprintf("p%d", i)).Req("8", "1Gi")
		rejector := noderesources.FitName
		switch i % 10 * btoi(mixed) {
		case 7:
			rejector = tainttoleration.Name
		case 8:
			p = p.NodeSelector(map[string]string{"pool": "gpu"})
			rejector = nodeaffinity.Name
		case 9:
			p = p.RequiredPodAffinity(frameworktest.MakePodAffinityTerm("zone").MatchLabel("app", "db").Obj())
			rejector = interpodaffinity.Name
		}
		q.Add(p.Obj())
		qpi, err := q.Pop(ctx)
		if err != nil {
			b.Fatal(err)
		}
		qpi.UnschedulablePlugins = sets.New(rejector)
		if err := q.AddUnschedulable(qpi, q.SchedulingCycle(), true); err != nil {
			b.Fatal(err)
		}
	}
	return q
}

// BenchmarkWakeUnschedulable delivers one cluster event to a pool of
// 20,000 unschedulable pods, none of which it can help: the cost of the
// events a busy cluster raises all the time. One op is one event; the
// pool must stay whole.
func BenchmarkWakeUnschedulable(b *testing.B) {
	node := frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Label("zone", "a").Obj()
	relabelled := node.DeepCopy()
	relabelled.Labels["team"] = "blue"
	heartbeat := node.DeepCopy()
	heartbeat.ResourceVersion = "2"
	tests := []struct {
		name     string
		event    framework.ClusterEvent
		old, new any
	}{
		{"NodeLabelUpdate", framework.ClusterEvent{Resource: framework.Node, ActionType: framework.NodeUpdateActions(node, relabelled)}, node, relabelled},
		{"NodeConditionUpdate", framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeCondition}, node, heartbeat},
		// No assigned pod's deletion here: it frees a pod slot at least,
		// so NodeResourcesFit's hint queues every pod it rejected that may
		// run on that node, as kube-scheduler's does.
		{"AssignedPodAdd", framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}, nil,
			frameworktest.MakePod().Name("web").Label("app", "web").Node("n1").Obj()},
	}
	// A pod bound while every parked pod waits for room (kube-scheduler's
	// Unschedulable workload): NodeResourcesFit does not register it, so
	// the pool is not walked at all.
	b.Run("AssignedPodAdd/FitOnly", func(b *testing.B) {
		q := unschedulablePool(b, benchUnschedulable, false)
		ev := framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}
		bound := frameworktest.MakePod().Name("web").Label("app", "web").Node("n1").Obj()
		b.ReportAllocs()
		for b.Loop() {
			q.MoveAllToActiveOrBackoff(ev, nil, bound)
		}
		if _, _, n, _ := q.PendingPods(); n != benchUnschedulable {
			b.Fatalf("%d pods unschedulable, want %d", n, benchUnschedulable)
		}
	})
	for _, tc := range tests {
		b.Run(tc.name, func(b *testing.B) {
			q := unschedulablePool(b, benchUnschedulable, true)
			b.ReportAllocs()
			for b.Loop() {
				q.MoveAllToActiveOrBackoff(tc.event, tc.old, tc.new)
			}
			if _, _, n, _ := q.PendingPods(); n != benchUnschedulable {
				b.Fatalf("%d pods unschedulable, want %d: the event woke some", n, benchUnschedulable)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchUnschedulable), "ns/pod")
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
