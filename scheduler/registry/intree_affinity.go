package registry

import (
	"fmt"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates"
	"github.com/yardmaster-io/yardmaster/priorities"
)

// affinityRegistrations are the plugins that place a pod relative to other
// pods or to what nodes hold: InterPodAffinity and ImageLocality.
func affinityRegistrations() []framework.Registration {
	return []framework.Registration{
		{
			Name:    predicates.InterPodAffinityName,
			Points:  []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
			NewArgs: func() any { return framework.DefaultInterPodAffinityArgs() },
			ValidateArgs: func(a any) error {
				args, ok := a.(*framework.InterPodAffinityArgs)
				if !ok {
					return fmt.Errorf("args of type %T, want InterPodAffinityArgs", a)
				}
				return framework.ValidateInterPodAffinityArgs(args)
			},
			New: func(a any, h framework.Handle) ([]framework.Plugin, error) {
				args, ok := a.(*framework.InterPodAffinityArgs)
				if !ok {
					return nil, fmt.Errorf("args of type %T, want InterPodAffinityArgs", a)
				}
				filter, err := predicates.NewInterPodAffinity(h)
				if err != nil {
					return nil, err
				}
				scorer, err := priorities.NewInterPodAffinity(args, h)
				if err != nil {
					return nil, err
				}
				return []framework.Plugin{filter, scorer}, nil
			},
		},
		{
			// kube-scheduler's ImageLocality is a Score plugin only;
			// yardmaster's normalizes the pod's image names once per cycle
			// in a PreScore step (Score works without it).
			Name:   priorities.ImageLocalityName,
			Points: []string{framework.PointScore},
			Steps:  map[string]string{framework.PointPreScore: framework.PointScore},
			New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
				p, err := priorities.NewImageLocality(h)
				if err != nil {
					return nil, err
				}
				return []framework.Plugin{p}, nil
			},
		},
	}
}
