package registry

import (
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates/dynamicresources"
)

// draRegistrations is DynamicResources.
func draRegistrations() []framework.Registration {
	return []framework.Registration{{
		Name:    dynamicresources.Name,
		Points:  []string{framework.PointPreEnqueue, framework.PointPreFilter, framework.PointFilter, framework.PointPostFilter, framework.PointScore, framework.PointReserve, framework.PointPreBind},
		NewArgs: func() any { return framework.DefaultDynamicResourcesArgs() },
		ValidateArgs: func(a any) error {
			args, ok := a.(*framework.DynamicResourcesArgs)
			if !ok {
				return fmt.Errorf("args of type %T, want DynamicResourcesArgs", a)
			}
			return framework.ValidateDynamicResourcesArgs(args)
		},
		New: func(a any, h framework.Handle) ([]framework.Plugin, error) {
			args, ok := a.(*framework.DynamicResourcesArgs)
			if !ok {
				return nil, fmt.Errorf("args of type %T, want DynamicResourcesArgs", a)
			}
			pl, err := dynamicresources.New(args, h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{pl}, nil
		},
	}}
}

// DRAOptions say what the API server serves of dynamic resource
// allocation.
type DRAOptions = dynamicresources.ManagerOptions

// NewDRAManager builds the scheduler's state of dynamic resource
// allocation over f's informers (see dynamicresources.NewManager), and
// returns its informer registrations, for the scheduler's sync, and the
// function that stops its background work.
func NewDRAManager(f informers.SharedInformerFactory, opts DRAOptions, onClaim func(oldClaim, newClaim *resourceapi.ResourceClaim), onClass, onSlice toolscache.ResourceEventHandler) (framework.SharedDRAManager, []toolscache.ResourceEventHandlerRegistration, func(), error) {
	m, err := dynamicresources.NewManager(f, opts, onClaim, onClass, onSlice)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, m.Registrations(), m.Stop, nil
}
