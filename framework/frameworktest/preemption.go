package frameworktest

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Handle is a framework.PreemptionHandle too, for testing a PostFilter
// plugin that preempts: its what-if runs use the Filters a test sets, the
// nominations are Nominations (and Nominated), and what the plugin does is
// recorded (Preempted, Cleared) instead of done.
var _ framework.PreemptionHandle = &Handle{}

// Preemption is one call of Handle.Preempt.
type Preemption struct {
	Pod     *v1.Pod
	Node    string
	Victims []*v1.Pod
}

// RunFilterPluginsWithNominatedPods runs Filters (those that did not
// Skip in state) on nodeInfo for pod, beside the pods of Nominated[node]
// of pod's priority or more, then without them.
func (h *Handle) RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	var nominated []*framework.PodInfo
	for _, pi := range h.Nominated[nodeInfo.NodeName()] {
		if pi.Pod.UID != pod.UID && corev1helpers.PodPriority(pi.Pod) >= corev1helpers.PodPriority(pod) {
			nominated = append(nominated, pi)
		}
	}
	if len(nominated) > 0 {
		what, st := nodeInfo.Clone(), state.Clone()
		what.Generation, what.Slot = 0, 0
		for _, pi := range nominated {
			what.AddPodInfo(pi)
			if s := h.RunPreFilterExtensionAddPod(ctx, st, pod, pi, what); !s.IsSuccess() {
				return s
			}
		}
		if s := h.runFilters(ctx, st, pod, what); !s.IsSuccess() {
			return s
		}
	}
	return h.runFilters(ctx, state, pod, nodeInfo)
}

func (h *Handle) runFilters(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	for _, f := range h.Filters {
		if _, skip := state.SkipFilterPlugins[f.Name()]; skip {
			continue
		}
		if st := f.Filter(ctx, state, pod, ni); !st.IsSuccess() {
			return st
		}
	}
	return nil
}

// RunPreFilterExtensionAddPod calls AddPod of the Filters with
// PreFilterExtensions that did not Skip in state.
func (h *Handle) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return h.whatIf(state, func(ext framework.PreFilterExtensions) *framework.Status {
		return ext.AddPod(ctx, state, pod, podInfoToAdd, nodeInfo)
	})
}

// RunPreFilterExtensionRemovePod calls RemovePod of the Filters with
// PreFilterExtensions that did not Skip in state.
func (h *Handle) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return h.whatIf(state, func(ext framework.PreFilterExtensions) *framework.Status {
		return ext.RemovePod(ctx, state, pod, podInfoToRemove, nodeInfo)
	})
}

func (h *Handle) whatIf(state *framework.CycleState, call func(framework.PreFilterExtensions) *framework.Status) *framework.Status {
	for _, f := range h.Filters {
		ext, ok := f.(framework.PreFilterExtensions)
		if !ok {
			continue
		}
		if _, skip := state.SkipFilterPlugins[f.Name()]; skip {
			continue
		}
		if st := call(ext); !st.IsSuccess() {
			return st
		}
	}
	return nil
}

// NominationOf returns Nominations[pod.UID].
func (h *Handle) NominationOf(pod *v1.Pod) (framework.Nomination, bool) {
	n, ok := h.Nominations[pod.UID]
	return n, ok
}

// PodInCache reports whether a node of the snapshot holds the pod.
func (h *Handle) PodInCache(uid types.UID) bool {
	if h.Lister == nil {
		return false
	}
	for _, ni := range h.Lister.List() {
		for _, pi := range ni.Pods {
			if pi.Pod.UID == uid {
				return true
			}
		}
	}
	return false
}

// PreemptionByExtenders returns candidates: no extender is configured.
func (h *Handle) PreemptionByExtenders(_ context.Context, _ *v1.Pod, candidates []framework.PreemptionCandidate) ([]framework.PreemptionCandidate, error) {
	return candidates, nil
}

// Preempt records the call; Preempted returns the calls.
func (h *Handle) Preempt(pod *v1.Pod, node string, victims []*v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.preempted = append(h.preempted, Preemption{Pod: pod, Node: node, Victims: victims})
}

// Preempted returns the calls of Preempt, oldest first.
func (h *Handle) Preempted() []Preemption {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Preemption(nil), h.preempted...)
}

// ClearNomination records the pod; Cleared returns those recorded.
func (h *Handle) ClearNomination(pod *v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cleared = append(h.cleared, pod)
}

// Cleared returns the pods whose nomination ClearNomination dropped,
// oldest first.
func (h *Handle) Cleared() []*v1.Pod {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*v1.Pod(nil), h.cleared...)
}
