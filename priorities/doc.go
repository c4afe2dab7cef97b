// Package priorities is the home of the Score plugins that only score: the
// preferences that rank the nodes a pod passed every filter on. Each is a
// package of its own below this one (priorities/imagelocality,
// priorities/loadaware, ...); a plugin that also filters keeps its scorer in
// its folder under predicates/.
//
// The model: every scorer rates each feasible node on its own scale, mapped
// to [framework.MinNodeScore, framework.MaxNodeScore] = [0, 100] — either
// directly by Score (the resource scorers, whose ScoreExtensions is nil) or by
// NormalizeScore once over all feasible nodes (the scorers whose raw values
// have no fixed range, such as counts of matching preferences). The
// scheduler then multiplies each plugin's normalized score by the plugin's
// weight in the profile and sums them; the node with the highest total wins,
// ties broken at random.
//
// Like filters, scorers are pure over the cycle's snapshot: what depends only
// on the pod is computed once in PreScore and kept in the CycleState (a
// PreScore that finds nothing to do returns Skip and its Score is not
// called); Score reads that state and one NodeInfo, makes no API call, takes
// no lock and does not allocate. The scoring functions themselves are plain
// functions selected by strategy name, so their arithmetic can be checked
// against kube-scheduler's, integer truncation for integer truncation.
package priorities
