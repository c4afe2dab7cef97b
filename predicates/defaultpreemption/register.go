package defaultpreemption

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is DefaultPreemption's, for a framework.Registry.
// kube-scheduler v1.37's DefaultPreemption is also a PreEnqueue plugin: it
// holds back a pod whose evictions are still being requested. Listed
// there, this one changes nothing: it holds that pod back from preempting
// again in PostFilter, with the same message.
func Registration() framework.Registration {
	return framework.NewRegistration(Name,
		[]string{framework.PointPreEnqueue, framework.PointPostFilter},
		nil, ValidateArgs,
		func(args *Args, h framework.Handle) ([]framework.Plugin, error) {
			pl, err := New(args, h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{pl}, nil
		})
}
