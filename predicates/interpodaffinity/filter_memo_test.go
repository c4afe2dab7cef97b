package interpodaffinity_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
)

// The filter keeps running totals across cycles (framework.SyncTotal). Over
// random cycles of a changing cluster (see churn), a long-lived filter must
// decide every node exactly as one made fresh for the cycle, which counts
// from scratch.
func TestInterPodAffinityRunningTotalsMatchFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	apps := []string{"a", "b", "c"}
	keys := []string{v1.LabelHostname, ipaZone}
	// randomPod has an app label and, at random, required affinity and
	// anti-affinity terms on another (or its own) app by hostname or zone.
	seq := 0
	randomPod := func() *v1.Pod {
		seq++
		w := frameworktest.MakePod().Name(fmt.Sprintf("p%d", seq)).Label("app", apps[rng.IntN(len(apps))])
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
	node := func(i int) *v1.Node {
		return frameworktest.MakeNode().Name(fmt.Sprintf("n%02d", i)).Label(ipaZone, fmt.Sprintf("z%d", rng.IntN(3))).Obj()
	}
	cluster := frameworktest.NewChurningCluster(rng, 12, node, randomPod)
	kept, err := interpodaffinity.NewFilter(frameworktest.NewHandle(cluster.Snapshot))
	if err != nil {
		t.Fatal(err)
	}
	unique := 0
	for step := range 1500 {
		cluster.Step()
		pod := randomPod()
		if cluster.Snapshot.HostnamesUnique() {
			unique++
		}
		// The fresh filter never reads a node's own share by slot: it
		// looks every hostname up, as it must when two nodes share one.
		fresh, err := interpodaffinity.NewFilter(frameworktest.NewHandle(sharedHostnames{cluster.Snapshot}))
		if err != nil {
			t.Fatal(err)
		}
		nodes := cluster.Snapshot.List()
		if got, want := decide(kept, pod, nodes), decide(fresh, pod, nodes); got != want {
			t.Fatalf("step %d, pod %v:\n kept: %s\nfresh: %s", step, pod.Spec.Affinity, got, want)
		}
	}
	// Both ways of reading hostname domains were compared at length.
	if unique < 300 || unique > 1200 {
		t.Errorf("hostnames were unique in %d of 1500 cycles; the churn must cover both cases", unique)
	}
}

// sharedHostnames is a snapshot that says two nodes may share a hostname.
type sharedHostnames struct{ framework.NodeInfoLister }

func (sharedHostnames) HostnamesUnique() bool { return false }

// decide runs pl's PreFilter and then Filter on every node, and renders
// the outcome, to compare two filters' decisions.
func decide(pl interface {
	framework.PreFilterPlugin
	framework.FilterPlugin
}, pod *v1.Pod, nodes []*framework.NodeInfo) string {
	ctx, state := context.Background(), framework.NewCycleState()
	_, st := pl.PreFilter(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		return fmt.Sprintf("PreFilter %v %q", st.Code(), st.Message())
	}
	var b strings.Builder
	for _, ni := range nodes {
		fmt.Fprintf(&b, "%s:%v ", ni.Node().Name, pl.Filter(ctx, state, pod, ni).Code())
	}
	return b.String()
}
