package registry

import (
	"fmt"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates"
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
		{
			Name:   predicates.VolumeRestrictionsName,
			Points: []string{framework.PointPreFilter, framework.PointFilter},
			New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
				return []framework.Plugin{predicates.NewVolumeRestrictions(h)}, nil
			},
		},
		{
			Name:   predicates.NodeVolumeLimitsName,
			Points: []string{framework.PointPreFilter, framework.PointFilter},
			New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
				return []framework.Plugin{predicates.NewNodeVolumeLimits(h)}, nil
			},
		},
		{
			Name:    predicates.VolumeBindingName,
			Points:  []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore, framework.PointReserve, framework.PointPreBind},
			NewArgs: func() any { return framework.DefaultVolumeBindingArgs() },
			ValidateArgs: func(a any) error {
				args, ok := a.(*framework.VolumeBindingArgs)
				if !ok {
					return fmt.Errorf("args of type %T, want VolumeBindingArgs", a)
				}
				return framework.ValidateVolumeBindingArgs(args)
			},
			New: func(a any, h framework.Handle) ([]framework.Plugin, error) {
				args, ok := a.(*framework.VolumeBindingArgs)
				if !ok {
					return nil, fmt.Errorf("args of type %T, want VolumeBindingArgs", a)
				}
				pl, err := predicates.NewVolumeBinding(args, h)
				if err != nil {
					return nil, err
				}
				return []framework.Plugin{pl}, nil
			},
		},
		{
			Name:   predicates.VolumeZoneName,
			Points: []string{framework.PointPreFilter, framework.PointFilter},
			New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
				return []framework.Plugin{predicates.NewVolumeZone(h)}, nil
			},
		},
	}
}
