package loadaware

import (
	"fmt"

	"github.com/prometheus/common/model"
)

// node_exporter's metrics the built-in queries read.
const (
	cpuSecondsMetric   = "node_cpu_seconds_total"
	memAvailableMetric = "node_memory_MemAvailable_bytes"
	memTotalMetric     = "node_memory_MemTotal_bytes"
	unameInfoMetric    = "node_uname_info"
)

// perTarget is the grouping of a per-scrape-target expression: by
// (instance, job), or by instance when the instance is the node name.
func perTarget(label string) string {
	if label == "instance" {
		return "instance"
	}
	return "instance, job"
}

// cpuUtilization is each target's CPU utilization in percent: the share
// of CPU seconds not idle, rated over window and averaged over its CPUs.
func cpuUtilization(label string, window model.Duration) string {
	return fmt.Sprintf(`100 * (1 - avg by (%s) (rate(%s{mode="idle"}[%s])))`, perTarget(label), cpuSecondsMetric, window)
}

// memoryUtilization is each target's memory utilization in percent:
// 1 − MemAvailable / MemTotal.
func memoryUtilization(label string) string {
	g := perTarget(label)
	return fmt.Sprintf(`100 * (1 - sum by (%s) (%s) / sum by (%s) (%s))`, g, memAvailableMetric, g, memTotalMetric)
}

// overWindow applies fn (avg_over_time, stddev_over_time) to expr over
// window at resolution step, a subquery.
func overWindow(fn, expr string, window, step model.Duration) string {
	return fmt.Sprintf(`%s((%s)[%s:%s])`, fn, expr, window, step)
}

// joinNode names each target's series by the node: through
// node_uname_info's label, as NetworkTraffic does, unless the label is the
// instance itself. max keeps one series per node should two targets
// report one node.
func joinNode(expr, label string) string {
	if label == "instance" {
		return expr
	}
	return fmt.Sprintf(`max by (%s) ((%s) * on (instance, job) group_left (%s) %s)`, label, expr, label, unameInfoMetric)
}

// CPUQuery is the PromQL of the nodes' current CPU utilization in percent
// (TargetLoadPacking, LoadHotSpot).
func CPUQuery(label string, window model.Duration) string {
	return joinNode(cpuUtilization(label, window), label)
}

// MemoryQuery is the PromQL of the nodes' memory utilization in percent
// (LoadHotSpot).
func MemoryQuery(label string) string {
	return joinNode(memoryUtilization(label), label)
}

// VariationQueries are the four queries of LoadVariationRiskBalancing:
// the mean and standard deviation over window of CPU and memory
// utilization in percent, sampled every step (which is also the CPU rate
// window).
func VariationQueries(label string, window, step model.Duration) (cpuAvg, cpuStd, memAvg, memStd string) {
	cpu, mem := cpuUtilization(label, step), memoryUtilization(label)
	return joinNode(overWindow("avg_over_time", cpu, window, step), label),
		joinNode(overWindow("stddev_over_time", cpu, window, step), label),
		joinNode(overWindow("avg_over_time", mem, window, step), label),
		joinNode(overWindow("stddev_over_time", mem, window, step), label)
}
