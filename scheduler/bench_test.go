package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// benchPods is a realistic mix: plain pods, pods with a node selector, with
// a toleration, with preferred affinity, and with a host port.
func benchPods(n int) []*v1.Pod {
	pods := make([]*v1.Pod, n)
	for i := range pods {
		w := frameworktest.MakePod().Name(fmt.Sprintf("p%d", i)).Req("100m", "128Mi")
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
		w := frameworktest.MakeNode().Name(name).Capacity("32", "256Gi", 110).Label(v1.LabelHostname, name).
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
		p := frameworktest.MakePod().Name(fmt.Sprintf("spread-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
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
		p := frameworktest.MakePod().Name(fmt.Sprintf("anti-%d", i)).Label("app", app).Req("100m", "128Mi").Obj()
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
		p := frameworktest.MakePod().Name(fmt.Sprintf("soft-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
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
	p := frameworktest.MakePod().Name(fmt.Sprintf("spread-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	return p
}

func BenchmarkScheduleBacklog(b *testing.B) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	anti := func(i int) *v1.Pod {
		p := frameworktest.MakePod().Name(fmt.Sprintf("anti-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{TopologyKey: v1.LabelHostname, LabelSelector: sel}},
		}}
		return p
	}
	// What the System default constraints give every pod of a ReplicaSet,
	// written out: ScheduleAnyway by hostname and by zone.
	soft := func(i int) *v1.Pod {
		p := frameworktest.MakePod().Name(fmt.Sprintf("soft-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
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
					nodes[i] = frameworktest.MakeNode().Name(name).Capacity("32", "256Gi", 110).
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
		return frameworktest.MakePod().Name(fmt.Sprintf("basic-%d", i)).Label("app", "web").Req("100m", "128Mi").Obj()
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
					p := frameworktest.MakePod().Name(fmt.Sprintf("full-%d", i)).Req("32", "1Gi").Obj()
					if victims {
						p.Spec.Priority = new(int32(-1))
					}
					p.UID = types.UID(p.Name)
					p.Spec.NodeName = fmt.Sprintf("node-%05d", i)
					s.Cache.AddPod(p)
				}
				pod := frameworktest.MakePod().Name("pending").Req("1", "1Gi").Obj()
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
					s.nominations.forget(pod.UID)
				}
			})
		}
	}
}

// volumeWorld is a scheduler over n untainted nodes with hostname labels,
// each with perNode local volumes (1Gi, class "local", no provisioner,
// WaitForFirstConsumer), and claims for pods 0..pods-1 in namespace
// "default", all in the informer caches that VolumeBinding reads, which
// nothing starts: the claims and volumes are there when the first cycle
// indexes them.
func volumeWorld(b *testing.B, n, perNode, pods int) (*Scheduler, []*v1.Pod) {
	b.Helper()
	h := frameworktest.NewHandle(nil).AddObjects(frameworktest.MakeStorageClass("local", storagehelpers.NotSupportedProvisioner, storagev1.VolumeBindingWaitForFirstConsumer))
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		nodes[i] = frameworktest.MakeNode().Name(name).Capacity("32", "256Gi", 110).
			Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3)).Obj()
		for j := range perNode {
			h.AddObjects(frameworktest.MakePV(fmt.Sprintf("pv-%05d-%d", i, j)).Class("local").Capacity("1Gi").OnNode(name).Version("1").Obj())
		}
	}
	ps := make([]*v1.Pod, pods)
	for i := range ps {
		claim := fmt.Sprintf("claim-%d", i)
		h.AddObjects(frameworktest.MakePVC("default", claim).UID("uid-" + claim).Class("local").Request("1Gi").Version("1").Obj())
		ps[i] = frameworktest.MakePod().Namespace("default").Name(fmt.Sprintf("pod-%d", i)).UID(fmt.Sprintf("pod-%d", i)).Req("100m", "128Mi").PVC(claim).Obj()
	}
	s, err := New(Options{
		Registry:        registry.NewInTree(),
		Profiles:        []framework.Profile{registry.DefaultProfile("yardmaster")},
		InformerFactory: h.Factory,
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, node := range nodes {
		s.Cache.AddNode(node)
	}
	return s, ps
}

// reserveForTest runs what scheduleOne runs in the scheduling goroutine
// for pod: the cycle, the assumption, Reserve, Permit and
// PreBindPreFlight. No binding cycle follows.
func (s *Scheduler) reserveForTest(pod *v1.Pod) (*bindJob, error) {
	s.Cache.UpdateSnapshot(s.snapshot)
	prof := s.profiles[pod.Spec.SchedulerName]
	state := framework.NewCycleState()
	res, err := s.schedulePod(context.Background(), prof, state, pod)
	if err != nil {
		return nil, err
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = res.node
	if err := s.Cache.AssumePod(assumed); err != nil {
		return nil, err
	}
	j := &bindJob{prof: prof, state: state, assumed: assumed, res: res}
	if err := s.prepareBinding(context.Background(), j); err != nil {
		return nil, err
	}
	return j, nil
}

// BenchmarkScheduleCycleVolumes measures the scheduling goroutine's part
// of placing a pod with one unbound WaitForFirstConsumer claim on 1,000
// nodes with a local volume each: the cycle, the assumption and Reserve,
// which assumes the volume. Each iteration then takes it back (Unreserve
// and forget, timed: a map delete and a volume refiled in the next
// PreFilter), so that every cycle sees every volume free.
func BenchmarkScheduleCycleVolumes(b *testing.B) {
	const n = 1000
	s, pods := volumeWorld(b, n, 1, 1)
	pod := pods[0]
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		j, err := s.reserveForTest(pod)
		if err != nil {
			b.Fatal(err)
		}
		s.unreserveAndForget(ctx, j)
	}
}

// BenchmarkScheduleBacklogVolumes is hack/bench's volumes drain without
// the API: a backlog of 1,000 pods, each with its own WaitForFirstConsumer
// claim, on 1,000 nodes with one local volume each, every pod reserved
// before the next cycle, so that each takes a volume and the later cycles
// search for the ever fewer nodes that still have one (the last pod fits
// on a single node). One op is the whole backlog; the figure to compare
// is ns/pod.
func BenchmarkScheduleBacklogVolumes(b *testing.B) {
	const n = 1000
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s, pods := volumeWorld(b, n, 1, n)
		used := make(map[string]bool, n)
		b.StartTimer()
		for _, p := range pods {
			j, err := s.reserveForTest(p)
			if err != nil {
				b.Fatal(err)
			}
			// Each node has one volume: a second pod there would mean
			// Reserve took none.
			if used[j.res.node] {
				b.Fatalf("pod %s on %s, whose volume is taken", p.Name, j.res.node)
			}
			used[j.res.node] = true
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pod")
}

// draWorld is a scheduler over n untainted nodes with hostname labels,
// each publishing devicesPerNode devices of one driver in a ResourceSlice
// of its own (a pool named after the node), one DeviceClass selecting the
// driver by CEL, and for pods 0..pods-1 in namespace "default" the claim
// the ResourceClaim controller makes from a template asking for one
// device of the class: owned by the pod and recorded in its status, as in
// hack/bench's dra workload. The objects are served by a fake clientset
// whose informers run until the benchmark ends, so that the DRA manager
// takes them in as it does in a cluster.
func draWorld(b *testing.B, n, devicesPerNode, pods int) (*Scheduler, []*v1.Pod) {
	b.Helper()
	const driver = "gpu.example.com"
	objs := []runtime.Object{&resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", driver)},
		}}},
	}}
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		nodes[i] = frameworktest.MakeNode().Name(name).Capacity("32", "256Gi", 110).
			Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3)).Obj()
		slice := &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-gpus"},
			Spec: resourceapi.ResourceSliceSpec{
				Driver:   driver,
				NodeName: &name,
				Pool:     resourceapi.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: 1},
			},
		}
		for j := range devicesPerNode {
			slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("gpu-%d", j)})
		}
		objs = append(objs, slice)
	}
	ps := make([]*v1.Pod, pods)
	for i := range ps {
		name := fmt.Sprintf("pod-%d", i)
		p := frameworktest.MakePod().Namespace("default").Name(name).UID(name).Req("100m", "128Mi").Obj()
		template, claimName := "gpu", name+"-gpu"
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
		p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &claimName}}
		ps[i] = p
		objs = append(objs, &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "default", Name: claimName, UID: types.UID("uid-" + claimName),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: name, UID: p.UID, Controller: new(true)}},
			},
			Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
				Name:    "gpu",
				Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
			}}}},
		})
	}
	client := fake.NewClientset(objs...)
	factory := NewInformerFactory(client, nil)
	s, err := New(Options{
		Client:          client,
		InformerFactory: factory,
		Registry:        registry.NewInTree(),
		Profiles:        []framework.Profile{registry.DefaultProfile("yardmaster")},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	b.Cleanup(factory.Shutdown)
	b.Cleanup(cancel) // first: Shutdown waits for the informers to stop
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			b.Fatalf("%v did not sync", typ)
		}
	}
	if !s.WaitForHandlersSync(ctx) {
		b.Fatal("handlers did not sync")
	}
	for _, node := range nodes {
		s.Cache.AddNode(node)
	}
	return s, ps
}

// BenchmarkScheduleCycleDRA measures the scheduling goroutine's part of
// placing a pod that claims one device through a template on 1,000 nodes
// with 8 devices each: the cycle, the assumption and Reserve, which puts
// the allocation in flight. Each iteration then takes it back (Unreserve
// and forget, timed), so that every cycle sees every device free.
func BenchmarkScheduleCycleDRA(b *testing.B) {
	const n = 1000
	s, pods := draWorld(b, n, 8, 1)
	pod := pods[0]
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		j, err := s.reserveForTest(pod)
		if err != nil {
			b.Fatal(err)
		}
		s.unreserveAndForget(ctx, j)
	}
}

// BenchmarkScheduleBacklogDRA is hack/bench's dra drain without the API: a
// backlog of 1,000 pods, each claiming one device through a template, on
// 1,000 nodes with 8 devices each, every pod reserved before the next
// cycle, so that each takes a device the later cycles must not hand out
// again. One op is the whole backlog; the figure to compare is ns/pod.
func BenchmarkScheduleBacklogDRA(b *testing.B) {
	const n, devices = 1000, 8
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s, pods := draWorld(b, n, devices, n)
		used := make(map[string]int, n)
		b.StartTimer()
		for _, p := range pods {
			j, err := s.reserveForTest(p)
			if err != nil {
				b.Fatal(err)
			}
			// A ninth pod on a node would mean a device given twice.
			if used[j.res.node]++; used[j.res.node] > devices {
				b.Fatalf("pod %s is the %dth on %s, which has %d devices", p.Name, used[j.res.node], j.res.node, devices)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pod")
}
