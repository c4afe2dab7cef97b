package podtopologyspread

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is PodTopologySpread's, for a framework.Registry: the
// filter and the scorer, sharing the constraints' source built from the
// args.
func Registration() framework.Registration {
	return framework.NewRegistration(Name,
		[]string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		DefaultArgs, ValidateArgs,
		func(args *Args, h framework.Handle) ([]framework.Plugin, error) {
			spread, err := NewSpread(args, h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{NewFilter(spread), NewScorer(spread, h)}, nil
		})
}
