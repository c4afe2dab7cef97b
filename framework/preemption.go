package framework

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// FilteredNodes is what the filters made of the nodes for a pod that fits
// none, the input of the PostFilter plugins.
type FilteredNodes struct {
	// NumAllNodes is how many nodes the cycle looked at.
	NumAllNodes int
	// Resolvable are the nodes whose rejection removing pods might undo
	// (rejected Unschedulable, not UnschedulableAndUnresolvable):
	// preemption's candidates. Read-only.
	Resolvable []*NodeInfo
}

// Nomination is a pending pod's claim on a node, as the scheduler keeps
// it: made by a preemption on this scheduler, with the victims it chose,
// or read from the pod's status.nominatedNodeName.
type Nomination struct {
	// Node is the node the pod is nominated to.
	Node string
	// Victims are the pods the preemption chose (none for a nomination
	// read from the status).
	Victims []types.UID
	// Running reports that the preemption's API requests (the
	// nomination, the evictions) are still under way.
	Running bool
}

// PreemptionCandidate is a node where evicting Victims, most important
// first, lets the pod fit.
type PreemptionCandidate struct {
	Node    string
	Victims []*v1.Pod
	// PDBViolations counts the victims whose eviction a
	// PodDisruptionBudget does not allow.
	PDBViolations int
}

// PreemptionHandle is what a PostFilter plugin that preempts uses beyond
// Handle: the profile's filters run on a what-if copy of a node, the
// nominations the scheduler keeps, and the preemption's effects. The
// handle a profile gives its plugins implements it; such a plugin asserts
// it when built:
//
//	ph, ok := h.(framework.PreemptionHandle)
//
// Under explain and simulate, Preempt and ClearNomination change nothing.
type PreemptionHandle interface {
	Handle
	// RunFilterPluginsWithNominatedPods runs the profile's Filter plugins
	// that did not Skip for pod in state on nodeInfo, with the pods
	// nominated to that node whose priority is at least pod's added (pod
	// must fit beside them, then without them: kube-scheduler's
	// function of that name). It returns the first rejection, or nil.
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) *Status
	// RunPreFilterExtensionAddPod tells every PreFilter plugin of the
	// profile that did not Skip and has PreFilterExtensions that
	// podInfoToAdd was added to nodeInfo, in state.
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, pod *v1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	// RunPreFilterExtensionRemovePod is RunPreFilterExtensionAddPod for
	// a pod taken off nodeInfo.
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, pod *v1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
	// NominationOf returns the pod's nomination, false when it has none.
	NominationOf(pod *v1.Pod) (Nomination, bool)
	// PodInCache reports whether the scheduler's cache still holds the
	// pod with uid (bound or assumed): a victim deleted but not yet gone
	// from the cache.
	PodInCache(uid types.UID) bool
	// PreemptionByExtenders lets the configured extenders that take part
	// in preemption and take an interest in pod narrow the candidates and
	// change their victims, one after another (kube-scheduler's
	// callExtenders); it returns candidates unchanged when none does.
	PreemptionByExtenders(ctx context.Context, pod *v1.Pod, candidates []PreemptionCandidate) ([]PreemptionCandidate, error)
	// Preempt nominates node for pod (status.nominatedNodeName, and the
	// room kept there) and evicts the victims in the background: each
	// gets the DisruptionTarget condition, is deleted and gets a
	// Preempted event. Pods of lower priority nominated to node lose
	// their nomination. pod comes back to the queue when the victims are
	// gone, or at once when an eviction fails.
	Preempt(pod *v1.Pod, node string, victims []*v1.Pod)
	// ClearNomination drops pod's nomination, the room it kept and its
	// status.nominatedNodeName.
	ClearNomination(pod *v1.Pod)
}

// PreemptionPlan is what a preempting PostFilter plugin would do for a
// pod, decided and not done.
type PreemptionPlan struct {
	// Eligible is false when the pod may not preempt now.
	Eligible bool
	// Candidates are the nodes where preemption would let the pod fit.
	Candidates []PreemptionCandidate
	// Best is the candidate chosen, nil when there is none.
	Best *PreemptionCandidate
	// Message is what the pod's FailedScheduling event says of it:
	// where the pod goes, or why preemption does not help.
	Message string
}

// PreemptionPlanner is implemented by a PostFilter plugin that preempts.
// The scheduler counts its runs as preemption attempts
// (scheduler_preemption_attempts_total), and `yardmaster explain` asks it
// for its plan as a dry run.
type PreemptionPlanner interface {
	PostFilterPlugin
	// PlanPreemption is PostFilter without its effects: it reads and
	// writes nothing but state's clones.
	PlanPreemption(ctx context.Context, state *CycleState, pod *v1.Pod, filtered *FilteredNodes) PreemptionPlan
}
