package nodeaffinity

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is NodeAffinity's, for a framework.Registry: the filter and
// the scorer under one name, configured by one Args.
func Registration() framework.Registration {
	return framework.NewRegistration(Name,
		[]string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		DefaultArgs, ValidateArgs,
		func(args *Args, _ framework.Handle) ([]framework.Plugin, error) {
			if err := ValidateArgs(args); err != nil {
				return nil, err
			}
			scorer, err := NewScorer(args)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{NewFilter(args), scorer}, nil
		})
}
