package noderesources

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// balancedStateKey is where PreScore leaves the pod's request vector.
const balancedStateKey framework.StateKey = "PreScore" + BalancedAllocationName

// BalancedAllocation is the NodeResourcesBalancedAllocation scorer: it
// favours nodes whose resources would be used more evenly (cpu as full as
// memory) with the pod than without it.
//
// Balance is measured as in kube-scheduler v1.37: the standard deviation std
// of the requested/allocatable fractions of the configured resources
// (each capped at 1; for two resources std = |f1-f2|/2) gives
// balance = (1-std)*MaxNodeScore, which lies in [50, 100]. The score is
// 50 + (50 + balanceWithPod - balanceWithoutPod)/2: 75 when the pod leaves
// the balance as it was, towards 100 when it evens the node out, towards 50
// when it skews it.
//
// Unlike NodeResourcesFit it uses the plain requests, not the non-zero
// defaults, and it skips pods that request none of the resources: every node
// would otherwise score the same for them, or worse, favour one node.
type BalancedAllocation struct {
	vec resourceVector
}

var (
	_ framework.PreScorePlugin = &BalancedAllocation{}
	_ framework.ScorePlugin    = &BalancedAllocation{}
	_ framework.PodSigner      = &BalancedAllocation{}
)

// NewBalancedAllocation returns the scorer configured by args. nil args and
// empty resources mean cpu and memory; a zero weight means 1. It validates
// args as ValidateBalancedAllocationArgs does.
func NewBalancedAllocation(args *BalancedAllocationArgs) (*BalancedAllocation, error) {
	resources, err := balancedResources(args)
	if err != nil {
		return nil, err
	}
	return &BalancedAllocation{vec: newResourceVector(resources, false, framework.BalancedAllocationRequests)}, nil
}

// Name returns BalancedAllocationName.
func (ba *BalancedAllocation) Name() string { return BalancedAllocationName }

// PreScore computes the pod's request of every configured resource, or
// returns Skip when the pod requests none of them (a best-effort pod).
func (ba *BalancedAllocation) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	reqs := ba.vec.podRequests(pod)
	if isZero(reqs) {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(balancedStateKey, &podRequestsState{requests: reqs})
	return nil
}

// Score rates how nodeInfo's balance changes with the pod.
func (ba *BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	reqs := ba.vec.readPodRequests(state, balancedStateKey, pod)
	if isZero(reqs) {
		return 0, nil
	}
	return balancedAllocation(nodeUsage{vec: &ba.vec, podRequests: reqs, node: nodeInfo}), nil
}

// SignPod signs the pod's request vector, all that Score reads of it.
func (ba *BalancedAllocation) SignPod(state *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignInts(sig, ba.vec.readPodRequests(state, balancedStateKey, pod)...), true
}

// ScoreExtensions returns nil: scores need no normalization.
func (ba *BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }

// balancedAllocation scores the change of balance the pod brings; both
// balances lie in [50, 100], so the score does too.
func balancedAllocation(u nodeUsage) int64 {
	with, without := balance(u, true), balance(u, false)
	return framework.MaxNodeScore/2 + (framework.MaxNodeScore/2+with-without)/2
}

// balance returns (1-std)*MaxNodeScore, truncated, over the fractions of the
// resources the node has, with the pod's requests or without. It walks the
// vector twice rather than collecting the fractions, so as not to allocate;
// the float operations and their order are kube-scheduler's, so the
// truncation lands on the same integer.
func balance(u nodeUsage, withPod bool) int64 {
	var n int
	var total, first, second float64
	for i := range u.len() {
		f, ok := fraction(u, i, withPod)
		if !ok {
			continue
		}
		switch n {
		case 0:
			first = f
		case 1:
			second = f
		}
		total += f
		n++
	}

	var std float64
	switch {
	case n == 2:
		std = math.Abs((first - second) / 2)
	case n > 2:
		mean := total / float64(n)
		var sum float64
		for i := range u.len() {
			if f, ok := fraction(u, i, withPod); ok {
				sum += (f - mean) * (f - mean)
			}
		}
		std = math.Sqrt(sum / float64(n))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}

// fraction returns resource i's requested (or allocated) share of the
// node's allocatable, capped at 1; ok is false when the resource is not
// scored on this node.
func fraction(u nodeUsage, i int, withPod bool) (f float64, ok bool) {
	requested, allocated, allocatable := u.at(i)
	if allocatable == 0 {
		return 0, false
	}
	if !withPod {
		requested = allocated
	}
	return min(float64(requested)/float64(allocatable), 1), true
}

// isZero reports whether the pod requests none of the resources.
func isZero(reqs []int64) bool {
	for _, r := range reqs {
		if r != 0 {
			return false
		}
	}
	return true
}
