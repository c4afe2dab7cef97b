package nodeunschedulable

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

var _ framework.EnqueueExtensions = &Filter{}

// EventsToRegister: a node added or made schedulable (an UpdateNodeTaint
// event, as in kube-scheduler), and the pod's own tolerations changed.
func (*Filter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: nodeNowSchedulable},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}, QueueingHintFn: toleratesUnschedulableNow},
	}, nil
}

// nodeNowSchedulable queues the pod when a schedulable node is added or a
// cordoned node is uncordoned.
func nodeNowSchedulable(_ *zap.Logger, _ *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldNode, newNode, err := framework.AsObjects[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newNode != nil && !newNode.Spec.Unschedulable && (oldNode == nil || oldNode.Spec.Unschedulable) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// toleratesUnschedulableNow queues the pod when its own update made it
// tolerate the unschedulable taint.
func toleratesUnschedulableNow(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, newPod, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if newPod != nil && newPod.UID == pod.UID && framework.TolerationsTolerateTaint(newPod.Spec.Tolerations, &unschedulableTaint) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}
