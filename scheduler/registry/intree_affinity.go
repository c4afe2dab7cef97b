package registry

import (
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
	"github.com/yardmaster-io/yardmaster/priorities/imagelocality"
)

// affinityRegistrations are the plugins that place a pod relative to other
// pods or to what nodes hold: InterPodAffinity and ImageLocality.
func affinityRegistrations() []framework.Registration {
	return []framework.Registration{
		interpodaffinity.Registration(),
		imagelocality.Registration(),
	}
}
