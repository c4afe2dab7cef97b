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

// The scorer keeps running totals per domain across cycles
// (framework.SyncTotal). Over random cycles of a changing cluster, a
// long-lived scorer must skip and score every node exactly as one made
// fresh for the cycle, which sums from scratch.
func TestInterPodAffinityScoreRunningTotalsMatchFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// No pod is labelled d: a term on it matches nothing.
	apps := []string{"a", "b", "c"}
	termApps := []string{"a", "b", "c", "d"}
	keys := []string{v1.LabelHostname, ipaZone}
	term := func() v1.PodAffinityTerm {
		return ipaTerm(keys[rng.IntN(2)]).MatchLabel("app", termApps[rng.IntN(len(termApps))]).Obj()
	}
	// randomPod has an app label and, at random, terms of every kind: the
	// scorer reads the preferred ones of both pods and the required
	// affinity of existing pods; required anti-affinity only puts the pod
	// among those with affinity.
	seq := 0
	randomPod := func() *v1.Pod {
		seq++
		w := frameworktest.MakePod().Name(fmt.Sprintf("p%d", seq)).Label("app", apps[rng.IntN(len(apps))])
		if rng.IntN(8) == 0 {
			w.RequiredPodAffinity(term())
		}
		if rng.IntN(4) == 0 {
			w.RequiredPodAntiAffinity(term())
		}
		if rng.IntN(4) == 0 {
			w.PreferredPodAffinity(1+rng.Int32N(100), term())
		}
		if rng.IntN(6) == 0 {
			w.PreferredPodAntiAffinity(1+rng.Int32N(100), term())
		}
		p := w.Obj()
		p.UID = types.UID(p.Name)
		return p
	}
	node := func(i int) *v1.Node {
		return frameworktest.MakeNode().Name(fmt.Sprintf("n%02d", i)).Label(ipaZone, fmt.Sprintf("z%d", rng.IntN(3))).Obj()
	}
	args := &interpodaffinity.Args{HardPodAffinityWeight: new(int32(3))}
	skipped := 0
	// Rounds of 100 cycles on a new cluster, so that pods do not pile up
	// and cycles where nothing matches (PreScore skips) come and go.
	for round := range 15 {
		cluster := frameworktest.NewChurningCluster(rng, 12, node, randomPod)
		kept, err := interpodaffinity.NewScorer(args, frameworktest.NewHandle(cluster.Snapshot))
		if err != nil {
			t.Fatal(err)
		}
		for step := range 100 {
			cluster.Step()
			pod := randomPod()
			fresh, err := interpodaffinity.NewScorer(args, frameworktest.NewHandle(cluster.Snapshot))
			if err != nil {
				t.Fatal(err)
			}
			nodes := cluster.Snapshot.List()
			got, want := rawScores(kept, pod, nodes), rawScores(fresh, pod, nodes)
			if got != want {
				t.Fatalf("round %d, step %d, pod %v:\n kept: %s\nfresh: %s", round, step, pod.Spec.Affinity, got, want)
			}
			if strings.HasPrefix(want, "Skip") {
				skipped++
			}
		}
	}
	if skipped < 100 || skipped > 1000 {
		t.Errorf("PreScore skipped %d of 1500 cycles; the pods must cover both cases", skipped)
	}
}

// rawScores runs pl's PreScore and then Score on every node, and renders
// the outcome, to compare two scorers.
func rawScores(pl *interpodaffinity.Scorer, pod *v1.Pod, nodes []*framework.NodeInfo) string {
	ctx, state := context.Background(), framework.NewCycleState()
	if st := pl.PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		return fmt.Sprintf("%v %q", st.Code(), st.Message())
	}
	var b strings.Builder
	for _, ni := range nodes {
		v, st := pl.Score(ctx, state, pod, ni)
		fmt.Fprintf(&b, "%s:%d:%v ", ni.Node().Name, v, st.Code())
	}
	return b.String()
}
