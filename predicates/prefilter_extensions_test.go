package predicates_test

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
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates"
)

// extendedFilter is a filter whose PreFilter state preemption can ask
// "what if" through AddPod and RemovePod.
type extendedFilter interface {
	framework.PreFilterPlugin
	framework.PreFilterExtensions
	framework.FilterPlugin
}

// Preemption asks a PreFilter state what the filter would say with a pod
// gone from a node (RemovePod) or there again (AddPod). Over random
// clusters, the answer must be the one a filter gives when its PreFilter
// runs on a cluster that really lacks (or has) the pod: for
// InterPodAffinity (the pod's terms, existing pods' anti-affinity, the
// first pod of a group) and PodTopologySpread (counts, minimum, node
// inclusion policies).
func TestPreFilterExtensionsMatchPreFilter(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	apps := []string{"a", "b"}
	keys := []string{v1.LabelHostname, ipaZone}
	seq := 0
	randomPod := func() *v1.Pod {
		seq++
		w := frameworktest.MakePod().Name(fmt.Sprintf("p%d", seq)).Namespace([]string{"default", "other"}[rng.IntN(4)/3]).
			Label("app", apps[rng.IntN(len(apps))])
		// Up to two affinity terms, which may share a topology key.
		for range rng.IntN(3) * rng.IntN(2) {
			w.RequiredPodAffinity(ipaTerm(keys[rng.IntN(2)]).MatchLabel("app", apps[rng.IntN(len(apps))]).Obj())
		}
		if rng.IntN(3) == 0 {
			w.RequiredPodAntiAffinity(ipaTerm(keys[rng.IntN(2)]).MatchLabel("app", apps[rng.IntN(len(apps))]).Obj())
		}
		if rng.IntN(2) == 0 {
			sc := frameworktest.MakeSpreadConstraint(int32(1+rng.IntN(2)), keys[rng.IntN(2)], v1.DoNotSchedule).
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
			w := frameworktest.MakeNode().Name(name).Label(v1.LabelHostname, name).Label("disk", []string{"ssd", "hdd"}[rng.IntN(2)])
			if rng.IntN(6) > 0 {
				w.Label(ipaZone, fmt.Sprintf("z%d", rng.IntN(3)))
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
	filters := []struct {
		name string
		make func(h *frameworktest.Handle) extendedFilter
	}{{
		"InterPodAffinity", func(h *frameworktest.Handle) extendedFilter {
			pl, err := predicates.NewInterPodAffinity(h)
			if err != nil {
				t.Fatal(err)
			}
			return pl
		},
	}, {
		"PodTopologySpread", func(h *frameworktest.Handle) extendedFilter {
			ts, err := framework.NewTopologySpread(framework.DefaultPodTopologySpreadArgs(), h)
			if err != nil {
				t.Fatal(err)
			}
			return predicates.NewPodTopologySpread(ts)
		},
	}}
	namespaces := []*v1.Namespace{frameworktest.Namespace("default"), frameworktest.Namespace("other")}
	for _, f := range filters {
		newFilter := f.make
		t.Run(f.name, func(t *testing.T) {
			changed := 0
			for round := range 1500 {
				nodes, pods := randomCluster()
				if len(pods) == 0 {
					continue
				}
				victim := rng.IntN(len(pods))
				without := append(append([]*v1.Pod(nil), pods[:victim]...), pods[victim+1:]...)
				pod := randomPod()
				withSnap, withoutSnap := frameworktest.NewSnapshot(nodes, pods), frameworktest.NewSnapshot(nodes, without)
				withPl := newFilter(frameworktest.NewHandle(withSnap, namespaces...))
				withoutPl := newFilter(frameworktest.NewHandle(withoutSnap, namespaces...))

				removed := whatIf(t, withPl, pod, withSnap.List(), pods[victim], false)
				if want := decideOn(withoutPl, pod, withoutSnap.List()); removed != want {
					t.Fatalf("round %d, pod %s %v %v, without %s on %s:\nRemovePod: %s\n PreFilter: %s",
						round, pod.Namespace, pod.Spec.Affinity, pod.Spec.TopologySpreadConstraints, pods[victim].Name, pods[victim].Spec.NodeName, removed, want)
				}
				added := whatIf(t, withPl, pod, withSnap.List(), pods[victim], true)
				if want := decideOn(withPl, pod, withSnap.List()); added != want {
					t.Fatalf("round %d, pod %s %v %v, %s taken off %s and back:\n AddPod: %s\nPreFilter: %s",
						round, pod.Namespace, pod.Spec.Affinity, pod.Spec.TopologySpreadConstraints, pods[victim].Name, pods[victim].Spec.NodeName, added, want)
				}
				if added != removed {
					changed++
				}
			}
			if changed < 50 {
				t.Errorf("the pod's presence changed a decision in %d rounds; the clusters must cover that", changed)
			}
		})
	}
}

// whatIf runs pl's PreFilter over nodes, then, on a clone of the state,
// removes p from its node and, when readd, adds it back (as preemption
// reprieves a victim), and renders Filter's decision on every node, p's
// node being a copy that lacks (or has again) p.
func whatIf(t *testing.T, pl extendedFilter, pod *v1.Pod, nodes []*framework.NodeInfo, p *v1.Pod, readd bool) string {
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

// decideOn is decide with a skipped PreFilter rendered as every node
// passing, as the scheduler runs no Filter of a skipped plugin.
func decideOn(pl extendedFilter, pod *v1.Pod, nodes []*framework.NodeInfo) string {
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
