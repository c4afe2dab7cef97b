package podtopologyspread

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// The scorer counts a constraint that counts every node from running
// totals kept across cycles (framework.DomainTotals), and the others by a
// pass over every node each cycle, as kube-scheduler does. Over random
// cycles of a changing cluster, with random feasible nodes, three scorers
// must score every node alike: a long-lived one, one made fresh for the
// cycle, and one that recounts every constraint. The pods have their own
// constraints (every key required), or the System defaults (a zoneless
// node is in the "" zone), or none that apply (Skip); some honor node
// affinity or taints, which always recount.
func TestPodTopologySpreadScoreRunningTotals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	apps := []string{"a", "b"}
	keys := []string{v1.LabelHostname, v1.LabelTopologyZone}
	node := func(i int) *v1.Node {
		name := fmt.Sprintf("n%02d", i)
		w := frameworktest.MakeNode().Name(name).Label(v1.LabelHostname, name).Label("disk", []string{"ssd", "hdd"}[rng.IntN(2)])
		if rng.IntN(6) > 0 {
			w.Label(v1.LabelTopologyZone, fmt.Sprintf("z%d", rng.IntN(3)))
		}
		if rng.IntN(6) == 0 {
			w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
		}
		return w.Obj()
	}
	seq := 0
	randomPod := func() *v1.Pod {
		seq++
		w := frameworktest.MakePod().Name(fmt.Sprintf("p%d", seq)).Namespace([]string{"default", "other"}[rng.IntN(2)]).
			Label("app", apps[rng.IntN(len(apps))])
		// A third have no constraints of their own: the System defaults
		// apply when a Service selects them.
		for range rng.IntN(3) {
			sc := frameworktest.MakeSpreadConstraint(int32(1+rng.IntN(3)), keys[rng.IntN(2)], v1.ScheduleAnyway).
				MatchLabels("app", apps[rng.IntN(len(apps))])
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
	services := []*v1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "b"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "b"}}},
	}
	cluster := frameworktest.NewChurningCluster(rng, 15, node, randomPod)
	newScorer := func(recount bool) *Scorer {
		h := frameworktest.NewHandle(cluster.Snapshot).AddObjects(services[0], services[1])
		ts, err := NewSpread(DefaultArgs(), h)
		if err != nil {
			t.Fatal(err)
		}
		pl := NewScorer(ts, h)
		pl.recount = recount
		return pl
	}
	kept, recount := newScorer(false), newScorer(true)
	defaulted, skipped := 0, 0
	for step := range 2000 {
		cluster.Step()
		pod := randomPod()
		var feasible []*framework.NodeInfo
		for _, ni := range cluster.Snapshot.List() {
			if rng.IntN(3) > 0 {
				feasible = append(feasible, ni)
			}
		}
		want := spreadScores(recount, pod, feasible)
		for name, pl := range map[string]*Scorer{"kept": kept, "fresh": newScorer(false)} {
			if got := spreadScores(pl, pod, feasible); got != want {
				t.Fatalf("step %d, pod %v %v:\n%7s: %s\nrecount: %s", step, pod.Spec.TopologySpreadConstraints, pod.Spec.NodeSelector, name, got, want)
			}
		}
		switch {
		case strings.HasPrefix(want, "Skip"):
			skipped++
		case len(pod.Spec.TopologySpreadConstraints) == 0:
			defaulted++
		}
	}
	if defaulted < 200 || skipped < 200 {
		t.Errorf("%d cycles under the System defaults and %d skipped of 2000; the pods must cover both", defaulted, skipped)
	}
}

// spreadScores runs pl's PreScore over feasible, Score on each and
// NormalizeScore, and renders raw and normalized scores, to compare
// scorers.
func spreadScores(pl *Scorer, pod *v1.Pod, feasible []*framework.NodeInfo) string {
	ctx, state := context.Background(), framework.NewCycleState()
	if st := pl.PreScore(ctx, state, pod, feasible); !st.IsSuccess() {
		return fmt.Sprintf("%v %q", st.Code(), st.Message())
	}
	var b strings.Builder
	list := make(framework.NodeScoreList, len(feasible))
	for i, ni := range feasible {
		v, st := pl.Score(ctx, state, pod, ni)
		fmt.Fprintf(&b, "%s:%d:%v ", ni.Node().Name, v, st.Code())
		list[i] = framework.NodeScore{Name: ni.Node().Name, Score: v}
	}
	if st := pl.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
		return b.String() + "NormalizeScore " + st.Message()
	}
	b.WriteString("→ ")
	for _, s := range list {
		fmt.Fprintf(&b, "%s:%d ", s.Name, s.Score)
	}
	return b.String()
}
