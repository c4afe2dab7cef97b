package networktraffic

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/yardmaster-io/yardmaster/framework"
)

// scorer is the arithmetic of NetworkTraffic, shared by the scheduling
// cycle and Explain so that the debug view shows exactly what a cycle
// would compute.
type scorer struct {
	maxBandwidth float64
	filterAbove  float64
	podEstimate  float64
	missingScore int64
	staleAfter   time.Duration
}

func newScorer(a *framework.NetworkTrafficArgs) scorer {
	sc := scorer{
		maxBandwidth: a.MaxBandwidth,
		filterAbove:  a.FilterAbove,
		podEstimate:  a.PodBandwidthEstimate,
		missingScore: neutralScore,
		staleAfter:   a.StaleAfter.Duration,
	}
	if a.MissingMetricsPolicy == framework.MissingMetricsLowest {
		sc.missingScore = framework.MinNodeScore
	}
	return sc
}

// usable reports whether s exists and is not older than staleAfter at now.
func (sc *scorer) usable(s *Sample, now time.Time) bool {
	return s != nil && now.Sub(s.Time) <= sc.staleAfter
}

// bandwidth returns the node's traffic in s plus the estimate of the pods
// on nodeInfo (which may be nil) bound since s was taken; false when s has
// no value for the node.
func (sc *scorer) bandwidth(s *Sample, node string, nodeInfo *framework.NodeInfo) (float64, bool) {
	bw, ok := s.Bandwidth[node]
	if !ok {
		return 0, false
	}
	return bw + sc.recent(nodeInfo, s.since), true
}

// recent sums the bandwidth estimates of the pods on nodeInfo bound at or
// after since: their traffic cannot be in a sample taken before. The
// snapshot holds the scheduler's assumed pods as soon as a cycle has
// picked their node, so a burst of pods sees its own earlier members.
func (sc *scorer) recent(nodeInfo *framework.NodeInfo, since time.Time) float64 {
	if nodeInfo == nil {
		return 0
	}
	var sum float64
	for _, pi := range nodeInfo.Pods {
		if boundBefore(pi.Pod, since) {
			continue
		}
		sum += sc.estimate(pi.Pod)
	}
	return sum
}

// boundBefore reports whether pod is known to have been bound before t.
//
// The API server stamps PodScheduled=True with the time of the binding
// (and the kubelet does for pods created with a node name), so every bound
// pod the informer delivers carries it. A pod without it is one the
// scheduler has assumed and not yet seen bound: it was placed just now.
func boundBefore(pod *v1.Pod, t time.Time) bool {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue {
			return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Time.Before(t)
		}
	}
	return false
}

// bindTimeResolution rounds a sample time down to the resolution of the
// bind times it is compared with: the API serializes them in whole
// seconds, so a pod bound 0.4s after a sample reads as bound up to 0.6s
// before it. Rounding down counts such a pod (and at worst one bound just
// under a second before the sample) rather than forget it.
func bindTimeResolution(t time.Time) time.Time { return t.Truncate(time.Second) }

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

// normalize rewrites raw scores (bandwidths, or missingRaw) as scores.
// maxBW is maxBandwidth, or the largest raw bandwidth in the list.
func (sc *scorer) normalize(scores framework.NodeScoreList) {
	maxBW := sc.maxBandwidth
	if maxBW <= 0 {
		for i := range scores {
			maxBW = max(maxBW, float64(scores[i].Score))
		}
	}
	for i := range scores {
		scores[i].Score = sc.score(scores[i].Score, maxBW)
	}
}

// score is 100 − 100 × raw / maxBW, rounded and clamped to [0, 100]. With
// maxBW 0 (every node idle) all nodes score 100: there is nothing to rank
// by. A missing raw score gets the missingMetricsPolicy score.
func (sc *scorer) score(raw int64, maxBW float64) int64 {
	if raw < 0 {
		return sc.missingScore
	}
	if maxBW <= 0 {
		return framework.MaxNodeScore
	}
	top := float64(framework.MaxNodeScore)
	s := math.Round(top - top*float64(raw)/maxBW)
	return int64(min(max(s, float64(framework.MinNodeScore)), float64(framework.MaxNodeScore)))
}
