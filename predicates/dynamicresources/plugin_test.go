package dynamicresources

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

const driver = "gpu.example.com"

// draWorld is a handle over nodes n1..nN, DeviceClasses, ResourceSlices and
// claims put straight into the informers' stores and the claim cache.
type draWorld struct {
	t     *testing.T
	h     *frameworktest.Handle
	m     *Manager
	pl    *DynamicResources
	nodes []*v1.Node
}

func newDRAWorld(t *testing.T, nodes int, objects ...runtime.Object) *draWorld {
	t.Helper()
	w := &draWorld{t: t}
	for i := 1; i <= nodes; i++ {
		w.nodes = append(w.nodes, frameworktest.MakeNode().Name(fmt.Sprintf("n%d", i)).Capacity("8", "16Gi", 110).Obj())
	}
	w.h = frameworktest.NewHandle(frameworktest.NewSnapshot(w.nodes, nil))
	m, err := NewManager(w.h.Factory, ManagerOptions{}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.m = m
	w.h.DRA = m
	for _, o := range objects {
		w.add(o)
	}
	pl, err := New(DefaultArgs(), w.h)
	if err != nil {
		t.Fatal(err)
	}
	w.pl = pl
	return w
}

// add puts o where the informers would: slices and classes in their
// stores (classes also through the extended-resource cache), claims into
// the claim cache; and tells the manager, as its handlers would.
func (w *draWorld) add(o runtime.Object) {
	w.t.Helper()
	f := w.h.Factory
	switch o := o.(type) {
	case *resourceapi.DeviceClass:
		if err := f.Resource().V1().DeviceClasses().Informer().GetIndexer().Add(o); err != nil {
			w.t.Fatal(err)
		}
		w.m.extended.OnAdd(o, false)
	case *resourceapi.ResourceSlice:
		if err := f.Resource().V1().ResourceSlices().Informer().GetIndexer().Add(o); err != nil {
			w.t.Fatal(err)
		}
		w.m.answers.void() // the manager's handler on the slice informer
	case *resourceapi.ResourceClaim:
		w.m.claims.informerSaw(o)
		if err := w.h.Clientset.Tracker().Add(o); err != nil {
			w.t.Fatal(err)
		}
	default:
		w.t.Fatalf("no store for %T", o)
	}
}

func deviceClass(name string) *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Now()},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", driver)},
		}}},
	}
}

// slice publishes devices (name=model) on node.
func slice(node string, devices ...string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   driver,
			NodeName: ptr.To(node),
			Pool:     resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for _, d := range devices {
		name, model, _ := strings.Cut(d, "=")
		dev := resourceapi.Device{Name: name}
		if model != "" {
			dev.Attributes = map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: ptr.To(model)}}
		}
		s.Spec.Devices = append(s.Spec.Devices, dev)
	}
	return s
}

// claim asks for count devices of class gpu, selecting with cel when set.
func claim(name string, count int64, cel string) *resourceapi.ResourceClaim {
	req := resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}
	if cel != "" {
		req.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: cel}}}
	}
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "1"},
		Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &req}}}},
	}
}

// podWith returns a pod that uses the claims.
func podWith(name string, claims ...string) *v1.Pod {
	pod := frameworktest.MakePod().Namespace("default").Name(name).UID(name + "-uid").Obj()
	for _, c := range claims {
		pod.Spec.ResourceClaims = append(pod.Spec.ResourceClaims, v1.PodResourceClaim{Name: c, ResourceClaimName: ptr.To(c)})
	}
	return pod
}

// cycle runs PreFilter and Filter on every node and returns the state,
// PreFilter's status and Filter's statuses by node (nil: fits).
func (w *draWorld) cycle(pod *v1.Pod) (*framework.CycleState, *framework.Status, map[string]string) {
	w.t.Helper()
	state := framework.NewCycleState()
	ctx := context.Background()
	_, st := w.pl.PreFilter(ctx, state, pod, nil)
	if !st.IsSuccess() {
		return state, st, nil
	}
	out := map[string]string{}
	for _, ni := range w.h.Lister.List() {
		if st := w.pl.Filter(ctx, state, pod, ni); st != nil {
			out[ni.NodeName()] = st.Code().String() + ": " + st.Message()
		}
	}
	return state, nil, out
}

func TestFilterAllocatesFromTheNodesDevices(t *testing.T) {
	w := newDRAWorld(t, 3, deviceClass("gpu"), slice("n2", "gpu-0=a100"), slice("n3", "gpu-0=t4"),
		claim("one", 1, ""), claim("a100", 1, `device.attributes["gpu.example.com"].model == "a100"`),
		claim("h100", 1, `device.attributes["gpu.example.com"].model == "h100"`),
		claim("two", 2, ""), claim("bad-cel", 1, `device.attributes["gpu.example.com"].missing == "x"`),
		// The API server refuses such a claim today; one stored under an
		// older or newer CEL environment can still reach the scheduler.
		claim("no-compile", 1, `device.driver ==`))
	cannot := "UnschedulableAndUnresolvable: cannot allocate all claims"
	tests := []struct {
		claim string
		want  map[string]string
	}{
		{"one", map[string]string{"n1": cannot}},
		{"a100", map[string]string{"n1": cannot, "n3": cannot}},
		{"h100", map[string]string{"n1": cannot, "n2": cannot, "n3": cannot}},
		{"two", map[string]string{"n1": cannot, "n2": cannot, "n3": cannot}},
		{"bad-cel", map[string]string{
			"n1": cannot,
			"n2": "Error: claim default/bad-cel: selector #0 on device gpu.example.com/n2/gpu-0: CEL runtime error: no such key: missing. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields",
			"n3": "Error: claim default/bad-cel: selector #0 on device gpu.example.com/n3/gpu-0: CEL runtime error: no such key: missing. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields",
		}},
		{"no-compile", map[string]string{
			"n1": cannot,
			"n2": "Error: claim default/no-compile: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:17: Syntax error: …",
			"n3": "Error: claim default/no-compile: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:17: Syntax error: …",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.claim, func(t *testing.T) {
			_, pre, got := w.cycle(podWith("p-"+tc.claim, tc.claim))
			if pre != nil {
				t.Fatalf("PreFilter: %v", pre.Message())
			}
			// A want ending in … is a prefix of the message.
			for node, msg := range tc.want {
				if prefix, ok := strings.CutSuffix(msg, "…"); ok && strings.HasPrefix(got[node], prefix) {
					got[node] = msg
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

// PreEnqueue and PreFilter turn a pod away, with kube-scheduler's reasons,
// while a claim is missing or its class does not exist.
func TestPreEnqueueAndPreFilterReasons(t *testing.T) {
	orphan := claim("orphan", 1, "")
	orphan.Spec.Devices.Requests[0].Exactly.DeviceClassName = "nope"
	w := newDRAWorld(t, 1, deviceClass("gpu"), orphan)
	if st := w.pl.PreEnqueue(context.Background(), podWith("p", "missing")); st.Message() != `could not find ResourceClaim "default/missing"` {
		t.Errorf("PreEnqueue: %q", st.Message())
	}
	if st := w.pl.PreEnqueue(context.Background(), podWith("plain")); !st.IsSuccess() {
		t.Errorf("PreEnqueue of a pod without claims: %v", st.Message())
	}
	_, pre, _ := w.cycle(podWith("p", "orphan"))
	if want := "request gpu: device class nope does not exist"; pre.Message() != want || pre.Code() != framework.UnschedulableAndUnresolvable {
		t.Errorf("PreFilter: %v %q, want UnschedulableAndUnresolvable %q", pre.Code(), pre.Message(), want)
	}
	_, pre, _ = w.cycle(podWith("plain"))
	if !pre.IsSkip() {
		t.Errorf("PreFilter of a pod without claims: %v, want Skip", pre.Code())
	}
}

// Reserve takes the devices it allocated for the next cycles; Unreserve
// gives them back.
func TestReserveTakesTheDevice(t *testing.T) {
	w := newDRAWorld(t, 2, deviceClass("gpu"), slice("n2", "gpu-0"), claim("first", 1, ""), claim("second", 1, ""))
	first := podWith("first", "first")
	state, _, got := w.cycle(first)
	if len(got) != 1 {
		t.Fatalf("first: rejected on %v, want only n1", got)
	}
	if st := w.pl.Reserve(context.Background(), state, first, "n2"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st.Message())
	}
	// The binding cycle keeps only what it reads.
	if s, _ := readState(state); len(s.nodeAllocations) != 1 || s.nodeAllocations["n2"] == nil || s.allocator != nil || s.slices != nil {
		t.Errorf("after Reserve the state holds %d nodes' allocations (n2's: %v), allocator %v, %d slices; want n2's alone",
			len(s.nodeAllocations), s.nodeAllocations["n2"] != nil, s.allocator != nil, len(s.slices))
	}
	_, _, got = w.cycle(podWith("second", "second"))
	if got["n2"] == "" {
		t.Errorf("second fits on n2 while the only device is reserved for first")
	}
	w.pl.Unreserve(context.Background(), state, first, "n2")
	_, _, got = w.cycle(podWith("second", "second"))
	if got["n2"] != "" {
		t.Errorf("second rejected on n2 after Unreserve: %s", got["n2"])
	}
}

// A pod that asks for an extended resource a DeviceClass serves gets a
// claim of its own, whose requests name the containers'.
func TestExtendedResourceServedByDRA(t *testing.T) {
	class := deviceClass("gpu")
	class.Spec.ExtendedResourceName = ptr.To("example.com/gpu")
	w := newDRAWorld(t, 2, class, slice("n2", "gpu-0", "gpu-1"))
	pod := frameworktest.MakePod().Namespace("default").Name("p").UID("p-uid").
		Res(map[v1.ResourceName]string{"example.com/gpu": "2", v1.ResourceCPU: "1"}).Obj()
	state, pre, got := w.cycle(pod)
	if pre != nil {
		t.Fatalf("PreFilter: %v", pre.Message())
	}
	if diff := cmp.Diff(map[string]string{"n1": "UnschedulableAndUnresolvable: cannot allocate all claims"}, got); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}
	s, _ := readState(state)
	na := s.nodeAllocations["n2"]
	if na == nil || na.extendedClaim == nil {
		t.Fatal("no claim for extended resources on n2")
	}
	reqs := na.extendedClaim.Spec.Devices.Requests
	if len(reqs) != 1 || reqs[0].Name != "container-0-request-1" || reqs[0].Exactly.Count != 2 || reqs[0].Exactly.DeviceClassName != "gpu" {
		t.Errorf("requests %+v, want container-0-request-1 for 2 of gpu", reqs)
	}
	if len(na.results) != 1 || len(na.results[0].Devices.Results) != 2 {
		t.Errorf("allocation %+v, want two devices", na.results)
	}
	// A node that publishes the resource itself serves it with its device
	// plugin: NodeResourcesFit decides.
	node := frameworktest.MakeNode().Name("dp").Allocatable(map[v1.ResourceName]string{"example.com/gpu": "4", v1.ResourceCPU: "8", v1.ResourceMemory: "8Gi", v1.ResourcePods: "10"}).Obj()
	ni := framework.NewNodeInfo()
	ni.SetNode(node)
	if st := w.pl.Filter(context.Background(), state, pod, ni); st != nil {
		t.Errorf("Filter on a node with a device plugin: %v", st.Message())
	}
}

// mayRequestExtended is true wherever the pod's summed requests name a
// resource DRA could serve, so that extendedRequestOf skips only pods it
// would have found nothing in.
func TestMayRequestExtendedCoversPodRequests(t *testing.T) {
	gpu := v1.ResourceList{"example.com/gpu": resource.MustParse("1")}
	implicit := v1.ResourceList{implicitExtendedResourcePrefix + "gpu-class": resource.MustParse("1")}
	plain := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")}
	for _, tc := range []struct {
		name string
		pod  func(*v1.Pod)
		want bool
	}{
		{"cpu and memory only", func(*v1.Pod) {}, false},
		{"container", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1") }, true},
		{"implicit class name", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = implicit }, true},
		{"init container", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: gpu}}}
		}, true},
		{"sidecar", func(p *v1.Pod) {
			always := v1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []v1.Container{{Name: "side", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: gpu}}}
		}, true},
		{"overhead", func(p *v1.Pod) { p.Spec.Overhead = gpu }, true},
		{"pod-level cpu", func(p *v1.Pod) { p.Spec.Resources = &v1.ResourceRequirements{Requests: plain} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := frameworktest.MakePod().Name("p").Req("100m", "64Mi").Obj()
			tc.pod(p)
			if got := mayRequestExtended(p); got != tc.want {
				t.Errorf("mayRequestExtended = %v, want %v", got, tc.want)
			}
			summed := false
			for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
				summed = summed || (!q.IsZero() && isDRAExtendedResourceName(name))
			}
			if summed && !mayRequestExtended(p) {
				t.Errorf("PodRequests names a DRA-servable resource that mayRequestExtended misses")
			}
		})
	}
}
