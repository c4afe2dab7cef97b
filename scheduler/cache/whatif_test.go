package cache_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
)

// A what-if adds pods to the snapshot's nodes, each change with a
// generation of its own below zero, and Undo puts the snapshot back as the cache left it; the cache never
// sees the pods.
func TestWhatIfAddAndUndo(t *testing.T) {
	c := cache.New(nil, 0)
	c.AddNode(frameworktest.MakeNode().Name("a").Capacity("4", "8Gi", 110).Obj())
	c.AddNode(frameworktest.MakeNode().Name("b").Capacity("4", "8Gi", 110).Obj())
	c.AddPod(frameworktest.MakePod().Name("running").UID("running").Req("1", "1Gi").Node("a").Obj())
	s := cache.NewSnapshot()
	c.UpdateSnapshot(s)
	before := map[string]int64{}
	for _, ni := range s.List() {
		before[ni.NodeName()] = ni.Generation
	}
	anti := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}

	w := s.WhatIf()
	for _, p := range []*v1.Pod{
		frameworktest.MakePod().Name("m0").UID("m0").Req("2", "1Gi").Node("a").Obj(),
		frameworktest.MakePod().Name("m1").UID("m1").Req("500m", "1Gi").Node("a").RequiredPodAntiAffinity(anti).Obj(),
	} {
		if err := w.AddPod(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddPod(frameworktest.MakePod().Name("m2").UID("m2").Node("nowhere").Obj()); err == nil {
		t.Error("a pod on a node the snapshot does not hold was added")
	}
	a, _ := s.Get("a")
	// 1 running + 2 + 0.5 of the what-if; two changes: generation -2.
	if got := a.Requested.MilliCPU; got != 3500 || len(a.Pods) != 3 || a.Generation != -2 {
		t.Errorf("during: node a requests %dm, %d pods, generation %d; want 3500m, 3 pods, generation -2", got, len(a.Pods), a.Generation)
	}
	if gen := s.Slots().Gens[a.Slot]; gen != -2 {
		t.Errorf("during: slot generation %d, want -2", gen)
	}
	if l := s.HavePodsWithRequiredAntiAffinityList(); len(l) != 1 || l[0] != a {
		t.Errorf("during: nodes with required anti-affinity %v", l)
	}
	if ni, _ := c.NodeInfo("a"); ni.Requested.MilliCPU != 1000 {
		t.Errorf("the cache sees the what-if: %dm requested", ni.Requested.MilliCPU)
	}

	w.Undo()
	a, _ = s.Get("a")
	if got := a.Requested.MilliCPU; got != 1000 || len(a.Pods) != 1 || a.Generation != before["a"] {
		t.Errorf("after: node a requests %dm, %d pods, generation %d; want 1000m, 1 pod, generation %d", got, len(a.Pods), a.Generation, before["a"])
	}
	if gen := s.Slots().Gens[a.Slot]; gen != before["a"] {
		t.Errorf("after: slot generation %d, want %d", gen, before["a"])
	}
	if l := s.HavePodsWithRequiredAntiAffinityList(); len(l) != 0 {
		t.Errorf("after: nodes with required anti-affinity %v", l)
	}
	if err := s.CheckNodeSets(); err != nil {
		t.Error(err)
	}
	// The next update finds nothing to copy and the snapshot as it was.
	c.UpdateSnapshot(s)
	for _, ni := range s.List() {
		if ni.Generation != before[ni.NodeName()] {
			t.Errorf("node %s: generation %d, want %d", ni.NodeName(), ni.Generation, before[ni.NodeName()])
		}
	}
}

// RemovePod takes a pod off its node for the dry run; Undo brings it back.
func TestWhatIfRemovePod(t *testing.T) {
	nodes := []*v1.Node{frameworktest.MakeNode().Name("a").Capacity("4", "8Gi", 110).Obj()}
	victim := frameworktest.MakePod().Name("victim").Node("a").Req("3", "1Gi").Obj()
	s := cache.NewSnapshotFromNodes(nodes, []*v1.Pod{victim})
	a, _ := s.Get("a")
	gen := a.Generation
	w := s.WhatIf()
	if err := w.RemovePod(victim); err != nil {
		t.Fatal(err)
	}
	if a.Requested.MilliCPU != 0 || len(a.Pods) != 0 || a.Generation >= 0 {
		t.Errorf("during: %dm requested, %d pods, generation %d; want 0m, none, a what-if generation", a.Requested.MilliCPU, len(a.Pods), a.Generation)
	}
	if err := w.RemovePod(victim); err == nil {
		t.Error("removing a pod twice: no error")
	}
	w.Undo()
	if a.Requested.MilliCPU != 3000 || len(a.Pods) != 1 || a.Generation != gen {
		t.Errorf("after Undo: %dm requested, %d pods, generation %d; want 3000m, 1 pod, generation %d", a.Requested.MilliCPU, len(a.Pods), a.Generation, gen)
	}
}
