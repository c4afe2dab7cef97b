package predicates

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// NodeUnschedulableName is the name of the NodeUnschedulable plugin.
const NodeUnschedulableName = "NodeUnschedulable"

// ReasonNodeUnschedulable is the reason NodeUnschedulable rejects a cordoned
// node with.
const ReasonNodeUnschedulable = "node(s) were unschedulable"

// unschedulableTaint is the taint the node lifecycle controller puts on a
// cordoned node. A pod that tolerates it (DaemonSet pods do) may go to a node
// whose spec.unschedulable is set, whether or not the taint is there yet.
var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// NodeUnschedulable is the filter that keeps pods off cordoned nodes
// (spec.unschedulable), unless they tolerate
// node.kubernetes.io/unschedulable:NoSchedule.
type NodeUnschedulable struct{}

var (
	_ framework.PreFilterPlugin = &NodeUnschedulable{}
	_ framework.FilterPlugin    = &NodeUnschedulable{}
	_ framework.PodSigner       = &NodeUnschedulable{}
)

// NewNodeUnschedulable returns the filter.
func NewNodeUnschedulable() *NodeUnschedulable { return &NodeUnschedulable{} }

// Name returns NodeUnschedulableName.
func (*NodeUnschedulable) Name() string { return NodeUnschedulableName }

// PreFilter has nothing to prepare and never skips. It is there because
// kube-scheduler v1.37's NodeUnschedulable is a PreFilter plugin (its
// PreFilter skips only pods whose in-place resize is deferred, behind the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption), so a file names
// it at preFilter, and the default profile lists it there, as
// kube-scheduler's does.
func (*NodeUnschedulable) PreFilter(context.Context, *framework.CycleState, *v1.Pod, []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	return nil, nil
}

// Filter rejects a cordoned node, UnschedulableAndUnresolvable: evicting pods
// does not uncordon it.
func (*NodeUnschedulable) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if !node.Spec.Unschedulable || framework.TolerationsTolerateTaint(pod.Spec.Tolerations, &unschedulableTaint) {
		return nil
	}
	return statusNodeUnschedulable
}

// SignPod signs the pod's tolerations, all that Filter reads of it.
func (*NodeUnschedulable) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignTolerations(sig, pod)
}
