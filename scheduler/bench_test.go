package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/internal/schedtest"
)

// benchPods is a realistic mix: plain pods, pods with a node selector, with
// a toleration, with preferred affinity, and with a host port.
func benchPods(n int) []*v1.Pod {
	pods := make([]*v1.Pod, n)
	for i := range pods {
		w := schedtest.MakePod().Name(fmt.Sprintf("p%d", i)).Req("100m", "128Mi")
		switch i % 5 {
		case 1:
			w.NodeSelector(map[string]string{"pool": "general"})
		case 2:
			w.Toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)
		case 3:
			w.PreferredNodeAffinity(10, v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"zone-1"}},
			}})
		case 4:
			w.HostPort(int32(20000+i%1000), v1.ProtocolTCP, "")
		}
		pods[i] = w.Obj()
	}
	return pods
}

// benchNodes are n nodes in 3 zones, labelled as a real cluster's are with
// their hostname (topology spread and anti-affinity by hostname need it),
// a tenth of them tainted.
func benchNodes(n int) []*v1.Node {
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		w := schedtest.MakeNode().Name(name).Capacity("32", "256Gi", 110).Label(v1.LabelHostname, name).
			Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3)).Label("pool", "general")
		if i%10 == 0 {
			w.Taint("dedicated", "infra", v1.TaintEffectNoSchedule)
		}
		nodes[i] = w.Obj()
	}
	return nodes
}

// BenchmarkScheduleCycle measures one scheduling cycle (snapshot update,
// filter, score, select, assume) on a cluster that already runs 5 pods per
// node.
func BenchmarkScheduleCycle(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("%dNodes", n), func(b *testing.B) { benchCycles(b, n, false) })
	}
}

// benchCycles times b.N cycles of the benchPods mix over n nodes that run 5
// pods each; sampled makes every cycle time its plugins.
func benchCycles(b *testing.B, n int, sampled bool) {
	s := newTestScheduler(b, 0, benchNodes(n)...)
	s.recordPluginMetrics = sampled
	for i, p := range benchPods(5 * n) {
		p.Name, p.UID = fmt.Sprintf("existing-%d", i), types.UID(fmt.Sprintf("existing-%d", i))
		p.Spec.NodeName = fmt.Sprintf("node-%05d", i%n)
		p.Spec.Containers[0].Ports = nil
		s.Cache.AddPod(p)
	}
	pods := benchPods(b.N)
	s.Cache.UpdateSnapshot(s.snapshot)
	runCycles(b, s, pods)
}

// BenchmarkScheduleCycleConstraints measures a cycle for pods with a zone
// spread constraint (DoNotSchedule) and for pods with required hostname
// anti-affinity, on clusters that already run pods of both kinds.
func BenchmarkScheduleCycleConstraints(b *testing.B) {
	spread := func(i int) *v1.Pod {
		p := schedtest.MakePod().Name(fmt.Sprintf("spread-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		}}
		return p
	}
	// Anti-affinity pods come in groups of 500 (one label value each), so
	// that any number of them fits on the 900 untainted nodes of the
	// smallest cluster.
	anti := func(i int) *v1.Pod {
		app := fmt.Sprintf("db-%d", i/500)
		p := schedtest.MakePod().Name(fmt.Sprintf("anti-%d", i)).Label("app", app).Req("100m", "128Mi").Obj()
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				TopologyKey:   v1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			}},
		}}
		return p
	}
	// What the System default constraints give every pod of a ReplicaSet:
	// ScheduleAnyway by zone (maxSkew 5) and by hostname (maxSkew 3).
	soft := func(i int) *v1.Pod {
		p := schedtest.MakePod().Name(fmt.Sprintf("soft-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{
			{MaxSkew: 3, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel},
			{MaxSkew: 5, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel},
		}
		return p
	}
	for _, kind := range []struct {
		name string
		make func(int) *v1.Pod
	}{{"ZoneSpread", zoneSpreadPod}, {"HostnameAntiAffinity", anti}, {"SoftSpread", soft}} {
		for _, n := range []int{1000, 5000} {
			b.Run(fmt.Sprintf("%s/%dNodes", kind.name, n), func(b *testing.B) {
				s := newTestScheduler(b, 0, benchNodes(n)...)
				// A tenth of the nodes already run one pod of each kind.
				for i := 0; i < n/10; i++ {
					for _, p := range []*v1.Pod{spread(-i - 1), anti(-i - 1)} {
						p.UID = types.UID("existing-" + p.Name)
						p.Spec.NodeName = fmt.Sprintf("node-%05d", i*10)
						s.Cache.AddPod(p)
					}
				}
				pods := make([]*v1.Pod, b.N)
				for i := range pods {
					pods[i] = kind.make(i)
					pods[i].UID = types.UID(pods[i].Name)
				}
				s.Cache.UpdateSnapshot(s.snapshot)
				runCycles(b, s, pods)
			})
		}
	}
}

// runCycles times one scheduling cycle (and assumption) per pod.
func runCycles(b *testing.B, s *Scheduler, pods []*v1.Pod) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.scheduleForTest(pods[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScheduleBacklog measures what a backlog drain costs per pod: a
// backlog of pods of one workload (as hack/bench's) is scheduled on an
// empty cluster, each pod assumed before the next cycle, so that later
// cycles search an ever fuller cluster. One op is the whole backlog; the
// figure to compare is ns/pod.
// zoneSpreadPod is pod i of a backlog of app=web pods spread by zone
// (DoNotSchedule, maxSkew 1), as hack/bench's spread workload.
func zoneSpreadPod(i int) *v1.Pod {
	p := schedtest.MakePod().Name(fmt.Sprintf("spread-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	return p
}

func BenchmarkScheduleBacklog(b *testing.B) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	anti := func(i int) *v1.Pod {
		p := schedtest.MakePod().Name(fmt.Sprintf("anti-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{TopologyKey: v1.LabelHostname, LabelSelector: sel}},
		}}
		return p
	}
	// What the System default constraints give every pod of a ReplicaSet,
	// written out: ScheduleAnyway by hostname and by zone.
	soft := func(i int) *v1.Pod {
		p := schedtest.MakePod().Name(fmt.Sprintf("soft-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{
			{MaxSkew: 3, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel},
			{MaxSkew: 5, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel},
		}
		return p
	}
	for _, kind := range []struct {
		name string
		make func(int) *v1.Pod
	}{{"ZoneSpread", zoneSpreadPod}, {"HostnameAntiAffinity", anti}, {"SoftSpread", soft}} {
		for _, n := range []int{1000, 5000} {
			b.Run(fmt.Sprintf("%s/%dNodes", kind.name, n), func(b *testing.B) {
				nodes := make([]*v1.Node, n)
				for i := range nodes {
					// Untainted nodes with hostname labels, as a real cluster's.
					name := fmt.Sprintf("node-%05d", i)
					nodes[i] = schedtest.MakeNode().Name(name).Capacity("32", "256Gi", 110).
						Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3)).Obj()
				}
				pods := make([]*v1.Pod, n)
				for i := range pods {
					pods[i] = kind.make(i)
					pods[i].UID = types.UID(pods[i].Name)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					s := newTestScheduler(b, 0, nodes...)
					b.StartTimer()
					for _, p := range pods {
						if _, err := s.scheduleForTest(p); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pods)), "ns/pod")
			})
		}
	}
}

// BenchmarkScheduleBacklogColdCache is BenchmarkScheduleBacklog with the
// CPU caches emptied before every cycle (untimed), and the NodeInfos and
// Node objects scattered over the heap: in a real drain the API server and
// etcd share the caches, and a cycle finds little of its cluster there.
// What a cycle costs then is mostly the cache lines it touches per node.
// Fewer pods per op than the warm benchmark: emptying the caches takes
// milliseconds.
func BenchmarkScheduleBacklogColdCache(b *testing.B) {
	basic := func(i int) *v1.Pod {
		return schedtest.MakePod().Name(fmt.Sprintf("basic-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
	}
	// Bigger than the last-level cache of any machine this runs on.
	sweep := make([]byte, 96<<20)
	flush := func() {
		for i := 0; i < len(sweep); i += 64 {
			sweep[i]++
		}
	}
	const nodes, pods = 5000, 300
	for _, kind := range []struct {
		name string
		make func(int) *v1.Pod
	}{{"Basic", basic}, {"ZoneSpread", zoneSpreadPod}} {
		b.Run(fmt.Sprintf("%s/%dNodes", kind.name, nodes), func(b *testing.B) {
			ns := benchNodes(nodes)
			// Added in random order, with garbage in between, so that
			// neighbours in the node list are not neighbours in memory.
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(ns), func(i, j int) { ns[i], ns[j] = ns[j], ns[i] })
			ps := make([]*v1.Pod, pods)
			for i := range ps {
				ps[i] = kind.make(i)
				ps[i].UID = types.UID(ps[i].Name)
			}
			var garbage [][]byte
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				s := newTestScheduler(b, 0)
				for _, n := range ns {
					s.Cache.AddNode(n)
					garbage = append(garbage, make([]byte, 512))
				}
				garbage = garbage[:0]
				for _, p := range ps {
					b.StopTimer()
					flush()
					b.StartTimer()
					if _, err := s.scheduleForTest(p); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ps)), "ns/pod")
		})
	}
}

// BenchmarkUnschedulableCycle measures a cycle for a pod that fits nowhere,
// preemption included, on a full cluster: the pods in the way have the
// pod's own priority (no victims anywhere, the common case of a backlog
// waiting for capacity) or a lower one (victims on every node).
func BenchmarkUnschedulableCycle(b *testing.B) {
	for _, victims := range []bool{false, true} {
		for _, n := range []int{1000, 5000} {
			b.Run(fmt.Sprintf("victims=%v/%dNodes", victims, n), func(b *testing.B) {
				s := newTestScheduler(b, 0, benchNodes(n)...)
				for i := range n {
					p := schedtest.MakePod().Name(fmt.Sprintf("full-%d", i)).Req("32", "1Gi").Obj()
					if victims {
						p.Spec.Priority = new(int32(-1))
					}
					p.UID = types.UID(p.Name)
					p.Spec.NodeName = fmt.Sprintf("node-%05d", i)
					s.Cache.AddPod(p)
				}
				pod := schedtest.MakePod().Name("pending").Req("1", "1Gi").Obj()
				pod.UID = "pending"
				prof := s.profiles[pod.Spec.SchedulerName]
				s.Cache.UpdateSnapshot(s.snapshot)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					state := framework.NewCycleState()
					_, err := s.schedulePod(context.Background(), prof, state, pod)
					var fitErr *FitError
					if !errors.As(err, &fitErr) {
						b.Fatalf("the pod fits: %v", err)
					}
					node, msg := s.preempt(context.Background(), prof, state, pod, fitErr)
					if (node != "") != victims {
						b.Fatalf("preemption: node %q, %s", node, msg)
					}
					s.forgetPreemption(pod.UID)
				}
			})
		}
	}
}
