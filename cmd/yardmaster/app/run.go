package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/internal/server"
	"github.com/yardmaster-io/yardmaster/internal/version"
	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/scheduler"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// Options are the settings of `yardmaster run`: a configuration file and
// what the command line sets over it.
type Options struct {
	// ConfigFile is a KubeSchedulerConfiguration file; empty means the
	// defaults.
	ConfigFile string
	// Overrides are applied over the file (flags set on the command line).
	Overrides config.Overrides
	// RESTConfig, when set, is used instead of loading a kubeconfig; the
	// file's clientConnection settings still apply to it.
	RESTConfig *rest.Config
	LogLevel   string
	LogFormat  string

	// HTTPBindAddress is where /healthz, /livez, /readyz, /metrics and
	// /debug/pprof are served (host:port); empty serves nothing.
	HTTPBindAddress string
	// TLSCertFile and TLSKeyFile, both or neither, serve that endpoint over
	// HTTPS.
	TLSCertFile, TLSKeyFile string
	// EnableProfiling serves /debug/pprof on that endpoint, unless the
	// configuration says enableProfiling: false. The configuration's
	// enableProfiling (true by default, as in kube-scheduler) is not enough
	// on its own: unlike kube-scheduler's secure port, the endpoint has no
	// authentication.
	EnableProfiling bool
}

// DefaultHTTPBindAddress is --http-bind-address's default:
// kube-scheduler's old insecure port, on every interface, for the kubelet's
// probes and Prometheus.
const DefaultHTTPBindAddress = "0.0.0.0:10251"

// reportingController is the reportingController of every event written.
const reportingController = "yardmaster"

// eventFlushTimeout bounds how long a stopping daemon keeps writing the
// Scheduled events of pods it bound.
const eventFlushTimeout = 5 * time.Second

func newRunCommand() *cobra.Command {
	o := Options{}
	// Flag variables only carry values: configOverrides reads the flags
	// that were set on the command line, so an unset flag never hides the
	// file's value.
	var (
		kubeconfig, schedulerName, contentType    string
		qps                                       float32
		burst, parallelism                        int
		percentage                                int32
		initialBackoff, maxBackoff                time.Duration
		leaderElect                               bool
		leaseDuration, renewDeadline, retryPeriod time.Duration
		resourceLock, resourceName, resourceNS    string
	)
	d := config.Default()
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the scheduler",
		Long: "Run the scheduler. Settings come from --config (a KubeSchedulerConfiguration file),\n" +
			"and flags set on the command line override the file: flags > file > defaults.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			overrides, err := configOverrides(cmd)
			if err != nil {
				return err
			}
			o.Overrides = overrides
			logger, err := newLogger(o.LogLevel, o.LogFormat)
			if err != nil {
				return err
			}
			defer func() { _ = logger.Sync() }()
			klog.SetLogger(newKlogLogger(logger))
			daemon, err := NewDaemon(o, logger)
			if err != nil {
				return err
			}
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			return daemon.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.ConfigFile, "config", "", "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1 or v1beta3)")
	f.StringVar(&o.LogLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&o.LogFormat, "log-format", "", "json or console (default json in a cluster, console elsewhere)")
	f.StringVar(&o.HTTPBindAddress, "http-bind-address", DefaultHTTPBindAddress, "host:port of /healthz, /livez, /readyz, /metrics and /debug/pprof; empty serves none of them")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serve the HTTP endpoint over HTTPS with this certificate (PEM; with --tls-private-key-file)")
	f.StringVar(&o.TLSKeyFile, "tls-private-key-file", "", "private key (PEM) of --tls-cert-file")
	f.BoolVar(&o.EnableProfiling, "enable-profiling", false, "serve /debug/pprof on the HTTP endpoint, unless the configuration sets enableProfiling: false")
	f.StringVar(&kubeconfig, "kubeconfig", "", "path to a kubeconfig; default $KUBECONFIG, then the in-cluster config (clientConnection.kubeconfig)")
	f.StringVar(&schedulerName, "scheduler-name", d.Profiles[0].SchedulerName, "schedule pods whose spec.schedulerName is this; renames the only profile of the file")
	f.Float32Var(&qps, "kube-api-qps", d.ClientConnection.QPS, "queries per second to the API server (clientConnection.qps)")
	f.IntVar(&burst, "kube-api-burst", d.ClientConnection.Burst, "burst of queries to the API server (clientConnection.burst)")
	f.StringVar(&contentType, "kube-api-content-type", d.ClientConnection.ContentType, "content type of requests to the API server (clientConnection.contentType)")
	f.IntVar(&parallelism, "parallelism", d.Parallelism, "goroutines that filter and score nodes (parallelism)")
	f.Int32Var(&percentage, "percentage-of-nodes-to-score", d.PercentageOfNodesToScore, "percent of nodes to find feasible before scoring; 0 is adaptive (percentageOfNodesToScore)")
	f.DurationVar(&initialBackoff, "pod-initial-backoff", d.PodInitialBackoff, "backoff after a pod's first failed attempt (podInitialBackoffSeconds)")
	f.DurationVar(&maxBackoff, "pod-max-backoff", d.PodMaxBackoff, "longest backoff between a pod's attempts (podMaxBackoffSeconds)")
	f.BoolVar(&leaderElect, "leader-elect", d.LeaderElection.LeaderElect, "elect a leader among replicas through a Lease (leaderElection.leaderElect)")
	f.DurationVar(&leaseDuration, "leader-elect-lease-duration", d.LeaderElection.LeaseDuration, "leaderElection.leaseDuration")
	f.DurationVar(&renewDeadline, "leader-elect-renew-deadline", d.LeaderElection.RenewDeadline, "leaderElection.renewDeadline")
	f.DurationVar(&retryPeriod, "leader-elect-retry-period", d.LeaderElection.RetryPeriod, "leaderElection.retryPeriod")
	f.StringVar(&resourceLock, "leader-elect-resource-lock", d.LeaderElection.ResourceLock, "leaderElection.resourceLock (only leases)")
	f.StringVar(&resourceName, "leader-elect-resource-name", "", "leaderElection.resourceName (default: the first profile's schedulerName)")
	f.StringVar(&resourceNS, "leader-elect-resource-namespace", d.LeaderElection.ResourceNamespace, "leaderElection.resourceNamespace")
	return cmd
}

// Daemon is a wired yardmaster process: clients, informers, event
// recording, binder, scheduler, metrics and the HTTP endpoint.
type Daemon struct {
	Config    *config.Config
	Scheduler *scheduler.Scheduler
	Binder    *binder.Binder
	Client    kubernetes.Interface
	// Metrics is the registry /metrics serves: the scheduler's and its
	// plugins' metrics, leader election, and the Go and process collectors.
	Metrics     *prometheus.Registry
	logger      *zap.Logger
	factory     informers.SharedInformerFactory
	broadcaster events.EventBroadcaster
	host        string
	// leaseClient reads and writes the Lease, with a rate limit of its own.
	leaseClient kubernetes.Interface

	// server is nil when Options.HTTPBindAddress is empty.
	server        *server.Server
	leaderMetrics *metrics.LeaderElection
	// leaderHealth fails /livez when this replica leads but its lease
	// renewals have stopped (a stuck renew loop).
	leaderHealth *leaderelection.HealthzAdaptor
	// synced is set once the informer caches are; stopping once Run's
	// context is done. /readyz reads both.
	synced, stopping atomic.Bool
}

// LoadConfig reads the file named in o (or the defaults) and applies the
// overrides: flags > file > defaults.
func (o Options) LoadConfig() (*config.Config, error) {
	c := config.Default()
	if o.ConfigFile != "" {
		var err error
		if c, err = config.Load(o.ConfigFile); err != nil {
			return nil, err
		}
	}
	if err := c.Apply(o.Overrides); err != nil {
		return nil, err
	}
	return c, nil
}

// NewDaemon builds everything `yardmaster run` runs, without starting it.
// A bad configuration fails here, before anything talks to the cluster; so
// does an HTTP address that cannot be listened on: with one, NewDaemon
// already listens (HTTPAddr tells where), and Run, which must follow,
// closes it.
func NewDaemon(o Options, logger *zap.Logger) (*Daemon, error) {
	cfg, err := o.LoadConfig()
	if err != nil {
		return nil, err
	}
	base := o.RESTConfig
	if base == nil {
		if base, err = loadRESTConfig(cfg.ClientConnection.Kubeconfig); err != nil {
			return nil, err
		}
	}
	restConfig := cfg.ClientConnection.RESTConfig(base)
	restConfig.UserAgent = "yardmaster/" + version.Version
	client, err := kubernetes.NewForConfig(limitInFlight(restConfig, maxRequestsInFlight))
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	// Events get their own client, hence their own rate limiter, so a burst
	// of events never delays a Binding.
	eventClient, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("build event client: %w", err)
	}
	// So does the Lease, as in kube-scheduler: renewals queued behind a
	// backlog of Bindings would miss renewDeadline and lose the lease.
	leaseClient, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(restConfig), "leader-election"))
	if err != nil {
		return nil, fmt.Errorf("build leader election client: %w", err)
	}
	profiling := servePprof(o, cfg)
	if profiling && cfg.EnableContentionProfiling {
		runtime.SetBlockProfileRate(1)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("register Go metrics: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("register process metrics: %w", err)
	}
	leaderMetrics := metrics.NewLeaderElection()
	if err := leaderMetrics.Register(reg); err != nil {
		return nil, fmt.Errorf("register leader election metrics: %w", err)
	}

	factory := scheduler.NewInformerFactory(client)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: eventClient.EventsV1()})
	b := binder.New(client, broadcaster.NewRecorder(scheme.Scheme, reportingController), logger)
	sched, err := scheduler.New(scheduler.Options{
		Client:                   client,
		InformerFactory:          factory,
		Binder:                   b,
		Logger:                   logger,
		Registry:                 registry.NewInTree(),
		Profiles:                 cfg.Profiles,
		PercentageOfNodesToScore: cfg.PercentageOfNodesToScore,
		Parallelism:              cfg.Parallelism,
		PodInitialBackoff:        cfg.PodInitialBackoff,
		PodMaxBackoff:            cfg.PodMaxBackoff,
		MetricsRegisterer:        reg,
	})
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	b.ScheduledEvents = binder.NewScheduledEvents(eventClient.EventsV1(), reportingController, reportingController+"-"+host, sched.Backlogged, logger)
	if err := metrics.RegisterScheduledEvents(reg, b.ScheduledEvents); err != nil {
		return nil, fmt.Errorf("register event metrics: %w", err)
	}
	d := &Daemon{
		Config: cfg, Scheduler: sched, Binder: b, Client: client, Metrics: reg, logger: logger,
		factory: factory, broadcaster: broadcaster, host: restConfig.Host,
		leaseClient:   leaseClient,
		leaderMetrics: leaderMetrics,
		leaderHealth:  leaderelection.NewLeaderHealthzAdaptor(leaderHealthTolerance),
	}
	// Last: it listens, and nothing after it may fail.
	if o.HTTPBindAddress != "" {
		if d.server, err = d.newServer(o, profiling); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Run serves the HTTP endpoint, starts the informers, waits for their
// caches, and schedules until ctx is done (or, with leader election, while
// this replica leads); then it lets in-flight bindings finish and stops
// everything it started. It returns ErrLostLease when this replica stopped
// leading before ctx was done.
func (d *Daemon) Run(ctx context.Context) error {
	names := make([]string, len(d.Config.Profiles))
	for i, p := range d.Config.Profiles {
		names[i] = p.SchedulerName
	}
	d.logger.Info("starting yardmaster", zap.String("version", version.String()),
		zap.Strings("profiles", names), zap.String("apiServer", d.host),
		zap.Bool("leaderElect", d.Config.LeaderElection.LeaderElect),
		zap.String("http", d.HTTPAddr()))
	stopServing := d.serve()
	defer stopServing()
	stopReady := context.AfterFunc(ctx, func() { d.stopping.Store(true) })
	defer stopReady()

	// Informers and event recording outlive ctx until Run returns: the
	// bindings a shutdown lets finish are still confirmed and reported.
	// They must end with Run, also when the lease is lost and ctx is not
	// done, or factory.Shutdown would wait for them forever.
	background, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	defer d.broadcaster.Shutdown()
	defer d.factory.Shutdown()
	defer stopBackground() // first: the two above wait for it
	d.broadcaster.StartRecordingToSink(background.Done())
	d.Binder.ScheduledEvents.Start()
	defer func() {
		flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventFlushTimeout)
		defer cancel()
		d.Binder.ScheduledEvents.Stop(flush)
	}()
	d.factory.Start(background.Done())
	for typ, ok := range d.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("informer cache for %v did not sync", typ)
		}
	}
	if !d.Scheduler.WaitForHandlersSync(ctx) {
		return nil // ctx ended while waiting
	}
	d.synced.Store(true)
	d.logger.Info("informer caches synced")

	if !d.Config.LeaderElection.LeaderElect {
		d.schedule(ctx)
		return nil
	}
	return d.runWithLeaderElection(ctx)
}

// servePprof reports whether /debug/pprof is served: only with
// --enable-profiling, and only when the configuration does not turn
// profiling off (see Options.EnableProfiling). Contention profiling costs
// on every blocking event, so it follows: only a served pprof turns it on.
func servePprof(o Options, cfg *config.Config) bool {
	return o.HTTPBindAddress != "" && o.EnableProfiling && cfg.EnableProfiling
}

// schedule runs the scheduling loop until ctx is done and drains what it
// started.
func (d *Daemon) schedule(ctx context.Context) {
	d.Scheduler.Run(ctx)
	d.Binder.Wait()
}

// loadRESTConfig reads the kubeconfig at path, else $KUBECONFIG, else the
// in-cluster service account.
func loadRESTConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	switch {
	case path != "":
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		// The default rules read $KUBECONFIG (a path list).
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
