package registry

import (
	"fmt"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// networkRegistrations are the plugins that read live metrics rather than
// the snapshot alone, sharing pool's queries. None is in DefaultPlugins: they need a Prometheus
// address, so a profile enables them by name.
func networkRegistrations(pool *prommetric.Pool) []framework.Registration {
	return []framework.Registration{
		{
			Name: networktraffic.Name,
			// preFilter and filter only act with filterAbove > 0; preScore
			// pins the sample, score works without it.
			Points: []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
			// Empty, not defaulted: SetDefaults (run by the configuration
			// package after decoding, and by New) can then tell a
			// deprecated field from a default in its new name.
			NewArgs: func() any { return &framework.NetworkTrafficArgs{} },
			ValidateArgs: func(a any) error {
				args, ok := a.(*framework.NetworkTrafficArgs)
				if !ok {
					return fmt.Errorf("args of type %T, want NetworkTrafficArgs", a)
				}
				c := *args
				c.SetDefaults()
				return framework.ValidateNetworkTrafficArgs(&c)
			},
			New: func(a any, h framework.Handle) ([]framework.Plugin, error) {
				args, ok := a.(*framework.NetworkTrafficArgs)
				if !ok {
					return nil, fmt.Errorf("args of type %T, want NetworkTrafficArgs", a)
				}
				p, err := networktraffic.New(args, h, networktraffic.WithPool(pool))
				if err != nil {
					return nil, err
				}
				return []framework.Plugin{p}, nil
			},
		},
	}
}
