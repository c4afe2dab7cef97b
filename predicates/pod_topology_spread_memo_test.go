package predicates_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/internal/fakehandle"
	"github.com/yardmaster-io/yardmaster/internal/schedtest"
	"github.com/yardmaster-io/yardmaster/predicates"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
)

// The filter keeps running per-domain totals across cycles for constraints
// that count every node (framework.SyncTotal). Over random cycles in which
// pods come, go and start terminating, and nodes come, go, change zones or
// lose their zone label, a long-lived filter must decide every node exactly
// as one made fresh for the cycle.
func TestPodTopologySpreadRunningTotalsMatchFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := cache.New(clock.RealClock{}, time.Minute)
	snap := cache.NewSnapshot()
	newFilter := func() *predicates.PodTopologySpread {
		ts, err := framework.NewTopologySpread(framework.DefaultPodTopologySpreadArgs(), fakehandle.New(snap))
		if err != nil {
			t.Fatal(err)
		}
		return predicates.NewPodTopologySpread(ts)
	}
	kept := newFilter()
	apps := []string{"a", "b"}
	keys := []string{v1.LabelHostname, ipaZone}
	node := func(i int) *v1.Node {
		w := schedtest.MakeNode().Name(fmt.Sprintf("n%02d", i)).Label("disk", []string{"ssd", "hdd"}[rng.IntN(2)])
		if rng.IntN(8) > 0 {
			w.Label(ipaZone, fmt.Sprintf("z%d", rng.IntN(3)))
		}
		if rng.IntN(6) == 0 {
			w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
		}
		return w.Obj()
	}
	seq := 0
	randomPod := func() *v1.Pod {
		seq++
		w := schedtest.MakePod().Name(fmt.Sprintf("p%d", seq)).Namespace([]string{"default", "other"}[rng.IntN(2)]).
			Label("app", apps[rng.IntN(len(apps))])
		for range 1 + rng.IntN(2) {
			sc := schedtest.MakeSpreadConstraint(int32(1+rng.IntN(2)), keys[rng.IntN(2)], v1.DoNotSchedule).
				MatchLabels("app", apps[rng.IntN(len(apps))])
			if rng.IntN(4) == 0 {
				sc.MinDomains(int32(2 + rng.IntN(3)))
			}
			if rng.IntN(5) == 0 {
				sc.NodeTaintsPolicy(v1.NodeInclusionPolicyHonor)
			}
			if rng.IntN(5) == 0 {
				sc.NodeAffinityPolicy(v1.NodeInclusionPolicyIgnore)
			}
			w.SpreadConstraint(sc.Obj())
		}
		if rng.IntN(4) == 0 {
			w.NodeSelector(map[string]string{"disk": "ssd"})
		}
		p := w.Obj()
		p.UID = types.UID(p.Namespace + "/" + p.Name)
		return p
	}

	var nodes []*v1.Node
	for i := range 12 {
		nodes = append(nodes, node(i))
		c.AddNode(nodes[i])
	}
	nextNode := len(nodes)
	var placed []*v1.Pod
	for step := range 1500 {
		switch r := rng.IntN(10); {
		case r < 5:
			p := randomPod()
			p.Spec.NodeName = nodes[rng.IntN(len(nodes))].Name
			c.AddPod(p)
			placed = append(placed, p)
		case r < 7 && len(placed) > 0:
			i := rng.IntN(len(placed))
			c.RemovePod(placed[i])
			placed = append(placed[:i], placed[i+1:]...)
		case r == 7 && len(placed) > 0:
			// A pod starts terminating: it no longer counts.
			i := rng.IntN(len(placed))
			p := placed[i].DeepCopy()
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			c.UpdatePod(placed[i], p)
			placed[i] = p
		case r == 8:
			// A node changes zone, or loses its zone label.
			i := rng.IntN(len(nodes))
			n := nodes[i].DeepCopy()
			if rng.IntN(3) == 0 {
				delete(n.Labels, ipaZone)
			} else {
				n.Labels[ipaZone] = fmt.Sprintf("z%d", rng.IntN(3))
			}
			c.UpdateNode(nodes[i], n)
			nodes[i] = n
		case r == 9:
			// A node goes with its pods; a new one may take its slot.
			i := rng.IntN(len(nodes))
			rest := placed[:0]
			for _, p := range placed {
				if p.Spec.NodeName == nodes[i].Name {
					c.RemovePod(p)
				} else {
					rest = append(rest, p)
				}
			}
			placed = rest
			c.RemoveNode(nodes[i])
			nodes[i] = node(nextNode)
			nextNode++
			c.AddNode(nodes[i])
		}

		c.UpdateSnapshot(snap)
		pod := randomPod()
		want := spreadDecide(newFilter(), pod, snap.List())
		if got := spreadDecide(kept, pod, snap.List()); got != want {
			t.Fatalf("step %d, pod %v %v:\n kept: %s\nfresh: %s", step, pod.Spec.TopologySpreadConstraints, pod.Spec.NodeSelector, got, want)
		}
	}
}

// spreadDecide runs PreFilter and Filter on every node and renders the outcome.
func spreadDecide(pl *predicates.PodTopologySpread, pod *v1.Pod, nodes []*framework.NodeInfo) string {
	ctx, state := context.Background(), framework.NewCycleState()
	_, st := pl.PreFilter(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		return fmt.Sprintf("PreFilter %v %q", st.Code(), st.Message())
	}
	out := ""
	for _, ni := range nodes {
		out += fmt.Sprintf("%s:%v ", ni.Node().Name, pl.Filter(ctx, state, pod, ni).Code())
	}
	return out
}
