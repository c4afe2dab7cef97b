package registry

import (
	"fmt"

	"github.com/yardmaster-io/yardmaster/framework"
)

// ExplainName configures a profile's explanations: a pluginConfig entry
// only (framework.ExplainArgs). It runs at no extension point, so it
// cannot be enabled anywhere.
const ExplainName = "Explain"

// explainRegistration is Explain's: args, checked, and nothing to build.
func explainRegistration() framework.Registration {
	return framework.Registration{
		Name:    ExplainName,
		NewArgs: func() any { return &framework.ExplainArgs{} },
		ValidateArgs: func(a any) error {
			if _, ok := a.(*framework.ExplainArgs); !ok {
				return fmt.Errorf("args of type %T, want ExplainArgs", a)
			}
			return nil
		},
	}
}
