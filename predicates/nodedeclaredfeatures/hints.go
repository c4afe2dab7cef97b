package nodedeclaredfeatures

import (
	"context"

	"github.com/yardmaster-io/yardmaster/framework"
)

var _ framework.EnqueueExtensions = &Filter{}

// EventsToRegister: a node added or whose declared features changed.
func (*Filter) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeDeclaredFeature}, NodeCheck: framework.AnyNode},
	}, nil
}
