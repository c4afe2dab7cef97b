package scheduler

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
)

// profileHandle is the handle a profile's plugins get: the scheduler's
// handle, and the profile's own filters and PreFilter extensions for a
// preempting PostFilter plugin's what-if runs (framework
// .PreemptionHandle). prof is set once the profile is built: a plugin
// may not run filters from its constructor.
type profileHandle struct {
	handle
	prof *profile
}

var _ framework.PreemptionHandle = (*profileHandle)(nil)

// activeFilters are the indexes of the profile's filters that did not
// Skip in a cycle, kept in its state for the what-if runs of a preempting
// PostFilter plugin, which ask the same filters hundreds of times.
type activeFilters struct{ idx []int }

const activeFiltersKey framework.StateKey = "yardmaster/activeFilters"

// Clone returns a: the list never changes once written (a pointer: a
// what-if run clones the state per node and must not copy it).
func (a *activeFilters) Clone() framework.StateData { return a }

// keepActiveFilters writes the active filters of the cycle into state,
// before the PostFilter plugins run.
func (p *profile) keepActiveFilters(state *framework.CycleState) {
	state.Write(activeFiltersKey, &activeFilters{idx: p.activeFilters(state)})
}

// activeFilters returns the indexes of the profile's filters that did not
// Skip in state: those keepActiveFilters kept, or else computed.
func (p *profile) activeFilters(state *framework.CycleState) []int {
	if a, err := framework.ReadAs[*activeFilters](state, activeFiltersKey); err == nil {
		return a.idx
	}
	return p.appendActiveFilters(make([]int, 0, len(p.filter)), state)
}

// appendActiveFilters appends to dst the indexes of the profile's filters
// that did not Skip in state. A cycle resolves them once, so that the
// per-node loop makes no map lookup.
func (p *profile) appendActiveFilters(dst []int, state *framework.CycleState) []int {
	for i, pl := range p.filter {
		if _, skip := state.SkipFilterPlugins[pl.Name()]; !skip {
			dst = append(dst, i)
		}
	}
	return dst
}

func (h *profileHandle) RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	return h.prof.fitsBesideNominated(ctx, h.prof.activeFilters(state), state, pod, nodeInfo, h.s.nominations.forPod(pod).on(nodeInfo.NodeName()))
}

func (h *profileHandle) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return h.prof.whatIf(ctx, state, pod, podInfoToAdd, nodeInfo, true)
}

func (h *profileHandle) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return h.prof.whatIf(ctx, state, pod, podInfoToRemove, nodeInfo, false)
}

func (h *profileHandle) NominationOf(pod *v1.Pod) (framework.Nomination, bool) {
	return h.s.nominations.get(pod.UID)
}

func (h *profileHandle) PodInCache(uid types.UID) bool {
	return h.s.Cache != nil && h.s.Cache.HasPod(uid)
}

func (h *profileHandle) PreemptionByExtenders(ctx context.Context, pod *v1.Pod, candidates []framework.PreemptionCandidate) ([]framework.PreemptionCandidate, error) {
	return h.s.preemptionByExtenders(ctx, pod, candidates)
}

func (h *profileHandle) Preempt(pod *v1.Pod, node string, victims []*v1.Pod) {
	// A group's preemption brings whole groups already (preempt_group.go).
	h.s.startEvictions(pod, node, h.s.wholeGroups(pod, victims))
}

func (h *profileHandle) ClearNomination(pod *v1.Pod) { h.s.clearNomination(pod) }
