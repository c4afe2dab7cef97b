package frameworktest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
)

// WhatIfFilter is a filter whose PreFilter state preemption asks "what
// if" through AddPod and RemovePod.
type WhatIfFilter interface {
	framework.PreFilterPlugin
	framework.PreFilterExtensions
	framework.FilterPlugin
}

// CheckPreFilterExtensions checks a filter's what-if for preemption: a
// PreFilter state asked what the filter would say with a pod gone from a
// node (RemovePod) or there again (AddPod) must give the answer the filter
// gives when its PreFilter runs on a cluster that really lacks (or has)
// the pod. It runs rounds random clusters, drawn from seed, of nodes with
// hostname, zone and disk labels and taints, holding pods (in two
// namespaces) with required pod affinity and anti-affinity terms, topology
// spread constraints and node selectors, and takes one pod out; newFilter
// builds the filter over a cluster's handle. The pod's presence must
// change a decision in at least a thirtieth of the rounds, or the clusters
// do not exercise the filter.
func CheckPreFilterExtensions(t *testing.T, seed uint64, rounds int, newFilter func(h *Handle) WhatIfFilter) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	apps := []string{"a", "b"}
	keys := []string{v1.LabelHostname, v1.LabelTopologyZone}
	seq := 0
	randomPod := func() *v1.Pod {
		seq++
		w := MakePod().Name(fmt.Sprintf("p%d", seq)).Namespace([]string{"default", "other"}[rng.IntN(4)/3]).
			Label("app", apps[rng.IntN(len(apps))])
		// Up to two affinity terms, which may share a topology key.
		for range rng.IntN(3) * rng.IntN(2) {
			w.RequiredPodAffinity(MakePodAffinityTerm(keys[rng.IntN(2)]).MatchLabel("app", apps[rng.IntN(len(apps))]).Obj())
		}
		if rng.IntN(3) == 0 {
			w.RequiredPodAntiAffinity(MakePodAffinityTerm(keys[rng.IntN(2)]).MatchLabel("app", apps[rng.IntN(len(apps))]).Obj())
		}
		if rng.IntN(2) == 0 {
			sc := MakeSpreadConstraint(int32(1+rng.IntN(2)), keys[rng.IntN(2)], v1.DoNotSchedule).
				MatchLabels("app", apps[rng.IntN(len(apps))])
			if rng.IntN(4) == 0 {
				sc.MinDomains(int32(2 + rng.IntN(3)))
			}
			if rng.IntN(4) == 0 {
				sc.NodeTaintsPolicy(v1.NodeInclusionPolicyHonor)
			}
			w.SpreadConstraint(sc.Obj())
		}
		if rng.IntN(5) == 0 {
			w.NodeSelector(map[string]string{"disk": "ssd"})
		}
		p := w.Obj()
		p.UID = types.UID(p.Namespace + "/" + p.Name)
		return p
	}
	randomCluster := func() ([]*v1.Node, []*v1.Pod) {
		var nodes []*v1.Node
		var pods []*v1.Pod
		for i := range 2 + rng.IntN(6) {
			name := fmt.Sprintf("n%d", i)
			w := MakeNode().Name(name).Label(v1.LabelHostname, name).Label("disk", []string{"ssd", "hdd"}[rng.IntN(2)])
			if rng.IntN(6) > 0 {
				w.Label(v1.LabelTopologyZone, fmt.Sprintf("z%d", rng.IntN(3)))
			}
			if rng.IntN(6) == 0 {
				w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
			}
			nodes = append(nodes, w.Obj())
			for range rng.IntN(4) {
				p := randomPod()
				p.Spec.NodeName = name
				pods = append(pods, p)
			}
		}
		return nodes, pods
	}
	namespaces := []*v1.Namespace{Namespace("default"), Namespace("other")}
	changed := 0
	for round := range rounds {
		nodes, pods := randomCluster()
		if len(pods) == 0 {
			continue
		}
		victim := rng.IntN(len(pods))
		without := append(append([]*v1.Pod(nil), pods[:victim]...), pods[victim+1:]...)
		pod := randomPod()
		withSnap, withoutSnap := NewSnapshot(nodes, pods), NewSnapshot(nodes, without)
		withPl := newFilter(NewHandle(withSnap, namespaces...))
		withoutPl := newFilter(NewHandle(withoutSnap, namespaces...))

		removed := WhatIf(t, withPl, pod, withSnap.List(), pods[victim], false)
		if want := DecideOn(withoutPl, pod, withoutSnap.List()); removed != want {
			t.Fatalf("round %d, pod %s %v %v, without %s on %s:\nRemovePod: %s\n PreFilter: %s",
				round, pod.Namespace, pod.Spec.Affinity, pod.Spec.TopologySpreadConstraints, pods[victim].Name, pods[victim].Spec.NodeName, removed, want)
		}
		added := WhatIf(t, withPl, pod, withSnap.List(), pods[victim], true)
		if want := DecideOn(withPl, pod, withSnap.List()); added != want {
			t.Fatalf("round %d, pod %s %v %v, %s taken off %s and back:\n AddPod: %s\nPreFilter: %s",
				round, pod.Namespace, pod.Spec.Affinity, pod.Spec.TopologySpreadConstraints, pods[victim].Name, pods[victim].Spec.NodeName, added, want)
		}
		if added != removed {
			changed++
		}
	}
	if changed < rounds/30 {
		t.Errorf("the pod's presence changed a decision in %d rounds of %d; the clusters must cover that", changed, rounds)
	}
}

// WhatIf runs pl's PreFilter over nodes, then, on a clone of the state,
// removes p from its node and, when readd, adds it back (as preemption
// reprieves a victim), and renders Filter's decision on every node, p's
// node being a copy that lacks (or has again) p.
func WhatIf(t *testing.T, pl WhatIfFilter, pod *v1.Pod, nodes []*framework.NodeInfo, p *v1.Pod, readd bool) string {
	t.Helper()
	ctx, state := context.Background(), framework.NewCycleState()
	_, pre := pl.PreFilter(ctx, state, pod, nodes)
	if !pre.IsSuccess() && !pre.IsSkip() {
		return fmt.Sprintf("PreFilter %v %q", pre.Code(), pre.Message())
	}
	what := state.Clone()
	pi := framework.NewPodInfo(p)
	nodes = slices.Clone(nodes)
	for i, ni := range nodes {
		if ni.Node().Name != p.Spec.NodeName {
			continue
		}
		ni = ni.Clone()
		ni.Generation, ni.Slot = 0, 0
		nodes[i] = ni
		if err := ni.RemovePod(p); err != nil {
			t.Fatal(err)
		}
		if st := pl.RemovePod(ctx, what, pod, pi, ni); !st.IsSuccess() {
			t.Fatalf("RemovePod: %v", st.Message())
		}
		if readd {
			ni.AddPodInfo(pi)
			if st := pl.AddPod(ctx, what, pod, pi, ni); !st.IsSuccess() {
				t.Fatalf("AddPod: %v", st.Message())
			}
		}
	}
	var b strings.Builder
	for _, ni := range nodes {
		code := framework.Success
		if pre.IsSuccess() {
			code = pl.Filter(ctx, what, pod, ni).Code()
		}
		fmt.Fprintf(&b, "%s:%v ", ni.Node().Name, code)
	}
	return b.String()
}

// DecideOn runs pl's PreFilter and Filter over nodes and renders each
// node's decision ("n1:Success n2:Unschedulable "); a skipped PreFilter
// renders every node passing, as the scheduler runs no Filter of a
// skipped plugin. WhatIf's answer must equal it on the cluster the
// what-if stands for.
func DecideOn(pl WhatIfFilter, pod *v1.Pod, nodes []*framework.NodeInfo) string {
	ctx, state := context.Background(), framework.NewCycleState()
	_, st := pl.PreFilter(ctx, state, pod, nodes)
	if !st.IsSuccess() && !st.IsSkip() {
		return fmt.Sprintf("PreFilter %v %q", st.Code(), st.Message())
	}
	var b strings.Builder
	for _, ni := range nodes {
		code := framework.Success
		if st.IsSuccess() {
			code = pl.Filter(ctx, state, pod, ni).Code()
		}
		fmt.Fprintf(&b, "%s:%v ", ni.Node().Name, code)
	}
	return b.String()
}
