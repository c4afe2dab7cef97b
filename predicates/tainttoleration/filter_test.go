package tainttoleration_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/tainttoleration"
)

func TestTaintTolerationFilter(t *testing.T) {
	controlPlane := frameworktest.MakeNode().Name("cp").Taint("node-role.kubernetes.io/control-plane", "", v1.TaintEffectNoSchedule).Obj()
	gpu := frameworktest.MakeNode().Name("gpu").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Obj()
	tests := []struct {
		name      string
		pod       *v1.Pod
		node      *v1.Node
		wantTaint string // key of the taint that rejects the node, if any
	}{
		{name: "no taints", pod: frameworktest.MakePod().Obj(), node: frameworktest.MakeNode().Name("n").Obj()},
		{name: "untolerated NoSchedule", pod: frameworktest.MakePod().Obj(), node: controlPlane,
			wantTaint: "node-role.kubernetes.io/control-plane"},
		{name: "untolerated NoExecute", pod: frameworktest.MakePod().Obj(),
			node:      frameworktest.MakeNode().Name("n").Taint("node.kubernetes.io/not-ready", "", v1.TaintEffectNoExecute).Obj(),
			wantTaint: "node.kubernetes.io/not-ready"},
		{name: "PreferNoSchedule only scores", pod: frameworktest.MakePod().Obj(),
			node: frameworktest.MakeNode().Name("n").Taint("soft", "", v1.TaintEffectPreferNoSchedule).Obj()},
		{name: "Exists toleration", pod: frameworktest.MakePod().
			Toleration("node-role.kubernetes.io/control-plane", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj(),
			node: controlPlane},
		{name: "Equal toleration, same value", pod: frameworktest.MakePod().
			Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule).Obj(), node: gpu},
		{name: "Equal toleration, other value", pod: frameworktest.MakePod().
			Toleration("dedicated", v1.TolerationOpEqual, "cpu", v1.TaintEffectNoSchedule).Obj(), node: gpu,
			wantTaint: "dedicated"},
		{name: "empty operator means Equal", pod: frameworktest.MakePod().Toleration("dedicated", "", "gpu", "").Obj(), node: gpu},
		{name: "toleration for another effect", pod: frameworktest.MakePod().
			Toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoExecute).Obj(), node: gpu,
			wantTaint: "dedicated"},
		{name: "empty key with Exists tolerates all", pod: frameworktest.MakePod().Toleration("", v1.TolerationOpExists, "", "").Obj(),
			node: frameworktest.MakeNode().Name("n").Taint("a", "1", v1.TaintEffectNoSchedule).Taint("b", "2", v1.TaintEffectNoExecute).Obj()},
		{name: "second taint untolerated", pod: frameworktest.MakePod().Toleration("a", v1.TolerationOpExists, "", "").Obj(),
			node:      frameworktest.MakeNode().Name("n").Taint("a", "1", v1.TaintEffectNoSchedule).Taint("b", "2", v1.TaintEffectNoExecute).Obj(),
			wantTaint: "b"},
		{name: "Gt toleration is gated off in v1.37", pod: frameworktest.MakePod().Toleration("gen", v1.TolerationOpGt, "1", "").Obj(),
			node:      frameworktest.MakeNode().Name("n").Taint("gen", "5", v1.TaintEffectNoSchedule).Obj(),
			wantTaint: "gen"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want *framework.Status
			if tc.wantTaint != "" {
				// kube-scheduler v1.37's reason, which names no taint.
				want = framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")
			}
			got := tainttoleration.NewFilter().Filter(context.Background(), framework.NewCycleState(), tc.pod, frameworktest.NodeInfoOf(tc.node))
			if diff := cmp.Diff(frameworktest.ViewOf(want), frameworktest.ViewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			var gotTaint string
			if taint, ok := tainttoleration.FirstUntoleratedTaint(tc.pod, tc.node); ok {
				gotTaint = taint.Key
			}
			if gotTaint != tc.wantTaint {
				t.Errorf("FirstUntoleratedTaint = %q, want %q", gotTaint, tc.wantTaint)
			}
		})
	}
}

// benchNodeInfos returns n NodeInfos built by node(i).
func benchNodeInfos(n int, node func(i int) *v1.Node) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, n)
	for i := range out {
		out[i] = frameworktest.NodeInfoOf(node(i))
	}
	return out
}

// taintedCluster has three taints per node, all of which benchTolerantPod
// tolerates or only scores, so that every node passes the filter.
func taintedCluster(n int) []*framework.NodeInfo {
	return benchNodeInfos(n, func(i int) *v1.Node {
		return frameworktest.MakeNode().Name(fmt.Sprintf("node-%d", i)).
			Taint("example.com/soft", "", v1.TaintEffectPreferNoSchedule).
			Taint("dedicated", fmt.Sprintf("team-%d", i%2), v1.TaintEffectNoSchedule).
			Taint("node.kubernetes.io/disk-pressure", "", v1.TaintEffectNoExecute).Obj()
	})
}

func benchTolerantPod() *v1.Pod {
	return frameworktest.MakePod().Name("p").
		Toleration("node.kubernetes.io/not-ready", v1.TolerationOpExists, "", v1.TaintEffectNoExecute).
		Toleration("dedicated", v1.TolerationOpEqual, "team-0", v1.TaintEffectNoSchedule).
		Toleration("dedicated", v1.TolerationOpEqual, "team-1", v1.TaintEffectNoSchedule).
		Toleration("node.kubernetes.io/disk-pressure", v1.TolerationOpExists, "", "").Obj()
}

func TestTaintTolerationFilterDoesNotAllocate(t *testing.T) {
	nodes, pod := taintedCluster(100), benchTolerantPod()
	pl, state := tainttoleration.NewFilter(), framework.NewCycleState()
	allocs := testing.AllocsPerRun(10, func() {
		for _, ni := range nodes {
			if st := pl.Filter(context.Background(), state, pod, ni); st != nil {
				t.Fatalf("Filter(%s) = %v", ni.Node().Name, st.Message())
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Filter allocates %v times per 100 nodes, want 0", allocs)
	}
}

func BenchmarkTaintTolerationFilter(b *testing.B) {
	nodes, pod := taintedCluster(5000), benchTolerantPod()
	pl, state, ctx := tainttoleration.NewFilter(), framework.NewCycleState(), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range nodes {
			if st := pl.Filter(ctx, state, pod, ni); st != nil {
				b.Fatal(st.Message())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
}

// kube-scheduler v1.37's TaintToleration is a PreFilter plugin whose
// PreFilter prepares nothing and skips no pod (but one whose resize is
// deferred, behind an alpha gate): its filter runs for every pod, a
// tainted node as much as any.
func TestTaintTolerationPreFilterNeverSkips(t *testing.T) {
	pods := map[string]*v1.Pod{
		"plain":      frameworktest.MakePod().Obj(),
		"tolerating": frameworktest.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj(),
		"named node": frameworktest.MakePod().Node("n1").Obj(),
	}
	for name, pod := range pods {
		res, st := tainttoleration.NewFilter().PreFilter(context.Background(), framework.NewCycleState(), pod, nil)
		if res != nil || st != nil {
			t.Errorf("PreFilter of the %s pod = (%v, %v), want (nil, nil)", name, res, st.Message())
		}
	}
}

func TestReasonMatchesKubeScheduler(t *testing.T) {
	// Users grep events for this string: it must stay kube-scheduler
	// v1.37's (unchanged since v1.36).
	if got, want := tainttoleration.ReasonUntoleratedTaint, "node(s) had untolerated taint(s)"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	if got := []string{tainttoleration.NewFilter().Name(), tainttoleration.NewScorer().Name()}; !slices.Equal(got, []string{"TaintToleration", "TaintToleration"}) {
		t.Errorf("names = %q, want TaintToleration for both parts", got)
	}
}

// Explain names the taint the scheduler's own reason leaves out.
func TestTaintTolerationExplainsRejection(t *testing.T) {
	node := frameworktest.MakeNode().Name("n").Taint("ok", "", v1.TaintEffectNoSchedule).Taint("gpu", "true", v1.TaintEffectNoSchedule).Obj()
	pod := frameworktest.MakePod().Toleration("ok", v1.TolerationOpExists, "", "").Obj()
	reasons := []string{tainttoleration.ReasonUntoleratedTaint}
	var pl framework.RejectionExplainer = tainttoleration.NewFilter()
	got, _ := pl.ExplainRejection(pod, frameworktest.NodeInfoOf(node), reasons)
	if diff := cmp.Diff([]string{"node(s) had untolerated taint {gpu: true}"}, got); diff != "" {
		t.Errorf("ExplainRejection (-want +got):\n%s", diff)
	}
	tolerant := frameworktest.MakePod().Toleration("", v1.TolerationOpExists, "", "").Obj()
	if got, _ := pl.ExplainRejection(tolerant, frameworktest.NodeInfoOf(node), reasons); !slices.Equal(got, reasons) {
		t.Errorf("ExplainRejection of a tolerated node = %q, want the reasons unchanged", got)
	}
}

// The filter signs everything it reads of a pod, and only that: see
// framework.PodSigner.
func TestTaintTolerationFilterSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	tolerating := func(key string, effect v1.TaintEffect) *v1.Pod {
		return base().Toleration(key, v1.TolerationOpExists, "", effect).Obj()
	}
	cases := []frameworktest.SignCase{
		{Name: "replica", A: base().Obj(), B: replica, Same: true},
		{Name: "toleration", A: base().Obj(), B: tolerating("dedicated", v1.TaintEffectNoSchedule)},
		{Name: "effect", A: tolerating("dedicated", v1.TaintEffectNoSchedule), B: tolerating("dedicated", v1.TaintEffectNoExecute)},
	}
	pl := tainttoleration.NewFilter()
	frameworktest.CheckSigning(t, pl, cases)
	// What the signatures are for: pods signed alike get the same
	// answers, on nodes that answer the pods of the cases apart.
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("dedicated").Capacity("4", "8Gi", 110).Taint("dedicated", "", v1.TaintEffectNoSchedule).Obj(),
		frameworktest.MakeNode().Name("evicting").Capacity("4", "8Gi", 110).Taint("dedicated", "", v1.TaintEffectNoExecute).Obj(),
	}, nil)
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
}
