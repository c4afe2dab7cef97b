package nodeunschedulable

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// ReasonNodeUnschedulable is the reason NodeUnschedulable rejects a cordoned
// node with.
const ReasonNodeUnschedulable = "node(s) were unschedulable"

// statusNodeUnschedulable is the rejection of a cordoned node, made once
// and shared: the scheduler never changes a status a filter returns, and a
// rejection then costs the per-node loop no allocation.
var statusNodeUnschedulable = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeUnschedulable)

// unschedulableTaint is the taint the node lifecycle controller puts on a
// cordoned node. A pod that tolerates it (DaemonSet pods do) may go to a node
// whose spec.unschedulable is set, whether or not the taint is there yet.
var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// Filter is the filter that keeps pods off cordoned nodes
// (spec.unschedulable), unless they tolerate
// node.kubernetes.io/unschedulable:NoSchedule.
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

// PreFilter has nothing to prepare and never skips. It is there because
// kube-scheduler v1.37's NodeUnschedulable is a PreFilter plugin (its
// PreFilter skips only pods whose in-place resize is deferred, behind the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption), so a file names
// it at preFilter, and the default profile lists it there, as
// kube-scheduler's does.
func (*Filter) PreFilter(context.Context, *framework.CycleState, *v1.Pod, []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	return nil, nil
}

// Filter rejects a cordoned node, UnschedulableAndUnresolvable: evicting pods
// does not uncordon it.
func (*Filter) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
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
func (*Filter) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignTolerations(sig, pod)
}
