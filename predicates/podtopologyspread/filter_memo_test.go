package podtopologyspread_test

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
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
)

// The filter keeps running per-domain totals across cycles for constraints
// that count every node (framework.SyncTotal). Over random cycles of a
// changing cluster (see churn), a long-lived filter must decide every node
// exactly as one made fresh for the cycle.
func TestPodTopologySpreadRunningTotalsMatchFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	apps := []string{"a", "b"}
	keys := []string{v1.LabelHostname, v1.LabelTopologyZone}
	node := func(i int) *v1.Node {
		w := frameworktest.MakeNode().Name(fmt.Sprintf("n%02d", i)).Label("disk", []string{"ssd", "hdd"}[rng.IntN(2)])
		if rng.IntN(8) > 0 {
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
		for range 1 + rng.IntN(2) {
			sc := frameworktest.MakeSpreadConstraint(int32(1+rng.IntN(2)), keys[rng.IntN(2)], v1.DoNotSchedule).
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

	cluster := frameworktest.NewChurningCluster(rng, 12, node, randomPod)
	newFilter := func() *podtopologyspread.Filter {
		ts, err := podtopologyspread.NewSpread(podtopologyspread.DefaultArgs(), frameworktest.NewHandle(cluster.Snapshot))
		if err != nil {
			t.Fatal(err)
		}
		return podtopologyspread.NewFilter(ts)
	}
	kept := newFilter()
	for step := range 1500 {
		cluster.Step()
		pod := randomPod()
		nodes := cluster.Snapshot.List()
		if got, want := decide(kept, pod, nodes), decide(newFilter(), pod, nodes); got != want {
			t.Fatalf("step %d, pod %v %v:\n kept: %s\nfresh: %s", step, pod.Spec.TopologySpreadConstraints, pod.Spec.NodeSelector, got, want)
		}
	}
}

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
