package scheduler

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

func TestKeptCounts(t *testing.T) {
	nodes := []*v1.Node{}
	// 5 nodes short of cpu, 2 cordoned, and 3 with taints that each name
	// their own value (a status per node).
	for i := range 5 {
		nodes = append(nodes, frameworktest.MakeNode().Name(fmt.Sprintf("small-%d", i)).Capacity("1", "4Gi", 110).Obj())
	}
	for i := range 2 {
		nodes = append(nodes, frameworktest.MakeNode().Name(fmt.Sprintf("cordoned-%d", i)).Capacity("8", "16Gi", 110).Unschedulable().Obj())
	}
	for i := range 3 {
		nodes = append(nodes, frameworktest.MakeNode().Name(fmt.Sprintf("tainted-%d", i)).Capacity("8", "16Gi", 110).Taint("team", fmt.Sprint(i), v1.TaintEffectNoSchedule).Obj())
	}
	s := newTestScheduler(t, 0, nodes...)
	pod := frameworktest.MakePod().Name("web").Req("2", "1Gi").Obj()
	_, err := s.scheduleForTest(pod)
	var fitErr *FitError
	if !errors.As(err, &fitErr) {
		t.Fatalf("want a FitError, got %v", err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.kept.record(pod, "yardmaster", 3, fitErr, at)

	e, ok := s.kept.get(pod)
	if !ok {
		t.Fatal("nothing kept")
	}
	got := e.Kept.Counts
	for i := range got {
		got[i].Sample = nil // which nodes a parallel loop saw first varies
	}
	want := []explain.ReasonCount{
		{Plugin: "NodeResourcesFit", Reason: "Insufficient cpu", Nodes: 5},
		{Plugin: "TaintToleration", Reason: "node(s) had untolerated taint(s)", Nodes: 3},
		{Plugin: "NodeUnschedulable", Reason: "node(s) were unschedulable", Nodes: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if e.Kept.Attempts != 3 || e.Kept.At != "2026-01-02T03:04:05Z" || e.Nodes != 10 || e.Message != fitErr.Error() {
		t.Errorf("kept %+v, nodes %d, message %q", e.Kept, e.Nodes, e.Message)
	}
	if want := "The last attempt (2026-01-02T03:04:05Z, attempt 3) found 0/10 nodes available: 5 Insufficient cpu (NodeResourcesFit), "; len(e.Summary) < len(want) || e.Summary[:len(want)] != want {
		t.Errorf("summary %q", e.Summary)
	}

	s.kept.forget(pod.UID)
	if _, ok := s.kept.get(pod); ok {
		t.Error("kept after forget")
	}
}

// More distinct rejections than tally counts: the rest are counted from
// the reasons, without a plugin, and no node goes uncounted.
func TestKeptCountsOverflow(t *testing.T) {
	// Node i lacks only the extended resource r-i of the n the pod
	// requests: n distinct "Insufficient example.com/r-i".
	var nodes []*v1.Node
	n := maxStatusCounts + 8
	res := func(i int) v1.ResourceName { return v1.ResourceName(fmt.Sprintf("example.com/r-%02d", i)) }
	requests := map[v1.ResourceName]string{}
	for i := range n {
		requests[res(i)] = "1"
	}
	for i := range n {
		has := map[v1.ResourceName]string{}
		for r := range requests {
			if r != res(i) {
				has[r] = "1"
			}
		}
		nodes = append(nodes, frameworktest.MakeNode().Name(fmt.Sprintf("t-%02d", i)).Capacity("8", "16Gi", 110).Allocatable(has).Obj())
	}
	s := newTestScheduler(t, 0, nodes...)
	pod := frameworktest.MakePod().Name("web").Res(requests).Obj()
	_, err := s.scheduleForTest(pod)
	var fitErr *FitError
	if !errors.As(err, &fitErr) || !fitErr.overflowed {
		t.Fatalf("want an overflowed FitError, got %v", err)
	}
	total, withPlugin := 0, 0
	for _, c := range keptCounts(fitErr) {
		total += c.Nodes
		if c.Plugin != "" {
			withPlugin += c.Nodes
		}
	}
	if total != n || withPlugin != maxStatusCounts {
		t.Errorf("%d nodes counted (%d with their plugin), want %d (%d)", total, withPlugin, n, maxStatusCounts)
	}
}

func TestKeptBounded(t *testing.T) {
	var k keptExplanations
	f := &FitError{NumAllNodes: 1, ReasonCounts: map[string]int{"x": 1}}
	start := time.Now()
	for i := range maxKept + 5 {
		p := frameworktest.MakePod().Name(fmt.Sprintf("p%d", i)).Obj()
		k.record(p, "yardmaster", 1, f, start.Add(time.Duration(i)*time.Second))
	}
	if k.len() != maxKept || k.dropped != 5 {
		t.Errorf("%d kept, %d dropped", k.len(), k.dropped)
	}
	// The oldest went first.
	if _, ok := k.byUID[types.UID("default-p4")]; ok {
		t.Error("p4, among the oldest, is still kept")
	}
	if _, ok := k.byUID[types.UID("default-p5")]; !ok {
		t.Error("p5 was dropped")
	}
	// A pod tried again is young again: the next oldest goes instead.
	k.record(frameworktest.MakePod().Name("p5").Obj(), "yardmaster", 2, f, start.Add(time.Hour))
	k.record(frameworktest.MakePod().Name("new").Obj(), "yardmaster", 1, f, start.Add(time.Hour))
	if _, ok := k.byUID[types.UID("default-p5")]; !ok {
		t.Error("p5, tried again, was dropped")
	}
	if _, ok := k.byUID[types.UID("default-p6")]; ok {
		t.Error("p6, now the oldest, is still kept")
	}
	// Pods tried over and over leave no trail behind.
	for i := range 5 * maxKept {
		k.record(frameworktest.MakePod().Name(fmt.Sprintf("p%d", 100+i%50)).Obj(), "yardmaster", i, f, start.Add(2*time.Hour))
	}
	if k.len() != maxKept || len(k.order) > 2*maxKept+64 {
		t.Errorf("%d kept, %d in order", k.len(), len(k.order))
	}
}
