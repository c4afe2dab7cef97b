package promtest

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// LoadExporter is a stand-in for node_exporter's CPU and memory metrics on
// one node, for a Server to scrape: node_uname_info{nodename="<node>"},
// node_cpu_seconds_total{cpu, mode="idle"|"user"} for each CPU, whose
// idle seconds grow at 1 − utilization per second, and
// node_memory_MemTotal_bytes and node_memory_MemAvailable_bytes at the
// memory utilization set. Like NodeExporter, counters are computed from
// the wall clock when scraped, so rate() is exact once its window holds
// one utilization only. It is safe for concurrent use.
type LoadExporter struct {
	nodeName string
	cpus     int
	memTotal float64

	mu sync.Mutex
	// cpuUtil and memUtil are fractions; idle and busy the seconds per CPU
	// counted at since.
	cpuUtil, memUtil float64
	idle, busy       float64
	since            time.Time
}

// NewLoadExporter returns the exporter of node nodeName with cpus CPUs and
// memTotal bytes, at CPU and memory utilizations in percent.
func NewLoadExporter(nodeName string, cpus int, memTotal float64, cpuPercent, memPercent float64) *LoadExporter {
	return &LoadExporter{nodeName: nodeName, cpus: cpus, memTotal: memTotal,
		cpuUtil: cpuPercent / 100, memUtil: memPercent / 100, idle: initialBytes, busy: initialBytes, since: time.Now()}
}

// NodeName returns the node name the exporter reports.
func (x *LoadExporter) NodeName() string { return x.nodeName }

// CPU returns the CPU utilization in percent.
func (x *LoadExporter) CPU() float64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return 100 * x.cpuUtil
}

// SetCPU changes the CPU utilization, in percent, from now on.
func (x *LoadExporter) SetCPU(percent float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	now := time.Now()
	x.idle, x.busy = x.counters(now)
	x.since, x.cpuUtil = now, percent/100
}

// SetMemory changes the memory utilization, in percent.
func (x *LoadExporter) SetMemory(percent float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.memUtil = percent / 100
}

// counters returns each CPU's idle and busy seconds at now. x.mu must be
// held.
func (x *LoadExporter) counters(now time.Time) (idle, busy float64) {
	dt := now.Sub(x.since).Seconds()
	return x.idle + (1-x.cpuUtil)*dt, x.busy + x.cpuUtil*dt
}

// ServeHTTP writes the metrics in the Prometheus text format.
func (x *LoadExporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	x.mu.Lock()
	idle, busy := x.counters(time.Now())
	mem := x.memUtil
	x.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE node_uname_info gauge\nnode_uname_info{nodename=%q,sysname=\"Linux\"} 1\n", x.nodeName)
	fmt.Fprintf(w, "# TYPE node_cpu_seconds_total counter\n")
	for i := range x.cpus {
		fmt.Fprintf(w, "node_cpu_seconds_total{cpu=\"%d\",mode=\"idle\"} %.3f\n", i, idle)
		fmt.Fprintf(w, "node_cpu_seconds_total{cpu=\"%d\",mode=\"user\"} %.3f\n", i, busy)
	}
	fmt.Fprintf(w, "# TYPE node_memory_MemTotal_bytes gauge\nnode_memory_MemTotal_bytes %.0f\n", x.memTotal)
	fmt.Fprintf(w, "# TYPE node_memory_MemAvailable_bytes gauge\nnode_memory_MemAvailable_bytes %.0f\n", x.memTotal*(1-mem))
}
