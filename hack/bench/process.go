package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

// process is a scheduler under test: a procgroup child (its own process
// group, killed by the kernel if the harness dies), so neither an error
// path nor a second Ctrl-C leaves one running.
type process struct {
	*procgroup.Process
	started time.Time
	// pprofURL is the /debug/pprof/ endpoint when profiling was asked for.
	pprofURL string
}

func startProcess(name, path string, args []string, logPath string) (*process, error) {
	p, err := procgroup.Start(name, path, args, logPath)
	if err != nil {
		return nil, err
	}
	return &process{Process: p, started: time.Now()}, nil
}

// stop ends the process group (SIGTERM, SIGKILL after grace). It is
// idempotent; the harness defers it right after a start.
func (p *process) stop(grace time.Duration) {
	if err := p.Stop(grace); err != nil {
		logf("  %v", err)
	}
}

// procStat is what /proc says about one process at one moment.
type procStat struct {
	cpu     time.Duration // user + system
	rssKiB  int64         // VmRSS
	peakKiB int64         // VmHWM: the peak resident set size
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// It is 100 on every Linux architecture Go supports, and reading it with
// sysconf would need cgo.
const clockTicks = 100

// readProcCPU returns utime+stime of pid from /proc/<pid>/stat.
func readProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads fields 14 and 15 (utime, stime) of a /proc/<pid>/stat
// line. The command name (field 2) may hold spaces and parentheses, so
// fields are counted from its last ')'.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("parsing /proc stat: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// readProcStat returns the CPU time and memory of pid.
func readProcStat(pid int) (procStat, error) {
	cpu, err := readProcCPU(pid)
	if err != nil {
		return procStat{}, err
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return procStat{}, err
	}
	s := procStat{cpu: cpu}
	s.rssKiB, s.peakKiB = parseStatusKiB(b, "VmRSS:"), parseStatusKiB(b, "VmHWM:")
	return s, nil
}

// parseStatusKiB returns the value of a "Key:   123 kB" line of
// /proc/<pid>/status, or 0.
func parseStatusKiB(b []byte, key string) int64 {
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

// machineCPU returns the busy CPU time of the whole machine (all cores)
// from the first line of /proc/stat: everything but idle and iowait.
func machineCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseMachineCPU(b)
}

func parseMachineCPU(b []byte) (time.Duration, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, errors.New("malformed /proc/stat")
	}
	var busy int64
	// user nice system idle iowait irq softirq steal (guest time is
	// already counted in user and nice).
	for i, v := range f[1:min(len(f), 9)] {
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing /proc/stat: %w", err)
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / clockTicks, nil
}

// loadAvg returns the 1-minute load average.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// cpuMeter attributes the machine's CPU over an interval: to the processes
// of the benchmark (scheduler, kube-apiserver, etcd, the harness itself)
// and to everything else, which on a shared machine is the noise to report
// next to every figure.
type cpuMeter struct {
	pids    map[string]int
	start   map[string]time.Duration
	machine time.Duration
	at      time.Time
}

func newCPUMeter(pids map[string]int) *cpuMeter {
	m := &cpuMeter{pids: pids, start: map[string]time.Duration{}, at: time.Now()}
	for name, pid := range pids {
		m.start[name], _ = readProcCPU(pid)
	}
	m.machine, _ = machineCPU()
	return m
}

// cpuUsage is what a cpuMeter measured.
type cpuUsage struct {
	Elapsed time.Duration
	// Process is the CPU each named process used.
	Process map[string]time.Duration
	// Other is the CPU every other process on the machine used.
	Other time.Duration
}

// add follows one more process, counting its CPU from startCPU (0 for a
// process started after the meter).
func (m *cpuMeter) add(name string, pid int, startCPU time.Duration) {
	m.pids[name] = pid
	m.start[name] = startCPU
}

func (m *cpuMeter) read() cpuUsage {
	u := cpuUsage{Elapsed: time.Since(m.at), Process: map[string]time.Duration{}}
	machine, _ := machineCPU()
	ours := time.Duration(0)
	for name, pid := range m.pids {
		c, err := readProcCPU(pid)
		if err != nil {
			continue // ended: its CPU is still in the machine total
		}
		u.Process[name] = c - m.start[name]
		ours += u.Process[name]
	}
	u.Other = max(0, machine-m.machine-ours)
	return u
}
