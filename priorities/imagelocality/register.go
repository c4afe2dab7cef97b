package imagelocality

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is ImageLocality's, for a framework.Registry.
// kube-scheduler's ImageLocality is a Score plugin only; yardmaster's
// normalizes the pod's image names once per cycle in a PreScore step
// (Score works without it).
func Registration() framework.Registration {
	return framework.Registration{
		Name:   Name,
		Points: []string{framework.PointScore},
		Steps:  map[string]string{framework.PointPreScore: framework.PointScore},
		New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
			p, err := NewScorer(h)
			if err != nil {
				return nil, err
			}
			return []framework.Plugin{p}, nil
		},
	}
}
