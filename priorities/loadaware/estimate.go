package loadaware

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// cpuPredictor is Trimaran's prediction of the CPU a pod will use, in
// millicores: per container its limit, else its request ×
// defaultRequestsMultiplier, else defaultRequests; plus the pod overhead.
type cpuPredictor struct {
	defaultMilli int64
	multiplier   float64
}

func (c cpuPredictor) predict(pod *v1.Pod) float64 {
	var sum int64
	for i := range pod.Spec.Containers {
		r := &pod.Spec.Containers[i].Resources
		if q, ok := r.Limits[v1.ResourceCPU]; ok {
			sum += q.MilliValue()
		} else if q, ok := r.Requests[v1.ResourceCPU]; ok {
			sum += int64(math.Round(float64(q.MilliValue()) * c.multiplier))
		} else {
			sum += c.defaultMilli
		}
	}
	if q, ok := pod.Spec.Overhead[v1.ResourceCPU]; ok {
		sum += q.MilliValue()
	}
	return float64(sum)
}

// recentMilliCPU is the predicted CPU of the pods on ni placed since.
func (c cpuPredictor) recentMilliCPU(ni *framework.NodeInfo, since time.Time) float64 {
	return prommetric.Recent(ni, since, func(pi *framework.PodInfo) float64 { return c.predict(pi.Pod) })
}

// recentMemory is the memory requested by the pods on ni placed since.
func recentMemory(ni *framework.NodeInfo, since time.Time) float64 {
	return prommetric.Recent(ni, since, func(pi *framework.PodInfo) float64 { return float64(pi.Requests.Memory) })
}

// capacity returns the node's CPU in millicores and memory in bytes: its
// capacity, which node_exporter's utilization is a share of, else its
// allocatable.
func capacity(ni *framework.NodeInfo) (milliCPU, memory float64) {
	milliCPU, memory = float64(ni.Allocatable.MilliCPU), float64(ni.Allocatable.Memory)
	n := ni.Node()
	if n == nil {
		return milliCPU, memory
	}
	if q, ok := n.Status.Capacity[v1.ResourceCPU]; ok && q.Sign() > 0 {
		milliCPU = float64(q.MilliValue())
	}
	if q, ok := n.Status.Capacity[v1.ResourceMemory]; ok && q.Sign() > 0 {
		memory = float64(q.Value())
	}
	return milliCPU, memory
}

// percentOf returns part as a percentage of whole, 0 when whole is not
// positive.
func percentOf(part, whole float64) float64 {
	if !(whole > 0) {
		return 0
	}
	return 100 * part / whole
}

// prommetricRecentRequests is the CPU (millicores) or memory (bytes)
// requested by the pods on ni placed since: LoadVariationRiskBalancing
// adds requests, as its pod's own demand is its request.
func prommetricRecentRequests(ni *framework.NodeInfo, since time.Time, cpu bool) float64 {
	if !cpu {
		return recentMemory(ni, since)
	}
	return prommetric.Recent(ni, since, func(pi *framework.PodInfo) float64 { return float64(pi.Requests.MilliCPU) })
}
