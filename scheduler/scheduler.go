// Package scheduler runs yardmaster's scheduling loop.
//
// One goroutine pops pods from the queue and runs a cycle per pod:
//
//	pop → snapshot → PreFilter → Filter (parallel, stop once enough nodes
//	are feasible) → PreScore → Score (parallel) → NormalizeScore → weighted
//	sum → pick the best node (random among ties) → assume → bind (async)
//
// The cycle itself makes no API call: it reads the snapshot the cache gave
// it, assumes the pod on the chosen node in the cache so the next cycle sees
// the capacity taken, and hands the Binding to a goroutine. A failed bind
// forgets the assumption and requeues the pod. Events and status patches go
// out asynchronously too, so a cycle never waits on the API server; so do
// the evictions of a preemption (preemption.go).
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1beta1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
	"github.com/yardmaster-io/yardmaster/scheduler/extender"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// Defaults shared with kube-scheduler.
const (
	// minFeasibleNodesToFind is the fewest nodes a cycle scores when the
	// cluster has that many.
	minFeasibleNodesToFind = 100
	// minFeasibleNodesPercentageToFind is the floor of the adaptive
	// percentage of nodes to score.
	minFeasibleNodesPercentageToFind = 5
	// DefaultBindGracePeriod is how long Run waits for in-flight binds
	// after it stops popping.
	DefaultBindGracePeriod = 10 * time.Second
)

// TerminationGracePeriod is the termination grace period a Deployment of
// yardmaster must give it (terminationGracePeriodSeconds): a SIGTERM ends
// the process, its Lease released, within it even when the API server no
// longer answers. The shutdown takes at most, one after the other:
//
//	in-flight bindings       DefaultBindGracePeriod            10 s
//	status patches           binder.StatusDrainTimeout          2 s
//	release of the Lease     renewDeadline (client-go's bound) 10 s by default
//	queued Scheduled events  the daemon's event flush           5 s
//	HTTP requests in flight  the server's shutdown              5 s
//
// 32 s with the default renewDeadline (the Lease is released by 22 s),
// which leaves 3 s for the informers to stop; a longer renewDeadline needs
// as much more.
const TerminationGracePeriod = 35 * time.Second

// Options configure a Scheduler.
type Options struct {
	Client kubernetes.Interface
	// RESTConfig is what Client was built from; plugins get a copy
	// (Handle.KubeConfig). Nil is allowed.
	RESTConfig      *rest.Config
	InformerFactory informers.SharedInformerFactory
	// DynamicInformerFactory serves the plugins' custom resources
	// (framework.ResourceOf); the caller starts it with InformerFactory,
	// and need not wait for it. Nil: plugins get none, and no custom
	// resource is watched.
	DynamicInformerFactory dynamicinformer.DynamicSharedInformerFactory
	Binder                 *binder.Binder
	Logger                 *zap.Logger
	Clock                  clock.WithTicker
	Registry               framework.Registry
	Profiles               []framework.Profile
	// MetricsRegisterer receives the scheduler's metrics (kube-scheduler's
	// names, see package metrics) and the plugins'; nil means a private
	// registry. Two schedulers cannot share one.
	MetricsRegisterer prometheus.Registerer

	// PercentageOfNodesToScore: 0 means adaptive (kube-scheduler's formula).
	PercentageOfNodesToScore int32
	// Parallelism bounds the goroutines that filter and score nodes.
	Parallelism       int
	PodInitialBackoff time.Duration
	PodMaxBackoff     time.Duration
	// MaxUnschedulableStay bounds how long an unschedulable pod waits for a
	// cluster event before it is retried anyway.
	MaxUnschedulableStay time.Duration
	BindGracePeriod      time.Duration
	// Extenders are the configuration's HTTP extenders, in the order they
	// are called (OrderExtenders).
	Extenders []*extender.Extender
	// APIs are the optional resources the API server serves (DiscoverAPIs),
	// as InformerFactory was built over; nil means all of them.
	APIs ServedAPIs
}

// Scheduler places pods whose spec.schedulerName names one of its profiles.
type Scheduler struct {
	restConfig *rest.Config
	client     kubernetes.Interface
	logger     *zap.Logger
	clock      clock.WithTicker
	binder     *binder.Binder
	Cache      *cache.Cache
	Queue      *queue.PriorityQueue
	profiles   map[string]*profile
	// extenders are called after the plugins (extenders.go).
	extenders []*extender.Extender
	// handlers are the informer event handlers, for WaitForHandlersSync.
	handlers []toolscache.ResourceEventHandlerRegistration

	snapshot                 *cache.Snapshot
	parallelizer             framework.Parallelizer
	percentageOfNodesToScore int32
	bindGracePeriod          time.Duration
	informerFactory          informers.SharedInformerFactory
	dynamicFactory           dynamicinformer.DynamicSharedInformerFactory
	registerer               prometheus.Registerer
	metrics                  *metrics.Metrics
	// background are the plugins with work of their own (BackgroundPlugin).
	background []framework.BackgroundPlugin

	// bindCtx is the parent of every Binding's context. It outlives Run, so
	// that a shutdown lets in-flight bindings finish; Abort cancels it.
	bindCtx    context.Context
	abortBinds context.CancelFunc

	// cycleMu is held through a cycle, from the snapshot to the hand-off
	// to the binding cycle, and through an explanation (explain.go), which
	// uses the same snapshot, buffers and plugin state. Taken before any
	// other lock of the scheduler.
	cycleMu sync.Mutex
	// Owned by the scheduling goroutine (or Explain) under cycleMu.
	nextStartNodeIndex int
	rng                *rand.Rand
	statusBuf          []rejection
	totalsBuf          []int64
	scoreBuf           []framework.NodeScore
	scoreListsBuf      []framework.NodeScoreList
	activeFilterBuf    []int
	feasibleBuf        []*framework.NodeInfo
	// recordPluginMetrics says whether this cycle times each plugin; set
	// before the cycle's goroutines start, which only read it.
	recordPluginMetrics bool

	// nominations are the pending pods' nominations (nominator.go).
	nominations *nominator
	// preemptSlots bounds the preemptions whose API requests are under
	// way (maxPreemptionsInFlight).
	preemptSlots chan struct{}

	bindWG sync.WaitGroup
	// feasibleSlotsBuf holds the slots of the nodes in feasibleBuf.
	feasibleSlotsBuf []int
	// scoreColumnsBuf is reused by scoreAnswers, cycle after cycle.
	scoreColumnsBuf []int
	// noShortcuts turns off the answers kept per pod signature
	// (signatures.go) and the filters' slot path (runFiltersAt), for tests
	// that compare cycles with and without them.
	noShortcuts bool
	// bindJobs feeds the bind workers; see bindWorker.
	bindJobs chan bindJob
	// waiting are the pods waiting on Permit.
	waiting *waitingPods
	// dra is the state of dynamic resource allocation the profiles'
	// DynamicResources plugins share; nil without informers.
	dra framework.SharedDRAManager
	// stopDRA ends the DRA manager's background work (Close).
	stopDRA func()
	// binding holds the cancel of each binding cycle that waits on Permit
	// or runs PreBind, so that the pod's deletion ends it.
	bindingMu sync.Mutex
	binding   map[types.UID]context.CancelCauseFunc
	// scheduled counts pods bound, for tests and metrics.
	scheduled atomic.Int64
	// outcomes are the binding cycles waiting to learn whether their
	// Binding was committed (binding_outcome.go).
	outcomes outcomeWaiters
	// podLister reads the informer's pods; nil without informers.
	podLister corelisters.PodLister
	// groups are the pod groups and their members (podgroups.go);
	// groupStatus writes their PodGroupInitiallyScheduled condition.
	groups      *podGroups
	groupStatus *podGroupStatusWriter
	// placementNodes, under cycleMu, are the only nodes a group cycle
	// places in while it tries one topology domain; nil: every node.
	placementNodes map[string]bool
	// loop is the scheduling loop's progress, for LoopHealthy.
	loop loopProgress
	// kept are the last failed attempts of pending pods (kept.go).
	kept keptExplanations
	// annotating bounds the annotation patches in flight
	// (annotations.go); annotationsDropped counts those not written.
	annotating         chan struct{}
	annotationsDropped atomic.Int64
}

// handle gives plugins the snapshot and the informers.
type handle struct{ s *Scheduler }

func (h handle) SnapshotSharedLister() framework.NodeInfoLister { return h.s.snapshot }
func (h handle) SharedInformerFactory() informers.SharedInformerFactory {
	return h.s.informerFactory
}
func (h handle) MetricsRegisterer() prometheus.Registerer { return h.s.registerer }
func (h handle) DynamicInformerFactory() dynamicinformer.DynamicSharedInformerFactory {
	return h.s.dynamicFactory
}
func (h handle) Logger() *zap.Logger { return h.s.logger }
func (h handle) NominatedPodsForNode(name string) []*framework.PodInfo {
	return h.s.nominations.on(name)
}
func (h handle) ReadNodeInfo(name string, f func(*framework.NodeInfo)) bool {
	return h.s.Cache != nil && h.s.Cache.ReadNodeInfo(name, f)
}
func (h handle) RaiseEvent(ev framework.ClusterEvent, oldObj, newObj any) {
	if h.s.Queue != nil {
		h.s.Queue.MoveAllToActiveOrBackoff(ev, oldObj, newObj)
	}
}
func (h handle) ClientSet() kubernetes.Interface { return h.s.client }

// PodGroups implements framework.PodGroupHandle.
func (h handle) PodGroups() framework.PodGroupLister { return h.s.groups }
func (h handle) KubeConfig() *rest.Config {
	if h.s.restConfig == nil {
		return nil
	}
	return rest.CopyConfig(h.s.restConfig)
}
func (h handle) Parallelizer() framework.Parallelizer { return h.s.parallelizer }
func (h handle) PostBinding(ctx context.Context, pod *v1.Pod, node string) error {
	return h.s.postBinding(ctx, pod, node)
}

// postBinding posts pod's Binding to node through the binder.
func (s *Scheduler) postBinding(ctx context.Context, pod *v1.Pod, node string) error {
	if s.binder == nil {
		return errors.New("the scheduler has no binder")
	}
	return s.binder.Bind(ctx, pod, node)
}
func (h handle) SharedDRAManager() framework.SharedDRAManager {
	if h.s.dra == nil {
		return nil
	}
	return h.s.dra
}
func (h handle) EventRecorder() events.EventRecorder {
	if r := h.s.binder.Recorder(); r != nil {
		return r
	}
	return nil
}
func (h handle) IterateOverWaitingPods(f func(framework.WaitingPod)) {
	h.s.waiting.iterate(f)
}
func (h handle) GetWaitingPod(uid types.UID) framework.WaitingPod {
	if wp := h.s.waiting.get(uid); wp != nil {
		return wp
	}
	return nil
}

// New builds a Scheduler and registers its informer event handlers. The
// caller starts the informer factory and then calls Run.
func New(opts Options) (*Scheduler, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = framework.DefaultParallelism
	}
	if opts.BindGracePeriod <= 0 {
		opts.BindGracePeriod = DefaultBindGracePeriod
	}
	if opts.MetricsRegisterer == nil {
		opts.MetricsRegisterer = prometheus.NewRegistry()
	}
	if len(opts.Profiles) == 0 {
		return nil, errors.New("no scheduling profiles")
	}
	bindCtx, abortBinds := context.WithCancel(context.Background())
	s := &Scheduler{
		client:                   opts.Client,
		logger:                   opts.Logger,
		clock:                    opts.Clock,
		binder:                   opts.Binder,
		Cache:                    cache.New(opts.Clock, 0),
		snapshot:                 cache.NewSnapshot(),
		parallelizer:             framework.NewParallelizer(opts.Parallelism),
		restConfig:               opts.RESTConfig,
		percentageOfNodesToScore: opts.PercentageOfNodesToScore,
		bindGracePeriod:          opts.BindGracePeriod,
		informerFactory:          opts.InformerFactory,
		dynamicFactory:           opts.DynamicInformerFactory,
		registerer:               opts.MetricsRegisterer,
		metrics:                  metrics.New(),
		bindCtx:                  bindCtx,
		bindJobs:                 make(chan bindJob, bindQueueSize),
		abortBinds:               abortBinds,
		profiles:                 map[string]*profile{},
		extenders:                opts.Extenders,
		nominations:              newNominator(),
		preemptSlots:             make(chan struct{}, maxPreemptionsInFlight),
		waiting:                  newWaitingPods(),
		binding:                  map[types.UID]context.CancelCauseFunc{},
		annotating:               make(chan struct{}, maxAnnotationPatches),
		rng:                      rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	h := handle{s}
	// Before the profiles: GangScheduling reads it.
	var pgLister schedulinglisters.PodGroupLister
	if opts.InformerFactory != nil && podGroupsFeature.Enabled(opts.APIs) {
		pgLister = opts.InformerFactory.Scheduling().V1beta1().PodGroups().Lister()
	}
	var crdLister toolscache.GenericLister
	if opts.DynamicInformerFactory != nil && opts.APIs != nil && coschedulingFeature.Enabled(opts.APIs) {
		crdLister = opts.DynamicInformerFactory.ForResource(gvrCoschedulingPodGroups).Lister()
	}
	s.groups = newPodGroups(pgLister, crdLister, s.Cache.IsAssumed)
	s.groupStatus = newPodGroupStatusWriter(opts.Client, s.logger)
	// Before the profiles: their DynamicResources plugins use it. Without
	// informers (tests of the loop) it reads empty stores, so a pod with
	// claims waits rather than being placed unchecked.
	draInformers := opts.InformerFactory
	if draInformers == nil {
		draInformers = informers.NewSharedInformerFactory(nil, 0)
	}
	draOpts := registry.DRAOptions{
		NotServed:        !draFeature.Enabled(opts.APIs),
		DeviceTaintRules: opts.InformerFactory != nil && deviceTaintRulesFeature.Enabled(opts.APIs),
	}
	dra, regs, stopDRA, err := registry.NewDRAManager(draInformers, draOpts, s.claimChanged, s.deviceClassHandler(), s.resourceSliceHandler())
	if err != nil {
		return nil, err
	}
	s.dra, s.stopDRA = dra, stopDRA
	if opts.InformerFactory != nil {
		s.handlers = append(s.handlers, regs...)
	}
	for _, p := range opts.Profiles {
		if _, dup := s.profiles[p.SchedulerName]; dup {
			return nil, fmt.Errorf("duplicate profile %q", p.SchedulerName)
		}
		prof, err := newProfile(opts.Registry, p, h)
		if err != nil {
			return nil, err
		}
		prof.metrics = instrumentProfile(s.metrics, prof)
		s.profiles[p.SchedulerName] = prof
		s.background = append(s.background, prof.background...)
	}
	// After the profiles: the queue orders pods by their queue-sort
	// plugin, the first profile's (the configuration makes them all name
	// the same); without one, as PrioritySort.
	var less func(a, b *framework.QueuedPodInfo) bool
	if len(opts.Profiles) > 0 {
		if qs := s.profiles[opts.Profiles[0].SchedulerName].queueSort; qs != nil {
			less = qs.Less
		}
	}
	s.Queue = queue.New(queue.Options{
		Less:                 less,
		Clock:                opts.Clock,
		InitialBackoff:       opts.PodInitialBackoff,
		MaxBackoff:           opts.PodMaxBackoff,
		MaxUnschedulableStay: opts.MaxUnschedulableStay,
		Metrics:              s.metrics,
		Logger:               s.logger,
		PreEnqueue:           s.preEnqueue,
	})
	for name, prof := range s.profiles {
		s.Queue.SetProfileHints(name, prof.hints)
	}
	if err := s.metrics.Register(opts.MetricsRegisterer, s.census); err != nil {
		return nil, fmt.Errorf("register scheduler metrics: %w", err)
	}
	if opts.Binder != nil {
		if err := metrics.RegisterStatusPatches(opts.MetricsRegisterer, opts.Binder); err != nil {
			return nil, fmt.Errorf("register status patch metrics: %w", err)
		}
	}
	if opts.InformerFactory != nil {
		if err := s.addEventHandlers(opts.InformerFactory); err != nil {
			return nil, err
		}
		s.podLister = opts.InformerFactory.Core().V1().Pods().Lister()
	}
	if err := s.watchCustomResources(); err != nil {
		return nil, err
	}
	if err := s.addCoschedulingHandlers(); err != nil {
		return nil, err
	}
	return s, nil
}

// Close ends the background work New started (the DRA manager's
// tracking of DeviceTaintRules); call it once the informers are shut down.
func (s *Scheduler) Close() {
	if s.stopDRA != nil {
		s.stopDRA()
	}
}

// Scheduled returns how many pods this scheduler has bound.
func (s *Scheduler) Scheduled() int64 { return s.scheduled.Load() }

// Abort cancels every in-flight Binding at once, and every later one: for
// a replica that lost its lease, where another leader may already be
// placing pods into the capacity those bindings would take. A binding
// cancelled before the API server took it forgets its assumption quietly
// (no event, no status). Run, whose context the caller cancels too, then
// returns without waiting out the grace period. Abort cannot be undone.
func (s *Scheduler) Abort() { s.abortBinds() }

// Backlogged reports whether pods wait: in the active queue to be
// scheduled, or for a bind worker. While they do, the scheduler is behind
// and what it writes besides Bindings (the Scheduled events) can wait.
func (s *Scheduler) Backlogged() bool {
	if len(s.bindJobs) > 0 {
		return true
	}
	active, _, _, _ := s.Queue.PendingPods()
	return active > 0
}

// Run schedules pods until ctx is done, then waits up to the bind grace
// period for in-flight bindings. Informer caches must be synced before.
func (s *Scheduler) Run(ctx context.Context) {
	var bg sync.WaitGroup
	bg.Add(2 + len(s.background) + bindWorkers)
	for range bindWorkers {
		go func() { defer bg.Done(); s.bindWorker() }()
	}
	go func() { defer bg.Done(); s.Queue.Run(ctx) }()
	go func() { defer bg.Done(); s.cacheCleanupLoop(ctx) }()
	for _, p := range s.background {
		go func() { defer bg.Done(); p.Run(ctx) }()
	}

	s.logger.Info("scheduling loop started", zap.Int("profiles", len(s.profiles)))
	s.loop.started(s.clock.Now())
	for ctx.Err() == nil {
		s.scheduleOne(ctx)
	}
	s.loop.stopped()
	s.Queue.Close()
	s.waitForBinds()
	close(s.bindJobs)
	bg.Wait()
	s.groupStatus.wait()
	s.logger.Info("scheduling loop stopped", zap.Int64("scheduled", s.Scheduled()))
}

func (s *Scheduler) waitForBinds() {
	done := make(chan struct{})
	go func() { s.bindWG.Wait(); close(done) }()
	t := s.clock.NewTimer(s.bindGracePeriod)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C():
		// Give up on the rest: their pods stay pending for the next leader
		// or the next start, and the workers return at once.
		s.logger.Warn("in-flight bindings did not finish within the grace period; aborting them", zap.Duration("grace", s.bindGracePeriod))
		s.abortBinds()
	}
}

// cacheCleanupLoop expires assumed pods whose binding was never confirmed.
func (s *Scheduler) cacheCleanupLoop(ctx context.Context) {
	t := s.clock.NewTicker(time.Second)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if tick%keptPruneTicks == 0 {
				s.pruneKept()
			}
			for _, p := range s.Cache.CleanupExpired() {
				s.logger.Warn("assumed pod expired before its binding was seen", zap.String("pod", p.Namespace+"/"+p.Name))
				s.Queue.MoveAllToActiveOrBackoff(assignedPodDelete, p, nil)
			}
		}
	}
}

// scheduleOne runs one scheduling cycle.
func (s *Scheduler) scheduleOne(ctx context.Context) {
	qpi, err := s.Queue.Pop(ctx)
	if err != nil {
		return
	}
	s.loop.popped(s.clock.Now())
	defer s.loop.finished(s.clock)
	pod := qpi.Pod
	prof := s.profiles[pod.Spec.SchedulerName]
	if prof == nil || pod.DeletionTimestamp != nil || s.Cache.IsAssumed(pod.UID) {
		s.Queue.Done(qpi)
		return
	}
	if key, ok := framework.PodGroupOf(pod); ok && s.groups.Served(key.API) {
		s.scheduleGroup(ctx, prof, key, append([]*queue.QueuedPodInfo{qpi}, s.Queue.TakeGroup(key)...))
		return
	}
	cycle := s.Queue.SchedulingCycle()
	start := s.clock.Now()
	// A plugin that panics fails this pod's attempt, not the process
	// (panics.go); assumed is the pod's binding job once it is assumed,
	// until the binding cycle takes it.
	var assumed *bindJob
	defer func() {
		if r := recover(); r != nil {
			s.cyclePanicked(ctx, qpi, cycle, assumed, r, start)
		}
	}()
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	// Time each plugin in a sample of cycles only, as kube-scheduler does.
	s.recordPluginMetrics = s.rng.IntN(100) < metrics.SamplePercent

	s.Cache.UpdateSnapshot(s.snapshot)
	state := framework.NewCycleState()
	// Only for a profile that writes the simulator's annotations.
	var rec *cycleRecorder
	if prof.annotate {
		rec = &cycleRecorder{}
	}
	res, err := s.scheduleRecorded(ctx, prof, state, pod, rec)
	s.metrics.SchedulingAlgorithmDuration(s.clock.Since(start))
	if rec != nil && ctx.Err() == nil {
		s.annotateLater(pod, attemptResultsOf(prof, skipped(state.SkipFilterPlugins), rec, res.node))
	}
	if err != nil {
		var fitErr *FitError
		if errors.As(err, &fitErr) {
			if len(prof.postFilter) > 0 && ctx.Err() == nil {
				fitErr.PostFilterMessage = prof.runPostFilter(ctx, state, pod, fitErr)
			}
			s.kept.record(pod, prof.name, qpi.Attempts, fitErr, s.clock.Now())
		}
		s.handleFailure(ctx, qpi, cycle, err, start)
		return
	}

	assumedPod := pod.DeepCopy()
	assumedPod.Spec.NodeName = res.node
	if err := s.Cache.AssumePod(assumedPod); err != nil {
		s.handleFailure(ctx, qpi, cycle, err, start)
		return
	}
	j := bindJob{prof: prof, qpi: qpi, state: state, assumed: assumedPod, res: res, start: start, sampled: s.recordPluginMetrics}
	assumed = &j
	if err := s.prepareBinding(ctx, &j); err != nil {
		s.unreserveAndForget(ctx, &j)
		s.handleFailure(ctx, qpi, cycle, err, start)
		return
	}
	assumed = nil
	// Placed: the room its preemption made is taken, by the pod itself.
	s.nominations.forget(pod.UID)
	s.kept.forget(pod.UID)
	s.logger.Debug("pod assumed", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("node", res.node))
	s.startBinding(ctx, j)
}

// Bindings are posted by a fixed pool of workers fed by a queue. The cycle
// hands a job over and goes on; it only waits when bindQueueSize jobs are
// already waiting, which means the API server is the bottleneck anyway.
// A goroutine per Binding would let a backlog put thousands of requests in
// flight at once, each holding its buffers: more memory and no more
// throughput, since the API server serves them no faster. Pods whose
// binding cycle waits (on Permit, or in PreBind) are the exception; see
// binding_cycle.go.
const (
	bindWorkers   = 64
	bindQueueSize = 1024
)

// handleFailure requeues a pod that found no node (unschedulable pool) or
// whose cycle failed (backoff), and tells the user why. start is when the
// cycle began.
func (s *Scheduler) handleFailure(ctx context.Context, qpi *queue.QueuedPodInfo, cycle int64, err error, start time.Time) {
	pod := qpi.Pod
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// The loop is stopping (shutdown, or the lease is lost): the
		// attempt was cut short, not failed, and nobody is told.
		_ = s.Queue.AddUnschedulable(qpi, cycle, false)
		return
	}
	unschedulable := isUnschedulable(err)
	if fitErr, ok := errors.AsType[*FitError](err); ok {
		// The queue wakes the pod on the events these plugins registered.
		qpi.UnschedulablePlugins = fitErr.Plugins
	}
	reason := v1.PodReasonUnschedulable
	if prof := s.profiles[pod.Spec.SchedulerName]; prof != nil && prof.metrics != nil {
		if unschedulable {
			prof.metrics.PodUnschedulable(s.clock.Since(start))
		} else {
			prof.metrics.PodScheduleError(s.clock.Since(start))
		}
	}
	if unschedulable {
		s.logger.Info("pod did not fit", zap.String("pod", pod.Namespace+"/"+pod.Name),
			zap.Int("attempts", qpi.Attempts), zap.String("reason", err.Error()))
	} else {
		reason = "SchedulerError"
		s.logger.Warn("scheduling attempt failed", zap.String("pod", pod.Namespace+"/"+pod.Name),
			zap.Int("attempts", qpi.Attempts), zap.Error(err))
	}
	if err := s.Queue.AddUnschedulable(qpi, cycle, unschedulable); err != nil {
		s.logger.Debug("pod not requeued", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.Error(err))
	}
	if _, known := s.informerOutcome(pod); known {
		// Bound (by someone else) or gone meanwhile: the queue has
		// dropped it, and a FailedScheduling event would not be true.
		return
	}
	s.binder.RecordFailure(ctx, pod, reason, err.Error(), true)
}
