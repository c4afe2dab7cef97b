package predicates

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// TaintTolerationName is the name of the TaintToleration plugin (this filter
// and the scorer in priorities/).
const TaintTolerationName = "TaintToleration"

// ReasonUntoleratedTaint is the format of the reason TaintToleration rejects
// a node with: "node(s) had untolerated taint {dedicated: gpu}".
//
// kube-scheduler v1.36 reports the constant "node(s) had untolerated
// taint(s)" and only logs the taint. yardmaster names the first untolerated
// taint, as kube-scheduler did before, because "which taint?" is the first
// question of a user reading the message; nodes with different taints are
// counted under different reasons.
const ReasonUntoleratedTaint = "node(s) had untolerated taint {%s: %s}"

// TaintToleration is the filter that keeps pods off nodes with a NoSchedule
// or NoExecute taint they do not tolerate. PreferNoSchedule taints only lower
// the score (priorities.TaintToleration).
type TaintToleration struct{}

var _ framework.FilterPlugin = &TaintToleration{}

// NewTaintToleration returns the filter.
func NewTaintToleration() *TaintToleration { return &TaintToleration{} }

// Name returns TaintTolerationName.
func (*TaintToleration) Name() string { return TaintTolerationName }

// Filter rejects a node that has an untolerated NoSchedule or NoExecute
// taint, UnschedulableAndUnresolvable: evicting pods removes no taint.
func (*TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if taint, found := FirstUntoleratedTaint(pod, node); found {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf(ReasonUntoleratedTaint, taint.Key, taint.Value))
	}
	return nil
}

// FirstUntoleratedTaint returns the first NoSchedule or NoExecute taint of
// node that pod does not tolerate, for callers that explain a rejection.
func FirstUntoleratedTaint(pod *v1.Pod, node *v1.Node) (*v1.Taint, bool) {
	return framework.FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, framework.IsDoNotScheduleTaint)
}
