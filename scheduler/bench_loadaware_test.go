package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// BenchmarkScheduleCycleLoadAware measures BenchmarkScheduleCycle's cycle
// on the default profile, and on the same profile with two metric plugins
// (TargetLoadPacking and LoadVariationRiskBalancing) scoring from tables
// of every node, in the same run: the cost of the load-aware plugins is
// the ratio of the two. The tables are published as Prometheus's answers
// would be; no query runs in a cycle either way.
func BenchmarkScheduleCycleLoadAware(b *testing.B) {
	for _, n := range []int{5000} {
		for _, withMetrics := range []bool{false, true} {
			name := "Without"
			if withMetrics {
				name = "WithTwoMetricPlugins"
			}
			b.Run(fmt.Sprintf("%s/%dNodes", name, n), func(b *testing.B) { benchLoadAware(b, n, withMetrics) })
		}
	}
}

func benchLoadAware(b *testing.B, n int, withMetrics bool) {
	reg := registry.NewInTree()
	prof := registry.DefaultProfile("yardmaster")
	if withMetrics {
		src := framework.PrometheusSourceArgs{PrometheusAddress: "http://127.0.0.1:1"}
		prof.PreScore = append(prof.PreScore, loadaware.TargetLoadPackingName, loadaware.LoadVariationRiskBalancingName)
		prof.Score = append(prof.Score,
			registry.WeightedPlugin{Name: loadaware.TargetLoadPackingName, Weight: 1},
			registry.WeightedPlugin{Name: loadaware.LoadVariationRiskBalancingName, Weight: 1})
		tlp := &framework.TargetLoadPackingArgs{PrometheusSourceArgs: src}
		tlp.SetDefaults()
		lvrb := &framework.LoadVariationRiskBalancingArgs{PrometheusSourceArgs: src}
		lvrb.SetDefaults()
		prof.Args[loadaware.TargetLoadPackingName] = tlp
		prof.Args[loadaware.LoadVariationRiskBalancingName] = lvrb
	}
	s, err := New(Options{Registry: reg, Profiles: []registry.Profile{prof}})
	if err != nil {
		b.Fatal(err)
	}
	nodes := benchNodes(n)
	for _, nd := range nodes {
		s.Cache.AddNode(nd)
	}
	for i, p := range benchPods(5 * n) {
		p.Name, p.UID = fmt.Sprintf("existing-%d", i), types.UID(fmt.Sprintf("existing-%d", i))
		p.Spec.NodeName = fmt.Sprintf("node-%05d", i%n)
		p.Spec.Containers[0].Ports = nil
		s.Cache.AddPod(p)
	}
	if withMetrics {
		// Every metric a table of every node, taken now (the pods above
		// carry no PodScheduled time: all count as placed since, the
		// estimate's worst case).
		rng := rand.New(rand.NewPCG(1, 2))
		published := 0
		for _, pl := range s.profiles["yardmaster"].background {
			m, ok := pl.(interface{ Metrics() []*prommetric.Metric })
			if !ok {
				continue
			}
			for _, metric := range m.Metrics() {
				values := make(map[string]float64, n)
				for _, nd := range nodes {
					values[nd.Name] = 80 * rng.Float64()
				}
				metric.Store(&prommetric.Table{Time: time.Now(), Since: prommetric.BindTimeResolution(time.Now()), Values: values, Seq: 1})
				published++
			}
		}
		if published != 5 {
			b.Fatalf("published %d tables, want 5 (TargetLoadPacking's and LoadVariationRiskBalancing's 4)", published)
		}
	}
	pods := benchPods(b.N)
	s.Cache.UpdateSnapshot(s.snapshot)
	runCycles(b, s, pods)
}
