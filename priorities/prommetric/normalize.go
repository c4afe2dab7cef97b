package prommetric

import (
	"math"

	"github.com/yardmaster-io/yardmaster/framework"
)

// MissingRaw is the raw score of a node without usable data; Normalizer
// gives it the missing-metrics score.
const MissingRaw int64 = math.MinInt64

// maxRaw caps raw scores at ±2^53, where float64 still holds every
// integer, so that raw scores convert back exactly.
const maxRaw int64 = 1 << 53

// RawScore rounds value × scale to a raw score, within ±2^53.
func RawScore(value, scale float64) int64 {
	v := math.Round(value * scale)
	switch {
	case v >= float64(maxRaw):
		return maxRaw
	case v <= -float64(maxRaw):
		return -maxRaw
	}
	return int64(v)
}

// Normalizer maps the raw scores of one cycle (a node's value, see
// RawScore, or MissingRaw) to [MinNodeScore, MaxNodeScore]: the arithmetic
// of the generic PrometheusScore, of which NetworkTraffic is one
// configuration (lower is better, ratio or range [0, maxBandwidth]).
type Normalizer struct {
	// HigherIsBetter scores the largest value best; else the smallest.
	HigherIsBetter bool
	// Normalization is how values map to [0, 1].
	Normalization Normalization
	// Min and Max bound the values for NormalizationRange, as raw scores.
	Min, Max float64
	// MissingScore is the score of a node without data.
	MissingScore int64
}

// Normalize rewrites scores in place. When every node has the same value
// (there is nothing to rank by) all score MaxNodeScore.
func (n *Normalizer) Normalize(scores framework.NodeScoreList) {
	lo, hi := n.Min, n.Max
	switch n.Normalization {
	case NormalizationRatio:
		lo, hi = 0, 0
		for i := range scores {
			if scores[i].Score != MissingRaw {
				hi = max(hi, float64(scores[i].Score))
			}
		}
	case NormalizationMinMax:
		lo, hi = math.Inf(1), math.Inf(-1)
		for i := range scores {
			if s := scores[i].Score; s != MissingRaw {
				lo, hi = min(lo, float64(s)), max(hi, float64(s))
			}
		}
	}
	for i := range scores {
		scores[i].Score = n.score(scores[i].Score, lo, hi)
	}
}

// score maps raw within [lo, hi] to a score, rounded and clamped.
func (n *Normalizer) score(raw int64, lo, hi float64) int64 {
	if raw == MissingRaw {
		return n.MissingScore
	}
	den := hi - lo
	if !(den > 0) {
		return framework.MaxNodeScore
	}
	top := float64(framework.MaxNodeScore)
	var s float64
	if n.HigherIsBetter {
		s = math.Round(top * (float64(raw) - lo) / den)
	} else {
		s = math.Round(top - top*(float64(raw)-lo)/den)
	}
	return int64(min(max(s, float64(framework.MinNodeScore)), top))
}
