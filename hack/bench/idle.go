package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// IdleResult is one contender idling over a pool of pods that fit nowhere
// while the cluster churns around it.
type IdleResult struct {
	Namespace string `json:"namespace"`
	Log       string `json:"log,omitempty"`
	// PoolPods were created before the contender started; PoolAttempted
	// of them got PodScheduled False from it, the last PoolAttemptS
	// after its start, and it used PoolCPUSeconds until it was quiet.
	PoolPods       int     `json:"pool_pods"`
	PoolAttempted  int     `json:"pool_attempted"`
	PoolAttemptS   float64 `json:"pool_attempt_s"`
	PoolCPUSeconds float64 `json:"pool_cpu_s"`
	// WindowS is the measured stretch of churn, CPUSeconds the
	// contender's CPU in it and Millicores the same per second.
	WindowS    float64 `json:"window_s"`
	CPUSeconds float64 `json:"cpu_s"`
	Millicores float64 `json:"millicores"`
	// Completions counts the pods that KWOK ran and had succeed in the
	// window; ChurnOps the node, pod and Service creates and deletes of
	// the whole churn.
	Completions          int     `json:"completions"`
	CompletionsPerSecond float64 `json:"completions_per_second"`
	ChurnOps             int64   `json:"churn_ops"`
	PeakRSSMiB           float64 `json:"peak_rss_mib"`
	// With -profile: the CPU profile of the window and the heap at its
	// end.
	Profile     string `json:"profile,omitempty"`
	HeapProfile string `json:"heap_profile,omitempty"`
	Usage
	Placement Placement `json:"placement"`
}

// idleWarmUp is how long the churn runs before the window opens: the
// first completions come a run-duration after the first creates.
const idleWarmUp = 5 * time.Second

// poolQuiet ends the wait for the pool's PodScheduled conditions when no
// new one came for this long.
const poolQuiet = 20 * time.Second

// completionRunFor is how long each completing pod runs before KWOK has it
// succeed.
const completionRunFor = time.Second

// idle measures w (an idle workload) for contender: -pool-pods pods that
// fit nowhere are created, the contender starts and tries them all, and
// then, under churn (pod completions on KWOK nodes at -completion-rate
// and the churner's nodes, pods and Services), its CPU over
// -idle-duration is the figure.
//
// Completions run on KWOK, which the control plane starts for this
// workload: KWOK plays the kubelet of a few tainted nodes, and each
// completing pod, bound there by name when created (no scheduler places
// it), goes Running, runs completionRunFor and succeeds as a kubelet
// would report it; the harness then deletes it, as a Job's TTL would.
// Each completion is thus the sequence of updates a scheduler sees in a
// cluster, from the component that makes them in tests of the whole
// system, instead of status writes the harness would forge.
func (c *cluster) idle(ctx context.Context, w workload, contender string) (_ *IdleResult, err error) {
	ns, err := c.namespace(ctx, w.name+"-"+contender)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := c.clear(context.WithoutCancel(ctx), w, ns); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	done := make(chan string, 1<<16)
	rec, err := startRecorderWith(ctx, c.client, ns, func(name string) {
		select {
		case done <- name:
		default: // the deleters are behind; the pod stays Succeeded
		}
	})
	if err != nil {
		return nil, err
	}
	defer rec.stop()

	schedulerName := profileName(contender)
	pool := namedPods(c.opts.poolPods, ns, schedulerName, poolPod)
	if err := createPods(ctx, c.client, c.opts.workers, pool); err != nil {
		return nil, err
	}
	if _, err := rec.waitProgress(ctx, c.opts.stall, nil, func() (int, bool) {
		seen, _, _ := rec.poolCounts()
		return seen, seen >= len(pool)
	}); err != nil {
		return nil, err
	}
	if c.opts.quiesce {
		if err := c.quiesce(ctx); err != nil {
			return nil, err
		}
	}

	res := &IdleResult{Namespace: ns, PoolPods: len(pool), Log: c.logPath(ns, contender)}
	res.LoadAvg1 = loadAvg()
	proc, err := startScheduler(c.opts, contender, c.kubeconfig, c.logDir, res.Log)
	if err != nil {
		return nil, err
	}
	defer proc.stop(stopGrace)
	sampler := startCPUSampler(proc.Pid())
	defer sampler.stop()

	// A scheduler under this load may not write every pod's PodScheduled
	// condition (yardmaster's status patches go through a bounded queue
	// that drops the excess): the pool counts as tried once no new
	// condition came for poolQuiet, and how many were written is a
	// figure.
	if _, err := rec.waitPool(ctx, poolQuiet, proc, len(pool)); err != nil {
		return nil, err
	}
	_, attempted, lastAttempt := rec.poolCounts()
	res.PoolAttempted = attempted
	if attempted == 0 {
		return nil, fmt.Errorf("%s tried none of %d pool pods within %s; see %s", contender, len(pool), poolQuiet, res.Log)
	}
	res.PoolAttemptS = lastAttempt.Sub(proc.started).Seconds()
	// Idle means idle: the window opens once the scheduler has used
	// less than settleThreshold in a settleWindow (at most -stall), and
	// the API server and etcd have worked off what it wrote.
	res.PoolCPUSeconds = sampler.settleWithin(ctx, c.opts.stall).Seconds()
	if c.opts.quiesce {
		if err := c.quiesce(ctx); err != nil {
			return nil, err
		}
	}
	logf("  %-12s %-14s %d of %d pool pods marked unschedulable in %.1fs, %.2f CPU s", w.name, contender, attempted, len(pool), res.PoolAttemptS, res.PoolCPUSeconds)

	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	churn := startChurn(churnCtx, c.client, ns, schedulerName, c.opts.churnInterval)
	defer func() {
		if churn != nil {
			churn.stop()
		}
	}()
	comp := startCompletions(churnCtx, c.client, c.opts.workers, ns, schedulerName, c.opts.completionRate, c.opts.kwokNodes, done)
	defer func() {
		stopChurn()
		_ = comp.stop() // a no-op after the stop below
	}()

	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(idleWarmUp):
	}
	pids := c.meterPIDs()
	pids["scheduler"] = proc.Pid()
	meter := newCPUMeter(pids)
	var profile chan error
	if c.opts.profile && proc.pprofURL != "" {
		res.Profile = filepath.Join(c.profileDir, ns+"-"+contender+".cpu.pprof")
		profile = make(chan error, 1)
		url := fmt.Sprintf("%sprofile?seconds=%d", proc.pprofURL, max(1, int(c.opts.idleDuration.Seconds())))
		go func() { profile <- fetchProfile(ctx, url, "", res.Profile) }()
	}
	cpu0, completions0, t0 := sampler.now(), rec.completions(), time.Now()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(c.opts.idleDuration):
	}
	cpu1, completions1, t1 := sampler.now(), rec.completions(), time.Now()
	res.setUsage(meter.read())
	if profile != nil {
		if perr := <-profile; perr != nil {
			logf("  %s: %v", contender, perr)
		}
	}
	stopChurn()
	var cerr error
	res.ChurnOps, cerr = churn.stop()
	churn = nil
	if cerr != nil {
		logf("  %s: %v", contender, cerr)
	}
	if cerr := comp.stop(); cerr != nil {
		logf("  %s: %v", contender, cerr)
	}

	res.WindowS = t1.Sub(t0).Seconds()
	res.CPUSeconds = (cpu1 - cpu0).Seconds()
	res.Millicores = 1000 * res.CPUSeconds / res.WindowS
	res.Completions = completions1 - completions0
	res.CompletionsPerSecond = float64(res.Completions) / res.WindowS
	if st, err := readProcStat(proc.Pid()); err == nil {
		res.PeakRSSMiB = float64(st.peakKiB) / 1024
	}
	if c.opts.profile && proc.pprofURL != "" {
		// What it holds for a pool it cannot place.
		res.HeapProfile = filepath.Join(c.profileDir, ns+"-"+contender+".heap.pprof")
		if perr := fetchProfile(ctx, proc.pprofURL+"heap", "", res.HeapProfile); perr != nil {
			logf("  %s: %v", contender, perr)
		}
	}
	proc.stop(stopGrace)

	var pods []*v1.Pod
	for _, p := range rec.pods() {
		if !strings.HasPrefix(p.Name, donePrefix) {
			pods = append(pods, p)
		}
	}
	if res.Placement, err = c.checkPlacement(ctx, w, ns, pods); err != nil {
		return nil, err
	}
	return res, nil
}

// completions creates pods that KWOK runs and completes, at a steady
// rate, and deletes each once it succeeded.
type completions struct {
	wg      sync.WaitGroup
	created atomic.Int64
	errs    atomic.Int64
	first   atomic.Value // error
}

// startCompletions creates donePods in ns at rate per second, from
// workers clients so a slow request does not delay the next, and deletes
// the pods whose names arrive on succeeded, until ctx ends.
func startCompletions(ctx context.Context, c kubernetes.Interface, workers int, ns, schedulerName string, rate float64, kwokNodes int, succeeded <-chan string) *completions {
	cp := &completions{}
	due := make(chan int)
	cp.wg.Go(func() {
		defer close(due)
		start := time.Now()
		interval := time.Duration(float64(time.Second) / rate)
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(time.Duration(i) * interval))):
			}
			select {
			case <-ctx.Done():
				return
			case due <- i:
			}
		}
	})
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	for range max(1, workers/4) {
		cp.wg.Go(func() {
			for i := range due {
				_, err := c.CoreV1().Pods(ns).Create(ctx, donePod(i, kwokNodes, ns, schedulerName, completionRunFor), metav1.CreateOptions{})
				cp.record(ctx, err)
				if err == nil {
					cp.created.Add(1)
				}
			}
		})
		cp.wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case name := <-succeeded:
					err := c.CoreV1().Pods(ns).Delete(ctx, name, del)
					if !apierrors.IsNotFound(err) {
						cp.record(ctx, err)
					}
				}
			}
		})
	}
	return cp
}

func (cp *completions) record(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	if cp.errs.Add(1) == 1 {
		cp.first.Store(err)
	}
}

// stop waits for the generator (whose context the caller cancels) to end
// and returns its first error.
func (cp *completions) stop() error {
	cp.wg.Wait()
	if e, ok := cp.first.Load().(error); ok {
		return fmt.Errorf("%d completion requests failed, the first: %w", cp.errs.Load(), e)
	}
	return nil
}
