package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// run measures every cluster size in turn and writes the report, also
// after a failure, with what was measured up to it.
func run(ctx context.Context, o *options) (err error) {
	out, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	logDir := filepath.Join(out, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	for _, b := range binariesNeeded(o) {
		if fi, err := os.Stat(b); err != nil || fi.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("binary %q not found or not executable (make build control-plane)", b)
		}
	}

	o.yardmasterHTTP = supportsFlag(o.yardmasterBinary, "--http-bind-address", "run")
	if o.baselineBinary != "" {
		o.baselineHTTP = supportsFlag(o.baselineBinary, "--http-bind-address", "run")
	}
	if o.profile {
		if err := os.MkdirAll(filepath.Join(out, "profiles"), 0o755); err != nil {
			return err
		}
	}

	r := &Report{
		Started: time.Now(),
		Command: strings.TrimSpace("go run ./hack/bench " + strings.Join(os.Args[1:], " ")),
		Machine: describeMachine(o),
		Settings: Settings{
			Nodes: o.nodes, NodeShape: fmt.Sprintf("%s cpu / %s / %d pods, %d zones", nodeCPU, nodeMemory, nodePods, zoneCount),
			Pods: o.pods, Workloads: o.workloads, Schedulers: o.schedulers, Runs: o.runs,
			QPS: o.qps, Burst: o.burst, StreamRate: o.streamRate, StreamCount: o.streamCount, Workers: o.workers,
			Profiled:  o.profile,
			Quiesced:  o.quiesce,
			PodGroups: o.podGroups,
		},
	}
	logf("machine: %s, %d cores, load %.2f; results in %s", r.Machine.CPUModel, r.Machine.Cores, r.Machine.LoadAvg1AtStart, out)
	defer func() {
		if err != nil {
			r.Error = err.Error()
		}
		if werr := finish(r, out); werr != nil {
			err = errors.Join(err, werr)
		}
	}()
	for _, n := range o.nodes {
		if err := runCluster(ctx, o, r, n, out, logDir); err != nil {
			return fmt.Errorf("%d nodes: %w", n, err)
		}
	}
	return splitGangs(r)
}

// splitGangs fails the benchmark if any run left a gang partially bound:
// unlike a slow or stalled contender, that is a wrong result.
func splitGangs(r *Report) error {
	var errs []error
	for _, run := range r.Runs {
		if d := run.Drain; d != nil && d.Placement.PartialGroups > 0 {
			errs = append(errs, fmt.Errorf("%d nodes, %s, %s run %d: %d PodGroups partially bound", run.Nodes, run.Workload, run.Contender, run.Run, d.Placement.PartialGroups))
		}
	}
	return errors.Join(errs...)
}

// apiserverFlags are added to internal/controlplane's defaults.
func apiserverFlags() []string {
	// Pods are cleared between runs with DeleteCollection, which the API
	// server otherwise works through one object at a time.
	// Profiling serves CPU profiles with -profile, and the heap endpoint
	// that quiesce uses to collect the API server's garbage before every
	// drain.
	return []string{"--delete-collection-workers=16", "--profiling=true"}
}

func binariesNeeded(o *options) []string {
	var bins []string
	for _, s := range o.schedulers {
		switch s {
		case yardmasterName:
			bins = append(bins, o.yardmasterBinary)
		case baselineName:
			bins = append(bins, o.baselineBinary)
		case kubeSchedulerName:
			bins = append(bins, o.kubeSchedulerBin)
		}
	}
	return bins
}

// runCluster starts a control plane with n nodes and runs every workload,
// run and contender on it. Results are written after each run, so an
// interrupted benchmark still leaves what it measured.
func runCluster(ctx context.Context, o *options, r *Report, n int, out, logDir string) error {
	logf("%d nodes: starting etcd and kube-apiserver", n)
	kwok := slices.ContainsFunc(o.workloads, func(name string) bool {
		w, _ := workloadByName(name)
		return w.idle
	})
	apiFlags := apiserverFlags()
	if o.podGroups {
		// For every workload of the run, so that the schedulers see the
		// same API throughout: yardmaster watches PodGroups whenever the
		// API server serves them, kube-scheduler then has its gate on.
		apiFlags = append(apiFlags, controlplane.GenericWorkloadAPIServerFlags()...)
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		BinDir:              o.binDir,
		LogDir:              logDir,
		ExtraAPIServerFlags: apiFlags,
		// KWOK completes the idle workload's pods; it runs only when
		// that workload does, since it watches every pod.
		KWOK: kwok,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			logf("stopping control plane: %v", err)
		}
	}()

	rc := cp.RESTConfig(cp.AdminToken)
	rc.QPS, rc.Burst = float32(o.qps), o.burst
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.UserAgent = "yardmaster-bench"
	// v1.37 warns that PodGroup v1beta1 goes away in v1.43 on every
	// request for one: once is enough.
	rc.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	c := &cluster{opts: o, cp: cp, client: client, kubeconfig: cp.AdminKubeconfig, out: out, logDir: logDir, profileDir: filepath.Join(out, "profiles")}

	t := time.Now()
	if err := createNodes(ctx, client, o.workers, n); err != nil {
		return err
	}
	for i := range n {
		c.nodes = append(c.nodes, benchNode(i))
	}
	logf("%d nodes: created %d ready nodes in %s", n, n, time.Since(t).Round(time.Millisecond))
	if kwok {
		if err := createKWOKNodes(ctx, client, o.kwokNodes); err != nil {
			return err
		}
		logf("%d nodes: created %d tainted KWOK nodes for the completions of idle", n, o.kwokNodes)
	}
	if err := ensurePriorityClass(ctx, client); err != nil {
		return err
	}
	if err := checkNodesEmpty(ctx, client); err != nil {
		return err
	}

	if o.warmUp {
		w, _ := workloadByName("basic")
		if err := c.warmUp(ctx, w, o.schedulers, min(o.pods, warmUpPods)); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	for _, name := range o.workloads {
		w, _ := workloadByName(name)
		if err := c.runWorkload(ctx, r, w); err != nil {
			return err
		}
	}
	return nil
}

// runWorkload measures every run of every contender on w. Each run starts
// with the next contender, so that with several runs none is always the
// first after a cleanup. A workload with claims of volumes or devices
// runs with the kube-controller-manager controllers it needs, has a
// warm-up of its own and no ceilings.
func (c *cluster) runWorkload(ctx context.Context, r *Report, w workload) error {
	o := c.opts
	contenders := o.schedulers
	if w.skipsCeilings() {
		contenders = nil
		for _, s := range o.schedulers {
			if !isCeiling(s) {
				contenders = append(contenders, s)
				continue
			}
			note := fmt.Sprintf("%d nodes, %s: %s skipped: it posts Bindings and nothing else, so %s", len(c.nodes), w.name, s, w.ceilingSkipped())
			logf("  %s", note)
			r.Skipped = append(r.Skipped, note)
		}
		if len(contenders) == 0 {
			return nil
		}
	}
	if controllers := w.controllers(); len(controllers) > 0 {
		stop, err := c.startControllers(ctx, controllers, w.controllerManagerFlags())
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		defer stop()
		if o.warmUp {
			n := min(w.count(c.sizes(o.pods)), warmUpPods)
			if err := c.warmUp(ctx, w, contenders, n); err != nil {
				return fmt.Errorf("%s warm-up: %w", w.name, err)
			}
		}
	}
	for i := range o.runs {
		for j := range contenders {
			contender := contenders[(i+j)%len(contenders)]
			if err := ctx.Err(); err != nil {
				return err
			}
			run := &Run{Nodes: len(c.nodes), Workload: w.name, Contender: contender, Run: i + 1}
			r.Runs = append(r.Runs, run)
			if err := c.measure(ctx, w, run); err != nil {
				if ctx.Err() != nil {
					return err
				}
				// A contender that crashes or stalls is a result, not
				// the end of the benchmark; a cluster that cannot be
				// reset is.
				run.Error = err.Error()
				logf("  %s run %d %s: FAILED: %v", w.name, i+1, contender, err)
				if cerr := checkNodesEmpty(ctx, c.client); cerr != nil {
					return cerr
				}
			}
			if err := r.writeJSON(c.out); err != nil {
				return err
			}
		}
	}
	return nil
}

// startControllers starts kube-controller-manager with controllers and
// the extra flags they need, and returns the function that stops it.
func (c *cluster) startControllers(ctx context.Context, controllers, extra []string) (stop func(), err error) {
	t := time.Now()
	c.controllers, err = c.cp.StartControllerManager(ctx, controllers, append(controllerManagerFlags(c.opts.profile), extra...))
	if err != nil {
		return nil, fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	logf("%d nodes: started kube-controller-manager (%s) in %s", len(c.nodes), strings.Join(c.controllers.Controllers, ", "), time.Since(t).Round(time.Millisecond))
	return func() {
		if err := c.controllers.Stop(); err != nil {
			logf("stopping kube-controller-manager: %v", err)
		}
		c.controllers = nil
	}, nil
}

// controllerManagerFlags are added to internal/controlplane's defaults.
func controllerManagerFlags(profile bool) []string {
	flags := []string{
		// The PV binder's resync looks at every claim again and writes a
		// WaitForFirstConsumer event for each one still pending: a
		// thousand writes at once, which would fall at random into one
		// contender's drain. controlplane shortens the 15s default to 2s
		// for tests. Nothing here waits for a resync: the binder acts on
		// the informer events of the schedulers' writes.
		"--pvclaimbinder-sync-period=10m",
	}
	if profile {
		// Without an authorization kubeconfig every path but the
		// always-allowed ones is forbidden.
		flags = append(flags, "--profiling=true", "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*")
	}
	return flags
}

// warmUpPods is the size of the warm-up drains.
const warmUpPods = 500

// warmUp drains a small backlog of w once with every contender and throws
// the figures away. A fresh API server answers its first thousand or so
// requests slower (caches, connection set-up, a 100 MB binary read from
// disk for the first time), and whichever contender ran first would pay
// for all of that.
func (c *cluster) warmUp(ctx context.Context, w workload, contenders []string, count int) error {
	for _, contender := range contenders {
		d, err := c.drain(ctx, w, contender, count)
		if err != nil {
			return fmt.Errorf("%s: %w", contender, err)
		}
		logf("  warm-up      %-14s drained %d %s pods (not recorded)", contender, d.Bound, w.name)
	}
	return nil
}

// sizes returns what the number of pods of a phase depends on, pods being
// -pods or -stream-count.
func (c *cluster) sizes(pods int) sizes {
	return sizes{pods: pods, volumePods: c.opts.volumePods, draPods: c.opts.draPods, nodes: len(c.nodes), measurePods: c.opts.measurePods}
}

// measure runs the drain and, for a real scheduler, the stream phase; for
// an idle workload, the idle phase alone.
func (c *cluster) measure(ctx context.Context, w workload, run *Run) error {
	if w.idle {
		res, err := c.idle(ctx, w, run.Contender)
		run.Idle = res
		if err != nil {
			return fmt.Errorf("idle: %w", err)
		}
		logf("  %-12s run %d %-14s idle over %d pool pods: %6.1f millicores  (%.1f completions/s, %d churn ops in %.0fs)  pool tried in %.1fs, %.1f CPU s  rss %4.0f MiB  violations %d  other load %.2f",
			w.name, run.Run, run.Contender, res.PoolPods, res.Millicores, res.CompletionsPerSecond, res.ChurnOps, res.WindowS, res.PoolAttemptS, res.PoolCPUSeconds, res.PeakRSSMiB, res.Placement.Violations, res.OtherCPUCores)
		return nil
	}
	d, err := c.drain(ctx, w, run.Contender, w.count(c.sizes(c.opts.pods)))
	run.Drain = d
	if err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	switch {
	case d.PoolPods > 0:
		logf("  %-12s run %d %-14s pool of %d: %d marked unschedulable, the last at %.1fs; %.1f CPU s before the first binding", w.name, run.Run, run.Contender, d.PoolPods, d.PoolMarked, d.PoolAttemptS, d.PoolCPUSeconds)
	case d.FillPods > 0:
		logf("  %-12s run %d %-14s %d victims of %d low-priority pods for %d preemptors", w.name, run.Run, run.Contender, d.Victims, d.FillPods, d.Bound)
	case d.ChurnOps > 0:
		logf("  %-12s run %d %-14s %d churn creates and deletes", w.name, run.Run, run.Contender, d.ChurnOps)
	case w.gangs():
		logf("  %-12s run %d %-14s %d PodGroups: %d placed whole, %d partially bound; %.0f pods/s from the scheduler's start",
			w.name, run.Run, run.Contender, d.Placement.Groups, d.Placement.GroupsPlaced, d.Placement.PartialGroups, d.podsPerSecondFromStart())
	}
	logf("  %-12s run %d %-14s drain %5d/%-5d pods %7.0f pods/s  first bind after %5.2fs  cpu %6.2f ms/pod  rss %4.0f MiB  violations %d  stddev %.0fm  other load %.2f  events %d (+%.1fs)",
		w.name, run.Run, run.Contender, d.Bound, d.Pods, d.PodsPerSecond, d.StartToFirstBindS, d.CPUMsPerPod, d.PeakRSSMiB,
		d.Placement.Violations, d.Placement.CPUStddevMilli, d.OtherCPUCores, d.ScheduledEvents, d.LastEventAfterLastBindS)
	if w.controllers() != nil && d.Bound > 0 {
		logf("  %-12s run %d %-14s drain: kube-controller-manager %.2f ms/pod, kube-apiserver+etcd %.2f ms/pod",
			w.name, run.Run, run.Contender, 1000*d.ControllerManagerCPUSeconds/float64(d.Bound), 1000*(d.APIServerCPUSeconds+d.EtcdCPUSeconds)/float64(d.Bound))
	}
	if d.Placement.PartialGroups > 0 {
		// Whatever else it measured: a scheduler that splits a gang
		// has not done the job.
		return fmt.Errorf("%s left %d of %d PodGroups partially bound (the notes show which)", run.Contender, d.Placement.PartialGroups, d.Placement.Groups)
	}
	if isCeiling(run.Contender) || c.opts.streamCount == 0 || w.pool || w.churn || w.preempt || w.gangs() {
		// The scheduler_perf shapes have no stream phase: their
		// background would have to be made again for it (for gangs,
		// the PodGroups; a member's latency would be its group's
		// last arrival's).
		return nil
	}
	s, err := c.stream(ctx, w, run.Contender)
	run.Stream = s
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	logf("  %-12s run %d %-14s stream %5d/%-5d pods at %5.0f/s  p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms  cpu %6.2f ms/pod  violations %d",
		w.name, run.Run, run.Contender, s.Bound, s.Pods, s.AchievedRate, s.P50Ms, s.P99Ms, s.MaxMs, s.CPUMsPerPod, s.Placement.Violations)
	return nil
}

// finish writes results.json, results.md and the plots, and prints the
// table.
func finish(r *Report, out string) error {
	var md bytes.Buffer
	fmt.Fprintf(&md, "Command: `%s`\n\n", r.Command)
	writeMarkdown(&md, r)
	fmt.Printf("\n%s\n", md.String())
	errs := []error{
		r.writeJSON(out),
		os.WriteFile(filepath.Join(out, "results.md"), md.Bytes(), 0o644),
	}
	all := summarize(r.Runs)
	plotted := map[string]bool{}
	for _, s := range all {
		key := fmt.Sprintf("drain-%dnodes-%s.png", s.nodes, s.workload)
		if plotted[key] {
			continue
		}
		plotted[key] = true
		var lines []series
		pods := 0
		for _, name := range []string{yardmasterName, baselineName, kubeSchedulerName, ceilingName, ceilingEventsName} {
			if o := find(all, s, name); o != nil && o.medianRun != nil && len(o.medianRun.Drain.Curve) > 0 {
				lines = append(lines, series{name: name, color: contenderColors[name], points: o.medianRun.Drain.Curve})
				pods = o.pods
			}
		}
		if len(lines) == 0 {
			continue
		}
		title := fmt.Sprintf("backlog drain: %d nodes, %d pods, %s", s.nodes, pods, s.workload)
		errs = append(errs, plotBound(filepath.Join(out, key), title, lines))
	}
	logf("wrote %s/results.json, results.md and drain-*.png", out)
	return errors.Join(errs...)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
