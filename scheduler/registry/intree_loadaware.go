package registry

import (
	"fmt"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// loadRegistrations are the load-aware plugins (package loadaware), which
// share pool's queries with each other and with NetworkTraffic. None is in
// DefaultPlugins: they need a Prometheus address.
func loadRegistrations(pool *prommetric.Pool) []framework.Registration {
	opt := loadaware.WithPool(pool)
	return []framework.Registration{
		typedRegistration(loadaware.PrometheusScoreName, []string{framework.PointPreScore, framework.PointScore},
			framework.ValidatePrometheusScoreArgs,
			func(a *framework.PrometheusScoreArgs, h framework.Handle) (framework.Plugin, error) {
				return loadaware.NewPrometheusScore(a, h, opt)
			}),
		typedRegistration(loadaware.TargetLoadPackingName, []string{framework.PointPreScore, framework.PointScore},
			framework.ValidateTargetLoadPackingArgs,
			func(a *framework.TargetLoadPackingArgs, h framework.Handle) (framework.Plugin, error) {
				return loadaware.NewTargetLoadPacking(a, h, opt)
			}),
		typedRegistration(loadaware.LoadVariationRiskBalancingName, []string{framework.PointPreScore, framework.PointScore},
			framework.ValidateLoadVariationRiskBalancingArgs,
			func(a *framework.LoadVariationRiskBalancingArgs, h framework.Handle) (framework.Plugin, error) {
				return loadaware.NewLoadVariationRiskBalancing(a, h, opt)
			}),
		typedRegistration(loadaware.LoadHotSpotName, []string{framework.PointPreFilter, framework.PointFilter},
			framework.ValidateLoadHotSpotArgs,
			func(a *framework.LoadHotSpotArgs, h framework.Handle) (framework.Plugin, error) {
				return loadaware.NewLoadHotSpot(a, h, opt)
			}),
	}
}

// defaulter is an args type that defaults itself.
type defaulter interface{ SetDefaults() }

// typedRegistration registers a plugin whose args type A defaults itself:
// NewArgs is an empty A (so SetDefaults, run after decoding, sees what the
// file wrote), validation works on a defaulted copy.
func typedRegistration[A any, PA interface {
	*A
	defaulter
}](name string, points []string, validate func(PA) error, build func(PA, framework.Handle) (framework.Plugin, error)) framework.Registration {
	typed := func(a any) (PA, error) {
		args, ok := a.(PA)
		if !ok {
			var want A
			return nil, fmt.Errorf("args of type %T, want %T", a, &want)
		}
		return args, nil
	}
	return framework.Registration{
		Name:    name,
		Points:  points,
		NewArgs: func() any { return PA(new(A)) },
		ValidateArgs: func(a any) error {
			args, err := typed(a)
			if err != nil {
				return err
			}
			c := PA(new(A))
			*c = *args
			c.SetDefaults()
			return validate(c)
		},
		New: func(a any, h framework.Handle) ([]framework.Plugin, error) {
			args, err := typed(a)
			if err != nil {
				return nil, err
			}
			p, err := build(args, h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{p}, nil
		},
	}
}
