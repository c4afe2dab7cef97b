// Command bench measures yardmaster against the upstream kube-scheduler
// side by side, in one run, on one local API server.
//
// The model: one control plane (etcd + kube-apiserver, internal/controlplane)
// per cluster size, N identical Ready nodes created once, and then for every
// workload and every run the same sequence for each scheduler in turn —
// yardmaster, kube-scheduler, and the ceiling (a client that binds
// round-robin with parallel Binding calls and decides nothing):
//
//	drain:  fresh namespace → M pods created → scheduler started → wait until
//	        every pod is bound → scheduler stopped → placement checked → pods
//	        deleted (grace 0) → cluster checked empty
//	stream: fresh namespace → scheduler started and warmed up with one pod →
//	        pods created at a steady rate → creation→bound latency → checked
//	        → stopped → deleted
//
// The volumes workload gives every pod its own WaitForFirstConsumer claim
// and a local PersistentVolume (storage.go), made before the drain and
// deleted after it; kube-controller-manager runs the storage controllers
// (its PV binder completes every binding a scheduler starts) while that
// workload is measured, and only then, since its pod informers would cost
// the other workloads CPU. The ceilings skip it: they post Bindings
// without binding any volume.
//
// Bind times are when the harness's own watch sees spec.nodeName set, so both
// schedulers are timed by the same clock and the same watch delay. CPU and
// peak RSS come from /proc/<pid>/stat and /proc/<pid>/status (VmHWM) of the
// scheduler process. Every figure that matters is a ratio against
// kube-scheduler measured in the same run, because absolute numbers on a
// shared 2-core machine move with whatever else runs; the CPU that other
// processes used during each measurement is recorded next to it.
//
//	go run ./hack/bench -nodes 1000 -pods 5000 -workloads basic,spread,antiaffinity,mixed
//	go run ./hack/bench -nodes 1000 -workloads volumes -schedulers yardmaster,kube-scheduler
//	go run ./hack/bench -nodes 1000 -workloads dra -stream-count 0 -runs 2
//	go run ./hack/bench -nodes 5000 -workloads unschedulable,mixedchurn -stream-count 0
//	go run ./hack/bench -nodes 1000 -workloads preemption -stream-count 0
//	go run ./hack/bench -nodes 15000 -workloads daemonset -stream-count 0
//	go run ./hack/bench -nodes 5000 -workloads idle
//	go run ./hack/bench -nodes 5000 -workloads smallgangs,largegangs -stream-count 0
//
// The shapes of kube-scheduler's scheduler_perf (scenarios.go) change the
// drain: unschedulable queues a pool of higher-priority pods that fit
// nowhere before the measured pods, so the scheduler tries the whole pool
// first and retries it as the cluster changes; mixedchurn
// creates and deletes a node, a pod and a Service every second around the
// drain; preemption binds low-priority pods that fill every node first.
// idle (idle.go) drains nothing: it measures the scheduler's CPU over a
// pool it cannot place while KWOK, which the control plane then runs,
// completes pods on a few nodes of its own. smallgangs and largegangs
// (gangs.go) drain pods in PodGroups, created before them, on an API
// server that serves PodGroups (whenever they are among -workloads, for
// every workload of the run), and fail a contender's run that leaves a
// group partially bound.
//
// It prints a markdown table and writes results.json, results.md, one PNG
// of pods bound over time per cluster size and workload, and every
// component's log into -out. Everything it starts is stopped when it
// returns, also on error and on SIGINT/SIGTERM (a second signal exits at
// once; child processes die with it through their parent-death signal).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, cancel := signalContext(context.Background())
	defer cancel()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		cancel()
		os.Exit(1)
	}
}

// Names of the contenders, as given to -schedulers.
const (
	yardmasterName    = "yardmaster"
	kubeSchedulerName = "kube-scheduler"
	ceilingName       = "ceiling"
	// ceilingEventsName is the ceiling that also posts the Scheduled event
	// a scheduler posts for every pod: the like-for-like ceiling when the
	// API server shares the machine's cores. Opt-in.
	ceilingEventsName = "ceiling-events"
	// baselineName is a second yardmaster binary (-baseline-binary), say
	// one built from an earlier commit: a change's effect on a drain,
	// measured against the same API server in the same run. Opt-in.
	baselineName = "baseline"
)

// isCeiling reports whether contender c is one of the ceilings, which bind
// from the harness itself and make no decisions.
func isCeiling(c string) bool { return c == ceilingName || c == ceilingEventsName }

// options are the command line of the harness.
type options struct {
	nodes []int
	pods  int
	// volumePods is the number of pods (each with its claim and local
	// volume) of the volumes workload; 0 means one per node.
	volumePods int
	// draPods is the number of pods (each claiming one device) of the dra
	// workload; 0 means one per node.
	draPods    int
	workloads  []string
	schedulers []string
	runs       int
	warmUp     bool
	// quiesce starts every drain from a quiet API server whose garbage
	// has been collected.
	quiesce bool
	// profile saves a CPU profile of every scheduler drain.
	profile bool

	// The scheduler_perf shapes (scenarios.go, idle.go).
	measurePods    int
	poolPods       int
	churnInterval  time.Duration
	completionRate float64
	idleDuration   time.Duration
	kwokNodes      int
	// podGroups says that a gang workload runs: the API server serves
	// PodGroups and kube-scheduler runs with GenericWorkload.
	podGroups bool

	qps   float64
	burst int

	streamRate  float64
	streamCount int

	// workers is the number of parallel API clients that create nodes and
	// pods and, in the ceiling, post Bindings.
	workers int
	// stall ends a phase that made no progress for this long.
	stall time.Duration

	out                string
	yardmasterBinary   string
	baselineBinary     string
	kubeSchedulerBin   string
	binDir             string
	yardmasterFlags    []string
	kubeSchedulerFlags []string
	// yardmasterHTTP and baselineHTTP record that the binary has
	// --http-bind-address.
	yardmasterHTTP, baselineHTTP bool
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var (
		nodes, workloads, schedulers string
		ymFlags, ksFlags             string
		o                            options
	)
	binDir := envOr("YARDMASTER_BIN_DIR", "bin")
	fs.StringVar(&nodes, "nodes", "1000", "cluster sizes, comma-separated; each gets its own control plane")
	fs.IntVar(&o.pods, "pods", 2000, "pods per drain for basic, spread and mixed (antiaffinity always uses one pod per node, volumes -volume-pods, dra -dra-pods)")
	fs.IntVar(&o.volumePods, "volume-pods", 0, "pods per drain for volumes, each with its own claim and local volume, the volumes spread evenly over the nodes; 0 means one per node")
	fs.IntVar(&o.draPods, "dra-pods", 0, "pods per drain for dra, each claiming one of the 8 devices per node; 0 means one per node")
	fs.StringVar(&workloads, "workloads", "basic,spread,smallgangs,largegangs", "comma-separated: "+strings.Join(workloadNames(), ","))
	fs.StringVar(&schedulers, "schedulers", "yardmaster,kube-scheduler,ceiling,ceiling-events", "comma-separated; each run rotates the order. ceiling binds round-robin with no decisions, ceiling-events also posts the Scheduled event per pod")
	fs.IntVar(&o.runs, "runs", 1, "repetitions of every (workload, scheduler); the table shows medians")
	fs.BoolVar(&o.warmUp, "warmup", true, "drain a small unrecorded backlog with every contender first, so none pays for a cold API server")
	fs.Float64Var(&o.qps, "qps", 5000, "clientConnection.qps of both schedulers and of the harness's clients")
	fs.IntVar(&o.burst, "burst", 5000, "clientConnection.burst of both schedulers and of the harness's clients")
	fs.Float64Var(&o.streamRate, "stream-rate", 100, "pods created per second in the stream phase")
	fs.IntVar(&o.streamCount, "stream-count", 1000, "pods in the stream phase (antiaffinity: at most one per node); 0 skips it")
	fs.IntVar(&o.workers, "workers", 32, "parallel clients creating objects and, in the ceiling, binding")
	fs.IntVar(&o.measurePods, "measure-pods", 0, "measured pods of unschedulable (default 5000), mixedchurn (10000), smallgangs (3000: 1000 groups of 3), largegangs (10000: 10 groups of 1000), preemption and daemonset (one per node); 0 means those defaults, the first four capped at half the cluster's pod slots")
	fs.IntVar(&o.poolPods, "pool-pods", 20000, "pods that fit nowhere, queued before unschedulable's measured pods and idling in idle")
	fs.DurationVar(&o.churnInterval, "churn-interval", time.Second, "mixedchurn and idle: a node, an unschedulable pod and a Service are created at one tick and deleted at the next")
	fs.Float64Var(&o.completionRate, "completion-rate", 50, "idle: pods completed per second on KWOK nodes")
	fs.DurationVar(&o.idleDuration, "idle-duration", 60*time.Second, "idle: the measured window of churn")
	fs.IntVar(&o.kwokNodes, "kwok-nodes", 20, "idle: KWOK nodes (tainted; only the completing pods run there)")
	fs.DurationVar(&o.stall, "stall", 60*time.Second, "give up on a phase after this long without a new binding")
	fs.BoolVar(&o.quiesce, "quiesce", true, "before every drain's clock starts, have kube-apiserver collect its garbage and wait until it and etcd are idle, so no contender pays for the garbage of the run before it")
	fs.BoolVar(&o.profile, "profile", false, "save CPU profiles of each drain (scheduler and kube-apiserver) and a heap profile of the scheduler into <out>/profiles; the profiled runs pay for it, do not quote them")
	fs.StringVar(&o.out, "out", "_output/bench", "directory for results.json, results.md, PNGs and logs")
	fs.StringVar(&o.binDir, "bin-dir", binDir, "directory with etcd and kube-apiserver (and the defaults below)")
	fs.StringVar(&o.yardmasterBinary, "yardmaster-binary", envOr("YARDMASTER_BINARY", ""), "yardmaster binary (default <bin-dir>/yardmaster; build it with `make build`)")
	fs.StringVar(&o.baselineBinary, "baseline-binary", "", "a second yardmaster binary, run as the contender \"baseline\" (add it to -schedulers), to compare two builds in one run")
	fs.StringVar(&o.kubeSchedulerBin, "kube-scheduler-binary", "", "kube-scheduler binary (default <bin-dir>/kube-scheduler)")
	fs.StringVar(&ymFlags, "yardmaster-flags", "", "extra flags for `yardmaster run`, space-separated")
	fs.StringVar(&ksFlags, "kube-scheduler-flags", "", "extra flags for kube-scheduler, space-separated")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	for _, s := range splitList(nodes) {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-nodes: %q is not a positive integer", s)
		}
		o.nodes = append(o.nodes, n)
	}
	o.workloads = splitList(workloads)
	for _, name := range o.workloads {
		w, ok := workloadByName(name)
		if !ok {
			return nil, fmt.Errorf("-workloads: unknown workload %q (known: %s)", name, strings.Join(workloadNames(), ","))
		}
		o.podGroups = o.podGroups || w.gangs()
	}
	o.schedulers = splitList(schedulers)
	for _, s := range o.schedulers {
		switch s {
		case yardmasterName, kubeSchedulerName, ceilingName, ceilingEventsName:
		case baselineName:
			if o.baselineBinary == "" {
				return nil, errors.New("-schedulers: baseline needs -baseline-binary")
			}
		default:
			return nil, fmt.Errorf("-schedulers: unknown scheduler %q (known: yardmaster,kube-scheduler,ceiling,ceiling-events,baseline)", s)
		}
	}
	switch {
	case len(o.nodes) == 0 || len(o.workloads) == 0 || len(o.schedulers) == 0:
		return nil, errors.New("-nodes, -workloads and -schedulers must not be empty")
	case o.pods <= 0 || o.runs <= 0 || o.workers <= 0:
		return nil, errors.New("-pods, -runs and -workers must be positive")
	case o.volumePods < 0 || o.draPods < 0 || o.measurePods < 0:
		return nil, errors.New("-volume-pods, -dra-pods and -measure-pods must be >= 0")
	case o.poolPods <= 0 || o.churnInterval <= 0 || o.completionRate <= 0 || o.idleDuration <= 0 || o.kwokNodes <= 0:
		return nil, errors.New("-pool-pods, -churn-interval, -completion-rate, -idle-duration and -kwok-nodes must be positive")
	case o.qps <= 0 || o.burst <= 0:
		return nil, errors.New("-qps and -burst must be positive")
	case o.streamCount < 0 || (o.streamCount > 0 && o.streamRate <= 0):
		return nil, errors.New("-stream-count must be >= 0 and -stream-rate positive")
	}
	if smallest := slices.Min(o.nodes); o.draPods > devicesPerNode*smallest {
		return nil, fmt.Errorf("-dra-pods %d: %d nodes have only %d devices", o.draPods, smallest, devicesPerNode*smallest)
	}
	if o.yardmasterBinary == "" {
		o.yardmasterBinary = filepath.Join(o.binDir, "yardmaster")
	}
	if o.kubeSchedulerBin == "" {
		o.kubeSchedulerBin = filepath.Join(o.binDir, "kube-scheduler")
	}
	o.yardmasterFlags = strings.Fields(ymFlags)
	o.kubeSchedulerFlags = strings.Fields(ksFlags)
	return &o, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// signalContext returns a context cancelled on the first SIGINT or SIGTERM;
// a second one exits at once. Children started by the harness and by
// internal/controlplane carry Pdeathsig=SIGKILL, so they die with it.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			fmt.Fprintf(os.Stderr, "\nbench: %v: stopping everything (again to exit at once)\n", s)
			cancel()
		case <-ctx.Done():
			signal.Stop(ch)
			return
		}
		<-ch
		os.Exit(130)
	}()
	return ctx, cancel
}
