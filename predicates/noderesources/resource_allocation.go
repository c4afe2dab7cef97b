package noderesources

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// This file holds what NodeResourcesFit and NodeResourcesBalancedAllocation
// share — the resource vector a node is scored on — and the NodeResourcesFit
// scorer with its three strategies. The arithmetic is kube-scheduler
// v1.37's, integer truncations and all, so that both schedulers rank nodes
// the same way.

// fitScoreStateKey is where PreScore leaves the pod's request vector for
// Score.
const fitScoreStateKey framework.StateKey = "PreScore" + FitName

// scorer rates one node for one pod in [0, MaxNodeScore]. Scorers are pure:
// they read only the usage vector.
type scorer func(u nodeUsage) int64

// strategyScorers builds the scorer of each ScoringStrategyType. It is never
// written after initialization.
var strategyScorers = map[framework.ScoringStrategyType]func(*framework.ScoringStrategy) scorer{
	framework.LeastAllocated: func(*framework.ScoringStrategy) scorer { return leastAllocated },
	framework.MostAllocated:  func(*framework.ScoringStrategy) scorer { return mostAllocated },
	framework.RequestedToCapacityRatio: func(s *framework.ScoringStrategy) scorer {
		return requestedToCapacityRatio(s.RequestedToCapacityRatio.Shape)
	},
}

// FitScorer is the NodeResourcesFit scorer: it rates a node by how much of the
// configured resources would be requested on it with the pod, following the
// configured strategy (LeastAllocated spreads, MostAllocated and
// RequestedToCapacityRatio pack). Scores already lie in [0, MaxNodeScore].
//
// Cpu and memory count request-less containers at the non-zero defaults
// (100m, 200Mi) on both sides. As in kube-scheduler v1.37, the pod's
// pod-level requests (spec.resources) are not used for the pod's side,
// only its containers' (framework.FitScoreRequests); the node's side counts
// its pods as the node accounts them, pod-level requests included.
type FitScorer struct {
	vec   resourceVector
	score scorer
}

var (
	_ framework.PreScorePlugin = &FitScorer{}
	_ framework.ScorePlugin    = &FitScorer{}
	_ framework.PodSigner      = &FitScorer{}
)

// NewFitScorer returns the scorer configured by args. nil args, a nil
// strategy, empty resources and zero weights get kube-scheduler's defaults
// (LeastAllocated over cpu and memory, weight 1). It validates the whole of
// args as ValidateFitArgs does.
func NewFitScorer(args *FitArgs) (*FitScorer, error) {
	strategy, err := fitStrategy(args)
	if err != nil {
		return nil, err
	}
	return &FitScorer{
		vec:   newResourceVector(strategy.Resources, true, framework.FitScoreRequests),
		score: strategyScorers[strategy.Type](&strategy),
	}, nil
}

// Name returns FitName.
func (f *FitScorer) Name() string { return FitName }

// PreScore computes the pod's request for every scored resource, counting
// request-less containers at the defaults for cpu and memory.
func (f *FitScorer) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	state.Write(fitScoreStateKey, &podRequestsState{requests: f.vec.podRequests(pod)})
	return nil
}

// Score rates nodeInfo with the configured strategy.
func (f *FitScorer) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	reqs := f.vec.readPodRequests(state, fitScoreStateKey, pod)
	return f.score(nodeUsage{vec: &f.vec, podRequests: reqs, node: nodeInfo}), nil
}

// SignPod signs the pod's request vector, all that Score reads of it.
func (f *FitScorer) SignPod(state *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignInts(sig, f.vec.readPodRequests(state, fitScoreStateKey, pod)...), true
}

// ScoreExtensions returns nil: scores need no normalization.
func (f *FitScorer) ScoreExtensions() framework.ScoreExtensions { return nil }

// leastAllocated favours nodes with the most unrequested allocatable: per
// resource (allocatable-requested)*MaxNodeScore/allocatable, 0 when
// overcommitted, averaged with the weights.
func leastAllocated(u nodeUsage) int64 {
	return weightedMean(u, func(requested, allocatable int64) int64 {
		if requested > allocatable {
			return 0
		}
		return (allocatable - requested) * framework.MaxNodeScore / allocatable
	})
}

// mostAllocated favours the fullest nodes: per resource
// requested*MaxNodeScore/allocatable, capped at MaxNodeScore (the non-zero
// defaults can push requested past allocatable), averaged with the weights.
func mostAllocated(u nodeUsage) int64 {
	return weightedMean(u, func(requested, allocatable int64) int64 {
		return min(requested, allocatable) * framework.MaxNodeScore / allocatable
	})
}

// weightedMean averages resourceScore over the resources the node has, with
// the weights, truncating; 0 when it has none of them.
func weightedMean(u nodeUsage, resourceScore func(requested, allocatable int64) int64) int64 {
	var sum, weights int64
	for i := range u.len() {
		requested, _, allocatable := u.at(i)
		if allocatable == 0 {
			continue
		}
		w := u.weight(i)
		sum += resourceScore(requested, allocatable) * w
		weights += w
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// requestedToCapacityRatio maps each resource's utilization (requested
// percent of allocatable, 100 when overcommitted) through the piecewise-linear
// shape, its scores scaled to [0, MaxNodeScore], and averages with the
// weights, rounding. As in kube-scheduler, a resource that scores 0 is left
// out of the average altogether (its weight does not count).
func requestedToCapacityRatio(shape []framework.UtilizationShapePoint) scorer {
	curve := framework.NewShape(shape)
	return func(u nodeUsage) int64 {
		var sum, weights int64
		for i := range u.len() {
			requested, _, allocatable := u.at(i)
			if allocatable == 0 {
				continue
			}
			utilization := int64(framework.MaxShapeUtilization)
			if requested <= allocatable {
				utilization = requested * framework.MaxShapeUtilization / allocatable
			}
			if s := curve.At(utilization); s > 0 {
				w := u.weight(i)
				sum += s * w
				weights += w
			}
		}
		if weights == 0 {
			return 0
		}
		return int64(math.Round(float64(sum) / float64(weights)))
	}
}

// resourceKind says where a scored resource is read from, decided once when
// the plugin is built so that Score only switches on it.
type resourceKind uint8

const (
	kindCPU resourceKind = iota
	kindMemory
	kindEphemeralStorage
	// kindScalar: hugepages, extended and kubernetes.io resources. Scored only
	// when the pod requests some: otherwise every node holding the resource
	// would look emptier than one without it.
	kindScalar
	// kindUnscored: any other name ("pods", a typo); kube-scheduler finds no
	// allocatable for it and skips it, and so do we.
	kindUnscored
)

type scoredResource struct {
	name   v1.ResourceName
	weight int64
	kind   resourceKind
}

// resourceVector is the ordered list of resources a plugin scores on, shared
// by NodeResourcesFit and NodeResourcesBalancedAllocation.
type resourceVector struct {
	resources []scoredResource
	// nonZero makes the node's cpu and memory count request-less
	// containers at framework.DefaultMilliCPURequest and
	// DefaultMemoryRequest (NonZeroRequested), so that request-less pods
	// still spread. NodeResourcesFit scores that way; BalancedAllocation,
	// like kube-scheduler's, uses the plain requests.
	nonZero bool
	// count is how the pod's side is counted: kube-scheduler v1.37's
	// NodeResourcesFit scorer counts non-zero container requests and
	// ignores pod-level ones (framework.FitScoreRequests);
	// BalancedAllocation counts the plain requests, pod-level included
	// (framework.BalancedAllocationRequests).
	count func(*v1.Pod) framework.Resource
}

func newResourceVector(specs []framework.ResourceSpec, nonZero bool, count func(*v1.Pod) framework.Resource) resourceVector {
	v := resourceVector{resources: make([]scoredResource, len(specs)), nonZero: nonZero, count: count}
	for i, s := range specs {
		name := v1.ResourceName(s.Name)
		kind := kindUnscored
		switch {
		case name == v1.ResourceCPU:
			kind = kindCPU
		case name == v1.ResourceMemory:
			kind = kindMemory
		case name == v1.ResourceEphemeralStorage:
			kind = kindEphemeralStorage
		case framework.IsScalarResourceName(name):
			kind = kindScalar
		}
		v.resources[i] = scoredResource{name: name, weight: s.Weight, kind: kind}
	}
	return v
}

// podRequests returns the pod's request of each resource, in vector order.
func (v *resourceVector) podRequests(pod *v1.Pod) []int64 {
	reqs := v.count(pod)
	out := make([]int64, len(v.resources))
	for i, r := range v.resources {
		switch r.kind {
		case kindCPU:
			out[i] = reqs.MilliCPU
		case kindMemory:
			out[i] = reqs.Memory
		case kindEphemeralStorage:
			out[i] = reqs.EphemeralStorage
		default:
			out[i] = reqs.ScalarResources[r.name]
		}
	}
	return out
}

// readPodRequests returns the vector PreScore stored under key. When PreScore
// did not run it computes it, as kube-scheduler does; that path allocates.
func (v *resourceVector) readPodRequests(state *framework.CycleState, key framework.StateKey, pod *v1.Pod) []int64 {
	if s, err := framework.ReadAs[*podRequestsState](state, key); err == nil {
		return s.requests
	}
	return v.podRequests(pod)
}

// usage returns, for resource i on node, what the node's pods request
// (allocated), that plus the pod's request (requested) and the node's
// allocatable. All three are 0 when the resource is not scored on this node:
// the node has none of it, or it is a scalar resource the pod does not
// request.
func (v *resourceVector) usage(node *framework.NodeInfo, i int, podRequest int64) (requested, allocated, allocatable int64) {
	r := &v.resources[i]
	switch r.kind {
	case kindCPU:
		allocatable, allocated = node.Allocatable.MilliCPU, node.Requested.MilliCPU
		if v.nonZero {
			allocated = node.NonZeroRequested.MilliCPU
		}
	case kindMemory:
		allocatable, allocated = node.Allocatable.Memory, node.Requested.Memory
		if v.nonZero {
			allocated = node.NonZeroRequested.Memory
		}
	case kindEphemeralStorage:
		allocatable, allocated = node.Allocatable.EphemeralStorage, node.Requested.EphemeralStorage
	case kindScalar:
		if podRequest == 0 {
			return 0, 0, 0
		}
		allocatable, allocated = node.Allocatable.ScalarResources[r.name], node.Requested.ScalarResources[r.name]
	default:
		return 0, 0, 0
	}
	if allocatable == 0 {
		return 0, 0, 0
	}
	return allocated + podRequest, allocated, allocatable
}

// nodeUsage is one node's resource vector for one pod, as a scorer reads it.
// It is a view, built per Score call on the stack: it points at the plugin's
// vector, the cycle's pod requests and the snapshot's NodeInfo and copies
// nothing, so scoring a node does not allocate.
type nodeUsage struct {
	vec         *resourceVector
	podRequests []int64
	node        *framework.NodeInfo
}

// len returns the number of configured resources.
func (u nodeUsage) len() int { return len(u.vec.resources) }

// at returns resource i's requested (with the pod), allocated (without it)
// and allocatable; all 0 when the resource is not scored on this node.
func (u nodeUsage) at(i int) (requested, allocated, allocatable int64) {
	return u.vec.usage(u.node, i, u.podRequests[i])
}

// weight returns resource i's configured weight.
func (u nodeUsage) weight(i int) int64 { return u.vec.resources[i].weight }

// podRequestsState is the pod's request vector, computed once per cycle by
// PreScore.
type podRequestsState struct {
	requests []int64
}

// Clone returns s: it is never mutated after PreScore.
func (s *podRequestsState) Clone() framework.StateData { return s }
