package dynamicresources

import (
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Registration is DynamicResources', for a framework.Registry: the points
// are kube-scheduler v1.37's (its DynamicResources is a PreEnqueue and a
// PostFilter plugin too).
func Registration() framework.Registration {
	return framework.NewRegistration(Name,
		[]string{framework.PointPreEnqueue, framework.PointPreFilter, framework.PointFilter, framework.PointPostFilter, framework.PointScore, framework.PointReserve, framework.PointPreBind},
		DefaultArgs, ValidateArgs,
		func(args *Args, h framework.Handle) ([]framework.Plugin, error) {
			pl, err := New(args, h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{pl}, nil
		})
}

// NewSharedManager builds the scheduler's state of dynamic resource
// allocation over f's informers (see NewManager), the SharedDRAManager
// every profile's plugin is built over, and returns its informer
// registrations, for the scheduler's sync, and the function that stops
// its background work.
func NewSharedManager(f informers.SharedInformerFactory, opts ManagerOptions, onClaim func(oldClaim, newClaim *resourceapi.ResourceClaim), onClass, onSlice toolscache.ResourceEventHandler) (framework.SharedDRAManager, []toolscache.ResourceEventHandlerRegistration, func(), error) {
	m, err := NewManager(f, opts, onClaim, onClass, onSlice)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, m.Registrations(), m.Stop, nil
}
