package tainttoleration

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is TaintToleration's, for a framework.Registry: the filter
// and the scorer under one name. kube-scheduler v1.37's TaintToleration is
// a PreFilter plugin too.
func Registration() framework.Registration {
	return framework.Registration{
		Name:   Name,
		Points: []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		New: func(any, framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{NewFilter(), NewScorer()}, nil
		},
	}
}
