package registry

import (
	"fmt"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
	"github.com/yardmaster-io/yardmaster/priorities"
)

// spreadRegistrations are the plugins that look beyond the node: topology
// spreading over the whole snapshot, and the volume filters, which read
// claims, volumes, classes and CSINodes from the informers.
func spreadRegistrations() []framework.Registration {
	return []framework.Registration{
		{
			Name:    predicates.PodTopologySpreadName,
			Points:  []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
			NewArgs: func() any { return framework.DefaultPodTopologySpreadArgs() },
			ValidateArgs: func(a any) error {
				args, ok := a.(*framework.PodTopologySpreadArgs)
				if !ok {
					return fmt.Errorf("args of type %T, want PodTopologySpreadArgs", a)
				}
				return framework.ValidatePodTopologySpreadArgs(args)
			},
			New: func(a any, h framework.Handle) ([]framework.Plugin, error) {
				args, ok := a.(*framework.PodTopologySpreadArgs)
				if !ok {
					return nil, fmt.Errorf("args of type %T, want PodTopologySpreadArgs", a)
				}
				spread, err := framework.NewTopologySpread(args, h)
				if err != nil {
					return nil, err
				}
				return []framework.Plugin{
					predicates.NewPodTopologySpread(spread),
					priorities.NewPodTopologySpread(spread, h),
				}, nil
			},
		},
		volumes.RestrictionsRegistration(),
		volumes.NodeLimitsRegistration(),
		volumes.BindingRegistration(),
		volumes.ZoneRegistration(),
	}
}
