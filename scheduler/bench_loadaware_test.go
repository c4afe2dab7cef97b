package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// BenchmarkScheduleCycleLoadAware measures BenchmarkScheduleCycle's cycle
// on the default profile, and on the same profile with two metric plugins
// (TargetLoadPacking and LoadVariationRiskBalancing, five queries)
// scoring from tables of every node. The two schedulers take turns, one
// pod each per op, in alternating order, so that both see the same noise of a shared machine;
// ns/pod of each and their ratio are reported. The tables are published
// as Prometheus's answers would be; no query runs in a cycle either way.
func BenchmarkScheduleCycleLoadAware(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("%dNodes", n), func(b *testing.B) {
			without, with := loadAwareWorld(b, n, false), loadAwareWorld(b, n, true)
			// Warm both: the first cycles over every node fill the
			// answers every signing plugin keeps, the default ones' too
			// (a refresh of the tables voids the metric plugins' once per
			// refreshInterval: one cycle then scores every feasible node
			// anew).
			for i, p := range benchPods(2 * n / 100) {
				p.Name, p.UID = fmt.Sprintf("warm-%d", i), types.UID(fmt.Sprintf("warm-%d", i))
				for _, s := range []*Scheduler{without, with} {
					if _, err := s.scheduleForTest(p); err != nil {
						b.Fatal(err)
					}
				}
			}
			podsA, podsB := benchPods(b.N), benchPods(b.N)
			var dA, dB time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			timed := func(s *Scheduler, p *v1.Pod) time.Duration {
				start := time.Now()
				if _, err := s.scheduleForTest(p); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			for i := range b.N {
				// Which goes first alternates: the second of a pair finds
				// the caches the first left.
				if i%2 == 0 {
					dA += timed(without, podsA[i])
					dB += timed(with, podsB[i])
				} else {
					dB += timed(with, podsB[i])
					dA += timed(without, podsA[i])
				}
			}
			b.ReportMetric(float64(dA.Nanoseconds())/float64(b.N), "ns/pod-without")
			b.ReportMetric(float64(dB.Nanoseconds())/float64(b.N), "ns/pod-with")
			b.ReportMetric(float64(dB)/float64(dA), "ratio")
		})
	}
}

// loadAwareWorld is a scheduler over n nodes running 5 pods each, its
// profile the default one, with TargetLoadPacking and
// LoadVariationRiskBalancing scoring too when withMetrics.
func loadAwareWorld(b *testing.B, n int, withMetrics bool) *Scheduler {
	reg := registry.NewInTree()
	prof := registry.DefaultProfile("yardmaster")
	if withMetrics {
		src := prommetric.SourceArgs{PrometheusAddress: "http://127.0.0.1:1"}
		prof.PreScore = append(prof.PreScore, loadaware.TargetLoadPackingName, loadaware.LoadVariationRiskBalancingName)
		prof.Score = append(prof.Score,
			framework.WeightedPlugin{Name: loadaware.TargetLoadPackingName, Weight: 1},
			framework.WeightedPlugin{Name: loadaware.LoadVariationRiskBalancingName, Weight: 1})
		tlp := &loadaware.TargetLoadPackingArgs{SourceArgs: src}
		tlp.SetDefaults()
		lvrb := &loadaware.LoadVariationRiskBalancingArgs{SourceArgs: src}
		lvrb.SetDefaults()
		prof.Args[loadaware.TargetLoadPackingName] = tlp
		prof.Args[loadaware.LoadVariationRiskBalancingName] = lvrb
	}
	s, err := New(Options{Registry: reg, Profiles: []framework.Profile{prof}})
	if err != nil {
		b.Fatal(err)
	}
	nodes := benchNodes(n)
	boundAt := metav1.NewTime(time.Now().Add(-time.Hour))
	for _, nd := range nodes {
		s.Cache.AddNode(nd)
	}
	for i, p := range benchPods(5 * n) {
		p.Name, p.UID = fmt.Sprintf("existing-%d", i), types.UID(fmt.Sprintf("existing-%d", i))
		p.Spec.NodeName = fmt.Sprintf("node-%05d", i%n)
		p.Spec.Containers[0].Ports = nil
		// Bound an hour ago, long before the tables: in their measurement.
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: boundAt}}
		s.Cache.AddPod(p)
	}
	if withMetrics {
		// Every metric a table of every node, taken now.
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
	s.Cache.UpdateSnapshot(s.snapshot)
	return s
}
