package interpodaffinity

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is InterPodAffinity's, for a framework.Registry: the filter
// and the scorer, sharing the args.
func Registration() framework.Registration {
	return framework.NewRegistration(Name,
		[]string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		DefaultArgs, ValidateArgs,
		func(args *Args, h framework.Handle) ([]framework.Plugin, error) {
			filter, err := NewFilter(h)
			if err != nil {
				return nil, err
			}
			scorer, err := NewScorer(args, h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{filter, scorer}, nil
		})
}
