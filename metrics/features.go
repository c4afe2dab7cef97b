package metrics

import "github.com/prometheus/client_golang/prometheus"

// RegisterFeatures registers yardmaster_feature_enabled{feature}: 1 for
// each feature the API server serves what it needs, 0 for one turned off
// (decided once, at start, from the server's discovery).
func RegisterFeatures(reg prometheus.Registerer, enabled map[string]bool) error {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "yardmaster_feature_enabled",
		Help: "Whether a feature that needs an optional API is on (1) or turned off because the API server does not serve that API (0).",
	}, []string{"feature"})
	for name, on := range enabled {
		v := 0.0
		if on {
			v = 1
		}
		g.WithLabelValues(name).Set(v)
	}
	return reg.Register(g)
}
