package priorities

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
	"github.com/yardmaster-io/yardmaster/internal/churn"
	"github.com/yardmaster-io/yardmaster/internal/fakehandle"
	"github.com/yardmaster-io/yardmaster/internal/schedtest"
)

// The scorer counts a constraint that counts every node from running
// totals, and the others by a pass over every node each cycle, as
// kube-scheduler does. Over a changing cluster, with random feasible
// nodes, both ways must give every node the same score: under the System
// defaults (zoneless nodes in the "" zone) and with every key required.
func TestPodTopologySpreadScoreRunningTotalsMatchRecount(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	apps := []string{"a", "b"}
	keys := []string{v1.LabelHostname, v1.LabelTopologyZone}
	node := func(i int) *v1.Node {
		name := fmt.Sprintf("n%02d", i)
		w := schedtest.MakeNode().Name(name).Label(v1.LabelHostname, name)
		if rng.IntN(6) > 0 {
			w.Label(v1.LabelTopologyZone, fmt.Sprintf("z%d", rng.IntN(3)))
		}
		return w.Obj()
	}
	seq := 0
	randomPod := func() *v1.Pod {
		seq++
		w := schedtest.MakePod().Name(fmt.Sprintf("p%d", seq)).Label("app", apps[rng.IntN(len(apps))])
		for range rng.IntN(3) {
			w.SpreadConstraint(schedtest.MakeSpreadConstraint(int32(1+rng.IntN(3)), keys[rng.IntN(2)], v1.ScheduleAnyway).
				MatchLabels("app", apps[rng.IntN(len(apps))]).Obj())
		}
		p := w.Obj()
		p.UID = types.UID(p.Name)
		return p
	}
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "a"}}}
	cluster := churn.New(rng, 15, node, randomPod)
	newScorer := func(recount bool) *PodTopologySpread {
		h := fakehandle.New(cluster.Snapshot).AddObjects(svc)
		ts, err := framework.NewTopologySpread(framework.DefaultPodTopologySpreadArgs(), h)
		if err != nil {
			t.Fatal(err)
		}
		pl := NewPodTopologySpread(ts, h)
		pl.recount = recount
		return pl
	}
	running, recount := newScorer(false), newScorer(true)
	scored := 0
	for step := range 2000 {
		cluster.Step()
		pod := randomPod()
		var feasible []*framework.NodeInfo
		for _, ni := range cluster.Snapshot.List() {
			if rng.IntN(3) > 0 {
				feasible = append(feasible, ni)
			}
		}
		got, want := scoresOf(running, pod, feasible), scoresOf(recount, pod, feasible)
		if got != want {
			t.Fatalf("step %d, pod %v:\nrunning totals: %s\n       recount: %s", step, pod.Spec.TopologySpreadConstraints, got, want)
		}
		if !strings.HasPrefix(want, "Skip") {
			scored++
		}
	}
	if scored < 1000 {
		t.Errorf("only %d of 2000 cycles scored", scored)
	}
}

func scoresOf(pl *PodTopologySpread, pod *v1.Pod, feasible []*framework.NodeInfo) string {
	ctx, state := context.Background(), framework.NewCycleState()
	if st := pl.PreScore(ctx, state, pod, feasible); !st.IsSuccess() {
		return fmt.Sprintf("%v %q", st.Code(), st.Message())
	}
	var b strings.Builder
	for _, ni := range feasible {
		v, st := pl.Score(ctx, state, pod, ni)
		fmt.Fprintf(&b, "%s:%d:%v ", ni.Node().Name, v, st.Code())
	}
	return b.String()
}
