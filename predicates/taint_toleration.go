package predicates

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// TaintTolerationName is the name of the TaintToleration plugin (this filter
// and the scorer in priorities/).
const TaintTolerationName = "TaintToleration"

// ReasonUntoleratedTaint is the format of the reason TaintToleration rejects
// a node with (framework.ReasonUntoleratedTaint).
const ReasonUntoleratedTaint = framework.ReasonUntoleratedTaint

// TaintToleration is the filter that keeps pods off nodes with a NoSchedule
// or NoExecute taint they do not tolerate. PreferNoSchedule taints only lower
// the score (priorities.TaintToleration).
type TaintToleration struct {
	// statuses holds one shared rejection per taint seen, so that a node
	// with a common taint costs no allocation; at most maxTaintStatuses.
	statuses    sync.Map // taintKV → *framework.Status
	statusCount atomic.Int32
}

// taintKV is what the rejection names of a taint.
type taintKV struct{ key, value string }

// maxTaintStatuses bounds TaintToleration.statuses; taints beyond it (a
// cluster with a distinct taint per node) get a status made per call.
const maxTaintStatuses = 1024

var _ framework.FilterPlugin = &TaintToleration{}
var _ framework.PodSigner = &TaintToleration{}

// NewTaintToleration returns the filter.
func NewTaintToleration() *TaintToleration { return &TaintToleration{} }

// Name returns TaintTolerationName.
func (*TaintToleration) Name() string { return TaintTolerationName }

// Filter rejects a node that has an untolerated NoSchedule or NoExecute
// taint, UnschedulableAndUnresolvable: evicting pods removes no taint.
func (pl *TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if taint, found := FirstUntoleratedTaint(pod, node); found {
		return pl.rejection(taint)
	}
	return nil
}

// SignPod signs the pod's tolerations, all that Filter reads of it.
func (*TaintToleration) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignTolerations(sig, pod)
}

// rejection returns the status naming taint.
func (pl *TaintToleration) rejection(taint *v1.Taint) *framework.Status {
	kv := taintKV{taint.Key, taint.Value}
	if st, ok := pl.statuses.Load(kv); ok {
		return st.(*framework.Status)
	}
	st := framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf(ReasonUntoleratedTaint, taint.Key, taint.Value))
	if pl.statusCount.Load() < maxTaintStatuses {
		if _, loaded := pl.statuses.LoadOrStore(kv, st); !loaded {
			pl.statusCount.Add(1)
		}
	}
	return st
}

// FirstUntoleratedTaint returns the first NoSchedule or NoExecute taint of
// node that pod does not tolerate, for callers that explain a rejection.
func FirstUntoleratedTaint(pod *v1.Pod, node *v1.Node) (*v1.Taint, bool) {
	return framework.FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, framework.IsDoNotScheduleTaint)
}
