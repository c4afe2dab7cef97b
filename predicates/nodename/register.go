package nodename

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is NodeName's, for a framework.Registry. kube-scheduler
// v1.37's NodeName is a PreFilter plugin too.
func Registration() framework.Registration {
	return framework.Registration{
		Name:   Name,
		Points: []string{framework.PointPreFilter, framework.PointFilter},
		New: func(any, framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{NewFilter()}, nil
		},
	}
}
