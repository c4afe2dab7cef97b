package predicates_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates"
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
				want = reject(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")
			}
			got := predicates.NewTaintToleration().Filter(context.Background(), framework.NewCycleState(), tc.pod, nodeInfoOf(tc.node))
			if diff := cmp.Diff(viewOf(want), viewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			var gotTaint string
			if taint, ok := predicates.FirstUntoleratedTaint(tc.pod, tc.node); ok {
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
		out[i] = nodeInfoOf(node(i))
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
	pl, state := predicates.NewTaintToleration(), framework.NewCycleState()
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
	pl, state, ctx := predicates.NewTaintToleration(), framework.NewCycleState(), context.Background()
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
