package nodeports

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is NodePorts', for a framework.Registry.
func Registration() framework.Registration {
	return framework.Registration{
		Name:   Name,
		Points: []string{framework.PointPreFilter, framework.PointFilter},
		New: func(any, framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{NewFilter()}, nil
		},
	}
}
