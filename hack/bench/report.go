package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Report is everything one invocation measured; results.json holds it.
type Report struct {
	Started  time.Time `json:"started"`
	Command  string    `json:"command"`
	Machine  Machine   `json:"machine"`
	Settings Settings  `json:"settings"`
	Runs     []*Run    `json:"runs"`
	// Skipped says which contenders sat out which workloads, and why.
	Skipped []string `json:"skipped,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Machine describes where the figures were taken.
type Machine struct {
	CPUModel             string  `json:"cpu_model"`
	Cores                int     `json:"cores"`
	MemoryGiB            float64 `json:"memory_gib"`
	Kernel               string  `json:"kernel"`
	GoVersion            string  `json:"go_version"`
	YardmasterVersion    string  `json:"yardmaster_version"`
	KubeSchedulerVersion string  `json:"kube_scheduler_version"`
	// BaselineVersion is the version of -baseline-binary, if one ran.
	BaselineVersion string `json:"baseline_version,omitempty"`
	// Tree is `git describe` of the working tree the harness ran from.
	Tree            string  `json:"tree"`
	LoadAvg1AtStart float64 `json:"loadavg1_at_start"`
}

// Settings are the inputs every contender shared.
type Settings struct {
	Nodes       []int    `json:"nodes"`
	NodeShape   string   `json:"node_shape"`
	Pods        int      `json:"pods"`
	Workloads   []string `json:"workloads"`
	Schedulers  []string `json:"schedulers"`
	Runs        int      `json:"runs"`
	QPS         float64  `json:"qps"`
	Burst       int      `json:"burst"`
	StreamRate  float64  `json:"stream_rate"`
	StreamCount int      `json:"stream_count"`
	Workers     int      `json:"workers"`
	// Profiled runs carry the cost of CPU profiling.
	Profiled bool `json:"profiled,omitempty"`
	// Quiesced drains started from a collected, idle API server.
	Quiesced bool `json:"quiesced,omitempty"`
	// PodGroups: the API server served PodGroups and kube-scheduler ran
	// with its GenericWorkload gate, for every workload (a gang workload
	// ran).
	PodGroups bool `json:"pod_groups,omitempty"`
}

// Run is one contender on one workload once.
type Run struct {
	Nodes     int           `json:"nodes"`
	Workload  string        `json:"workload"`
	Contender string        `json:"scheduler"`
	Run       int           `json:"run"`
	Drain     *DrainResult  `json:"drain,omitempty"`
	Stream    *StreamResult `json:"stream,omitempty"`
	Idle      *IdleResult   `json:"idle,omitempty"`
	Error     string        `json:"error,omitempty"`
}

// Usage is the CPU the rest of the machine used during a measurement.
type Usage struct {
	ElapsedS            float64 `json:"elapsed_s"`
	APIServerCPUSeconds float64 `json:"apiserver_cpu_s"`
	EtcdCPUSeconds      float64 `json:"etcd_cpu_s"`
	HarnessCPUSeconds   float64 `json:"harness_cpu_s"`
	// ControllerManagerCPUSeconds is kube-controller-manager's, when the
	// workload runs it.
	ControllerManagerCPUSeconds float64 `json:"controller_manager_cpu_s,omitempty"`
	// OtherCPUCores is the average number of cores busy with processes
	// that are not part of the benchmark (other people's compiles).
	OtherCPUCores float64 `json:"other_cpu_cores"`
	LoadAvg1      float64 `json:"loadavg1_before"`
}

func (u *Usage) setUsage(c cpuUsage) {
	u.ElapsedS = c.Elapsed.Seconds()
	u.APIServerCPUSeconds = c.Process["kube-apiserver"].Seconds()
	u.EtcdCPUSeconds = c.Process["etcd"].Seconds()
	u.HarnessCPUSeconds = c.Process["harness"].Seconds()
	u.ControllerManagerCPUSeconds = c.Process["kube-controller-manager"].Seconds()
	if c.Elapsed > 0 {
		u.OtherCPUCores = c.Other.Seconds() / c.Elapsed.Seconds()
	}
}

// DrainResult is one backlog drain.
type DrainResult struct {
	Namespace string `json:"namespace"`
	Log       string `json:"log,omitempty"`
	Pods      int    `json:"pods"`
	Bound     int    `json:"bound"`
	Complete  bool   `json:"complete"`
	// StartToFirstBindS runs from the process start (the ceiling: its
	// first request) to the first binding the watch saw.
	StartToFirstBindS float64 `json:"start_to_first_bind_s"`
	FirstToLastBindS  float64 `json:"first_to_last_bind_s"`
	// PodsPerSecond is (bound-1) / (last bind - first bind).
	PodsPerSecond float64 `json:"pods_per_second"`
	// CPUSeconds is the scheduler's CPU from its start until it went quiet
	// after the last binding; CPUMsPerPod divides it by the pods bound.
	CPUSeconds  float64 `json:"cpu_s"`
	CPUMsPerPod float64 `json:"cpu_ms_per_pod"`
	// DrainCPUSeconds is the part between the first and the last binding.
	DrainCPUSeconds float64 `json:"drain_cpu_s"`
	PeakRSSMiB      float64 `json:"peak_rss_mib"`
	// ScheduledEvents counts the pods whose Scheduled event was written
	// (the ceiling writes none); LastEventAfterLastBindS is how long after
	// the last binding the last of them appeared. The harness waits for
	// them before it reads the CPU figures.
	ScheduledEvents         int     `json:"scheduled_events"`
	LastEventAfterLastBindS float64 `json:"last_event_after_last_bind_s"`
	// PoolPods fit nowhere and were queued, at a higher priority, before
	// the measured pods; when the drain ended PoolMarked of them had
	// their PodScheduled condition False (a scheduler may write it after
	// its Bindings), the last PoolAttemptS after the scheduler started.
	// The scheduler used PoolCPUSeconds until the first measured pod was
	// bound; CPUSeconds starts there.
	PoolPods       int     `json:"pool_pods,omitempty"`
	PoolMarked     int     `json:"pool_marked,omitempty"`
	PoolAttemptS   float64 `json:"pool_attempt_s,omitempty"`
	PoolCPUSeconds float64 `json:"pool_cpu_s,omitempty"`
	// FillPods are the low-priority pods bound before a preemption drain;
	// Victims how many of them the scheduler deleted.
	FillPods int `json:"fill_pods,omitempty"`
	Victims  int `json:"victims,omitempty"`
	// ChurnOps counts the creates and deletes of nodes, pods and Services
	// done around the drain.
	ChurnOps int64 `json:"churn_ops,omitempty"`
	Usage
	Placement Placement `json:"placement"`
	Curve     []Point   `json:"curve"`
	// With -profile: the scheduler's CPU profile of the drain and heap
	// profile at its end, and kube-apiserver's (and, when it runs,
	// kube-controller-manager's) CPU profile of the drain.
	Profile                  string `json:"profile,omitempty"`
	HeapProfile              string `json:"heap_profile,omitempty"`
	APIServerProfile         string `json:"apiserver_profile,omitempty"`
	ControllerManagerProfile string `json:"controller_manager_profile,omitempty"`
	// APIServerMetrics are kube-apiserver's /metrics before the drain
	// and after it, with -profile; ControllerManagerMetrics
	// kube-controller-manager's.
	APIServerMetrics         [2]string `json:"apiserver_metrics,omitempty"`
	ControllerManagerMetrics [2]string `json:"controller_manager_metrics,omitempty"`
}

// podsPerSecondFromStart is the pods bound per second from the
// scheduler's start (the ceiling's: its first request) to the last
// binding. A scheduler that decides a gang whole before it binds any of
// it (both do), or nominates every preemptor first, spends time before
// its first binding that the rate from the first binding leaves out.
func (d *DrainResult) podsPerSecondFromStart() float64 {
	if t := d.StartToFirstBindS + d.FirstToLastBindS; t > 0 {
		return float64(d.Bound) / t
	}
	return 0
}

// StreamResult is one steady-rate run.
type StreamResult struct {
	Namespace    string  `json:"namespace"`
	Log          string  `json:"log,omitempty"`
	Pods         int     `json:"pods"`
	Bound        int     `json:"bound"`
	Complete     bool    `json:"complete"`
	TargetRate   float64 `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	// Latencies run from the create request being sent to the watch
	// seeing the pod bound.
	P50Ms float64 `json:"p50_ms"`
	P90Ms float64 `json:"p90_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// CPUSeconds is the scheduler's CPU from the first measured create
	// until it went quiet after the last binding.
	CPUSeconds  float64 `json:"cpu_s"`
	CPUMsPerPod float64 `json:"cpu_ms_per_pod"`
	Usage
	Placement Placement `json:"placement"`
}

// Point is one point of a pods-bound-over-time curve.
type Point struct {
	T float64 `json:"t"`
	N int     `json:"n"`
}

func describeMachine(o *options) Machine {
	m := Machine{
		Cores:                runtime.NumCPU(),
		GoVersion:            runtime.Version(),
		YardmasterVersion:    binaryVersion(o.yardmasterBinary, "version"),
		KubeSchedulerVersion: binaryVersion(o.kubeSchedulerBin),
		LoadAvg1AtStart:      loadAvg(),
		Tree:                 gitDescribe(),
	}
	if o.baselineBinary != "" {
		m.BaselineVersion = binaryVersion(o.baselineBinary, "version")
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemoryGiB = math.Round(float64(parseStatusKiB(b, "MemTotal:"))/(1<<20)*10) / 10
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

func gitDescribe() string {
	out, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// writeJSON writes the report to dir/results.json.
func (r *Report) writeJSON(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644)
}

// writeGangs writes the gangs of each summary's median run: how many
// PodGroups were placed whole and how many split (any split fails the
// run, so a summary shows none), and the rate from the scheduler's start.
func writeGangs(w io.Writer, all []*summary) {
	var rows []string
	for _, s := range all {
		if s.medianRun == nil || s.medianRun.Drain.Placement.Groups == 0 {
			continue
		}
		d := s.medianRun.Drain
		rows = append(rows, fmt.Sprintf("| %d | %s | %s | %d | %d | %d | %.1f | %.0f |",
			s.nodes, s.workload, s.contender, d.Placement.Groups, d.Placement.GroupsPlaced, d.Placement.PartialGroups, d.StartToFirstBindS, d.podsPerSecondFromStart()))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nGangs (median runs): PodGroups placed whole (at least minCount bound) and partially bound (fails the run); a scheduler that decides a whole group before it binds any of it spends time before its first binding, which the rate from the start counts and the drain rate leaves out:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| nodes | workload | scheduler | PodGroups | placed whole | partially bound | first bind after s | pods/s from the start |")
	fmt.Fprintln(w, "|---:|---|---|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
}

// summary is the median over the runs of one (nodes, workload, contender)
// that finished without error.
type summary struct {
	nodes     int
	workload  string
	contender string
	runs      int

	pods, bound       int
	podsPerSecond     float64
	cpuMsPerPod       float64
	peakRSSMiB        float64
	otherCores        float64
	apiMsPerPod       float64 // kube-apiserver + etcd CPU per pod bound
	p50, p99          float64
	hasStream         bool
	streamCPUMsPerPod float64
	violations        int // the most any run had, drain plus stream
	spreadSkew        int
	stddev            float64
	events            int     // the fewest Scheduled events any run wrote
	eventLagS         float64 // last Scheduled event after the last binding
	medianRun         *Run    // the run whose drain rate is the median, for the plot
}

func summarize(runs []*Run) []*summary {
	type key struct {
		nodes          int
		workload, name string
	}
	var order []key
	groups := map[key][]*Run{}
	for _, r := range runs {
		if r.Idle != nil || isIdleWorkload(r.Workload) {
			continue // idleSummaries
		}
		k := key{r.Nodes, r.Workload, r.Contender}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		if r.Error == "" && r.Drain != nil {
			groups[k] = append(groups[k], r)
		} else {
			groups[k] = append(groups[k], nil)
		}
	}
	var out []*summary
	for _, k := range order {
		var ok []*Run
		for _, r := range groups[k] {
			if r != nil {
				ok = append(ok, r)
			}
		}
		s := &summary{nodes: k.nodes, workload: k.workload, contender: k.name, runs: len(ok)}
		out = append(out, s)
		if len(ok) == 0 {
			continue
		}
		sort.Slice(ok, func(i, j int) bool { return ok[i].Drain.PodsPerSecond < ok[j].Drain.PodsPerSecond })
		s.medianRun = ok[(len(ok)-1)/2]
		s.pods, s.bound = s.medianRun.Drain.Pods, s.medianRun.Drain.Bound
		s.podsPerSecond = median(ok, func(r *Run) float64 { return r.Drain.PodsPerSecond })
		s.cpuMsPerPod = median(ok, func(r *Run) float64 { return r.Drain.CPUMsPerPod })
		s.peakRSSMiB = median(ok, func(r *Run) float64 { return r.Drain.PeakRSSMiB })
		s.otherCores = median(ok, func(r *Run) float64 { return r.Drain.OtherCPUCores })
		s.apiMsPerPod = median(ok, func(r *Run) float64 {
			return 1000 * (r.Drain.APIServerCPUSeconds + r.Drain.EtcdCPUSeconds) / float64(max(1, r.Drain.Bound))
		})
		s.stddev = median(ok, func(r *Run) float64 { return r.Drain.Placement.CPUStddevMilli })
		s.eventLagS = median(ok, func(r *Run) float64 { return r.Drain.LastEventAfterLastBindS })
		s.events = ok[0].Drain.ScheduledEvents
		for _, r := range ok {
			s.events = min(s.events, r.Drain.ScheduledEvents)
		}
		for _, r := range ok {
			v := r.Drain.Placement.Violations
			skew := r.Drain.Placement.MaxSkew
			if r.Stream != nil {
				v += r.Stream.Placement.Violations
				skew = max(skew, r.Stream.Placement.MaxSkew)
			}
			s.violations = max(s.violations, v)
			s.spreadSkew = max(s.spreadSkew, skew)
			s.bound = min(s.bound, r.Drain.Bound)
		}
		var streamed []*Run
		for _, r := range ok {
			if r.Stream != nil {
				streamed = append(streamed, r)
			}
		}
		if len(streamed) > 0 {
			s.hasStream = true
			s.p50 = median(streamed, func(r *Run) float64 { return r.Stream.P50Ms })
			s.p99 = median(streamed, func(r *Run) float64 { return r.Stream.P99Ms })
			s.streamCPUMsPerPod = median(streamed, func(r *Run) float64 { return r.Stream.CPUMsPerPod })
		}
	}
	return out
}

func median(runs []*Run, f func(*Run) float64) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	sort.Float64s(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// find returns the summary of contender on the same cluster and workload
// as s, or nil.
func find(all []*summary, s *summary, contender string) *summary {
	for _, o := range all {
		if o.nodes == s.nodes && o.workload == s.workload && o.contender == contender && o.runs > 0 {
			return o
		}
	}
	return nil
}

// writeMarkdown writes the results table and, when yardmaster and
// kube-scheduler both ran, the targets table.
func writeMarkdown(w io.Writer, r *Report) {
	all := summarize(r.Runs)
	m := r.Machine
	fmt.Fprintf(w, "Machine: %s, %d cores, %.0f GiB; Linux %s; %s. yardmaster %s, kube-scheduler %s.\n",
		m.CPUModel, m.Cores, m.MemoryGiB, m.Kernel, m.GoVersion, m.YardmasterVersion, m.KubeSchedulerVersion)
	if m.BaselineVersion != "" {
		fmt.Fprintf(w, "baseline: yardmaster %s.\n", m.BaselineVersion)
	}
	st := r.Settings
	stream := "no stream phase"
	if st.StreamCount > 0 {
		stream = fmt.Sprintf("stream: %d pods at %g/s", st.StreamCount, st.StreamRate)
	}
	fmt.Fprintf(w, "Nodes: %s each; clientConnection qps/burst %g/%d for both; %d run(s) each, medians shown; %s.\n\n",
		st.NodeShape, st.QPS, st.Burst, st.Runs, stream)
	if st.Quiesced {
		fmt.Fprintf(w, "Every drain started after kube-apiserver had collected its garbage and it and etcd were idle (-quiesce).\n\n")
	}
	if st.PodGroups {
		fmt.Fprintf(w, "The API server served PodGroups (scheduling.k8s.io/v1beta1, GenericWorkload) for every workload, and kube-scheduler ran with --feature-gates=GenericWorkload=true.\n\n")
	}
	if st.Profiled {
		fmt.Fprintf(w, "**Profiled run: both schedulers served CPU profiles during their drains; the figures carry that cost.**\n\n")
	}

	fmt.Fprintln(w, "| nodes | workload | scheduler | pods bound | drain pods/s | × kube-scheduler | of ceiling | of ceiling-events | CPU ms/pod | apiserver+etcd ms/pod | peak RSS MiB | stream p50 / p99 ms | violations | CPU-request stddev (m) | other load (cores) | Scheduled events (last, s after last bind) |")
	fmt.Fprintln(w, "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range all {
		if s.runs == 0 {
			fmt.Fprintf(w, "| %d | %s | %s | failed (see results.json) | | | | | | | | | | | | |\n", s.nodes, s.workload, s.contender)
			continue
		}
		ks := find(all, s, kubeSchedulerName)
		vsKS := "—"
		if ks != nil && ks.podsPerSecond > 0 && s.contender != kubeSchedulerName {
			vsKS = fmt.Sprintf("%.2f×", s.podsPerSecond/ks.podsPerSecond)
		}
		// A scheduler's share of what a client making no decisions drains.
		share := func(ceilingContender string) string {
			c := find(all, s, ceilingContender)
			if c == nil || c.podsPerSecond <= 0 || isCeiling(s.contender) {
				return "—"
			}
			return fmt.Sprintf("%.0f%%", 100*s.podsPerSecond/c.podsPerSecond)
		}
		ofCeil, ofCeilEvents := share(ceilingName), share(ceilingEventsName)
		cpu, rss, lat, viol := "—", "—", "—", "—"
		if !isCeiling(s.contender) {
			cpu = fmt.Sprintf("%.2f", s.cpuMsPerPod)
			rss = fmt.Sprintf("%.0f", s.peakRSSMiB)
			viol = fmt.Sprintf("%d", s.violations)
		}
		if s.hasStream {
			lat = fmt.Sprintf("%.0f / %.0f", s.p50, s.p99)
		}
		events := "—"
		if s.contender != ceilingName {
			events = fmt.Sprintf("%d (+%.1f)", s.events, s.eventLagS)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %d/%d | %.0f | %s | %s | %s | %s | %.2f | %s | %s | %s | %.0f | %.2f | %s |\n",
			s.nodes, s.workload, s.contender, s.bound, s.pods, s.podsPerSecond, vsKS, ofCeil, ofCeilEvents, cpu, s.apiMsPerPod, rss, lat, viol, s.stddev, s.otherCores, events)
	}

	var targets []string
	for _, s := range all {
		if s.contender != yardmasterName || s.runs == 0 {
			continue
		}
		ks, ceil := find(all, s, kubeSchedulerName), find(all, s, ceilingName)
		if ks == nil {
			continue
		}
		cell := func(ok bool, format string, args ...any) string {
			mark := "✗"
			if ok {
				mark = "✓"
			}
			return fmt.Sprintf(format, args...) + " " + mark
		}
		ratio := func(a, b float64) float64 {
			if b == 0 {
				return math.Inf(1)
			}
			return a / b
		}
		drain := cell(s.podsPerSecond >= 2*ks.podsPerSecond, "%.2f×", ratio(s.podsPerSecond, ks.podsPerSecond))
		ofCeil := "—"
		if ceil != nil {
			ofCeil = cell(s.podsPerSecond >= 0.9*ceil.podsPerSecond, "%.0f%%", 100*ratio(s.podsPerSecond, ceil.podsPerSecond))
		}
		cpu := cell(s.cpuMsPerPod <= ks.cpuMsPerPod/3, "%.2f×", ratio(s.cpuMsPerPod, ks.cpuMsPerPod))
		rss := cell(s.peakRSSMiB <= ks.peakRSSMiB, "%.2f×", ratio(s.peakRSSMiB, ks.peakRSSMiB))
		p99 := "—"
		if s.hasStream && ks.hasStream {
			p99 = cell(s.p99 <= ks.p99, "%.2f×", ratio(s.p99, ks.p99))
		}
		viol := cell(s.violations == 0, "%d", s.violations)
		even := cell(s.stddev <= ks.stddev*1.05+1, "%.0f vs %.0f m", s.stddev, ks.stddev)
		targets = append(targets, fmt.Sprintf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |",
			s.nodes, s.workload, drain, ofCeil, cpu, rss, p99, viol, even))
	}
	if len(targets) > 0 {
		fmt.Fprintln(w, "\nyardmaster against the targets (ratios to kube-scheduler in the same run):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| nodes | workload | drain ≥ 2× | ≥ 90% of ceiling | CPU/pod ≤ 1/3 | peak RSS ≤ 1× | stream p99 ≤ 1× | zero violations | evenness no worse (stddev, 5% + 1m slack) |")
		fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, t := range targets {
			fmt.Fprintln(w, t)
		}
	}
	writeShapes(w, all)
	writeGangs(w, all)
	writeIdle(w, r.Runs)
	var notes []string
	for _, sk := range r.Skipped {
		notes = append(notes, "- "+sk)
	}
	for _, run := range r.Runs {
		switch {
		case run.Error != "":
			notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d failed: %s", run.Nodes, run.Workload, run.Contender, run.Run, firstLine(run.Error)))
			if d := run.Drain; d != nil && d.Placement.PartialGroups > 0 {
				// The groups it split, whatever the notes' limit.
				for _, ex := range d.Placement.Examples {
					notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d (drain): %s", run.Nodes, run.Workload, run.Contender, run.Run, ex))
				}
			}
		case run.Idle != nil:
			if run.Idle.OtherCPUCores > noisyOtherCores {
				notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d (idle): noisy, other processes kept %.2f cores busy", run.Nodes, run.Workload, run.Contender, run.Run, run.Idle.OtherCPUCores))
			}
			for _, ex := range run.Idle.Placement.Examples {
				if len(notes) < 12 {
					notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d (idle): %s", run.Nodes, run.Workload, run.Contender, run.Run, ex))
				}
			}
		case run.Drain != nil:
			if run.Drain.OtherCPUCores > noisyOtherCores {
				notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d (drain): noisy, other processes kept %.2f cores busy", run.Nodes, run.Workload, run.Contender, run.Run, run.Drain.OtherCPUCores))
			}
			if isCeiling(run.Contender) {
				continue // places pods round-robin by design; nothing to check
			}
			for _, ex := range run.Drain.Placement.Examples {
				if len(notes) < 12 {
					notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d (drain): %s", run.Nodes, run.Workload, run.Contender, run.Run, ex))
				}
			}
			if !run.Drain.Complete {
				notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d (drain): only %d of %d pods bound", run.Nodes, run.Workload, run.Contender, run.Run, run.Drain.Bound, run.Drain.Pods))
			}
			if s := run.Stream; s != nil {
				for _, ex := range s.Placement.Examples {
					if len(notes) < 12 {
						notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d (stream): %s", run.Nodes, run.Workload, run.Contender, run.Run, ex))
					}
				}
				if !s.Complete {
					notes = append(notes, fmt.Sprintf("- %d nodes, %s, %s run %d (stream): only %d of %d pods bound", run.Nodes, run.Workload, run.Contender, run.Run, s.Bound, s.Pods))
				}
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
}

// noisyOtherCores is the load from outside the benchmark above which a
// run is flagged: on 2 cores, a quarter of a core elsewhere visibly moves
// both the throughput and the CPU per pod (more preemption, colder caches).
const noisyOtherCores = 0.25

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func isIdleWorkload(name string) bool {
	w, ok := workloadByName(name)
	return ok && w.idle
}

// writeShapes writes what the scheduler_perf shapes add to a drain, from
// each summary's median run: how long the pool took to try, the victims
// of preemption, the churn around the drain.
func writeShapes(w io.Writer, all []*summary) {
	var rows []string
	for _, s := range all {
		if s.medianRun == nil || isCeiling(s.contender) {
			continue
		}
		d := s.medianRun.Drain
		if d.PoolPods == 0 && d.FillPods == 0 && d.ChurnOps == 0 {
			continue
		}
		pool, victims, churn := "—", "—", "—"
		if d.PoolPods > 0 {
			pool = fmt.Sprintf("%d (%d marked, the last at %.1f s), %.1f CPU s", d.PoolPods, d.PoolMarked, d.PoolAttemptS, d.PoolCPUSeconds)
		}
		if d.FillPods > 0 {
			perPod := 0.0
			if d.Bound > 0 {
				perPod = float64(d.Victims) / float64(d.Bound)
			}
			// A scheduler may nominate every preemptor before it binds
			// the first (kube-scheduler does), so the rate from the first
			// to the last binding flatters it: the rate from its start
			// is the one to compare.
			victims = fmt.Sprintf("%d of %d (%.2f per pod, %d needed); %.0f pods/s from the scheduler's start", d.Victims, d.FillPods, perPod, preemptVictims, d.podsPerSecondFromStart())
		}
		if d.ChurnOps > 0 {
			churn = fmt.Sprintf("%d", d.ChurnOps)
		}
		rows = append(rows, fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", s.nodes, s.workload, s.contender, pool, victims, churn))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nAround the drains (median runs): the pool (pods with PodScheduled False when the drain ended, the last seen at; CPU until the first measured pod was bound), preemption's victims, churn creates and deletes:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| nodes | workload | scheduler | pool | victims | churn ops |")
	fmt.Fprintln(w, "|---:|---|---|---|---|---:|")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
}

// idleSummary is the median over the idle runs of one (nodes, contender).
type idleSummary struct {
	nodes       int
	contender   string
	runs        int
	millicores  float64
	completions float64
	churnOps    float64
	poolPods    int
	attempted   int
	attemptS    float64
	poolCPU     float64
	rss         float64
	other       float64
	violations  int
}

func idleSummaries(runs []*Run) []*idleSummary {
	type key struct {
		nodes int
		name  string
	}
	var order []key
	groups := map[key][]*IdleResult{}
	for _, r := range runs {
		if !isIdleWorkload(r.Workload) {
			continue
		}
		k := key{r.Nodes, r.Contender}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
			groups[k] = nil
		}
		if r.Error == "" && r.Idle != nil {
			groups[k] = append(groups[k], r.Idle)
		}
	}
	var out []*idleSummary
	for _, k := range order {
		g := groups[k]
		s := &idleSummary{nodes: k.nodes, contender: k.name, runs: len(g)}
		out = append(out, s)
		if len(g) == 0 {
			continue
		}
		med := func(f func(*IdleResult) float64) float64 {
			v := make([]float64, len(g))
			for i, r := range g {
				v[i] = f(r)
			}
			sort.Float64s(v)
			if n := len(v); n%2 == 1 {
				return v[n/2]
			}
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		s.millicores = med(func(r *IdleResult) float64 { return r.Millicores })
		s.completions = med(func(r *IdleResult) float64 { return r.CompletionsPerSecond })
		s.churnOps = med(func(r *IdleResult) float64 { return float64(r.ChurnOps) / r.WindowS })
		s.attemptS = med(func(r *IdleResult) float64 { return r.PoolAttemptS })
		s.poolCPU = med(func(r *IdleResult) float64 { return r.PoolCPUSeconds })
		s.rss = med(func(r *IdleResult) float64 { return r.PeakRSSMiB })
		s.other = med(func(r *IdleResult) float64 { return r.OtherCPUCores })
		for _, r := range g {
			s.poolPods = r.PoolPods
			s.attempted = r.PoolAttempted
			s.violations = max(s.violations, r.Placement.Violations)
		}
	}
	return out
}

// writeIdle writes the idle table and yardmaster's idle target.
func writeIdle(w io.Writer, runs []*Run) {
	all := idleSummaries(runs)
	if len(all) == 0 {
		return
	}
	fmt.Fprintln(w, "\nIdle: scheduler CPU over a pool of pods that fit nowhere, under churn (medians):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| nodes | scheduler | pool pods (PodScheduled False written) | idle CPU (millicores) | × kube-scheduler | completions/s | churn ops/s | pool tried in s (CPU s) | peak RSS MiB | violations | other load (cores) |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range all {
		if s.runs == 0 {
			fmt.Fprintf(w, "| %d | %s | failed (see results.json) | | | | | | | | |\n", s.nodes, s.contender)
			continue
		}
		vs := "—"
		if s.contender != kubeSchedulerName {
			for _, k := range all {
				if k.nodes == s.nodes && k.contender == kubeSchedulerName && k.runs > 0 && k.millicores > 0 {
					mark := "✗"
					switch {
					case s.completions < 0.8*k.completions:
						// Less churn is less work: no verdict on a
						// window the API server could not churn.
						mark = "✗ (churn not sustained)"
					case s.millicores <= k.millicores:
						mark = "✓"
					}
					vs = fmt.Sprintf("%.2f× %s", s.millicores/k.millicores, mark)
				}
			}
		}
		fmt.Fprintf(w, "| %d | %s | %d (%d) | %.1f | %s | %.1f | %.1f | %.1f (%.1f) | %.0f | %d | %.2f |\n",
			s.nodes, s.contender, s.poolPods, s.attempted, s.millicores, vs, s.completions, s.churnOps, s.attemptS, s.poolCPU, s.rss, s.violations, s.other)
	}
}
