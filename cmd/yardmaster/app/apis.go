package app

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/scheduler"
)

// discoveryTimeout bounds the start's one look at the API server's
// discovery.
const discoveryTimeout = 30 * time.Second

// discoverAPIs asks the API server which optional APIs it serves. A server
// that cannot be asked (not up yet, unreachable) is taken to serve all of
// them, as the newest Kubernetes does, and the log says so: the informers
// then wait for it as they would anyway. A group that fails discovery
// alone (an aggregated API down) is taken as not served.
func discoverAPIs(client kubernetes.Interface, logger *zap.Logger) scheduler.ServedAPIs {
	ctx, cancel := context.WithTimeout(context.Background(), discoveryTimeout)
	defer cancel()
	apis, err := scheduler.DiscoverAPIs(ctx, client.Discovery())
	if apis == nil {
		logger.Warn("could not read the API server's discovery: assuming it serves every API yardmaster reads", zap.Error(err))
		return nil
	}
	if err != nil {
		logger.Warn("part of the API server's discovery failed: the APIs of those groups are taken as not served", zap.Error(err))
	}
	return apis
}

// reportFeatures logs each feature apis turns off, once, and exports
// yardmaster_feature_enabled for all of them.
func reportFeatures(reg prometheus.Registerer, apis scheduler.ServedAPIs, logger *zap.Logger) error {
	enabled := make(map[string]bool, len(scheduler.Features))
	for _, f := range scheduler.Features {
		on := f.Enabled(apis)
		enabled[f.Name] = on
		if !on {
			logger.Info("feature turned off", zap.String("feature", f.Name),
				zap.String("reason", "the API server does not serve "+f.Missing(apis)),
				zap.String("effect", f.Without))
		}
	}
	return metrics.RegisterFeatures(reg, enabled)
}
