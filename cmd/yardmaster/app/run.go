package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/internal/version"
	"github.com/yardmaster-io/yardmaster/scheduler"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// Options are the settings of `yardmaster run`.
type Options struct {
	// ConfigFile is a KubeSchedulerConfiguration file; flags set on the
	// command line override it.
	ConfigFile string
	Kubeconfig string
	// RESTConfig, when set, is used instead of loading Kubeconfig.
	RESTConfig               *rest.Config
	SchedulerName            string
	LogLevel                 string
	LogFormat                string
	QPS                      float32
	Burst                    int
	ContentType              string
	Parallelism              int
	PercentageOfNodesToScore int32
	PodInitialBackoff        time.Duration
	PodMaxBackoff            time.Duration
}

// DefaultOptions returns the flag defaults.
func DefaultOptions() Options {
	return Options{
		SchedulerName:     "yardmaster",
		LogLevel:          "info",
		QPS:               50,
		Burst:             100,
		ContentType:       "application/vnd.kubernetes.protobuf",
		Parallelism:       16,
		PodInitialBackoff: time.Second,
		PodMaxBackoff:     10 * time.Second,
	}
}

func newRunCommand() *cobra.Command {
	o := DefaultOptions()
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the scheduler",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(o.LogLevel, o.LogFormat)
			if err != nil {
				return err
			}
			defer func() { _ = logger.Sync() }()
			d, err := NewDaemon(o, logger)
			if err != nil {
				return err
			}
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			return d.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to a kubeconfig; default $KUBECONFIG, then the in-cluster config")
	f.StringVar(&o.SchedulerName, "scheduler-name", o.SchedulerName, "schedule pods whose spec.schedulerName is this")
	f.StringVar(&o.LogLevel, "log-level", o.LogLevel, "debug, info, warn or error")
	f.StringVar(&o.LogFormat, "log-format", "", "json or console (default json in a cluster, console elsewhere)")
	f.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "queries per second to the API server")
	f.IntVar(&o.Burst, "kube-api-burst", o.Burst, "burst of queries to the API server")
	f.StringVar(&o.ContentType, "kube-api-content-type", o.ContentType, "content type of requests to the API server")
	f.IntVar(&o.Parallelism, "parallelism", o.Parallelism, "goroutines that filter and score nodes")
	f.Int32Var(&o.PercentageOfNodesToScore, "percentage-of-nodes-to-score", 0, "percent of nodes to find feasible before scoring (0: adaptive)")
	f.DurationVar(&o.PodInitialBackoff, "pod-initial-backoff", o.PodInitialBackoff, "backoff after a pod's first failed attempt")
	f.DurationVar(&o.PodMaxBackoff, "pod-max-backoff", o.PodMaxBackoff, "longest backoff between a pod's attempts")
	return cmd
}

// Daemon is a wired yardmaster process: clients, informers, event
// recording, binder and scheduler.
type Daemon struct {
	Scheduler   *scheduler.Scheduler
	Binder      *binder.Binder
	Client      kubernetes.Interface
	logger      *zap.Logger
	factory     informers.SharedInformerFactory
	broadcaster events.EventBroadcasterAdapter
	host        string
	name        string
}

// NewDaemon builds everything `yardmaster run` runs, without starting it.
func NewDaemon(o Options, logger *zap.Logger) (*Daemon, error) {
	if o.PercentageOfNodesToScore < 0 || o.PercentageOfNodesToScore > 100 {
		return nil, fmt.Errorf("--percentage-of-nodes-to-score: %d is not within 0..100", o.PercentageOfNodesToScore)
	}
	restConfig := o.RESTConfig
	if restConfig == nil {
		var err error
		if restConfig, err = loadRESTConfig(o.Kubeconfig); err != nil {
			return nil, err
		}
	}
	restConfig = rest.CopyConfig(restConfig)
	restConfig.QPS = o.QPS
	restConfig.Burst = o.Burst
	restConfig.ContentType = o.ContentType
	restConfig.UserAgent = "yardmaster/" + version.Version
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	// Events get their own client, hence their own rate limiter, so a burst
	// of events never delays a Binding.
	eventClient, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("build event client: %w", err)
	}

	factory := scheduler.NewInformerFactory(client)
	broadcaster := events.NewEventBroadcasterAdapter(eventClient)
	b := binder.New(client, broadcaster.NewRecorder("yardmaster"), logger)
	sched, err := scheduler.New(scheduler.Options{
		Client:                   client,
		InformerFactory:          factory,
		Binder:                   b,
		Logger:                   logger,
		Registry:                 registry.NewInTree(),
		Profiles:                 []registry.Profile{registry.DefaultProfile(o.SchedulerName)},
		PercentageOfNodesToScore: o.PercentageOfNodesToScore,
		Parallelism:              o.Parallelism,
		PodInitialBackoff:        o.PodInitialBackoff,
		PodMaxBackoff:            o.PodMaxBackoff,
	})
	if err != nil {
		return nil, err
	}
	return &Daemon{
		Scheduler: sched, Binder: b, Client: client, logger: logger,
		factory: factory, broadcaster: broadcaster, host: restConfig.Host, name: o.SchedulerName,
	}, nil
}

// Run starts the informers, waits for their caches, and schedules until ctx
// is done; then it lets in-flight bindings finish and stops everything it
// started.
func (d *Daemon) Run(ctx context.Context) error {
	d.logger.Info("starting yardmaster", zap.String("version", version.String()),
		zap.String("schedulerName", d.name), zap.String("apiServer", d.host))
	d.broadcaster.StartRecordingToSink(ctx.Done())
	defer d.broadcaster.Shutdown()
	d.factory.Start(ctx.Done())
	defer d.factory.Shutdown()
	for typ, ok := range d.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("informer cache for %v did not sync", typ)
		}
	}
	d.logger.Info("informer caches synced")
	d.Scheduler.Run(ctx)
	d.Binder.Wait()
	return nil
}

// loadRESTConfig reads the kubeconfig named by the flag, else $KUBECONFIG,
// else the in-cluster service account.
func loadRESTConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	switch {
	case path != "":
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		// Default rules read $KUBECONFIG (a path list).
	default:
		cfg, err := rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) {
			return nil, errors.New("no kubeconfig: pass --kubeconfig or set KUBECONFIG when running outside a cluster")
		}
		if err != nil {
			return nil, fmt.Errorf("in-cluster config: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return cfg, nil
}
