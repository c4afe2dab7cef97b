package registry

import (
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
)

// spreadRegistrations are the plugins that look beyond the node: topology
// spreading over the whole snapshot, and the volume filters, which read
// claims, volumes, classes and CSINodes from the informers.
func spreadRegistrations() []framework.Registration {
	return []framework.Registration{
		podtopologyspread.Registration(),
		volumes.RestrictionsRegistration(),
		volumes.NodeLimitsRegistration(),
		volumes.BindingRegistration(),
		volumes.ZoneRegistration(),
	}
}
