package nodename

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

var _ framework.EnqueueExtensions = &Filter{}

// EventsToRegister: a node added (the one the pod names may appear).
func (*Filter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, QueueingHintFn: namedNodeAdded, NodeCheck: isNamedNode},
	}, nil
}

// isNamedNode is NodeName's NodeCheck: the pod names no node, or this one.
func isNamedNode(pod *v1.Pod, node *v1.Node) bool {
	return pod.Spec.NodeName == "" || pod.Spec.NodeName == node.Name
}

// namedNodeAdded queues the pod when the added node is the one it names.
// kube-scheduler registers no hint (every added node); the name is all
// that matters to the filter.
func namedNodeAdded(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode == nil || (pod.Spec.NodeName != "" && pod.Spec.NodeName != newNode.Name) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}
