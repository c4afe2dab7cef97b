package nodepool

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// EventsToRegister says which cluster events can make a pod NodePool
// rejected schedulable: a node joining, or a node's labels changing (it
// may have joined the pod's pool). Nothing else can: a pod's own label
// change requeues it anyway, and other pods do not matter to NodePool.
func (pl *NodePool) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{
		Event:          framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel},
		QueueingHintFn: pl.isSchedulableAfterNodeChange,
		NodeCheck:      pl.inPool,
	}}, nil
}

// inPool reports whether node is in the pod's pool. It is NodePool's
// NodeCheck: NodePool decides on a node from that node alone, so a node
// outside the pod's pool cannot become the pod's, whatever runs there.
func (pl *NodePool) inPool(pod *v1.Pod, node *v1.Node) bool {
	pool := pl.poolOf(pod)
	return pool == "" || node.Labels[pl.poolLabel] == pool
}

// isSchedulableAfterNodeChange queues the pod when the node is in its
// pool now and was not before (or is new). It runs under the queue's lock
// for every pod NodePool rejected: a map lookup or two, no allocation.
func (pl *NodePool) isSchedulableAfterNodeChange(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	newNode, ok := newObj.(*v1.Node)
	if !ok {
		return framework.Queue, fmt.Errorf("new object of type %T, want *v1.Node", newObj)
	}
	if !pl.inPool(pod, newNode) {
		return framework.QueueSkip, nil
	}
	if oldNode, ok := oldObj.(*v1.Node); ok && pl.inPool(pod, oldNode) {
		return framework.QueueSkip, nil // NodePool's answer there did not change
	}
	return framework.Queue, nil
}
