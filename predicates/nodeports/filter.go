package nodeports

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// ReasonNodePorts is the reason NodePorts rejects a node with.
const ReasonNodePorts = "node(s) didn't have free ports for the requested pod ports"

// statusNodePorts is the rejection of a node where a host port is taken,
// made once and shared: the scheduler never changes a status a filter
// returns, and a rejection then costs the per-node loop no allocation.
var statusNodePorts = framework.NewStatus(framework.Unschedulable, ReasonNodePorts)

// nodePortsStateKey is where PreFilter leaves the pod's host ports.
const nodePortsStateKey framework.StateKey = "PreFilter" + Name

// nodePortsState is the pod's host ports, as framework.PodHostPorts reads
// them (empty IP → 0.0.0.0, empty protocol → TCP).
type nodePortsState []framework.HostPort

// Clone returns s: it is never mutated after PreFilter.
func (s nodePortsState) Clone() framework.StateData { return s }

// Filter is the filter that keeps a pod off nodes where one of its host
// ports is already bound.
type Filter struct{}

var (
	_ framework.PreFilterPlugin = &Filter{}
	_ framework.FilterPlugin    = &Filter{}
	_ framework.PodSigner       = &Filter{}
)

// NewFilter returns the filter.
func NewFilter() *Filter { return &Filter{} }

// Name returns Name.
func (*Filter) Name() string { return Name }

// PreFilter collects the pod's host ports, and returns Skip for a pod that
// binds none: most pods, for which the filter then costs nothing.
func (*Filter) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	ports := framework.PodHostPorts(pod)
	if len(ports) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(nodePortsStateKey, nodePortsState(ports))
	return nil, nil
}

// Filter rejects a node where one of the pod's host ports clashes with one in
// use. It is Unschedulable, not Unresolvable: preempting the pod that holds
// the port frees it.
func (*Filter) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	ports, err := framework.ReadAs[nodePortsState](state, nodePortsStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	for _, hp := range ports {
		if nodeInfo.UsedPorts.Conflicts(hp) {
			return statusNodePorts
		}
	}
	return nil
}

// SignPod signs the host ports PreFilter collected, all that Filter reads.
func (*Filter) SignPod(state *framework.CycleState, _ *v1.Pod, sig []byte) ([]byte, bool) {
	ports, err := framework.ReadAs[nodePortsState](state, nodePortsStateKey)
	if err != nil {
		return sig, false
	}
	sig = framework.SignInts(sig, int64(len(ports)))
	for _, hp := range ports {
		sig = framework.SignString(sig, hp.IP)
		sig = framework.SignString(sig, string(hp.Protocol))
		sig = framework.SignInts(sig, int64(hp.Port))
	}
	return sig, true
}
