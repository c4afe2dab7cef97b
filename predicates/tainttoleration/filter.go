package tainttoleration

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// ReasonUntoleratedTaint is the reason TaintToleration rejects a node with,
// kube-scheduler v1.37's. It names no taint: a FailedScheduling event and a
// pod's PodScheduled condition are read by whoever may read the pod, and a
// taint's key and value are the node's (kube-scheduler stopped naming them
// in kubernetes#134740). `yardmaster explain`, which reads nodes with its
// caller's rights, names the taint.
const ReasonUntoleratedTaint = "node(s) had untolerated taint(s)"

// untoleratedTaint is the rejection of every node with an untolerated
// taint, shared: it names no taint.
var untoleratedTaint = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonUntoleratedTaint)

// Filter is the filter that keeps pods off nodes with a NoSchedule or
// NoExecute taint they do not tolerate. PreferNoSchedule taints only lower
// the score (Scorer).
type Filter struct{}

var (
	_ framework.RejectionExplainer = &Filter{}
	_ framework.PreFilterPlugin    = &Filter{}
	_ framework.FilterPlugin       = &Filter{}
	_ framework.PodSigner          = &Filter{}
)

// NewFilter returns the filter.
func NewFilter() *Filter { return &Filter{} }

// Name returns Name.
func (*Filter) Name() string { return Name }

// PreFilter has nothing to prepare and never skips. It is there because
// kube-scheduler v1.37's TaintToleration is a PreFilter plugin (its
// PreFilter skips only pods whose in-place resize is deferred, behind the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption), so a file names
// it at preFilter, and the default profile lists it there, as
// kube-scheduler's does.
func (*Filter) PreFilter(context.Context, *framework.CycleState, *v1.Pod, []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	return nil, nil
}

// Filter rejects a node that has an untolerated NoSchedule or NoExecute
// taint, UnschedulableAndUnresolvable: evicting pods removes no taint.
func (pl *Filter) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if _, found := FirstUntoleratedTaint(pod, node); found {
		return untoleratedTaint
	}
	return nil
}

// SignPod signs the pod's tolerations, all that Filter reads of it.
func (*Filter) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignTolerations(sig, pod)
}

// FirstUntoleratedTaint returns the first NoSchedule or NoExecute taint of
// node that pod does not tolerate, for callers that explain a rejection.
func FirstUntoleratedTaint(pod *v1.Pod, node *v1.Node) (*v1.Taint, bool) {
	return framework.FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, framework.IsDoNotScheduleTaint)
}

// ExplainRejection names the taint: "node(s) had untolerated taint {gpu: true}". The scheduler's
// own reason names none, since events and pod conditions are read by
// whoever may read the pod; explain reads the nodes with its caller's
// rights, so it may say which taint.
func (*Filter) ExplainRejection(pod *v1.Pod, ni *framework.NodeInfo, reasons []string) ([]string, map[string]string) {
	node := ni.Node()
	if node == nil {
		return reasons, nil
	}
	taint, ok := framework.FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, framework.IsDoNotScheduleTaint)
	if !ok {
		return reasons, nil
	}
	return []string{fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value)}, nil
}
