package networktraffic

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

var _ framework.EnqueueExtensions = &NetworkTraffic{}

// EventsToRegister declares what can undo a filterAbove rejection: a node
// added, a pod leaving a node while its estimate still counts there, and
// a new sample of its own with a node at or under filterAbove (raised
// when the sample comes). Without filterAbove the plugin rejects nothing
// and registers nothing.
func (pl *NetworkTraffic) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	if pl.args.FilterAbove <= 0 {
		return nil, nil
	}
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}, QueueingHintFn: pl.isPodCounted},
		{Event: prommetric.NewTable, QueueingHintFn: pl.hasQuietNode},
	}, nil
}

// hasQuietNode queues the pod when the plugin's new sample has a node at
// or under filterAbove.
func (pl *NetworkTraffic) hasQuietNode(_ *zap.Logger, _ *v1.Pod, _, newObj any) (framework.QueueingHint, error) {
	p, mine, ok := prommetric.PublishedBy(newObj, Name)
	switch {
	case !ok:
		return framework.Queue, nil
	case mine && p.Table.AnyAtMost(pl.args.FilterAbove):
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// isPodCounted queues the pod when the pod deleted was bound since the
// current sample: its estimate no longer weighs on its node.
func (pl *NetworkTraffic) isPodCounted(_ *zap.Logger, _ *v1.Pod, oldObj, _ any) (framework.QueueingHint, error) {
	deleted, ok := oldObj.(*v1.Pod)
	if !ok {
		return framework.Queue, nil
	}
	t := pl.metric.Load()
	if t == nil || !prommetric.BoundBefore(deleted, t.Since) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}
