package noderesources

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// fitFilterStateKey is where PreFilter leaves the pod's requests for
// Filter.
const fitFilterStateKey framework.StateKey = "PreFilter" + FitName

// The reasons NodeResourcesFit gives, one per resource the node lacks. Any
// other resource fails with InsufficientReason(name).
const (
	ReasonTooManyPods                  = "Too many pods"
	ReasonInsufficientCPU              = "Insufficient cpu"
	ReasonInsufficientMemory           = "Insufficient memory"
	ReasonInsufficientEphemeralStorage = "Insufficient ephemeral-storage"
)

// InsufficientReason returns the reason given when a node lacks the named
// resource: "Insufficient <name>".
func InsufficientReason(name v1.ResourceName) string {
	return "Insufficient " + string(name)
}

// InsufficientResource is one resource a node lacks for a pod.
type InsufficientResource struct {
	ResourceName v1.ResourceName
	// Reason is the human reason Filter reports for it.
	Reason string
	// Requested is the pod's request; Used what the node's pods already
	// request; Capacity the node's allocatable.
	Requested int64
	Used      int64
	Capacity  int64
	// Unresolvable is set when the pod alone requests more than the node's
	// allocatable, so that evicting pods from the node cannot make room.
	Unresolvable bool
}

// FitFilter is the NodeResourcesFit filter: the node must have room for one more
// pod and enough unrequested allocatable cpu, memory, ephemeral storage and
// every other resource (hugepages, extended resources) the pod requests.
//
// It matches kube-scheduler v1.37: requests are counted the way the kubelet
// admits the pod (framework.FitRequests: pod-level requests included); a
// resource the pod requests 0 of is not checked; an extended resource the
// node does not advertise is lacking;
// the status is UnschedulableAndUnresolvable when the pod alone exceeds the
// node's allocatable of some resource (no preemption can help), Unschedulable
// otherwise.
type FitFilter struct {
	// ignoredResources and ignoredGroups name extended resources the filter
	// leaves to someone else (a device plugin admission, a DRA driver);
	// ignoredGroups holds the part before "/".
	ignoredResources map[v1.ResourceName]struct{}
	ignoredGroups    map[string]struct{}
	// deviceClasses tells which extended resources a DeviceClass serves;
	// nil without DRA.
	deviceClasses framework.DeviceClassResolver
	// nodes, when set, lets the hints look up the node of a deleted pod
	// (UseNodeLister).
	nodes corelisters.NodeLister
	// readNode, when set, lets the hints read a node's room in the
	// scheduler's cache (UseNodeInfoReader).
	readNode func(name string, f func(*framework.NodeInfo)) bool
	// nominated, when set, gives the pods nominated to a node, whose room
	// the hints count as taken for pods of no higher priority.
	nominated func(name string) []*framework.PodInfo
}

// UseNodeInfoReader lets the queueing hints read the room left on a node
// (framework.Handle.ReadNodeInfo): a pod deleted from a node that still
// cannot hold a pending pod then wakes that pod no more.
func (f *FitFilter) UseNodeInfoReader(read func(name string, f func(*framework.NodeInfo)) bool, nominated func(name string) []*framework.PodInfo) *FitFilter {
	f.readNode, f.nominated = read, nominated
	return f
}

// UseNodeLister lets the queueing hints read nodes: a pod deleted from a
// node whose whole allocatable could never hold a pending pod's requests
// then wakes that pod no more (see fitHints.isSchedulableAfterPodEvent).
func (f *FitFilter) UseNodeLister(l corelisters.NodeLister) *FitFilter {
	f.nodes = l
	return f
}

// UseDeviceClasses makes the filter leave to DynamicResources the extended
// resources that a DeviceClass serves, on the nodes that do not publish
// them in their allocatable (a device plugin would), as kube-scheduler v1.37
// does with its DRAExtendedResource gate on (beta, on by default).
func (f *FitFilter) UseDeviceClasses(r framework.DeviceClassResolver) *FitFilter {
	f.deviceClasses = r
	return f
}

var (
	_ framework.PreFilterPlugin    = &FitFilter{}
	_ framework.FilterPlugin       = &FitFilter{}
	_ framework.PodSigner          = &FitFilter{}
	_ framework.RejectionExplainer = &FitFilter{}
)

// NewFitFilter returns the filter configured by args; nil args mean the
// defaults (no ignored resources). The filter only reads IgnoredResources
// and IgnoredResourceGroups; ValidateFitArgs checks the whole of args.
func NewFitFilter(args *FitArgs) *FitFilter {
	f := &FitFilter{}
	if args == nil {
		return f
	}
	if len(args.IgnoredResources) > 0 {
		f.ignoredResources = make(map[v1.ResourceName]struct{}, len(args.IgnoredResources))
		for _, r := range args.IgnoredResources {
			f.ignoredResources[v1.ResourceName(r)] = struct{}{}
		}
	}
	if len(args.IgnoredResourceGroups) > 0 {
		f.ignoredGroups = make(map[string]struct{}, len(args.IgnoredResourceGroups))
		for _, g := range args.IgnoredResourceGroups {
			f.ignoredGroups[g] = struct{}{}
		}
	}
	return f
}

// Name returns FitName.
func (f *FitFilter) Name() string { return FitName }

// fitState is the pod's side of the check, computed once per cycle.
type fitState struct {
	milliCPU         int64
	memory           int64
	ephemeralStorage int64
	// scalars are the other resources the filter checks: requested (non-zero),
	// not ignored, sorted by name so that reasons come in a stable order.
	scalars []scalarRequest
}

type scalarRequest struct {
	name     v1.ResourceName
	quantity int64
	// reason is formatted here, once, so that Filter formats nothing.
	reason string
	// draServed is set when a DeviceClass serves the resource: a node
	// without it in its allocatable leaves it to DynamicResources.
	draServed bool
}

// Clone returns s: it is never mutated after PreFilter.
func (s *fitState) Clone() framework.StateData { return s }

// PreFilter computes the pod's requests and keeps them in state for Filter.
func (f *FitFilter) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	state.Write(fitFilterStateKey, f.newFitState(pod))
	return nil, nil
}

func (f *FitFilter) newFitState(pod *v1.Pod) *fitState {
	reqs := framework.FitRequests(pod)
	s := &fitState{
		milliCPU:         reqs.MilliCPU,
		memory:           reqs.Memory,
		ephemeralStorage: reqs.EphemeralStorage,
	}
	for name, q := range reqs.ScalarResources {
		if q == 0 || f.ignores(name) {
			continue
		}
		served := f.deviceClasses != nil && f.deviceClasses.GetDeviceClass(name) != nil
		s.scalars = append(s.scalars, scalarRequest{name: name, quantity: q, reason: InsufficientReason(name), draServed: served})
	}
	slices.SortFunc(s.scalars, func(a, b scalarRequest) int { return cmp.Compare(a.name, b.name) })
	return s
}

// ignores reports whether name is an extended resource the configuration
// ignores, by name or by group. Hugepages and kubernetes.io resources are
// never ignored.
func (f *FitFilter) ignores(name v1.ResourceName) bool {
	if !framework.IsExtendedResourceName(name) {
		return false
	}
	if _, ok := f.ignoredResources[name]; ok {
		return true
	}
	if len(f.ignoredGroups) == 0 {
		return false
	}
	group, _, _ := strings.Cut(string(name), "/")
	_, ok := f.ignoredGroups[group]
	return ok
}

// Filter checks nodeInfo against the requests PreFilter stored. It allocates
// only when the pod does not fit.
func (f *FitFilter) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*fitState](state, fitFilterStateKey)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("%s: %w", FitName, err))
	}
	insufficient := s.insufficient(nodeInfo)
	if len(insufficient) == 0 {
		return nil
	}
	code := framework.Unschedulable
	reasons := make([]string, len(insufficient))
	for i := range insufficient {
		reasons[i] = insufficient[i].Reason
		if insufficient[i].Unresolvable {
			code = framework.UnschedulableAndUnresolvable
		}
	}
	return framework.NewStatus(code, reasons...)
}

// SignPod signs the requests PreFilter computed, all that Filter reads.
func (f *FitFilter) SignPod(state *framework.CycleState, _ *v1.Pod, sig []byte) ([]byte, bool) {
	s, err := framework.ReadAs[*fitState](state, fitFilterStateKey)
	if err != nil {
		return sig, false
	}
	sig = framework.SignInts(sig, s.milliCPU, s.memory, s.ephemeralStorage, int64(len(s.scalars)))
	for _, r := range s.scalars {
		if r.draServed {
			// Whether the node serves it depends on the DeviceClasses too,
			// which a node's generation does not follow (kube-scheduler
			// disables signatures for such pods too).
			return sig, false
		}
		sig = framework.SignString(sig, string(r.name))
		sig = framework.SignInts(sig, r.quantity)
	}
	return sig, true
}

// InsufficientResources returns what nodeInfo lacks to run pod, in the order
// Filter reports it and honouring f's ignored resources; nil when the pod
// fits. It computes the pod's requests on every call: it is meant for code
// outside the per-node loop (preemption what-ifs, explanations).
func (f *FitFilter) InsufficientResources(pod *v1.Pod, nodeInfo *framework.NodeInfo) []InsufficientResource {
	return f.newFitState(pod).insufficient(nodeInfo)
}

// insufficient lists what nodeInfo lacks, nil (and no allocation) when the
// pod fits. The order is kube-scheduler's: pods, cpu, memory,
// ephemeral-storage, then the other resources.
func (s *fitState) insufficient(nodeInfo *framework.NodeInfo) []InsufficientResource {
	var out []InsufficientResource
	alloc, used := &nodeInfo.Allocatable, &nodeInfo.Requested

	// The pod count is checked even for a pod that requests nothing.
	if pods := int64(len(nodeInfo.Pods)); pods+1 > alloc.AllowedPodNumber {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourcePods, Reason: ReasonTooManyPods,
			Requested: 1, Used: pods, Capacity: alloc.AllowedPodNumber,
		})
	}
	out = appendIfShort(out, v1.ResourceCPU, ReasonInsufficientCPU, s.milliCPU, used.MilliCPU, alloc.MilliCPU)
	out = appendIfShort(out, v1.ResourceMemory, ReasonInsufficientMemory, s.memory, used.Memory, alloc.Memory)
	out = appendIfShort(out, v1.ResourceEphemeralStorage, ReasonInsufficientEphemeralStorage,
		s.ephemeralStorage, used.EphemeralStorage, alloc.EphemeralStorage)
	for i := range s.scalars {
		r := &s.scalars[i]
		// A missing entry reads as 0: a node without the resource lacks it,
		// unless a DeviceClass serves it there.
		capacity := alloc.ScalarResources[r.name]
		if r.draServed && capacity <= 0 {
			continue
		}
		out = appendIfShort(out, r.name, r.reason, r.quantity, used.ScalarResources[r.name], capacity)
	}
	return out
}

// appendIfShort appends name to out when a positive request exceeds what is
// left of capacity.
func appendIfShort(out []InsufficientResource, name v1.ResourceName, reason string, requested, used, capacity int64) []InsufficientResource {
	if requested <= 0 || requested <= capacity-used {
		return out
	}
	return append(out, InsufficientResource{
		ResourceName: name, Reason: reason,
		Requested: requested, Used: used, Capacity: capacity,
		Unresolvable: requested > capacity,
	})
}

// ExplainRejection keeps the reasons and says how much of each resource
// the pod requests that ni lacks, as NodeResourcesFit counts them; no
// shortfall when freeing room on ni cannot make the pod fit (it asks for
// more than the node has at all).
func (f *FitFilter) ExplainRejection(pod *v1.Pod, ni *framework.NodeInfo, reasons []string) ([]string, map[string]string) {
	return reasons, shortfall(pod, ni)
}

// shortfall is ExplainRejection's shortfall.
func shortfall(pod *v1.Pod, ni *framework.NodeInfo) map[string]string {
	req := framework.FitRequests(pod)
	out := map[string]string{}
	short := func(name v1.ResourceName, want, allocatable, requested int64, q func(int64) *resource.Quantity) bool {
		if want <= 0 {
			return true
		}
		if want > allocatable {
			return false
		}
		if d := want - (allocatable - requested); d > 0 {
			out[string(name)] = q(d).String()
		}
		return true
	}
	milli := func(v int64) *resource.Quantity { return resource.NewMilliQuantity(v, resource.DecimalSI) }
	binary := func(v int64) *resource.Quantity { return resource.NewQuantity(v, resource.BinarySI) }
	decimal := func(v int64) *resource.Quantity { return resource.NewQuantity(v, resource.DecimalSI) }
	a, r := ni.Allocatable, ni.Requested
	ok := short(v1.ResourcePods, 1, a.AllowedPodNumber, int64(len(ni.Pods)), decimal) &&
		short(v1.ResourceCPU, req.MilliCPU, a.MilliCPU, r.MilliCPU, milli) &&
		short(v1.ResourceMemory, req.Memory, a.Memory, r.Memory, binary) &&
		short(v1.ResourceEphemeralStorage, req.EphemeralStorage, a.EphemeralStorage, r.EphemeralStorage, binary)
	for name, want := range req.ScalarResources {
		ok = ok && short(name, want, a.ScalarResources[name], r.ScalarResources[name], decimal)
	}
	if !ok || len(out) == 0 {
		return nil
	}
	return out
}
