package networktraffic

import (
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// Registration is NetworkTraffic's, for a framework.Registry, its queries
// shared through pool with the other metric plugins. It reads live metrics
// rather than the snapshot alone, and is in no default profile: it needs a
// Prometheus address, so a profile enables it by name.
func Registration(pool *prommetric.Pool) framework.Registration {
	return framework.NewRegistration(Name,
		// preFilter and filter only act with filterAbove > 0; preScore
		// pins the sample, score works without it.
		[]string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		// Empty, not defaulted (nil defaults): SetDefaults (run by the
		// configuration package after decoding, and by New) can then tell
		// a deprecated field from a default in its new name.
		nil,
		ValidateArgs,
		func(args *Args, h framework.Handle) ([]framework.Plugin, error) {
			p, err := New(args, h, WithPool(pool))
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{p}, nil
		})
}
