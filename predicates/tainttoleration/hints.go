package tainttoleration

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

var _ framework.EnqueueExtensions = &Filter{}

// EventsToRegister: a node added or whose taints changed, and the pod's
// own tolerations changed.
func (pl *Filter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: taintsNowTolerated, NodeCheck: toleratesNode},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}, QueueingHintFn: framework.OwnPodChanged},
	}, nil
}

// taintsNowTolerated queues the pod when the node had a NoSchedule or
// NoExecute taint it did not tolerate (or is new) and now has none.
func taintsNowTolerated(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil {
		return framework.QueueSkip, nil
	}
	if _, untolerated := FirstUntoleratedTaint(pod, newNode); untolerated {
		return framework.QueueSkip, nil
	}
	if oldNode != nil {
		if _, was := FirstUntoleratedTaint(pod, oldNode); !was {
			return framework.QueueSkip, nil
		}
	}
	return framework.Queue, nil
}

// toleratesNode is TaintToleration's NodeCheck: the pod tolerates the
// node's NoSchedule and NoExecute taints.
func toleratesNode(pod *v1.Pod, node *v1.Node) bool {
	_, untolerated := FirstUntoleratedTaint(pod, node)
	return !untolerated
}
