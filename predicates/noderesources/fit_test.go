package noderesources

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// fitNode returns the NodeInfo of node with pods already on it.
func fitNode(node *v1.Node, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

// fitPodLevel sets pod-level requests (spec.resources).
func fitPodLevel(pod *v1.Pod, rl map[v1.ResourceName]string) *v1.Pod {
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{}}
	for k, v := range rl {
		pod.Spec.Resources.Requests[k] = resource.MustParse(v)
	}
	return pod
}

// fitView is what the tests compare of a status.
type fitView struct {
	Code    string
	Reasons []string
}

func fitViewOf(s *framework.Status) fitView {
	return fitView{Code: s.Code().String(), Reasons: s.Reasons()}
}

func fitUnschedulable(reasons ...string) fitView {
	return fitView{Code: framework.Unschedulable.String(), Reasons: reasons}
}

func fitUnresolvable(reasons ...string) fitView {
	return fitView{Code: framework.UnschedulableAndUnresolvable.String(), Reasons: reasons}
}

var fitsView = fitView{Code: framework.Success.String()}

func TestFitFilter(t *testing.T) {
	// node returns a fresh 4-cpu, 8Gi, 110-pod node builder: builders
	// mutate, so cases must not share one.
	node := func() *frameworktest.NodeWrapper { return frameworktest.MakeNode().Name("n").Capacity("4", "8Gi", 110) }
	existing := func(cpu, mem string) *v1.Pod {
		return frameworktest.MakePod().Name("existing-"+cpu+"-"+mem).Node("n").Req(cpu, mem).Obj()
	}
	tests := []struct {
		name     string
		args     *FitArgs
		pod      *v1.Pod
		node     *framework.NodeInfo
		want     fitView
		wantInsf []InsufficientResource
	}{
		{
			// cpu 1000+2000 <= 4000; memory 2Gi+4Gi <= 8Gi.
			name: "fits",
			pod:  frameworktest.MakePod().Req("2", "4Gi").Obj(),
			node: fitNode(node().Obj(), existing("1", "2Gi")),
			want: fitsView,
		},
		{
			// cpu 3000+2000 > 4000, but 2000 <= 4000: preempting could help.
			name: "insufficient cpu",
			pod:  frameworktest.MakePod().Req("2", "1Gi").Obj(),
			node: fitNode(node().Obj(), existing("3", "1Gi")),
			want: fitUnschedulable(ReasonInsufficientCPU),
			wantInsf: []InsufficientResource{
				{ResourceName: v1.ResourceCPU, Reason: ReasonInsufficientCPU, Requested: 2000, Used: 3000, Capacity: 4000},
			},
		},
		{
			// cpu 3000+2000 > 4000; memory 6Gi+4Gi > 8Gi.
			name: "insufficient cpu and memory, in that order",
			pod:  frameworktest.MakePod().Req("2", "4Gi").Obj(),
			node: fitNode(node().Obj(), existing("3", "6Gi")),
			want: fitUnschedulable(ReasonInsufficientCPU, ReasonInsufficientMemory),
		},
		{
			// cpu 5000 > allocatable 4000 on an empty node: no preemption helps.
			name: "request above allocatable is unresolvable",
			pod:  frameworktest.MakePod().Req("5", "1Gi").Obj(),
			node: fitNode(node().Obj()),
			want: fitUnresolvable(ReasonInsufficientCPU),
			wantInsf: []InsufficientResource{
				{ResourceName: v1.ResourceCPU, Reason: ReasonInsufficientCPU, Requested: 5000, Capacity: 4000, Unresolvable: true},
			},
		},
		{
			// pods 2+1 > 2, even though the pod requests nothing; evicting
			// a pod frees a slot, so it stays resolvable.
			name: "too many pods",
			pod:  frameworktest.MakePod().Obj(),
			node: fitNode(frameworktest.MakeNode().Name("n").Capacity("4", "8Gi", 2).Obj(), existing("1", "1Gi"), existing("2", "1Gi")),
			want: fitUnschedulable(ReasonTooManyPods),
			wantInsf: []InsufficientResource{
				{ResourceName: v1.ResourcePods, Reason: ReasonTooManyPods, Requested: 1, Used: 2, Capacity: 2},
			},
		},
		{
			// Requests 0 of everything: only the pod count (1+1 <= 110) is checked.
			name: "zero requests on a full node",
			pod:  frameworktest.MakePod().Obj(),
			node: fitNode(node().Obj(), existing("4", "8Gi")),
			want: fitsView,
		},
		{
			// Pod count first, then cpu: 1+1 > 1 and 4000+1000 > 4000.
			name: "too many pods and insufficient cpu",
			pod:  frameworktest.MakePod().Req("1", "").Obj(),
			node: fitNode(frameworktest.MakeNode().Name("n").Capacity("4", "8Gi", 1).Obj(), existing("4", "1Gi")),
			want: fitUnschedulable(ReasonTooManyPods, ReasonInsufficientCPU),
		},
		{
			// max(containers 1000, init 3000) = 3000 > 4000-2000.
			name: "init container larger than the containers",
			pod:  frameworktest.MakePod().Req("1", "1Gi").InitReq("3", "1Gi").Obj(),
			node: fitNode(node().Obj(), existing("2", "1Gi")),
			want: fitUnschedulable(ReasonInsufficientCPU),
		},
		{
			// containers 1000 + sidecar 1000 = 2000; the init container
			// after the sidecar runs beside it: 1500+1000 = 2500;
			// max = 2500 <= 4000-1500.
			name: "sidecar runs beside the later init container: fits exactly",
			pod:  frameworktest.MakePod().Req("1", "").SidecarReq("1", "").InitReq("1500m", "").Obj(),
			node: fitNode(node().Obj(), existing("1500m", "1Gi")),
			want: fitsView,
		},
		{
			// Same pod, 2500 > 4000-1600.
			name: "sidecar runs beside the later init container: one millicore short",
			pod:  frameworktest.MakePod().Req("1", "").SidecarReq("1", "").InitReq("1500m", "").Obj(),
			node: fitNode(node().Obj(), existing("1600m", "1Gi")),
			want: fitUnschedulable(ReasonInsufficientCPU),
		},
		{
			// 1000 + overhead 500 = 1500 > 4000-2600; without the overhead it would fit.
			name: "overhead counts",
			pod:  frameworktest.MakePod().Req("1", "1Gi").Overhead("500m", "").Obj(),
			node: fitNode(node().Obj(), existing("2600m", "1Gi")),
			want: fitUnschedulable(ReasonInsufficientCPU),
		},
		{
			// Pod-level cpu 1000 replaces containers 1500+1500: 1000 <= 4000-2000;
			// memory from the containers, 2Gi <= 8Gi-1Gi.
			name: "pod-level requests replace the containers' sum",
			pod: fitPodLevel(frameworktest.MakePod().Req("1500m", "1Gi").Container("1500m", "1Gi").Obj(),
				map[v1.ResourceName]string{v1.ResourceCPU: "1"}),
			node: fitNode(node().Obj(), existing("2", "1Gi")),
			want: fitsView,
		},
		{
			// Pod-level memory 7Gi > 8Gi-2Gi although the container asks 1Gi.
			name: "pod-level requests can exceed the containers'",
			pod: fitPodLevel(frameworktest.MakePod().Req("1", "1Gi").Obj(),
				map[v1.ResourceName]string{v1.ResourceMemory: "7Gi"}),
			node: fitNode(node().Obj(), existing("1", "2Gi")),
			want: fitUnschedulable(ReasonInsufficientMemory),
		},
		{
			// Pod-level hugepages-2Mi 800Mi replace the container's 100Mi:
			// 800Mi > 1Gi-512Mi.
			name: "pod-level hugepages replace the containers'",
			pod: fitPodLevel(frameworktest.MakePod().Req("1", "1Gi").Res(map[v1.ResourceName]string{"hugepages-2Mi": "100Mi"}).Obj(),
				map[v1.ResourceName]string{"hugepages-2Mi": "800Mi"}),
			node: fitNode(node().Allocatable(map[v1.ResourceName]string{"hugepages-2Mi": "1Gi"}).Obj(),
				frameworktest.MakePod().Name("huge").Node("n").Res(map[v1.ResourceName]string{"hugepages-2Mi": "512Mi"}).Obj()),
			want: fitUnschedulable("Insufficient hugepages-2Mi"),
			wantInsf: []InsufficientResource{
				{ResourceName: "hugepages-2Mi", Reason: "Insufficient hugepages-2Mi", Requested: 800 << 20, Used: 512 << 20, Capacity: 1 << 30},
			},
		},
		{
			// The pod on the node counts with its pod-level hugepages
			// (800Mi, not its container's 100Mi): 800Mi+300Mi > 1Gi.
			name: "an existing pod's pod-level hugepages are what it uses",
			pod:  frameworktest.MakePod().Res(map[v1.ResourceName]string{"hugepages-2Mi": "300Mi"}).Obj(),
			node: fitNode(node().Allocatable(map[v1.ResourceName]string{"hugepages-2Mi": "1Gi"}).Obj(),
				fitPodLevel(frameworktest.MakePod().Name("huge").Node("n").Res(map[v1.ResourceName]string{"hugepages-2Mi": "100Mi"}).Obj(),
					map[v1.ResourceName]string{"hugepages-2Mi": "800Mi"})),
			want: fitUnschedulable("Insufficient hugepages-2Mi"),
		},
		{
			// A running pod resized to 3 cpu, allocated by the kubelet but
			// not yet in its spec (1 cpu): it uses 3000, and 3000+1500 >
			// 4000.
			name: "an existing pod being resized uses what the kubelet allocated",
			pod:  frameworktest.MakePod().Req("1500m", "1Gi").Obj(),
			node: fitNode(node().Obj(), frameworktest.MakePod().Name("resized").Node("n").Req("1", "1Gi").
				Resized(map[v1.ResourceName]string{v1.ResourceCPU: "3"}, map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()),
			want: fitUnschedulable(ReasonInsufficientCPU),
		},
		{
			// ephemeral-storage 8Gi+4Gi > 10Gi.
			name: "insufficient ephemeral storage",
			pod:  frameworktest.MakePod().Res(map[v1.ResourceName]string{v1.ResourceEphemeralStorage: "4Gi"}).Obj(),
			node: fitNode(node().Allocatable(map[v1.ResourceName]string{v1.ResourceEphemeralStorage: "10Gi"}).Obj(),
				frameworktest.MakePod().Name("disk").Node("n").Res(map[v1.ResourceName]string{v1.ResourceEphemeralStorage: "8Gi"}).Obj()),
			want: fitUnschedulable(ReasonInsufficientEphemeralStorage),
		},
		{
			// example.com/foo 1+2 > 2, but 2 <= 2.
			name: "insufficient extended resource",
			pod:  frameworktest.MakePod().Res(map[v1.ResourceName]string{"example.com/foo": "2"}).Obj(),
			node: fitNode(frameworktest.MakeNode().Name("n").Capacity("4", "8Gi", 110).Allocatable(map[v1.ResourceName]string{"example.com/foo": "2"}).Obj(),
				frameworktest.MakePod().Name("foo").Node("n").Res(map[v1.ResourceName]string{"example.com/foo": "1"}).Obj()),
			want: fitUnschedulable("Insufficient example.com/foo"),
		},
		{
			// The node has no example.com/foo: 1 > 0 - 0, and 1 > allocatable 0.
			name: "extended resource the node does not have",
			pod:  frameworktest.MakePod().Res(map[v1.ResourceName]string{"example.com/foo": "1"}).Obj(),
			node: fitNode(node().Obj()),
			want: fitUnresolvable("Insufficient example.com/foo"),
		},
		{
			// A 0 request is not checked, even on a node without the resource.
			name: "extended resource requested at zero",
			pod:  frameworktest.MakePod().Res(map[v1.ResourceName]string{"example.com/foo": "0"}).Obj(),
			node: fitNode(node().Obj()),
			want: fitsView,
		},
		{
			// Two lacking extended resources, reported in name order.
			name: "several extended resources, sorted",
			pod: frameworktest.MakePod().Res(map[v1.ResourceName]string{
				"example.com/foo": "1", "example.com/bar": "1", "other.io/gpu": "1",
			}).Obj(),
			node: fitNode(node().Allocatable(map[v1.ResourceName]string{"other.io/gpu": "1"}).Obj()),
			want: fitUnresolvable("Insufficient example.com/bar", "Insufficient example.com/foo"),
		},
		{
			name: "ignored resource",
			args: &FitArgs{IgnoredResources: []string{"example.com/foo"}},
			pod:  frameworktest.MakePod().Res(map[v1.ResourceName]string{"example.com/foo": "1", "example.com/bar": "1"}).Obj(),
			node: fitNode(node().Obj()),
			want: fitUnresolvable("Insufficient example.com/bar"),
		},
		{
			// The group is the part before "/": example.com is ignored, other.io is not.
			name: "ignored resource group",
			args: &FitArgs{IgnoredResourceGroups: []string{"example.com"}},
			pod: frameworktest.MakePod().Res(map[v1.ResourceName]string{
				"example.com/foo": "1", "example.com/bar": "1", "other.io/gpu": "1",
			}).Obj(),
			node: fitNode(node().Obj()),
			want: fitUnresolvable("Insufficient other.io/gpu"),
		},
		{
			// hugepages-2Mi 512Mi+1Gi > 1Gi, and hugepages are not extended
			// resources, so listing them as ignored changes nothing.
			name: "hugepages are checked and cannot be ignored",
			args: &FitArgs{IgnoredResources: []string{"hugepages-2Mi"}},
			pod:  frameworktest.MakePod().Res(map[v1.ResourceName]string{"hugepages-2Mi": "1Gi"}).Obj(),
			node: fitNode(node().Allocatable(map[v1.ResourceName]string{"hugepages-2Mi": "1Gi"}).Obj(),
				frameworktest.MakePod().Name("huge").Node("n").Res(map[v1.ResourceName]string{"hugepages-2Mi": "512Mi"}).Obj()),
			want: fitUnschedulable("Insufficient hugepages-2Mi"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			f := NewFitFilter(tt.args)
			state := framework.NewCycleState()
			if _, s := f.PreFilter(ctx, state, tt.pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s.Message())
			}
			if diff := cmp.Diff(tt.want, fitViewOf(f.Filter(ctx, state, tt.pod, tt.node))); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			if tt.wantInsf != nil {
				if diff := cmp.Diff(tt.wantInsf, f.InsufficientResources(tt.pod, tt.node)); diff != "" {
					t.Errorf("InsufficientResources (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestFitFilterWithoutPreFilter(t *testing.T) {
	pod := frameworktest.MakePod().Req("1", "1Gi").Obj()
	ni := fitNode(frameworktest.MakeNode().Name("n").Capacity("4", "8Gi", 110).Obj())
	got := NewFitFilter(nil).Filter(context.Background(), framework.NewCycleState(), pod, ni)
	if got.Code() != framework.Error {
		t.Errorf("Filter without PreFilter state: code %v, want %v", got.Code(), framework.Error)
	}
}

func TestFitName(t *testing.T) {
	if got := NewFitFilter(nil).Name(); got != "NodeResourcesFit" {
		t.Errorf("Name() = %q, want %q", got, "NodeResourcesFit")
	}
}

// BenchmarkFitFilter filters one pod against 5,000 nodes; the pod fits on
// every node, the common case, which must not allocate.
func BenchmarkFitFilter(b *testing.B) {
	ctx := context.Background()
	nodes := make([]*framework.NodeInfo, 5000)
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i)
		node := frameworktest.MakeNode().Name(name).Capacity("32", "128Gi", 110).
			Allocatable(map[v1.ResourceName]string{"example.com/gpu": "8", "hugepages-2Mi": "8Gi"}).Obj()
		var pods []*v1.Pod
		for j := range i % 20 {
			pods = append(pods, frameworktest.MakePod().Name(fmt.Sprintf("%s-p%d", name, j)).Node(name).Req("500m", "1Gi").Obj())
		}
		nodes[i] = fitNode(node, pods...)
	}
	pod := frameworktest.MakePod().Name("p").Req("2", "4Gi").InitReq("1", "1Gi").
		Res(map[v1.ResourceName]string{"example.com/gpu": "1", "hugepages-2Mi": "1Gi"}).Obj()
	f := NewFitFilter(nil)
	state := framework.NewCycleState()
	f.PreFilter(ctx, state, pod, nodes)

	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if s := f.Filter(ctx, state, pod, nodes[i%len(nodes)]); s != nil {
			b.Fatal(s.Message())
		}
	}
}
