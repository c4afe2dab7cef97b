package nodepool

import "github.com/yardmaster-io/yardmaster/framework"

// Registration returns what app.WithPlugin needs to know of NodePool:
// its name, the extension points a configuration file may place it at,
// its arguments and how to build it. framework.NewRegistration fills in
// the Registration's fields from functions of *Args.
func Registration() framework.Registration {
	return framework.NewRegistration(Name,
		[]string{framework.PointPreFilter, framework.PointFilter, framework.PointScore},
		NewArgs, ValidateArgs,
		func(args *Args, _ framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{New(args)}, nil
		})
}
