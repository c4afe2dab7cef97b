package predicates

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// NodeNameName is the name of the NodeName plugin.
const NodeNameName = "NodeName"

// ReasonNodeName is the reason NodeName rejects every node but the one the
// pod names with.
const ReasonNodeName = "node(s) didn't match the requested node name"

// NodeName is the filter for pods that name their node in spec.nodeName.
type NodeName struct{}

var (
	_ framework.PreFilterPlugin = &NodeName{}
	_ framework.FilterPlugin    = &NodeName{}
	_ framework.PodSigner       = &NodeName{}
)

// NewNodeName returns the filter.
func NewNodeName() *NodeName { return &NodeName{} }

// Name returns NodeNameName.
func (*NodeName) Name() string { return NodeNameName }

// PreFilter narrows the cycle to the named node, so that the other filters
// run on one node instead of all of them, as kube-scheduler v1.37's NodeName
// PreFilter does, and returns Skip for a pod that names no node (kube-
// scheduler returns nothing and runs Filter, which then passes every node:
// the same answer).
func (*NodeName) PreFilter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if pod.Spec.NodeName == "" {
		return nil, framework.NewStatus(framework.Skip)
	}
	return &framework.PreFilterResult{NodeNames: map[string]struct{}{pod.Spec.NodeName: {}}}, nil
}

// Filter rejects every node but the named one, UnschedulableAndUnresolvable.
func (*NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
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
func (*NodeName) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignString(sig, pod.Spec.NodeName), true
}
