package loadaware

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	testclock "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// measurementLabel names, on a test pod, the refresh its cycle sees: the
// kept answers of a pod measured on one table must not go to a pod
// measured on the next, however alike the two pods are.
const measurementLabel = "test.yardmaster.io/measurement"

// measurements are two refreshes of every query of a plugin, the node's
// value in each ("unknown" has none): the first packs the load on "hot",
// the second on "idle", so that every plugin answers differently on them.
var measurements = map[string]map[string]float64{
	"m1": {"idle": 5, "warm": 35, "hot": 85},
	"m2": {"idle": 60, "warm": 10, "hot": 30},
}

// publisher returns what publishes a measurement to every metric of a
// plugin, as a refresh does: one table per metric and measurement, each
// with its own sequence number.
func publisher(t testing.TB, metrics []*prommetric.Metric) func(name string) {
	tables := map[string][]*prommetric.Table{}
	var seq uint64
	names := make([]string, 0, len(measurements))
	for name := range measurements {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for range metrics {
			seq++
			tables[name] = append(tables[name], &prommetric.Table{Time: t0, Since: prommetric.BindTimeResolution(t0), Values: measurements[name], Seq: seq})
		}
	}
	return func(name string) {
		ts, ok := tables[name]
		if !ok {
			t.Errorf("pod without a known %s label (%q)", measurementLabel, name)
			return
		}
		for i, m := range metrics {
			if m != nil {
				m.Store(ts[i])
			}
		}
	}
}

// scoreSigner is a signing score plugin with its pre-step.
type scoreSigner interface {
	framework.PodSigner
	framework.PreScorePlugin
	framework.ScorePlugin
}

// measuredScorer runs a score plugin with the measurement the pod's label
// names published before its PreScore pins it.
type measuredScorer struct {
	scoreSigner
	publish func(string)
}

func (m measuredScorer) PreScore(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	m.publish(pod.Labels[measurementLabel])
	return m.scoreSigner.PreScore(ctx, state, pod, nodes)
}

// filterSigner is a signing filter plugin with its pre-step.
type filterSigner interface {
	framework.PodSigner
	framework.PreFilterPlugin
	framework.FilterPlugin
}

// measuredFilter is measuredScorer for a filter.
type measuredFilter struct {
	filterSigner
	publish func(string)
}

func (m measuredFilter) PreFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	m.publish(pod.Labels[measurementLabel])
	return m.filterSigner.PreFilter(ctx, state, pod, nodes)
}

// signingSnapshot is four nodes of 4 CPUs and 16Gi: "warm" holds a pod
// placed since the measurement (counted on top of it) and "hot" one bound
// long before (in it already); "unknown" has no data.
func signingSnapshot() framework.NodeInfoLister {
	var nodes []*v1.Node
	for _, n := range []string{"idle", "warm", "hot", "unknown"} {
		nodes = append(nodes, frameworktest.MakeNode().Name(n).Capacity("4", "16Gi", 110).Obj())
	}
	placed := frameworktest.MakePod().Name("placed").UID("placed").Node("warm").Req("1", "2Gi").Obj()
	old := boundAt(frameworktest.MakePod().Name("old").UID("old").Node("hot").Req("2", "4Gi").Obj(), t0.Add(-10*time.Minute))
	return frameworktest.NewSnapshot(nodes, []*v1.Pod{placed, old})
}

// signingPod is an incoming pod measured on m, requesting cpu and mem.
func signingPod(name, m, cpu, mem string) *frameworktest.PodWrapper {
	return frameworktest.MakePod().Name(name).UID(name).Label(measurementLabel, m).Req(cpu, mem)
}

// withCPULimit sets the CPU limit of the pod's first container.
func withCPULimit(p *frameworktest.PodWrapper, cpu string) *frameworktest.PodWrapper {
	c := &p.Spec.Containers[0]
	if c.Resources.Limits == nil {
		c.Resources.Limits = v1.ResourceList{}
	}
	c.Resources.Limits[v1.ResourceCPU] = resource.MustParse(cpu)
	return p
}

// sharedSignCases are the cases every metric plugin shares: what no
// plugin reads of the pod signs alike, another measurement apart.
func sharedSignCases() []frameworktest.SignCase {
	return []frameworktest.SignCase{
		{Name: "name and labels", Same: true,
			A: signingPod("a", "m1", "500m", "1Gi").Obj(),
			B: signingPod("b", "m1", "500m", "1Gi").Label("app", "web").Obj()},
		{Name: "another measurement", Same: false,
			A: signingPod("a", "m1", "500m", "1Gi").Obj(),
			B: signingPod("a", "m2", "500m", "1Gi").Obj()},
	}
}

// keptAnswerPods are replicas, pods that differ in one thing each, and a
// pod of each measurement.
func keptAnswerPods() []*v1.Pod {
	return []*v1.Pod{
		signingPod("web-1", "m1", "500m", "1Gi").Label("app", "web").Obj(),
		signingPod("web-2", "m1", "500m", "1Gi").Label("app", "web").Obj(),
		signingPod("web-3", "m2", "500m", "1Gi").Label("app", "web").Obj(),
		signingPod("big-cpu", "m1", "2", "1Gi").Obj(),
		signingPod("big-mem", "m1", "500m", "8Gi").Obj(),
		withCPULimit(signingPod("limited", "m1", "500m", "1Gi"), "1").Obj(),
		// Predicted as web's: a 750m limit, no request multiplied.
		withCPULimit(signingPod("limit-750m", "m1", "100m", "1Gi"), "750m").Obj(),
		signingPod("big-cpu-m2", "m2", "2", "1Gi").Obj(),
		signingPod("other", "m2", "500m", "1Gi").Obj(),
	}
}

func newSigningPlugin[P any](t *testing.T, build func(opts ...Option) (P, error)) P {
	t.Helper()
	pl, err := build(WithClock(testclock.NewFakeClock(t0)))
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func TestSigning(t *testing.T) {
	src := source("http://127.0.0.1:1")

	t.Run(TargetLoadPackingName, func(t *testing.T) {
		pl := newSigningPlugin(t, func(opts ...Option) (*TargetLoadPacking, error) {
			return NewTargetLoadPacking(&TargetLoadPackingArgs{SourceArgs: src}, nil, opts...)
		})
		m := measuredScorer{pl, publisher(t, pl.set.metrics)}
		// Score reads the pod's predicted CPU: its limit, else its request
		// × 1.5, else 1000m, per container, and its overhead.
		frameworktest.CheckSigning(t, m, append(sharedSignCases(),
			frameworktest.SignCase{Name: "CPU request",
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "1", "1Gi").Obj()},
			frameworktest.SignCase{Name: "CPU limit",
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: withCPULimit(signingPod("a", "m1", "500m", "1Gi"), "1").Obj()},
			frameworktest.SignCase{Name: "overhead",
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "500m", "1Gi").Overhead("250m", "0").Obj()},
			frameworktest.SignCase{Name: "a container without requests",
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "500m", "1Gi").Container("", "").Obj()},
			frameworktest.SignCase{Name: "memory request", Same: true,
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "500m", "8Gi").Obj()},
			frameworktest.SignCase{Name: "500m requested or a 750m limit: the same prediction", Same: true,
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: withCPULimit(signingPod("a", "m1", "100m", "1Gi"), "750m").Obj()},
		))
		frameworktest.CheckKeptAnswers(t, m, signingSnapshot(), keptAnswerPods())
	})

	t.Run(LoadVariationRiskBalancingName, func(t *testing.T) {
		pl := newSigningPlugin(t, func(opts ...Option) (*LoadVariationRiskBalancing, error) {
			return NewLoadVariationRiskBalancing(&LoadVariationRiskBalancingArgs{SourceArgs: src}, nil, opts...)
		})
		m := measuredScorer{pl, publisher(t, pl.set.metrics)}
		// Score reads the pod's CPU and memory requests, not its limits.
		frameworktest.CheckSigning(t, m, append(sharedSignCases(),
			frameworktest.SignCase{Name: "CPU request",
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "1", "1Gi").Obj()},
			frameworktest.SignCase{Name: "memory request",
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "500m", "8Gi").Obj()},
			frameworktest.SignCase{Name: "overhead",
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "500m", "1Gi").Overhead("250m", "0").Obj()},
			frameworktest.SignCase{Name: "CPU limit", Same: true,
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: withCPULimit(signingPod("a", "m1", "500m", "1Gi"), "1").Obj()},
		))
		frameworktest.CheckKeptAnswers(t, m, signingSnapshot(), keptAnswerPods())
	})

	t.Run(PrometheusScoreName, func(t *testing.T) {
		pl := newSigningPlugin(t, func(opts ...Option) (*PrometheusScore, error) {
			return NewPrometheusScore(&PrometheusScoreArgs{SourceArgs: src, Query: "load", PodEstimate: 10}, nil, opts...)
		})
		m := measuredScorer{pl, publisher(t, pl.set.metrics)}
		// Score reads nothing of the pod: only the measurement and the
		// pods placed on the node since.
		frameworktest.CheckSigning(t, m, append(sharedSignCases(),
			frameworktest.SignCase{Name: "requests", Same: true,
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "2", "8Gi").Obj()},
		))
		frameworktest.CheckKeptAnswers(t, m, signingSnapshot(), keptAnswerPods())
	})

	t.Run(LoadHotSpotName, func(t *testing.T) {
		pl := newSigningPlugin(t, func(opts ...Option) (*LoadHotSpot, error) {
			return NewLoadHotSpot(&LoadHotSpotArgs{SourceArgs: src, CPUUtilizationAbove: 80, MemoryUtilizationAbove: 50}, nil, opts...)
		})
		m := measuredFilter{pl, publisher(t, pl.set.metrics)}
		// Filter reads nothing of the pod: its own load is not counted.
		frameworktest.CheckSigning(t, m, append(sharedSignCases(),
			frameworktest.SignCase{Name: "requests", Same: true,
				A: signingPod("a", "m1", "500m", "1Gi").Obj(), B: signingPod("a", "m1", "2", "8Gi").Obj()},
		))
		frameworktest.CheckKeptAnswers(t, m, signingSnapshot(), keptAnswerPods())
	})
}
