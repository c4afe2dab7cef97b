package loadaware

import (
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// Registrations are the load-aware plugins', for a framework.Registry:
// they share pool's queries with each other and with NetworkTraffic. None
// is in a default profile: they need a Prometheus address.
func Registrations(pool *prommetric.Pool) []framework.Registration {
	opt := WithPool(pool)
	return []framework.Registration{
		typedRegistration(PrometheusScoreName, []string{framework.PointPreScore, framework.PointScore},
			ValidatePrometheusScoreArgs,
			func(a *PrometheusScoreArgs, h framework.Handle) (framework.Plugin, error) {
				return NewPrometheusScore(a, h, opt)
			}),
		typedRegistration(TargetLoadPackingName, []string{framework.PointPreScore, framework.PointScore},
			ValidateTargetLoadPackingArgs,
			func(a *TargetLoadPackingArgs, h framework.Handle) (framework.Plugin, error) {
				return NewTargetLoadPacking(a, h, opt)
			}),
		typedRegistration(LoadVariationRiskBalancingName, []string{framework.PointPreScore, framework.PointScore},
			ValidateLoadVariationRiskBalancingArgs,
			func(a *LoadVariationRiskBalancingArgs, h framework.Handle) (framework.Plugin, error) {
				return NewLoadVariationRiskBalancing(a, h, opt)
			}),
		typedRegistration(LoadHotSpotName, []string{framework.PointPreFilter, framework.PointFilter},
			ValidateLoadHotSpotArgs,
			func(a *LoadHotSpotArgs, h framework.Handle) (framework.Plugin, error) {
				return NewLoadHotSpot(a, h, opt)
			}),
	}
}

// typedRegistration registers a load-aware plugin: NewArgs is an empty
// args value (SetDefaults, run after decoding, sees what the file wrote),
// validation works on a defaulted copy.
func typedRegistration[A any](name string, points []string, validate func(*A) error, build func(*A, framework.Handle) (framework.Plugin, error)) framework.Registration {
	return framework.NewRegistration(name, points, nil, validate,
		func(a *A, h framework.Handle) ([]framework.Plugin, error) {
			p, err := build(a, h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{p}, nil
		})
}
