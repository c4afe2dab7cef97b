package nodename

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// ReasonNodeName is the reason NodeName rejects every node but the one the
// pod names with.
const ReasonNodeName = "node(s) didn't match the requested node name"

// statusNodeName is the rejection of every node but the named one, made
// once and shared: the scheduler never changes a status a filter returns,
// and a rejection then costs the per-node loop no allocation.
var statusNodeName = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeName)

// Filter is the filter for pods that name their node in spec.nodeName.
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

// PreFilter narrows the cycle to the named node, so that the other filters
// run on one node instead of all of them, as kube-scheduler v1.37's NodeName
// PreFilter does, and returns Skip for a pod that names no node (kube-
// scheduler returns nothing and runs Filter, which then passes every node:
// the same answer).
func (*Filter) PreFilter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if pod.Spec.NodeName == "" {
		return nil, framework.NewStatus(framework.Skip)
	}
	return &framework.PreFilterResult{NodeNames: map[string]struct{}{pod.Spec.NodeName: {}}}, nil
}

// Filter rejects every node but the named one, UnschedulableAndUnresolvable.
func (*Filter) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if pod.Spec.NodeName == "" {
		return nil
	}
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if node.Name != pod.Spec.NodeName {
		return statusNodeName
	}
	return nil
}

// SignPod signs spec.nodeName, all that Filter reads of the pod.
func (*Filter) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignString(sig, pod.Spec.NodeName), true
}
