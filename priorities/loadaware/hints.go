package loadaware

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

var _ framework.EnqueueExtensions = &LoadHotSpot{}

// EventsToRegister declares what can undo a rejection of LoadHotSpot: a
// node added (it may be cool) or resized (the share of the pods placed
// since changes), a pod leaving a node while it still counts in the
// estimate of the pods placed since the table, and a new table of its own
// with a node at or under the threshold (raised when the table comes).
func (pl *LoadHotSpot) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable}},
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}, QueueingHintFn: pl.isPodCounted},
		{Event: prommetric.NewTable, QueueingHintFn: pl.hasCoolNode},
	}, nil
}

// hasCoolNode queues the pod when the new table has a node at or under
// its metric's threshold: one the filter may pass now that the pods
// placed before the table are in its value, not on top of it. A table
// where every node is hot wakes nobody.
func (pl *LoadHotSpot) hasCoolNode(_ *zap.Logger, _ *v1.Pod, _, newObj any) (framework.QueueingHint, error) {
	p, mine, ok := prommetric.PublishedBy(newObj, LoadHotSpotName)
	switch {
	case !ok:
		return framework.Queue, nil // not ours to read: never strand a pod
	case !mine:
		return framework.QueueSkip, nil // another plugin's measurement
	}
	above := pl.cpuAbove
	if p.Index == hotMem {
		above = pl.memAbove
	}
	if p.Table.AnyAtMost(above) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// isPodCounted queues the pod when the pod deleted was placed since a
// table of the filter (less its window): its estimate no longer weighs on
// its node. A pod placed before is in the measurement, which only the next
// table (and the flush) can tell has changed.
func (pl *LoadHotSpot) isPodCounted(_ *zap.Logger, _ *v1.Pod, oldObj, _ any) (framework.QueueingHint, error) {
	deleted, ok := oldObj.(*v1.Pod)
	if !ok {
		return framework.Queue, nil // not a pod we can read: never strand one
	}
	p := pl.set.current()
	for i, t := range p.tables {
		if t != nil && !prommetric.BoundBefore(deleted, p.since(i)) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}
