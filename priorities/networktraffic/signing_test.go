package networktraffic

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// measurementLabel names, on a test pod, the sample its cycle sees: the
// kept answers of a pod measured on one sample must not go to a pod
// measured on the next, however alike the two pods are.
const measurementLabel = "test.yardmaster.io/measurement"

// measured runs the plugin with the sample the pod's label names
// published before its PreFilter and PreScore pin it, as a refresh
// between two cycles does.
type measured struct {
	*NetworkTraffic
	t       testing.TB
	samples map[string]*prommetric.Table
}

func (m measured) publish(pod *v1.Pod) {
	s, ok := m.samples[pod.Labels[measurementLabel]]
	if !ok {
		m.t.Errorf("%s: no known %s label", pod.Name, measurementLabel)
		return
	}
	m.metric.Store(s)
}

func (m measured) PreFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	m.publish(pod)
	return m.NetworkTraffic.PreFilter(ctx, state, pod, nodes)
}

func (m measured) PreScore(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	m.publish(pod)
	return m.NetworkTraffic.PreScore(ctx, state, pod, nodes)
}

func TestSigning(t *testing.T) {
	tp := newTestPlugin(t, "", func(a *Args) {
		a.FilterAbove = 50 * mb
		a.PodBandwidthEstimate = 4 * mb
	})
	sample := func(seq uint64, bw map[string]float64) *prommetric.Table {
		return &prommetric.Table{Time: t0, Since: prommetric.BindTimeResolution(t0), Values: bw, Seq: seq}
	}
	// Two refreshes: the first has b above the threshold, and c above it
	// with the pod placed there since (48 + 8 MB/s); the second turns the
	// traffic around.
	m := measured{NetworkTraffic: tp.NetworkTraffic, t: t, samples: map[string]*prommetric.Table{
		"s1": sample(1, map[string]float64{"a": 10 * mb, "b": 60 * mb, "c": 48 * mb}),
		"s2": sample(2, map[string]float64{"a": 60 * mb, "b": 5 * mb, "c": 20 * mb}),
	}}
	pod := func(name, s string) *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name(name).UID(name).Label(measurementLabel, s).Req("500m", "1Gi")
	}

	// Filter and Score read nothing of the pod, only the sample and the
	// node's pods: every pod of one sample signs alike, the bandwidth
	// annotation included (it counts for the pods on the node).
	frameworktest.CheckSigning(t, m, []frameworktest.SignCase{
		{Name: "another sample", A: pod("a", "s1").Obj(), B: pod("a", "s2").Obj()},
		{Name: "name and labels", Same: true, A: pod("a", "s1").Obj(), B: pod("b", "s1").Label("app", "web").Obj()},
		{Name: "requests", Same: true, A: pod("a", "s1").Obj(), B: pod("a", "s1").Req("4", "16Gi").Obj()},
		{Name: "bandwidth annotation", Same: true, A: pod("a", "s1").Obj(), B: annotated(pod("a", "s1").Obj(), "100M")},
	})

	nodes := []*v1.Node{
		frameworktest.MakeNode().Name("a").Obj(), frameworktest.MakeNode().Name("b").Obj(),
		frameworktest.MakeNode().Name("c").Obj(), frameworktest.MakeNode().Name("unknown").Obj(),
	}
	placed := []*v1.Pod{
		// Placed on c since the samples: counted at its annotation.
		annotated(assumedPod("placed", "c"), "8M"),
		// Bound on b long before: in the samples already.
		boundPod("old", "b", t0.Add(-10*time.Minute)),
	}
	frameworktest.CheckKeptAnswers(t, m, frameworktest.NewSnapshot(nodes, placed), []*v1.Pod{
		pod("web-1", "s1").Label("app", "web").Obj(),
		pod("web-2", "s1").Label("app", "web").Obj(),
		pod("big", "s1").Req("4", "16Gi").Obj(),
		annotated(pod("loud", "s1").Obj(), "100M"),
		pod("web-3", "s2").Label("app", "web").Obj(),
		pod("big-2", "s2").Req("4", "16Gi").Obj(),
	})
}
