package interpodaffinity

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The cluster events the filter registers, and the hints that decide per
// pod whether an event can undo its rejection (framework.EnqueueExtensions).
// They follow kube-scheduler v1.37 with queueing hints on; where they differ,
// the hint says why.

var _ framework.EnqueueExtensions = &Filter{}

// EventsToRegister: a pod added, relabelled or deleted, and a node added
// or relabelled.
func (pl *Filter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	h := &affinityHints{}
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete}, QueueingHintFn: h.podChange},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: h.nodeChange},
	}, nil
}

// affinityHints are InterPodAffinity's hints, with the pods' compiled
// terms kept (an empty set for a pod without terms).
type affinityHints struct {
	terms framework.PodMemo[*framework.PodAffinityTerms]
}

func (h *affinityHints) termsOf(pod *v1.Pod) *framework.PodAffinityTerms {
	return h.terms.Get(pod, func(pod *v1.Pod) *framework.PodAffinityTerms {
		if t := framework.NewPodAffinityTerms(pod); t != nil {
			return t
		}
		return &framework.PodAffinityTerms{}
	})
}

// affinityPodChange queues the pod, as kube-scheduler v1.37 does, when an
// assigned (or nominated) pod now matches all its required affinity terms
// (added, or relabelled into them), when a pod matching any of its
// required anti-affinity terms matches none of them any more (relabelled)
// or is deleted, or when a deleted pod had an anti-affinity term the pod
// matches. Any update of the pod itself queues it.
//
// Affinity needs one pod matching every term, anti-affinity is violated
// by a pod matching any one: v1.36 asked "all terms" of anti-affinity
// too, so a pod with two anti-affinity terms stayed parked when the one
// pod in its way (matching one term) went away.
func (h *affinityHints) podChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldPod, newPod, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if oldPod != nil && newPod != nil && newPod.UID == pod.UID {
		return framework.Queue, nil
	}
	if (newPod != nil && !framework.AssignedOrNominated(newPod)) || (oldPod != nil && !framework.AssignedOrNominated(oldPod)) {
		return framework.QueueSkip, nil
	}
	terms := h.termsOf(pod)
	if terms.Err != nil {
		return framework.Queue, terms.Err
	}
	affinity, anti := terms.RequiredAffinity, terms.RequiredAntiAffinity
	switch {
	case oldPod != nil && newPod != nil:
		if !framework.PodMatchesAllTerms(affinity, oldPod) && framework.PodMatchesAllTerms(affinity, newPod) {
			return framework.Queue, nil
		}
		if framework.PodMatchesAnyTerm(anti, oldPod) && !framework.PodMatchesAnyTerm(anti, newPod) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	case newPod != nil:
		if framework.PodMatchesAllTerms(affinity, newPod) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if framework.PodMatchesAnyTerm(anti, oldPod) {
		return framework.Queue, nil
	}
	if a := oldPod.Spec.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 {
		return framework.QueueSkip, nil
	}
	if theirs := framework.NewPodAffinityTerms(oldPod); theirs != nil && framework.PodMatchesAnyTerm(theirs.RequiredAntiAffinity, pod) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// affinityNodeChange queues the pod when a node gains (or, added, has) the
// topology key of one of its affinity terms or changes its value, or when
// a node loses or changes the topology key of one of its anti-affinity
// terms (or is added while it has any), as kube-scheduler does.
func (h *affinityHints) nodeChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil {
		return framework.QueueSkip, nil
	}
	terms := h.termsOf(pod)
	for i := range terms.RequiredAffinity {
		key := terms.RequiredAffinity[i].TopologyKey
		nv, nHas := newNode.Labels[key]
		if oldNode == nil {
			if nHas {
				return framework.Queue, nil
			}
			continue
		}
		ov, oHas := oldNode.Labels[key]
		if nHas && (!oHas || ov != nv) {
			return framework.Queue, nil
		}
	}
	for i := range terms.RequiredAntiAffinity {
		if oldNode == nil {
			return framework.Queue, nil
		}
		key := terms.RequiredAntiAffinity[i].TopologyKey
		ov, oHas := oldNode.Labels[key]
		nv, nHas := newNode.Labels[key]
		if oHas && (!nHas || ov != nv) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}
