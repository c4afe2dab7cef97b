package nodeaffinity

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

var _ framework.EnqueueExtensions = &Filter{}

// EventsToRegister: a node added or relabelled.
func (pl *Filter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	h := &hints{Filter: pl}
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: h.isSchedulableAfterNodeChange, NodeCheck: h.matchesNode},
	}, nil
}

// hints are NodeAffinity's hints, with the pods' compiled affinity kept.
type hints struct {
	*Filter
	required framework.PodMemo[*framework.RequiredNodeAffinity]
}

// matchesNode is NodeAffinity's NodeCheck: the node matches the
// profile's added affinity and the pod's nodeSelector and required
// affinity.
func (pl *hints) matchesNode(pod *v1.Pod, node *v1.Node) bool {
	return (pl.added == nil || pl.added.Match(node)) && pl.required.Get(pod, framework.NewRequiredNodeAffinity).Match(node)
}

// isSchedulableAfterNodeChange queues the pod when the node matches the
// profile's added affinity and the pod's nodeSelector and required
// affinity now, and did not before (or is new).
func (pl *hints) isSchedulableAfterNodeChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil {
		return framework.QueueSkip, nil
	}
	if pl.added != nil && !pl.added.Match(newNode) {
		return framework.QueueSkip, nil
	}
	required := pl.required.Get(pod, framework.NewRequiredNodeAffinity)
	if !required.Match(newNode) {
		return framework.QueueSkip, nil
	}
	if oldNode != nil && required.Match(oldNode) && (pl.added == nil || pl.added.Match(oldNode)) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}
