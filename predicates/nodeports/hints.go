package nodeports

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

var _ framework.EnqueueExtensions = &Filter{}

// EventsToRegister: an assigned pod deleted, and a node added.
func (*Filter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: conflictingPortsFreed},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, NodeCheck: framework.AnyNode},
	}, nil
}

// conflictingPortsFreed queues the pod when the deleted pod held (bound or
// nominated) a host port the pod wants, on a node the pod may run on.
func conflictingPortsFreed(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	deleted, _, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if deleted == nil || !framework.AssignedOrNominated(deleted) || !framework.MayRunOn(pod, deleted.Spec.NodeName) {
		return framework.QueueSkip, nil
	}
	freed := framework.PodHostPorts(deleted)
	if len(freed) == 0 {
		return framework.QueueSkip, nil
	}
	var inUse framework.HostPortInfo
	for _, hp := range freed {
		inUse.Add(hp)
	}
	for _, hp := range framework.PodHostPorts(pod) {
		if inUse.Conflicts(hp) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}
