package networktraffic

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// scorer is the arithmetic of NetworkTraffic, shared by the scheduling
// cycle and Explain so that the debug view shows exactly what a cycle
// would compute. Its normalization is PrometheusScore's, configured as
// lower is better, ratio (or range [0, maxBandwidth]).
type scorer struct {
	filterAbove float64
	podEstimate float64
	staleAfter  time.Duration
	norm        prommetric.Normalizer
}

func newScorer(a *Args) scorer {
	sc := scorer{
		filterAbove: a.FilterAbove,
		podEstimate: a.PodBandwidthEstimate,
		staleAfter:  a.StaleAfter.Duration,
		norm: prommetric.Normalizer{
			HigherIsBetter: false,
			Normalization:  prommetric.NormalizationRatio,
			MissingScore:   neutralScore,
		},
	}
	if a.MaxBandwidth > 0 {
		sc.norm.Normalization, sc.norm.Min, sc.norm.Max = prommetric.NormalizationRange, 0, a.MaxBandwidth
	}
	if a.MissingMetricsPolicy == prommetric.MissingMetricsLowest {
		sc.norm.MissingScore = framework.MinNodeScore
	}
	return sc
}

// usable reports whether t exists and is not older than staleAfter at now.
func (sc *scorer) usable(t *prommetric.Table, now time.Time) bool {
	return t != nil && now.Sub(t.Time) <= sc.staleAfter
}

// bandwidth returns the node's traffic in t plus the estimate of the pods
// on nodeInfo (which may be nil) bound since t was taken; false when t has
// no value for the node.
func (sc *scorer) bandwidth(t *prommetric.Table, node string, nodeInfo *framework.NodeInfo) (float64, bool) {
	var bw float64
	var ok bool
	if nodeInfo != nil {
		bw, ok = t.Lookup(nodeInfo)
	} else {
		bw, ok = t.Values[node]
	}
	if !ok {
		return 0, false
	}
	return bw + sc.recent(nodeInfo, t.Since), true
}

// recent sums the bandwidth estimates of the pods on nodeInfo bound at or
// after since: their traffic cannot be in a sample taken before.
func (sc *scorer) recent(nodeInfo *framework.NodeInfo, since time.Time) float64 {
	return prommetric.Recent(nodeInfo, since, func(pi *framework.PodInfo) float64 { return sc.estimate(pi.Pod) })
}

// estimate returns the bytes/s pod is expected to add: its
// yardmaster.io/bandwidth annotation when that is a valid non-negative
// quantity, else podBandwidthEstimate.
func (sc *scorer) estimate(pod *v1.Pod) float64 {
	if v, ok := pod.Annotations[BandwidthAnnotation]; ok {
		if bw, ok := parseBandwidth(v); ok {
			return bw
		}
	}
	return sc.podEstimate
}

// parseBandwidth reads a Kubernetes quantity as bytes/s.
func parseBandwidth(s string) (float64, bool) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, false
	}
	bw := q.AsApproximateFloat64()
	if bw < 0 || math.IsNaN(bw) || math.IsInf(bw, 0) {
		return 0, false
	}
	return bw, true
}

// above reports whether bw is over filterAbove, when that is set.
func (sc *scorer) above(bw float64) bool {
	return sc.filterAbove > 0 && bw > sc.filterAbove
}

// normalize rewrites raw scores (bandwidths, or MissingRaw) as scores:
// 100 − 100 × bw / maxBW, rounded and clamped to [0, 100], where maxBW is
// maxBandwidth or the largest raw bandwidth in the list. With maxBW 0
// (every node idle) all nodes score 100: there is nothing to rank by.
func (sc *scorer) normalize(scores framework.NodeScoreList) {
	sc.norm.Normalize(scores)
}
