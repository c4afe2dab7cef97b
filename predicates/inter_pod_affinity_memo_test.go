package predicates_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/internal/fakehandle"
	"github.com/yardmaster-io/yardmaster/internal/schedtest"
	"github.com/yardmaster-io/yardmaster/predicates"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
)

// The filter keeps running totals across cycles (framework.SyncTotal). Over
// random cycles in which pods come and go, nodes come and go and change
// zones, a long-lived filter must decide every node exactly as one made
// fresh for the cycle, which counts from scratch.
func TestInterPodAffinityRunningTotalsMatchFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := cache.New(clock.RealClock{}, time.Minute)
	snap := cache.NewSnapshot()
	kept, err := predicates.NewInterPodAffinity(fakehandle.New(snap))
	if err != nil {
		t.Fatal(err)
	}
	apps := []string{"a", "b", "c"}
	keys := []string{v1.LabelHostname, ipaZone}
	node := func(i int) *v1.Node {
		return schedtest.MakeNode().Name(fmt.Sprintf("n%02d", i)).Label(ipaZone, fmt.Sprintf("z%d", rng.IntN(3))).Obj()
	}
	// randomPod has an app label and, at random, required affinity and
	// anti-affinity terms on another (or its own) app by hostname or zone.
	seq := 0
	randomPod := func() *v1.Pod {
		seq++
		w := schedtest.MakePod().Name(fmt.Sprintf("p%d", seq)).Label("app", apps[rng.IntN(len(apps))])
		if rng.IntN(3) == 0 {
			w.RequiredPodAffinity(ipaTerm(keys[rng.IntN(2)]).MatchLabel("app", apps[rng.IntN(len(apps))]).Obj())
		}
		for range rng.IntN(3) {
			w.RequiredPodAntiAffinity(ipaTerm(keys[rng.IntN(2)]).MatchLabel("app", apps[rng.IntN(len(apps))]).Obj())
		}
		p := w.Obj()
		p.UID = types.UID(p.Name)
		return p
	}

	var nodes []*v1.Node
	for i := range 12 {
		nodes = append(nodes, node(i))
		c.AddNode(nodes[i])
	}
	nextNode := len(nodes)
	var placed []*v1.Pod
	decided := 0
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
		case r == 7:
			// A node changes zone.
			i := rng.IntN(len(nodes))
			n := nodes[i].DeepCopy()
			n.Labels[ipaZone] = fmt.Sprintf("z%d", rng.IntN(3))
			c.UpdateNode(nodes[i], n)
			nodes[i] = n
		case r == 8:
			// A node goes with its pods; a new one may take its slot.
			i := rng.IntN(len(nodes))
			kept := placed[:0]
			for _, p := range placed {
				if p.Spec.NodeName == nodes[i].Name {
					c.RemovePod(p)
				} else {
					kept = append(kept, p)
				}
			}
			placed = kept
			c.RemoveNode(nodes[i])
			nodes[i] = node(nextNode)
			nextNode++
			c.AddNode(nodes[i])
		}

		c.UpdateSnapshot(snap)
		pod := randomPod()
		fresh, err := predicates.NewInterPodAffinity(fakehandle.New(snap))
		if err != nil {
			t.Fatal(err)
		}
		want := ipaDecide(fresh, pod, snap.List())
		got := ipaDecide(kept, pod, snap.List())
		if got != want {
			t.Fatalf("step %d, pod %v:\n kept: %s\nfresh: %s", step, pod.Spec.Affinity, got, want)
		}
		decided++
	}
	if decided == 0 {
		t.Fatal("nothing decided")
	}
}

// ipaDecide runs PreFilter and Filter on every node and renders the outcome.
func ipaDecide(pl *predicates.InterPodAffinity, pod *v1.Pod, nodes []*framework.NodeInfo) string {
	ctx, state := context.Background(), framework.NewCycleState()
	_, st := pl.PreFilter(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		return fmt.Sprintf("PreFilter %v %q", st.Code(), st.Message())
	}
	out := ""
	for _, ni := range nodes {
		st := pl.Filter(ctx, state, pod, ni)
		out += fmt.Sprintf("%s:%v ", ni.Node().Name, st.Code())
	}
	return out
}
