package volumes

import "github.com/yardmaster-io/yardmaster/framework"

// The registrations of the volume plugins, for a framework.Registry. Their
// points are kube-scheduler v1.37's: each is a PreFilter plugin too, and
// VolumeBinding also scores, reserves and binds.

// RestrictionsRegistration is VolumeRestrictions'.
func RestrictionsRegistration() framework.Registration {
	return framework.Registration{
		Name:   RestrictionsName,
		Points: []string{framework.PointPreFilter, framework.PointFilter},
		New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{NewRestrictions(h)}, nil
		},
	}
}

// NodeLimitsRegistration is NodeVolumeLimits'.
func NodeLimitsRegistration() framework.Registration {
	return framework.Registration{
		Name:   NodeLimitsName,
		Points: []string{framework.PointPreFilter, framework.PointFilter},
		New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{NewNodeLimits(h)}, nil
		},
	}
}

// BindingRegistration is VolumeBinding's, with its BindingArgs.
func BindingRegistration() framework.Registration {
	return framework.NewRegistration(BindingName,
		[]string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore, framework.PointReserve, framework.PointPreBind},
		DefaultBindingArgs, ValidateBindingArgs,
		func(args *BindingArgs, h framework.Handle) ([]framework.Plugin, error) {
			pl, err := NewBinding(args, h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{pl}, nil
		})
}

// ZoneRegistration is VolumeZone's.
func ZoneRegistration() framework.Registration {
	return framework.Registration{
		Name:   ZoneName,
		Points: []string{framework.PointPreFilter, framework.PointFilter},
		New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{NewZone(h)}, nil
		},
	}
}
