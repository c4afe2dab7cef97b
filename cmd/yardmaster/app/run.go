package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"k8s.io/client-go/dynamic/dynamicinformer"
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
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/internal/server"
	"github.com/yardmaster-io/yardmaster/internal/version"
	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/scheduler"
	"github.com/yardmaster-io/yardmaster/scheduler/extender"
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
	// Profiling and ContentionProfiling, when set, replace the file's
	// enableProfiling and enableContentionProfiling (kube-scheduler's
	// --profiling and --contention-profiling).
	Profiling, ContentionProfiling *bool
	// RESTConfig, when set, is used instead of loading a kubeconfig; the
	// file's clientConnection settings still apply to it.
	RESTConfig *rest.Config
	LogLevel   string
	LogFormat  string

	// Secure, when set, serves /healthz, /livez, /readyz, /metrics and
	// /debug/pprof as kube-scheduler's secure port does: HTTPS, with
	// delegated authentication and authorization. NewSecureServing has its
	// defaults (port 10259). /debug/pprof is served there when the
	// configuration's enableProfiling is true, as in kube-scheduler.
	Secure *SecureServing
	// HTTPBindAddress is where the same routes are served over plain HTTP,
	// without authentication (host:port); empty serves nothing there.
	HTTPBindAddress string
	// SchedulingStallTimeout is how long the scheduling loop may be stuck
	// while pods wait before /livez fails (Scheduler.LoopHealthy); 0 leaves
	// that check out.
	SchedulingStallTimeout time.Duration
	// Registry holds the plugins a configuration file may name; nil means
	// the built-in ones (registry.NewInTree). NewCommand sets it to the
	// built-in plugins and those of its WithPlugin options.
	Registry framework.Registry
	// EnableProfiling serves /debug/pprof on the plain HTTP endpoint, unless
	// the configuration says enableProfiling: false. The configuration's
	// enableProfiling (true by default, as in kube-scheduler) is not enough
	// on its own there: that endpoint has no authentication.
	EnableProfiling bool
}

// DefaultSchedulingStallTimeout is --scheduling-stall-timeout's default.
// A cycle takes milliseconds and the loop only waits on the API server
// when a thousand bindings are queued (a few seconds at the default rate
// limit), so five minutes is far past any honest wait and short enough to
// restart a deadlocked process within minutes.
const DefaultSchedulingStallTimeout = 5 * time.Minute

// reportingController is the reportingController of every event written.
const reportingController = "yardmaster"

// eventFlushTimeout bounds how long a stopping daemon keeps writing the
// Scheduled events of pods it bound.
const eventFlushTimeout = 5 * time.Second

// newSchedulerCommand returns a command that runs the scheduler: `yardmaster
// run`, and yardmaster itself, which takes kube-scheduler's command line so
// that a kube-scheduler manifest runs yardmaster with only the image
// changed.
func newSchedulerCommand(use, short string, s *settings) *cobra.Command {
	cmd, sf := newSchedulerCommandFlags(use, short, s.registry)
	sf.kubeSchedulerDefaults = s.kubeSchedulerDefaults
	return cmd
}

// schedulerFlags are where a scheduler command's flags land, for options.
type schedulerFlags struct {
	o      Options
	secure *SecureServing
	// secureFlags are the names of the flags of secure.
	secureFlags []string
	// writeConfigTo and printVersion are kube-scheduler's flags that do
	// their work and exit (kubeflags.go).
	writeConfigTo                  string
	printVersion                   bool
	profiling, contentionProfiling bool
	verbosity                      int
	loggingFormat                  string
	// kubeSchedulerDefaults: the binary runs under kube-scheduler's name
	// (config.Overrides.KubeSchedulerDefaults).
	kubeSchedulerDefaults bool
}

// options returns the Options the command line of cmd asks for.
func (sf *schedulerFlags) options(cmd *cobra.Command) (Options, error) {
	if err := refusedFlagError(cmd.Flags()); err != nil {
		return Options{}, err
	}
	fs := cmd.Flags()
	o := sf.o
	overrides, err := configOverrides(cmd)
	if err != nil {
		return Options{}, err
	}
	o.Overrides = overrides
	o.Overrides.KubeSchedulerDefaults = sf.kubeSchedulerDefaults
	if fs.Changed("profiling") {
		o.Profiling = &sf.profiling
	}
	if fs.Changed("contention-profiling") {
		o.ContentionProfiling = &sf.contentionProfiling
	}
	if serveSecurely(fs, sf.secureFlags) {
		o.Secure = sf.secure
	}
	if fs.Changed("secure-port") && sf.secure.Serving.BindPort == 0 {
		// kube-scheduler's meaning: no HTTPS at all. (Options.Secure with
		// port 0, yardmaster's Go API, picks a free port instead.)
		o.Secure = nil
	}
	if o.LogLevel, o.LogFormat, err = logSettings(fs, sf.verbosity, sf.loggingFormat); err != nil {
		return Options{}, err
	}
	return o, nil
}

// newSchedulerCommandFlags is newSchedulerCommand, and where its flags
// land.
func newSchedulerCommandFlags(use, short string, reg framework.Registry) (*cobra.Command, *schedulerFlags) {
	sf := &schedulerFlags{secure: NewSecureServing()}
	sf.o.Registry = reg
	o := &sf.o
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
	d := config.DefaultWith(reg)
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + ".\n\n" +
			"Settings come from --config (a KubeSchedulerConfiguration file), and flags set on the\n" +
			"command line override the file: flags > file > defaults. kube-scheduler's flags are\n" +
			"accepted with its meaning. /healthz, /livez, /readyz, /metrics and /debug/pprof are\n" +
			"served over HTTPS on --secure-port (10259) with delegated authentication and\n" +
			"authorization, as kube-scheduler serves them; --http-bind-address alone serves them over\n" +
			"plain HTTP instead, without authentication.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := sf.options(cmd)
			if err != nil {
				return err
			}
			if done, err := kubeSchedulerExits(cmd, o, sf.printVersion, sf.writeConfigTo); done {
				return err
			}
			logger, err := newLogger(o.LogLevel, o.LogFormat)
			if err != nil {
				return err
			}
			defer func() { _ = logger.Sync() }()
			setKlogVerbosity(sf.verbosity)
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
	f.SortFlags = false
	f.StringVar(&o.ConfigFile, "config", "", "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)")
	f.StringVar(&o.LogLevel, "log-level", "info", "debug, info, warn or error; when set, overrides --v")
	f.StringVar(&o.LogFormat, "log-format", "", "json or console (default json in a cluster, console elsewhere); when set, overrides --logging-format")
	f.IntVarP(&sf.verbosity, "v", "v", 0, "kube-scheduler's log verbosity: 0 to 3 log at info, 4 and more at debug (--log-level); also the verbosity of client-go's and k8s.io/apiserver's own messages")
	f.StringVar(&sf.loggingFormat, "logging-format", "", "kube-scheduler's log format: text (--log-format console) or json")
	f.StringVar(&o.HTTPBindAddress, "http-bind-address", "", "host:port where /healthz, /livez, /readyz, /metrics and /debug/pprof are served over plain HTTP, "+
		"without authentication; port 0 picks a free one. Given alone it replaces the secure port; with any secure serving, "+
		"authentication or authorization flag set too, both are served")
	f.DurationVar(&o.SchedulingStallTimeout, "scheduling-stall-timeout", DefaultSchedulingStallTimeout, "/livez fails when the scheduling loop has been stuck this long while pods wait "+
		"(a cycle still running, or pods waiting that it has not taken); 0 turns that check off")
	f.BoolVar(&o.EnableProfiling, "enable-profiling", false, "serve /debug/pprof on the plain HTTP endpoint too, unless the configuration sets enableProfiling: false")
	f.BoolVar(&sf.profiling, "profiling", d.EnableProfiling, "serve /debug/pprof on the secure port (enableProfiling)")
	f.BoolVar(&sf.contentionProfiling, "contention-profiling", d.EnableContentionProfiling, "record block and mutex profiles while pprof is served (enableContentionProfiling)")
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
	f.StringVar(&sf.writeConfigTo, "write-config-to", "", "write the effective configuration (the file's, the command line's overrides, every default) to this file and exit, as kube-scheduler does")
	f.BoolVar(&sf.printVersion, "version", false, "print the version and exit")
	addRefusedKubeSchedulerFlags(f)
	sfs := pflag.NewFlagSet("secure serving", pflag.ContinueOnError)
	sfs.SortFlags = false
	sf.secure.AddFlags(sfs)
	sfs.VisitAll(func(fl *pflag.Flag) { sf.secureFlags = append(sf.secureFlags, fl.Name) })
	f.AddFlagSet(sfs)
	return cmd, sf
}

// serveSecurely reports whether the secure port is served: unless the
// plain HTTP endpoint was asked for and no flag of the secure port was
// set. Commands written before the secure port (--http-bind-address alone,
// as the demo and benchmarks pass it) keep one plain endpoint and nothing
// listening on 10259, which two processes on one host would fight over.
func serveSecurely(fs *pflag.FlagSet, secureFlags []string) bool {
	if !fs.Changed("http-bind-address") {
		return true
	}
	return slices.ContainsFunc(secureFlags, fs.Changed)
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
	Metrics *prometheus.Registry
	logger  *zap.Logger
	factory informers.SharedInformerFactory
	// dynamicFactory serves the plugins' custom resources; started with
	// factory, never waited for (a CRD may not be installed).
	dynamicFactory dynamicinformer.DynamicSharedInformerFactory
	broadcaster    events.EventBroadcaster
	host           string
	// leaseClient reads and writes the Lease, with a rate limit of its own.
	leaseClient kubernetes.Interface

	// server is nil when Options.HTTPBindAddress is empty; secure, when
	// Options.Secure is nil.
	server        *server.Server
	secure        *server.SecureServer
	leaderMetrics *metrics.LeaderElection
	// leaderHealth fails /livez when this replica leads but its lease
	// renewals have stopped (a stuck renew loop).
	leaderHealth *leaderelection.HealthzAdaptor
	// loop is the Scheduler, whose loop /livez checks against
	// stallTimeout (when above 0).
	loop         loopChecker
	stallTimeout time.Duration
	// synced is set once the informer caches are; stopping once Run's
	// context is done. /readyz reads both.
	synced, stopping atomic.Bool
}

// registry returns o.Registry, or the built-in plugins when it is nil.
func (o Options) registry() framework.Registry {
	if o.Registry == nil {
		return registry.NewInTree()
	}
	return o.Registry
}

// LoadConfig reads the file named in o (or the defaults) and applies the
// overrides: flags > file > defaults.
func (o Options) LoadConfig() (*config.Config, error) {
	var c *config.Config
	if o.ConfigFile != "" {
		// The flags are applied before the file is validated, as
		// kube-scheduler applies its --leader-elect-* flags.
		var err error
		if c, err = config.LoadWith(o.ConfigFile, o.registry(), o.Overrides); err != nil {
			return nil, err
		}
	} else {
		c = config.DefaultWith(o.registry())
		if err := c.Apply(o.Overrides); err != nil {
			return nil, err
		}
	}
	if o.Profiling != nil {
		c.EnableProfiling = *o.Profiling
	}
	if o.ContentionProfiling != nil {
		c.EnableContentionProfiling = *o.ContentionProfiling
	}
	return c, nil
}

// NewDaemon builds everything `yardmaster run` runs, without starting it.
// A bad configuration fails here, before anything talks to the cluster; so
// does an address that cannot be listened on: NewDaemon already listens
// (HTTPAddr and SecureAddr tell where), and Run, which must follow, closes
// it. With Options.Secure, NewDaemon also reads the
// extension-apiserver-authentication ConfigMap (a failure is tolerated
// unless --authentication-tolerate-lookup-failure=false).
func NewDaemon(o Options, logger *zap.Logger) (*Daemon, error) {
	cfg, err := o.LoadConfig()
	if err != nil {
		return nil, err
	}
	for _, w := range config.FormatProblems(o.ConfigFile, cfg.Warnings, "") {
		logger.Warn("configuration setting ignored, as kube-scheduler ignores it", zap.String("warning", w))
	}
	base := o.RESTConfig
	if base == nil {
		if base, err = loadRESTConfig(cfg.ClientConnection.Kubeconfig); err != nil {
			return nil, err
		}
	}
	restConfig := cfg.ClientConnection.RESTConfig(base)
	restConfig.UserAgent = "yardmaster/" + version.Version
	// The API server's warnings (scheduling.k8s.io/v1beta1 PodGroups are
	// deprecated in v1.40, say) come with every request of the kind:
	// each is logged once.
	restConfig.WarningHandler = &onceWarnings{logger: logger}
	client, err := kubernetes.NewForConfig(limitInFlight(restConfig, maxRequestsInFlight))
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	// Events get their own client, hence their own rate limiter, so a burst
	// of events never delays a Binding.
	eventClient, err := kubernetes.NewForConfig(limitInFlight(restConfig, maxEventRequestsInFlight))
	if err != nil {
		return nil, fmt.Errorf("build event client: %w", err)
	}
	// The Scheduled events have slots of their own, so that they do not
	// wait behind a burst of FailedScheduling events (a pool of pods that
	// fit nowhere tried at once).
	scheduledClient, err := kubernetes.NewForConfig(limitInFlight(restConfig, maxScheduledEventRequestsInFlight))
	if err != nil {
		return nil, fmt.Errorf("build event client: %w", err)
	}
	// So does the Lease, as in kube-scheduler: renewals queued behind a
	// backlog of Bindings would miss renewDeadline and lose the lease.
	leaseClient, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(restConfig), "leader-election"))
	if err != nil {
		return nil, fmt.Errorf("build leader election client: %w", err)
	}
	plainPprof, securePprof := servePprof(o, cfg)
	if (plainPprof || securePprof) && cfg.EnableContentionProfiling {
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

	extenders, err := newExtenders(cfg)
	if err != nil {
		return nil, err
	}
	apis := discoverAPIs(client, logger)
	if err := reportFeatures(reg, apis, logger); err != nil {
		return nil, err
	}
	factory := scheduler.NewInformerFactory(client, apis)
	dynamicFactory, err := newDynamicFactory(restConfig)
	if err != nil {
		return nil, err
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: eventClient.EventsV1()})
	b := binder.New(client, broadcaster.NewRecorder(scheme.Scheme, reportingController), logger)
	sched, err := scheduler.New(scheduler.Options{
		Client:                   client,
		RESTConfig:               restConfig,
		InformerFactory:          factory,
		DynamicInformerFactory:   dynamicFactory,
		Binder:                   b,
		Logger:                   logger,
		Registry:                 cfg.Registry,
		Profiles:                 cfg.Profiles,
		PercentageOfNodesToScore: cfg.PercentageOfNodesToScore,
		Parallelism:              cfg.Parallelism,
		PodInitialBackoff:        cfg.PodInitialBackoff,
		PodMaxBackoff:            cfg.PodMaxBackoff,
		MetricsRegisterer:        reg,
		Extenders:                extenders,
		APIs:                     apis,
	})
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	b.ScheduledEvents = binder.NewScheduledEvents(scheduledClient.EventsV1(), reportingController, reportingController+"-"+host, sched.Backlogged, logger)
	if err := metrics.RegisterScheduledEvents(reg, b.ScheduledEvents); err != nil {
		return nil, fmt.Errorf("register event metrics: %w", err)
	}
	b.FailureEvents = binder.NewFailureEvents(eventClient.EventsV1(), reportingController, reportingController+"-"+host, logger)
	if err := metrics.RegisterFailureEvents(reg, b.FailureEvents); err != nil {
		return nil, fmt.Errorf("register event metrics: %w", err)
	}
	d := &Daemon{
		Config: cfg, Scheduler: sched, Binder: b, Client: client, Metrics: reg, logger: logger,
		factory: factory, dynamicFactory: dynamicFactory, broadcaster: broadcaster, host: restConfig.Host,
		leaseClient:   leaseClient,
		leaderMetrics: leaderMetrics,
		leaderHealth:  leaderelection.NewLeaderHealthzAdaptor(leaderHealthTolerance),
		loop:          sched,
		stallTimeout:  o.SchedulingStallTimeout,
	}
	// Last: they listen, and nothing after them may fail.
	if o.HTTPBindAddress != "" {
		if d.server, err = server.New(d.routes(plainPprof, o.HTTPBindAddress)); err != nil {
			return nil, err
		}
	}
	if o.Secure != nil {
		if d.secure, err = d.newSecureServer(o.Secure, cfg.ClientConnection.Kubeconfig, securePprof); err != nil {
			if d.server != nil {
				_ = d.server.Close()
			}
			return nil, err
		}
	}
	return d, nil
}

// Run serves the HTTP endpoint, starts the informers, waits for their
// caches (with delayCacheUntilActive, only once this replica leads), and
// schedules until ctx is done (or, with leader election, while this
// replica leads); then it lets in-flight bindings finish and stops
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
		zap.String("https", d.SecureAddr()), zap.String("http", d.HTTPAddr()))
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
	defer d.Scheduler.Close()
	defer d.factory.Shutdown()
	defer d.dynamicFactory.Shutdown()
	defer stopBackground() // first: the two above wait for it
	d.broadcaster.StartRecordingToSink(background.Done())
	d.Binder.ScheduledEvents.Start()
	d.Binder.FailureEvents.Start()
	defer func() {
		flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventFlushTimeout)
		defer cancel()
		var wg sync.WaitGroup
		wg.Go(func() { d.Binder.ScheduledEvents.Stop(flush) })
		wg.Go(func() { d.Binder.FailureEvents.Stop(flush) })
		wg.Wait()
	}()
	if !d.delayCaches() {
		if err := d.fillCaches(ctx, background); err != nil || ctx.Err() != nil {
			return err
		}
	}
	if !d.Config.LeaderElection.LeaderElect {
		d.schedule(ctx)
		return nil
	}
	return d.runWithLeaderElection(ctx, background)
}

// delayCaches reports whether the informers start only once this replica
// leads (delayCacheUntilActive, which needs leader election).
func (d *Daemon) delayCaches() bool {
	return d.Config.DelayCacheUntilActive && d.Config.LeaderElection.LeaderElect
}

// fillCaches starts the informers, which run until background ends, and
// waits until their caches are synced and their handlers have seen every
// object, or ctx ends (then it returns nil: the caller checks ctx).
func (d *Daemon) fillCaches(ctx, background context.Context) error {
	d.factory.Start(background.Done())
	d.dynamicFactory.Start(background.Done())
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
	return nil
}

// newExtenders returns the configuration's extenders in the order the
// scheduler calls them.
func newExtenders(cfg *config.Config) ([]*extender.Extender, error) {
	var out []*extender.Extender
	for _, c := range cfg.Extenders {
		e, err := extender.New(c)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return scheduler.OrderExtenders(out), nil
}

// servePprof reports whether /debug/pprof is served on the plain HTTP
// endpoint and on the secure port. On the secure port it follows the
// configuration's enableProfiling, as in kube-scheduler: the authorizer
// guards it. On the plain endpoint, which has no authentication, it also
// needs --enable-profiling (see Options.EnableProfiling). Contention
// profiling costs on every blocking event, so it follows: only a served
// pprof turns it on.
func servePprof(o Options, cfg *config.Config) (plain, secure bool) {
	plain = o.HTTPBindAddress != "" && o.EnableProfiling && cfg.EnableProfiling
	secure = o.Secure != nil && cfg.EnableProfiling
	return plain, secure
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

// onceWarnings logs each distinct warning the API server sends once, at
// Warn (client-go's default logs every one).
type onceWarnings struct {
	logger *zap.Logger
	seen   sync.Map
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *onceWarnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	if _, dup := w.seen.LoadOrStore(text, struct{}{}); dup {
		return
	}
	w.logger.Warn("the API server warns", zap.String("warning", text))
}
