package podtopologyspread

import (
	"context"
	"maps"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The cluster events the filter registers, and the hints that decide per
// pod whether an event can undo its rejection (framework.EnqueueExtensions).
// They follow kube-scheduler v1.37 with queueing hints on.

var _ framework.EnqueueExtensions = &Filter{}

// EventsToRegister: a pod added, relabelled, deleted or whose tolerations
// changed, and a node added, deleted, relabelled or whose taints changed.
func (pl *Filter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	h := &spreadHints{Filter: pl}
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.UpdatePodToleration | framework.Delete}, QueueingHintFn: h.isSchedulableAfterPodChange},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint}, QueueingHintFn: h.isSchedulableAfterNodeChange},
	}, nil
}

// spreadHints are PodTopologySpread's hints, with the pods' compiled
// DoNotSchedule constraints kept.
type spreadHints struct {
	*Filter
	constraints framework.PodMemo[compiledConstraints]
}

type compiledConstraints struct {
	c   []framework.SpreadConstraint
	err error
}

func (pl *spreadHints) constraintsOf(pod *v1.Pod) ([]framework.SpreadConstraint, error) {
	cc := pl.constraints.Get(pod, func(pod *v1.Pod) compiledConstraints {
		c, err := pl.spread.Constraints(pod, v1.DoNotSchedule)
		return compiledConstraints{c, err}
	})
	return cc.c, cc.err
}

// involvedInSpreading reports whether other counts in pod's spreading: the
// pod itself, or an assigned (or nominated) pod of its namespace.
func involvedInSpreading(other, pod *v1.Pod) bool {
	if other.UID == pod.UID {
		return true
	}
	return framework.AssignedOrNominated(other) && other.Namespace == pod.Namespace
}

// isSchedulableAfterPodChange queues the pod, as kube-scheduler does, when
// a pod of its namespace that one of its DoNotSchedule constraints selects
// is added or deleted, or is relabelled into or out of a constraint's
// selector; or when its own tolerations changed and a constraint honours
// node taints.
func (pl *spreadHints) isSchedulableAfterPodChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldPod, newPod, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if (newPod != nil && !involvedInSpreading(newPod, pod)) || (oldPod != nil && !involvedInSpreading(oldPod, pod)) {
		return framework.QueueSkip, nil
	}
	constraints, err := pl.constraintsOf(pod)
	if err != nil {
		return framework.Queue, err
	}
	matchesAny := func(l map[string]string) bool {
		for i := range constraints {
			if constraints[i].Selector.Matches(labels.Set(l)) {
				return true
			}
		}
		return false
	}
	switch {
	case oldPod != nil && newPod != nil:
		if newPod.UID == pod.UID && !equality.Semantic.DeepEqual(oldPod.Spec.Tolerations, newPod.Spec.Tolerations) {
			for i := range constraints {
				if constraints[i].NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
					return framework.Queue, nil
				}
			}
		}
		if maps.Equal(oldPod.Labels, newPod.Labels) {
			return framework.QueueSkip, nil
		}
		for i := range constraints {
			sel := constraints[i].Selector
			if sel.Matches(labels.Set(oldPod.Labels)) != sel.Matches(labels.Set(newPod.Labels)) {
				return framework.Queue, nil
			}
		}
		return framework.QueueSkip, nil
	case newPod != nil:
		if matchesAny(newPod.Labels) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if matchesAny(oldPod.Labels) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// isSchedulableAfterNodeChange queues the pod, as kube-scheduler does,
// when a node carrying every constraint's topology key is added or
// deleted, when a node gains or loses one of those keys, or when a node
// that has them all changes a key's value or its taints.
func (pl *spreadHints) isSchedulableAfterNodeChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	constraints, err := pl.constraintsOf(pod)
	if err != nil {
		return framework.Queue, err
	}
	var oldMatching, newMatching bool
	if oldNode != nil {
		oldMatching = framework.NodeHasSpreadKeys(oldNode, constraints)
	}
	if newNode != nil {
		newMatching = framework.NodeHasSpreadKeys(newNode, constraints)
	}
	switch {
	case oldNode != nil && newNode != nil:
		if oldMatching != newMatching {
			return framework.Queue, nil
		}
		if newMatching {
			for i := range constraints {
				key := constraints[i].TopologyKey
				if oldNode.Labels[key] != newNode.Labels[key] {
					return framework.Queue, nil
				}
			}
			if !equality.Semantic.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints) {
				return framework.Queue, nil
			}
		}
		return framework.QueueSkip, nil
	case newNode != nil:
		if newMatching {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if oldMatching {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}
