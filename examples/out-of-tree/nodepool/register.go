package nodepool

import (
	"fmt"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Registration returns what app.WithPlugin needs to know of NodePool:
// its name, the extension points a configuration file may place it at,
// its arguments and how to build it.
func Registration() framework.Registration {
	return framework.Registration{
		Name:    Name,
		Points:  []string{framework.PointPreFilter, framework.PointFilter, framework.PointScore},
		NewArgs: func() any { return NewArgs() },
		ValidateArgs: func(a any) error {
			args, ok := a.(*Args)
			if !ok {
				return fmt.Errorf("args of type %T, want *nodepool.Args", a)
			}
			return ValidateArgs(args)
		},
		New: func(a any, _ framework.Handle) ([]framework.Plugin, error) {
			args, ok := a.(*Args)
			if !ok {
				return nil, fmt.Errorf("args of type %T, want *nodepool.Args", a)
			}
			return []framework.Plugin{New(args)}, nil
		},
	}
}
