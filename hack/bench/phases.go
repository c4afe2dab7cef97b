package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// cluster is one control plane with its nodes, shared by every phase of
// one cluster size.
type cluster struct {
	opts       *options
	cp         *controlplane.ControlPlane
	client     kubernetes.Interface // admin, -qps/-burst, protobuf
	nodes      []*v1.Node           // as created, for the placement check
	kubeconfig string
	out        string // where results.json goes
	logDir     string
	profileDir string
	seq        int // numbers namespaces and logs
	// controllers is the kube-controller-manager of the workload being
	// measured; nil when it runs without one.
	controllers *controlplane.ControllerManager
}

// stopGrace is how long a scheduler gets between SIGTERM and SIGKILL.
// Both finish in-flight bindings and exit within a second or two.
const stopGrace = 15 * time.Second

// eventQuiet bounds the wait for the Scheduled events of a drain: a
// contender that wrote none for this long is not writing the rest.
const eventQuiet = 10 * time.Second

// settle bounds the wait, after the last binding, for the scheduler's CPU
// use to stop climbing: events and status writes that belong to the
// drained pods are part of what scheduling them cost.
const (
	settleMax       = 5 * time.Second
	settleWindow    = 500 * time.Millisecond
	settleThreshold = 10 * time.Millisecond // CPU per window: ~2% of a core

	// quiesce waits at most quiesceMax for the API server and etcd to use
	// less than quiesceThreshold together in a settleWindow: idle, but
	// for their own housekeeping.
	quiesceMax       = 10 * time.Second
	quiesceThreshold = 25 * time.Millisecond // ~5% of a core
)

// namespace creates a fresh namespace for one phase.
func (c *cluster) namespace(ctx context.Context, what string) (string, error) {
	c.seq++
	return controlplane.CreateNamespace(ctx, c.client, fmt.Sprintf("b%03d-%s", c.seq, what))
}

func (c *cluster) logPath(ns, contender string) string {
	return filepath.Join(c.logDir, fmt.Sprintf("%s-%s.log", ns, contender))
}

// meterPIDs names the processes a cpuMeter follows besides the scheduler.
func (c *cluster) meterPIDs() map[string]int {
	pids := map[string]int{"harness": os.Getpid()}
	cpPIDs := c.cp.PIDs() // etcd, kube-apiserver
	if len(cpPIDs) >= 2 {
		pids["etcd"], pids["kube-apiserver"] = cpPIDs[0], cpPIDs[1]
	}
	if c.controllers != nil {
		pids["kube-controller-manager"] = c.controllers.Pid()
	}
	return pids
}

// controlPlanePIDs are the processes quiesce waits for: etcd,
// kube-apiserver and the kube-controller-manager of the workload.
func (c *cluster) controlPlanePIDs() []int {
	pids := c.cp.PIDs()
	if c.controllers != nil {
		pids = append(pids, c.controllers.Pid())
	}
	return pids
}

// clear deletes what a phase of w made in ns: the pods and events, then
// the claims and volumes of a workload with claims, the claims,
// template, slices and class of a workload with devices, or the
// PodGroups of a gang workload.
func (c *cluster) clear(ctx context.Context, w workload, ns string) error {
	err := clearNamespace(ctx, c.client, ns)
	if w.gangs() {
		err = errors.Join(err, deletePodGroups(ctx, c.client, ns))
	}
	if w.claims {
		err = errors.Join(err, deleteStorage(ctx, c.client, c.opts.workers, ns))
	}
	if w.devices {
		err = errors.Join(err, deleteDevices(ctx, c.client, c.opts.workers, ns))
	}
	return err
}

// checkPlacement checks where the pods of a phase in ns went, and for a
// workload with claims, the claims and volumes; for one with devices, the
// device claims; for a gang workload, the gangs.
func (c *cluster) checkPlacement(ctx context.Context, w workload, ns string, pods []*v1.Pod) (Placement, error) {
	p := checkPlacement(c.nodes, pods)
	if w.gangs() {
		listed, groups, err := listGangs(ctx, c.client, ns)
		if err != nil {
			return p, err
		}
		checkGangs(&p, listed, groups)
	}
	if w.claims {
		claims, pvs, err := listStorage(ctx, c.client, ns)
		if err != nil {
			return p, err
		}
		checkVolumes(&p, c.nodes, pods, claims, pvs)
	}
	if w.devices {
		claims, rs, err := listDevices(ctx, c.client, ns)
		if err != nil {
			return p, err
		}
		checkDevices(&p, pods, claims, rs)
	}
	return p, nil
}

// drain measures a backlog: every pod exists before the contender starts.
func (c *cluster) drain(ctx context.Context, w workload, contender string, count int) (_ *DrainResult, err error) {
	ns, err := c.namespace(ctx, w.name+"-"+contender)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := c.clear(context.WithoutCancel(ctx), w, ns); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	rec, err := startRecorder(ctx, c.client, ns)
	if err != nil {
		return nil, err
	}
	defer rec.stop()

	if w.claims {
		if err := createStorage(ctx, c.client, c.opts.workers, ns, count, len(c.nodes)); err != nil {
			return nil, err
		}
	}
	if w.devices {
		if err := createDevices(ctx, c.client, c.opts.workers, ns, len(c.nodes)); err != nil {
			return nil, err
		}
	}
	// What the contender finds before it starts, besides the measured
	// pods: a pool of pods that fit nowhere (queued first), or nodes full
	// of low-priority pods.
	var background []*v1.Pod
	switch {
	case w.pool && !isCeiling(contender):
		background = namedPods(c.opts.poolPods, ns, profileName(contender), poolPod)
	case w.preempt:
		background = namedPods(fillPerNode*len(c.nodes), ns, profileName(contender), func(i int) *v1.Pod { return fillPod(i, len(c.nodes)) })
	}
	if len(background) > 0 {
		if err := createPods(ctx, c.client, c.opts.workers, background); err != nil {
			return nil, err
		}
		if _, err := rec.waitProgress(ctx, c.opts.stall, nil, func() (int, bool) {
			seen, _, _ := rec.poolCounts()
			return seen, seen >= len(background)
		}); err != nil {
			return nil, err
		}
	}
	if w.gangs() {
		// Before the pods, as scheduler_perf's createPodGroups: no
		// member waits for its group.
		if err := createPodGroups(ctx, c.client, c.opts.workers, podGroupsFor(count, w.groupSize, ns)); err != nil {
			return nil, err
		}
	}
	// The pool comes first in the queue either way: its pods have the
	// higher priority, and both schedulers try the higher priority
	// first. So every pool pod has been tried before the first measured
	// pod is bound.
	pods := podsFor(w, count, len(c.nodes), ns, profileName(contender))
	if err := createPods(ctx, c.client, c.opts.workers, pods); err != nil {
		return nil, err
	}
	// Every pod must be in the watch before the clock starts, so that a
	// bind is never merged into a pod's first sighting.
	if _, err := rec.waitFor(ctx, c.opts.stall, nil, func(seen, _ int) bool { return seen >= count }); err != nil {
		return nil, err
	}
	if seen, _ := rec.counts(); seen < count {
		return nil, fmt.Errorf("watch saw %d of %d pods in %q", seen, count, ns)
	}
	if w.devices {
		// The drain times the scheduler, not the ResourceClaim
		// controller.
		if err := waitForClaims(ctx, c.client, rec, ns, count); err != nil {
			return nil, err
		}
	}

	if c.opts.quiesce {
		if err := c.quiesce(ctx); err != nil {
			return nil, err
		}
	}
	res := &DrainResult{Pods: count, Namespace: ns}
	if w.pool && !isCeiling(contender) {
		res.PoolPods = c.opts.poolPods
	}
	if w.preempt {
		res.FillPods = len(background)
	}
	res.LoadAvg1 = loadAvg()
	meter := newCPUMeter(c.meterPIDs())
	var (
		proc     *process
		sampler  *cpuSampler
		profiles []chan error // CPU profiles being taken, with -profile
	)
	// profile fetches a CPU profile long enough for a drain at the
	// workload's profileRate; a faster drain leaves the process idle for
	// the rest, which adds no samples. The channel is buffered: on an
	// early return the fetch fails once the deferred stop kills the
	// scheduler, and nobody receives.
	rate := w.profileRate
	if rate == 0 {
		rate = defaultProfileRate
	}
	profile := func(url, token, path string) {
		ch := make(chan error, 1)
		url = fmt.Sprintf("%sprofile?seconds=%d", url, max(2, (count+rate-1)/rate))
		go func() { ch <- fetchProfile(ctx, url, token, path) }()
		profiles = append(profiles, ch)
	}
	if c.opts.profile {
		// What the contender makes the API server do is half the story on
		// a machine where both share the cores: its CPU profile, and its
		// metrics before and after (apiserver_request_total counts the
		// requests of the drain by verb and resource).
		res.APIServerMetrics = [2]string{
			filepath.Join(c.profileDir, ns+"-"+contender+"-kube-apiserver.metrics-before.txt"),
			filepath.Join(c.profileDir, ns+"-"+contender+"-kube-apiserver.metrics-after.txt"),
		}
		if err := fetchProfile(ctx, c.cp.APIServerURL+"/metrics", c.cp.AdminToken, res.APIServerMetrics[0]); err != nil {
			logf("  %s: %v", contender, err)
		}
		res.APIServerProfile = filepath.Join(c.profileDir, ns+"-"+contender+"-kube-apiserver.cpu.pprof")
		profile(c.cp.APIServerURL+"/debug/pprof/", c.cp.AdminToken, res.APIServerProfile)
		if c.controllers != nil {
			// Its workqueue metrics say how busy the PV binder's one
			// claim worker was.
			res.ControllerManagerMetrics = [2]string{
				filepath.Join(c.profileDir, ns+"-"+contender+"-kube-controller-manager.metrics-before.txt"),
				filepath.Join(c.profileDir, ns+"-"+contender+"-kube-controller-manager.metrics-after.txt"),
			}
			if err := fetchProfile(ctx, c.controllers.URL+"/metrics", "", res.ControllerManagerMetrics[0]); err != nil {
				logf("  %s: %v", contender, err)
			}
			res.ControllerManagerProfile = filepath.Join(c.profileDir, ns+"-"+contender+"-kube-controller-manager.cpu.pprof")
			profile(c.controllers.URL+"/debug/pprof/", "", res.ControllerManagerProfile)
		}
	}
	var churn *churner
	defer func() {
		if churn != nil {
			if _, cerr := churn.stop(); cerr != nil {
				logf("  %s: %v", contender, cerr)
			}
		}
	}()
	if w.churn {
		churn = startChurn(ctx, c.client, ns, profileName(contender), c.opts.churnInterval)
	}
	start := time.Now()
	if isCeiling(contender) {
		if err := bindRoundRobin(ctx, c.client, c.opts.workers, pods, len(c.nodes), contender == ceilingEventsName); err != nil {
			return nil, err
		}
	} else {
		res.Log = c.logPath(ns, contender)
		if proc, err = startScheduler(c.opts, contender, c.kubeconfig, c.logDir, res.Log); err != nil {
			return nil, err
		}
		defer proc.stop(stopGrace)
		start = proc.started
		meter.add("scheduler", proc.Pid(), 0)
		sampler = startCPUSampler(proc.Pid())
		defer sampler.stop()
		if proc.pprofURL != "" {
			res.Profile = filepath.Join(c.profileDir, ns+"-"+contender+".cpu.pprof")
			profile(proc.pprofURL, "", res.Profile)
		}
	}

	// Trying a pool of 20,000 binds nothing for a while: the pool's
	// first tries count as progress too.
	ok, err := rec.waitProgress(ctx, max(c.opts.stall, w.minStall), proc, func() (int, bool) {
		_, bound := rec.counts()
		_, attempted, _ := rec.poolCounts()
		return bound + attempted, bound >= count
	})
	if err != nil {
		return nil, err
	}
	res.Complete = ok
	if res.PoolPods > 0 {
		_, attempted, lastAttempt := rec.poolCounts()
		// Counted from the pods' PodScheduled condition, which a
		// scheduler may write after its Bindings; measure logs it.
		res.PoolMarked = attempted
		if !lastAttempt.IsZero() {
			res.PoolAttemptS = lastAttempt.Sub(start).Seconds()
		}
	}
	if churn != nil {
		var cerr error
		res.ChurnOps, cerr = churn.stop()
		churn = nil
		if cerr != nil {
			logf("  %s: %v", contender, cerr)
		}
	}
	if w.preempt {
		res.Victims = rec.victimCount()
	}

	times, first, last := rec.bindTimes()
	res.Bound = len(times)
	if !first.IsZero() {
		res.StartToFirstBindS = first.Sub(start).Seconds()
		res.FirstToLastBindS = last.Sub(first).Seconds()
		if res.Bound > 1 && last.After(first) {
			res.PodsPerSecond = float64(res.Bound-1) / last.Sub(first).Seconds()
		}
		res.Curve = bindCurve(times, start)
	}

	if contender != ceilingName {
		rec.waitForEvents(ctx, res.Bound, eventQuiet)
		var lastEvent time.Time
		res.ScheduledEvents, lastEvent = rec.events()
		if !lastEvent.IsZero() && !last.IsZero() {
			// Negative when the event watch saw the last event before
			// the pod watch saw the last binding: no lag.
			res.LastEventAfterLastBindS = max(0, lastEvent.Sub(last).Seconds())
		}
	}
	if proc != nil {
		// With a pool, what the pods cost starts at the first binding:
		// before it, the scheduler tried the pool (PoolCPUSeconds).
		var cpuBase time.Duration
		if res.PoolPods > 0 && !first.IsZero() {
			cpuBase = sampler.at(first)
			res.PoolCPUSeconds = cpuBase.Seconds()
		}
		cpuAtEnd := sampler.settle(ctx) - cpuBase
		res.CPUSeconds = cpuAtEnd.Seconds()
		res.DrainCPUSeconds = (sampler.at(last) - sampler.at(first)).Seconds()
		if res.Bound > 0 {
			res.CPUMsPerPod = 1000 * res.CPUSeconds / float64(res.Bound)
		}
		if st, err := readProcStat(proc.Pid()); err == nil {
			res.PeakRSSMiB = float64(st.peakKiB) / 1024
		}
	}
	res.setUsage(meter.read())
	if res.APIServerMetrics[1] != "" {
		if err := fetchProfile(ctx, c.cp.APIServerURL+"/metrics", c.cp.AdminToken, res.APIServerMetrics[1]); err != nil {
			logf("  %s: %v", contender, err)
		}
	}
	if res.ControllerManagerMetrics[1] != "" {
		if err := fetchProfile(ctx, c.controllers.URL+"/metrics", "", res.ControllerManagerMetrics[1]); err != nil {
			logf("  %s: %v", contender, err)
		}
	}
	for _, ch := range profiles {
		if perr := <-ch; perr != nil {
			logf("  %s: %v", contender, perr)
		}
	}
	if proc != nil {
		if proc.pprofURL != "" {
			// What is live at the end, and (alloc_space) everything the
			// drain allocated: the garbage that sets the peak RSS.
			res.HeapProfile = filepath.Join(c.profileDir, ns+"-"+contender+".heap.pprof")
			if perr := fetchProfile(ctx, proc.pprofURL+"heap", "", res.HeapProfile); perr != nil {
				logf("  %s: %v", contender, perr)
			}
		}
		proc.stop(stopGrace)
	}
	if res.Placement, err = c.checkPlacement(ctx, w, ns, rec.pods()); err != nil {
		return nil, err
	}
	return res, nil
}

// stream measures latency under a steady arrival rate: the contender runs
// and has bound one warm-up pod before the first measured pod is created.
func (c *cluster) stream(ctx context.Context, w workload, contender string) (_ *StreamResult, err error) {
	count := min(c.opts.streamCount, w.count(c.sizes(c.opts.streamCount)))
	ns, err := c.namespace(ctx, w.name+"-"+contender+"-stream")
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := c.clear(context.WithoutCancel(ctx), w, ns); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	rec, err := startRecorder(ctx, c.client, ns)
	if err != nil {
		return nil, err
	}
	defer rec.stop()
	if w.claims {
		// Before the scheduler starts: only the pods arrive at the rate.
		if err := createStorage(ctx, c.client, c.opts.workers, ns, count, len(c.nodes)); err != nil {
			return nil, err
		}
	}
	if w.devices {
		// The claims are not: the ResourceClaim controller makes each
		// pod's as it arrives, and its latency is part of the pod's.
		if err := createDevices(ctx, c.client, c.opts.workers, ns, len(c.nodes)); err != nil {
			return nil, err
		}
	}

	res := &StreamResult{Pods: count, TargetRate: c.opts.streamRate, Namespace: ns, Log: c.logPath(ns, contender)}
	res.LoadAvg1 = loadAvg()
	proc, err := startScheduler(c.opts, contender, c.kubeconfig, c.logDir, res.Log)
	if err != nil {
		return nil, err
	}
	defer proc.stop(stopGrace)
	sampler := startCPUSampler(proc.Pid())
	defer sampler.stop()

	// The warm-up pod matches no workload selector, so it constrains
	// nothing; it only proves the scheduler is up.
	warm := basePod(0, "warmup", "100m", "128Mi")
	warm.Name, warm.Namespace, warm.Spec.SchedulerName = warmUpPodName, ns, profileName(contender)
	if err := createPod(ctx, c.client, warm); err != nil {
		return nil, err
	}
	ok, err := rec.waitFor(ctx, c.opts.stall, proc, func(_, bound int) bool { return bound >= 1 })
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s bound no warm-up pod within %s; see %s", contender, c.opts.stall, res.Log)
	}

	pids := c.meterPIDs()
	pids["scheduler"] = proc.Pid()
	meter := newCPUMeter(pids)
	cpuStart := sampler.now()
	pods := podsFor(w, count, len(c.nodes), ns, profileName(contender))
	created, createErr := createAtRate(ctx, c.client, c.opts.workers, pods, c.opts.streamRate)
	if createErr != nil {
		return nil, createErr
	}
	res.AchievedRate = achievedRate(created)
	if ok, err = rec.waitFor(ctx, c.opts.stall, proc, func(_, bound int) bool { return bound >= count+1 }); err != nil {
		return nil, err
	}
	res.Complete = ok
	res.CPUSeconds = (sampler.settle(ctx) - cpuStart).Seconds()
	res.setUsage(meter.read())
	proc.stop(stopGrace)

	lat := make([]time.Duration, 0, count)
	for i, p := range pods {
		if t, ok := rec.boundAt(p.Name); ok {
			lat = append(lat, max(0, t.Sub(created[i])))
		}
	}
	res.Bound = len(lat)
	if res.Bound > 0 {
		res.CPUMsPerPod = 1000 * res.CPUSeconds / float64(res.Bound)
	}
	res.P50Ms, res.P90Ms, res.P99Ms, res.MaxMs = percentileMs(lat, 0.50), percentileMs(lat, 0.90), percentileMs(lat, 0.99), percentileMs(lat, 1)
	if res.Placement, err = c.checkPlacement(ctx, w, ns, rec.pods()); err != nil {
		return nil, err
	}
	return res, nil
}

// createAtRate creates pod i at start + i/rate (from a pool of workers, so
// a slow request does not delay the next) and returns when each create was
// issued: latency is measured from there, as a client would see it.
func createAtRate(ctx context.Context, c kubernetes.Interface, workers int, pods []*v1.Pod, rate float64) ([]time.Time, error) {
	created := make([]time.Time, len(pods))
	due := make(chan int)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range due {
				created[i] = time.Now()
				if err := createPod(ctx, c, pods[i]); err != nil {
					cancel(err)
				}
			}
		})
	}
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
loop:
	for i := range pods {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			select {
			case <-ctx.Done():
				break loop
			case <-time.After(d):
			}
		}
		select {
		case <-ctx.Done():
			break loop
		case due <- i:
		}
	}
	close(due)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	return created, ctx.Err()
}

func achievedRate(created []time.Time) float64 {
	if len(created) < 2 {
		return 0
	}
	lo, hi := created[0], created[0]
	for _, t := range created {
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	if !hi.After(lo) {
		return 0
	}
	return float64(len(created)-1) / hi.Sub(lo).Seconds()
}

// percentileMs is the nearest-rank q-quantile of d in milliseconds.
func percentileMs(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(q*float64(len(s)) + 0.999999)
	rank = min(max(rank, 1), len(s))
	return float64(s[rank-1]) / float64(time.Millisecond)
}

// maxCurvePoints bounds the pods-over-time series kept per run; the plot
// needs no more.
const maxCurvePoints = 400

// bindCurve returns (seconds since start, pods bound) at up to
// maxCurvePoints bind times, always including the first and the last.
func bindCurve(times []time.Time, start time.Time) []Point {
	s := append([]time.Time(nil), times...)
	sort.Slice(s, func(i, j int) bool { return s[i].Before(s[j]) })
	step := max(1, (len(s)+maxCurvePoints-1)/maxCurvePoints)
	var pts []Point
	for i := 0; i < len(s); i += step {
		pts = append(pts, Point{T: s[i].Sub(start).Seconds(), N: i + 1})
	}
	if n := len(s); n > 0 && pts[len(pts)-1].N != n {
		pts = append(pts, Point{T: s[n-1].Sub(start).Seconds(), N: n})
	}
	return pts
}

// cpuSampler reads a process's CPU time every sampleInterval, so that the
// CPU at any moment of a run (the first bind, the last) can be looked up
// afterwards.
type cpuSampler struct {
	pid  int
	mu   sync.Mutex
	ts   []time.Time
	cpu  []time.Duration
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

const sampleInterval = 50 * time.Millisecond

func startCPUSampler(pid int) *cpuSampler {
	s := &cpuSampler{pid: pid, done: make(chan struct{})}
	s.sample()
	s.wg.Go(func() {
		t := time.NewTicker(sampleInterval)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.sample()
			}
		}
	})
	return s
}

func (s *cpuSampler) sample() time.Duration {
	c, err := readProcCPU(s.pid)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil && len(s.cpu) > 0 {
		c = s.cpu[len(s.cpu)-1]
	}
	s.ts = append(s.ts, now)
	s.cpu = append(s.cpu, c)
	return c
}

// now takes a sample and returns it.
func (s *cpuSampler) now() time.Duration { return s.sample() }

// at returns the CPU time at t, interpolated between samples.
func (s *cpuSampler) at(t time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.ts), func(i int) bool { return !s.ts[i].Before(t) })
	switch {
	case len(s.ts) == 0:
		return 0
	case i == 0:
		return s.cpu[0]
	case i == len(s.ts):
		return s.cpu[len(s.cpu)-1]
	}
	frac := float64(t.Sub(s.ts[i-1])) / float64(s.ts[i].Sub(s.ts[i-1]))
	return s.cpu[i-1] + time.Duration(frac*float64(s.cpu[i]-s.cpu[i-1]))
}

// quiesce has kube-apiserver collect its garbage and then waits until it
// and etcd (and kube-controller-manager, when it runs) are idle, so that every drain's clock starts on the same
// footing. Without it a drain pays for the garbage of the pods created
// just before it and of the run before it, whichever contender made it:
// one collection of a heap of some hundred MB takes the API server
// seconds on two cores, and falls at random into a drain of one second or
// five.
func (c *cluster) quiesce(ctx context.Context) error {
	if err := fetchPprof(ctx, c.cp.APIServerURL+"/debug/pprof/heap?gc=1", c.cp.AdminToken, io.Discard); err != nil {
		return fmt.Errorf("collecting the API server's garbage: %w", err)
	}
	var samplers []*cpuSampler
	for _, pid := range c.controlPlanePIDs() {
		s := startCPUSampler(pid)
		defer s.stop()
		samplers = append(samplers, s)
	}
	if len(samplers) == 0 {
		return nil
	}
	deadline := time.Now().Add(quiesceMax)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		var used time.Duration
		for _, s := range samplers {
			used += s.now() - s.at(time.Now().Add(-settleWindow))
		}
		if samplers[0].span() >= settleWindow && used < quiesceThreshold {
			return nil
		}
	}
	logf("  the API server and etcd were still busy %s after collecting garbage; starting anyway", quiesceMax)
	return nil
}

// settle waits until the process used less than settleThreshold of CPU in
// the last settleWindow, at most settleMax, and returns its CPU time then.
func (s *cpuSampler) settle(ctx context.Context) time.Duration {
	return s.settleWithin(ctx, settleMax)
}

// settleWithin is settle with a bound of its own.
func (s *cpuSampler) settleWithin(ctx context.Context, limit time.Duration) time.Duration {
	deadline := time.Now().Add(limit)
	for {
		now := s.now()
		if time.Now().After(deadline) || ctx.Err() != nil {
			return now
		}
		if before := s.at(time.Now().Add(-settleWindow)); now-before < settleThreshold && s.span() >= settleWindow {
			return now
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// span is how long the sampler has been sampling.
func (s *cpuSampler) span() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ts) == 0 {
		return 0
	}
	return s.ts[len(s.ts)-1].Sub(s.ts[0])
}

func (s *cpuSampler) stop() {
	s.once.Do(func() { close(s.done) })
	s.wg.Wait()
}
