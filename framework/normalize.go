package framework

// DefaultNormalizeScore rescales raw scores, which must be non-negative,
// from [0, max(scores)] to [0, maxPriority] with integer truncation:
// score = maxPriority × score / max. With reverse, each result is then
// subtracted from maxPriority, so that the lowest raw score ranks best (a
// count of things the pod dislikes). When every raw score is 0 there is
// nothing to rank by: the scores stay 0, or all become maxPriority with
// reverse. This is kube-scheduler's helper.DefaultNormalizeScore, step for
// step, so that normalized scores (and ties) agree with it.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores NodeScoreList) {
	var maxScore int64
	for i := range scores {
		maxScore = max(maxScore, scores[i].Score)
	}
	if maxScore == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return
	}
	for i := range scores {
		s := maxPriority * scores[i].Score / maxScore
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
}
