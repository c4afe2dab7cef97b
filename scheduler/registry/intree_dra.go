package registry

import (
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates/dynamicresources"
)

// The scheduler builds the state of dynamic resource allocation its
// profiles share through these, not from predicates/dynamicresources:
// it knows the plugins only through this package (docs/architecture.md,
// Import rules).

// DRAOptions say what the API server serves of dynamic resource
// allocation.
type DRAOptions = dynamicresources.ManagerOptions

// NewDRAManager is dynamicresources.NewSharedManager: the scheduler's
// state of dynamic resource allocation over f's informers, its informer
// registrations, for the scheduler's sync, and the function that stops
// its background work.
func NewDRAManager(f informers.SharedInformerFactory, opts DRAOptions, onClaim func(oldClaim, newClaim *resourceapi.ResourceClaim), onClass, onSlice toolscache.ResourceEventHandler) (framework.SharedDRAManager, []toolscache.ResourceEventHandlerRegistration, func(), error) {
	return dynamicresources.NewSharedManager(f, opts, onClaim, onClass, onSlice)
}
