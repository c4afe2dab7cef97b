package registry

import (
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
		typedLoadRegistration(loadaware.PrometheusScoreName, []string{framework.PointPreScore, framework.PointScore},
			framework.ValidatePrometheusScoreArgs,
			func(a *framework.PrometheusScoreArgs, h framework.Handle) (framework.Plugin, error) {
				return loadaware.NewPrometheusScore(a, h, opt)
			}),
		typedLoadRegistration(loadaware.TargetLoadPackingName, []string{framework.PointPreScore, framework.PointScore},
			framework.ValidateTargetLoadPackingArgs,
			func(a *framework.TargetLoadPackingArgs, h framework.Handle) (framework.Plugin, error) {
				return loadaware.NewTargetLoadPacking(a, h, opt)
			}),
		typedLoadRegistration(loadaware.LoadVariationRiskBalancingName, []string{framework.PointPreScore, framework.PointScore},
			framework.ValidateLoadVariationRiskBalancingArgs,
			func(a *framework.LoadVariationRiskBalancingArgs, h framework.Handle) (framework.Plugin, error) {
				return loadaware.NewLoadVariationRiskBalancing(a, h, opt)
			}),
		typedLoadRegistration(loadaware.LoadHotSpotName, []string{framework.PointPreFilter, framework.PointFilter},
			framework.ValidateLoadHotSpotArgs,
			func(a *framework.LoadHotSpotArgs, h framework.Handle) (framework.Plugin, error) {
				return loadaware.NewLoadHotSpot(a, h, opt)
			}),
	}
}

// typedLoadRegistration registers a load-aware plugin: NewArgs is an
// empty args value (SetDefaults, run after decoding, sees what the file
// wrote), validation works on a defaulted copy.
func typedLoadRegistration[A any, PA interface {
	*A
	framework.ArgsDefaulter
}](name string, points []string, validate func(PA) error, build func(PA, framework.Handle) (framework.Plugin, error)) framework.Registration {
	return framework.NewRegistration(name, points, nil,
		func(a *A) error { return validate(PA(a)) },
		func(a *A, h framework.Handle) ([]framework.Plugin, error) {
			p, err := build(PA(a), h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{p}, nil
		})
}
