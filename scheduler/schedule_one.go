package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
)

type scheduleResult struct {
	node      string
	evaluated int
	feasible  int
}

// schedulePod picks a node for pod or says why none fits.
func (s *Scheduler) schedulePod(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod) (scheduleResult, error) {
	return s.scheduleRecorded(ctx, prof, state, pod, nil)
}

// scheduleRecorded is schedulePod with a recorder, nil but for profiles
// that write kube-scheduler-simulator's annotations (annotations.go).
func (s *Scheduler) scheduleRecorded(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, rec *cycleRecorder) (scheduleResult, error) {
	all := s.cycleNodes()
	if len(all) == 0 {
		return scheduleResult{}, ErrNoNodesAvailable
	}
	feasible, evaluated, fitErr, err := s.findFeasible(ctx, prof, state, pod, all, rec)
	if err != nil {
		return scheduleResult{}, err
	}
	if fitErr != nil {
		return scheduleResult{}, fitErr
	}
	rec.feasibleNodes(feasible)
	if len(feasible) == 1 {
		return scheduleResult{node: feasible[0].Node().Name, evaluated: evaluated, feasible: 1}, nil
	}
	// findFeasible left the nodes' slots beside them.
	totals, err := s.prioritize(ctx, prof, state, pod, feasible, s.feasibleSlotsBuf[:len(feasible)], rec)
	if err != nil {
		return scheduleResult{}, err
	}
	if !rec.dryRun() && len(s.extenders) > 0 {
		s.prioritizeByExtenders(ctx, pod, feasible, totals)
	}
	best := s.selectHost(feasible, totals)
	return scheduleResult{node: best, evaluated: evaluated, feasible: len(feasible)}, nil
}

// nominatedNodeInfo returns the node pod is nominated to, by its own
// preemption here or by its status.nominatedNodeName, when the snapshot
// has it; else nil. The PreFilter results do not rule it out (see
// findFeasible).
func (s *Scheduler) nominatedNodeInfo(pod *v1.Pod) *framework.NodeInfo {
	node := s.nominations.nodeOf(pod.UID)
	if node == "" {
		node = pod.Status.NominatedNodeName
	}
	if node == "" {
		return nil
	}
	ni, err := s.snapshot.Get(node)
	if err != nil {
		return nil
	}
	return ni
}

// numFeasibleNodesToFind is how many feasible nodes are enough to pick from:
// scoring every node of a large cluster buys little placement quality for a
// lot of time. The adaptive percentage (kube-scheduler's) shrinks from 50%
// as the cluster grows, never below 5% nor below 100 nodes.
func (s *Scheduler) numFeasibleNodesToFind(prof *profile, numAll int) int {
	pct := s.percentageOfNodesToScore
	if prof.percentageOfNodesToScore != nil {
		pct = *prof.percentageOfNodesToScore
	}
	if numAll < minFeasibleNodesToFind || pct >= 100 {
		return numAll
	}
	if pct <= 0 {
		pct = int32(50 - numAll/125)
		if pct < minFeasibleNodesPercentageToFind {
			pct = minFeasibleNodesPercentageToFind
		}
	}
	n := numAll * int(pct) / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

// findFeasible runs the PreFilters, then the Filters over the nodes in
// parallel, starting where the previous cycle stopped so that every node
// gets its turn, and stops once enough feasible nodes are found. It returns
// the feasible nodes and how many nodes it evaluated, or a FitError when
// no node is feasible. rec, nil in scheduling cycles, makes it filter every
// node and keep each one's verdict (explain.go).
func (s *Scheduler) findFeasible(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, all []*framework.NodeInfo, rec *cycleRecorder) ([]*framework.NodeInfo, int, *FitError, error) {
	// Made only when the pod fits nowhere: most cycles find a node.
	newFitErr := func() *FitError { return newFitError(len(all)) }

	allowed, narrowedBy, fitErr, err := prof.runPreFilterPlugins(ctx, state, pod, all, s.recordPluginMetrics, rec)
	if fitErr != nil || err != nil {
		return nil, 0, fitErr, err
	}
	nodes := all
	filterStart := time.Now()
	active := prof.appendActiveFilters(s.activeFilterBuf[:0], state)
	s.activeFilterBuf = active
	// Pods that preempted for a node keep their room there (see
	// nominator.forPod); nil in nearly every cycle.
	nominated := s.nominations.forPod(pod)
	// A pod that preempted for a node tries that node first, alone, as
	// kube-scheduler does (evaluateNominatedNode). Explain (rec) shows
	// every node instead.
	if rec == nil {
		one, err := s.tryNominatedNode(ctx, prof, active, state, pod, nominated)
		if err != nil {
			return nil, 0, nil, err
		}
		if one != nil {
			prof.observe(metrics.Filter, framework.Success, filterStart)
			return one, 1, nil, nil
		}
	}
	// Only the nodes the PreFilter results name, and that exist, are
	// filtered; as in kube-scheduler (schedule_one.go, findNodesThatFitPod),
	// every other node counts as rejected by the plugins that narrowed the
	// list, UnschedulableAndUnresolvable.
	var absent int
	if allowed != nil {
		nodes = make([]*framework.NodeInfo, 0, len(allowed))
		for name := range allowed {
			if s.placementNodes != nil && !s.placementNodes[name] {
				continue // outside the group's domain
			}
			if ni, err := s.snapshot.Get(name); err == nil {
				nodes = append(nodes, ni)
			}
		}
		absent = len(all) - len(nodes)
		rec.narrowed(all, allowed, narrowedBy)
		if len(nodes) == 0 {
			fitErr := newFitErr()
			fitErr.addAbsent(narrowedBy, absent)
			fitErr.Unresolvable = true
			// Explain names the plugins whose results left no node.
			rec.preFilterRejected(narrowedBy[len(narrowedBy)-1], framework.NewStatus(framework.UnschedulableAndUnresolvable, absentMessage(narrowedBy)))
			return nil, 0, fitErr, nil
		}
	}

	numToFind := s.numFeasibleNodesToFind(prof, len(nodes))
	if len(prof.score) == 0 && !s.extendersChoose() {
		// Nothing tells feasible nodes apart: the first one found, from
		// the rotating start, is the pick, as in kube-scheduler.
		numToFind = 1
	}
	if rec != nil && rec.allNodes {
		rec.nodesToFind = numToFind
		numToFind = len(nodes)
	}
	if cap(s.feasibleBuf) < numToFind {
		s.feasibleBuf = make([]*framework.NodeInfo, numToFind)
	}
	feasible := s.feasibleBuf[:numToFind]
	if cap(s.statusBuf) < len(nodes) {
		s.statusBuf = make([]rejection, len(nodes))
	}
	statuses := s.statusBuf[:len(nodes)]
	clear(statuses)

	filterCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// found is the one counter the workers share: a counter bumped for
	// every node, as a count of nodes processed would be, bounces its
	// cache line between the cores on every node. Rejections are counted
	// from statuses afterwards.
	var found atomic.Int32
	// filterErr is the first Error a filter returned: it ends the attempt.
	var filterErr atomic.Pointer[error]
	start := s.nextStartNodeIndex % len(nodes)
	filterTimers := prof.metrics.timers(s.recordPluginMetrics, metrics.Filter)
	anyNominated := !nominated.empty()
	var answers *slotAnswers[rejection]
	var signed int
	if !s.noShortcuts {
		answers, signed = prof.filterAnswers(state, pod, active, len(s.snapshot.Slots().Nodes))
	}
	// The nodes' slots and generations, from the snapshot's arrays when
	// nodes is its list: a node whose kept answer rejects it is then
	// decided without reading its NodeInfo.
	slots := s.snapshot.Slots()
	var listSlots []int
	if slots.Lists(nodes) && len(slots.ListSlots) == len(nodes) {
		listSlots = slots.ListSlots
	}
	if cap(s.feasibleSlotsBuf) < numToFind {
		s.feasibleSlotsBuf = make([]int, numToFind)
	}
	feasibleSlots := s.feasibleSlotsBuf[:numToFind]
	s.parallelizer.Until(filterCtx, len(nodes), func(i int) {
		if filterCtx.Err() != nil {
			return // enough nodes found: the rest of the chunk is not looked at
		}
		idx := (start + i) % len(nodes)
		ni := nodes[idx]
		timers := filterTimers
		if i%metrics.NodeSampleStride != 0 {
			timers = nil
		}
		var st *framework.Status
		var by string
		var slot int
		var gen int64
		if listSlots != nil {
			slot = listSlots[idx]
			gen = slots.Gens[slot]
		} else {
			slot, gen = ni.Slot, ni.Generation
		}
		var nom []*framework.PodInfo
		if anyNominated {
			nom = nominated.on(ni.NodeName())
		}
		switch {
		case answers != nil:
			st, by = prof.runFiltersSigned(filterCtx, active, signed, answers, slot, gen, state, pod, ni, timers)
		case s.noShortcuts:
			st, by = prof.runFilters(filterCtx, active, state, pod, ni, timers)
		default:
			st, by = prof.runFiltersAt(filterCtx, active, state, pod, ni, slot, gen, timers)
		}
		if len(nom) > 0 && st.IsSuccess() {
			// Passed on the node as it is: now beside the pods
			// nominated there (runFiltersWithNominated's second half).
			st, by = prof.runFiltersBesideNominated(filterCtx, active, state, pod, ni, nom)
		}
		if st.Code() == framework.Error {
			err := fmt.Errorf("running %q filter plugin: %w", by, st.Err())
			filterErr.CompareAndSwap(nil, &err)
			cancel()
			return
		}
		if st.IsSuccess() {
			n := found.Add(1)
			if int(n) > numToFind {
				cancel()
				return
			}
			feasible[n-1] = ni
			feasibleSlots[n-1] = slot
			if int(n) == numToFind {
				cancel()
			}
			return
		}
		statuses[idx] = rejection{status: st, plugin: by}
	})
	if err := ctx.Err(); err != nil {
		return nil, 0, nil, err
	}
	if err := filterErr.Load(); err != nil {
		prof.observe(metrics.Filter, framework.Error, filterStart)
		return nil, 0, nil, *err
	}
	// Once per cycle for all nodes, as kube-scheduler records Filter.
	prof.observe(metrics.Filter, framework.Success, filterStart)
	evaluated := int(found.Load())
	for i := range statuses {
		if statuses[i].status != nil {
			evaluated++
		}
	}
	s.nextStartNodeIndex = (start + evaluated) % len(nodes)
	rec.filtered(nodes, statuses)

	n := min(int(found.Load()), numToFind)
	var byExtenders extenderRejections
	if n > 0 && !rec.dryRun() && len(s.extenders) > 0 {
		passed, err := s.filterByExtenders(ctx, pod, feasible[:n], feasibleSlots[:n], &byExtenders)
		if err != nil {
			return nil, 0, nil, err
		}
		n = len(passed)
	}
	if n > 0 {
		return feasible[:n], evaluated, nil, nil
	}
	return nil, evaluated, rejectionsOf(len(all), nodes, statuses, found.Load() > 0, &byExtenders, narrowedBy, absent), nil
}

// rejectionsOf is the FitError of a pod that fits none of numAll nodes:
// nodes were filtered with statuses (parallel to them), some passed the
// filters and the extenders refused them (passed, byExtenders), and the
// PreFilter results of narrowedBy left absent nodes out.
func rejectionsOf(numAll int, nodes []*framework.NodeInfo, statuses []rejection, passed bool, byExtenders *extenderRejections, narrowedBy []string, absent int) *FitError {
	fitErr := newFitError(numAll)
	unresolvable := true
	for i, r := range statuses {
		if r.status == nil {
			continue
		}
		fitErr.addStatus(r.status, r.plugin)
		fitErr.tally(r, nodes[i])
		if r.status.Code() != framework.UnschedulableAndUnresolvable {
			unresolvable = false
			fitErr.candidates = append(fitErr.candidates, nodes[i])
		}
	}
	if passed {
		// The plugins passed nodes and the extenders refused them all:
		// they are the pod's rejectors too (kube-scheduler's
		// ExtenderName).
		if !byExtenders.addTo(fitErr) {
			unresolvable = false
		}
		fitErr.addPlugins(ExtenderName)
	}
	fitErr.addAbsent(narrowedBy, absent)
	fitErr.Unresolvable = unresolvable
	return fitErr
}

// tryNominatedNode filters the node the pod preempted for, alone: its
// victims made room there, and once they are gone a one-node cycle places
// it. As in kube-scheduler, this comes before the PreFilter results
// narrow the nodes, so a node they leave out, or a list of nodes none of
// which exists, does not rule it out. It returns the node, when the
// filters and the extenders pass it, as the cycle's one feasible node;
// nil sends the pod through every node, as in kube-scheduler.
func (s *Scheduler) tryNominatedNode(ctx context.Context, prof *profile, active []int, state *framework.CycleState, pod *v1.Pod, nominated nominatedView) ([]*framework.NodeInfo, error) {
	ni := s.nominatedNodeInfo(pod)
	if ni == nil || (s.placementNodes != nil && !s.placementNodes[ni.NodeName()]) {
		return nil, nil
	}
	if st, _ := prof.runFiltersWithNominated(ctx, active, state, pod, ni, nominated.on(ni.NodeName()), nil); !st.IsSuccess() {
		return nil, nil
	}
	s.feasibleBuf = append(s.feasibleBuf[:0], ni)
	s.feasibleSlotsBuf = append(s.feasibleSlotsBuf[:0], ni.Slot)
	// The extenders have the last word here too.
	one, err := s.filterByExtenders(ctx, pod, s.feasibleBuf, s.feasibleSlotsBuf, &extenderRejections{})
	if err != nil || len(one) != 1 {
		return nil, err
	}
	return one, nil
}

// notSatisfiedMessage is kube-scheduler's reason for a pod whose PreFilter
// results have no node in common.
func notSatisfiedMessage(plugins []string) string {
	if len(plugins) == 1 {
		return fmt.Sprintf("node(s) didn't satisfy plugin %s", plugins[0])
	}
	sorted := slices.Clone(plugins)
	slices.Sort(sorted)
	return fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sorted)
}

// rejection is why a node was filtered out, and by which plugin.
type rejection struct {
	status *framework.Status
	plugin string
}

func intersect(a, b map[string]struct{}) map[string]struct{} {
	if a == nil {
		return b
	}
	out := map[string]struct{}{}
	for k := range a {
		if _, ok := b[k]; ok {
			out[k] = struct{}{}
		}
	}
	return out
}

// prioritize runs PreScore, then every scorer on every feasible node in
// parallel, normalizes each scorer's list and returns the weighted sums.
// slots, when not nil, are the feasible nodes' slots in the snapshot: their
// names and generations are then read from its arrays. rec, nil in
// scheduling cycles, keeps every scorer's raw and normalized scores.
func (s *Scheduler) prioritize(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, feasible []*framework.NodeInfo, slots []int, rec *cycleRecorder) ([]int64, error) {
	if err := prof.runPreScorePlugins(ctx, state, pod, feasible, s.recordPluginMetrics); err != nil {
		return nil, err
	}
	// The buffers are the scheduler's, reused cycle after cycle (one cycle
	// runs at a time): a cycle over a big cluster would otherwise allocate
	// and clear tens of kilobytes of score lists.
	if cap(s.totalsBuf) < len(feasible) {
		s.totalsBuf = make([]int64, len(feasible))
	}
	totals := s.totalsBuf[:len(feasible)]
	clear(totals)
	if len(prof.score) == 0 {
		return totals, nil
	}
	scoreStart := time.Now()
	allScoreTimers := prof.metrics.timers(s.recordPluginMetrics, metrics.Score)
	allNormalizeTimers := prof.metrics.timers(s.recordPluginMetrics, metrics.ScoreExtensionNormalize)
	scorers := make([]weightedScorer, 0, len(prof.score))
	// scoreTimers and normalizeTimers are parallel to scorers, in sampled
	// cycles only.
	var scoreTimers, normalizeTimers []*metrics.PluginTimer
	for j, sc := range prof.score {
		if _, skip := state.SkipScorePlugins[sc.Name()]; !skip {
			scorers = append(scorers, sc)
			if allScoreTimers != nil {
				scoreTimers = append(scoreTimers, allScoreTimers[j])
				normalizeTimers = append(normalizeTimers, allNormalizeTimers[j])
			}
		}
	}
	if need := len(scorers) * len(feasible); cap(s.scoreBuf) < need {
		s.scoreBuf = make([]framework.NodeScore, need)
	}
	lists := s.scoreListsBuf[:0]
	for i := range scorers {
		// Every entry is written below before it is read.
		lists = append(lists, s.scoreBuf[i*len(feasible):(i+1)*len(feasible):(i+1)*len(feasible)])
	}
	s.scoreListsBuf = lists
	answers, columns := prof.scoreAnswers(state, pod, scorers, s.scoreColumnsBuf, len(s.snapshot.Slots().Nodes), !s.noShortcuts)
	s.scoreColumnsBuf = columns
	bySlot := s.snapshot.Slots()
	// firstErr is the first Score failure, with its plugin's name.
	var firstErr atomic.Pointer[error]
	s.parallelizer.Until(ctx, len(feasible), func(n int) {
		ni := feasible[n]
		var name string
		var slot int
		var gen int64
		if slots != nil && slots[n] > 0 && slots[n] < len(bySlot.Names) {
			slot = slots[n]
			name, gen = bySlot.Names[slot], bySlot.Gens[slot]
		} else {
			name, slot, gen = ni.NodeName(), ni.Slot, ni.Generation
		}
		timers := scoreTimers
		if n%metrics.NodeSampleStride != 0 {
			timers = nil
		}
		// Kept raw scores of the signing scorers, or where to keep them.
		kept, hit := answers.get(slot, gen)
		if !hit {
			kept = answers.put(slot, gen)
		}
		t0 := startPlugin(timers)
		for i, sc := range scorers {
			if c := columns[i]; c >= 0 && hit {
				lists[i][n] = framework.NodeScore{Name: name, Score: kept[c]}
				continue
			}
			v, st := sc.Score(ctx, state, pod, ni)
			t0 = endPlugin(timers, i, st.Code(), t0)
			if !st.IsSuccess() {
				err := fmt.Errorf("running Score plugin %q: %w", sc.Name(), st.Err())
				firstErr.CompareAndSwap(nil, &err)
				return
			}
			lists[i][n] = framework.NodeScore{Name: name, Score: v}
			if c := columns[i]; c >= 0 && kept != nil {
				kept[c] = v
			}
		}
		if !hit && kept != nil {
			answers.done(slot, gen)
		}
	})
	if err := firstErr.Load(); err != nil {
		prof.observe(metrics.Score, framework.Error, scoreStart)
		return nil, *err
	}
	if err := ctx.Err(); err != nil {
		// Workers stopped early: the reused lists hold what the previous
		// cycle left in them.
		return nil, err
	}
	for i, sc := range scorers {
		rec.raw(sc, lists[i])
		if ext := sc.ScoreExtensions(); ext != nil {
			t0 := startPlugin(normalizeTimers)
			st := ext.NormalizeScore(ctx, state, pod, lists[i])
			endPlugin(normalizeTimers, i, st.Code(), t0)
			if !st.IsSuccess() {
				prof.observe(metrics.Score, framework.Error, scoreStart)
				return nil, st.Err()
			}
		}
		rec.normalized(lists[i])
		for n := range lists[i] {
			totals[n] += lists[i][n].Score * sc.weight
		}
	}
	prof.observe(metrics.Score, framework.Success, scoreStart)
	return totals, nil
}

// selectHost returns the node with the highest total, choosing uniformly at
// random among ties (reservoir sampling), so equal nodes share the load.
func (s *Scheduler) selectHost(feasible []*framework.NodeInfo, totals []int64) string {
	best, ties := 0, 1
	for i := 1; i < len(totals); i++ {
		switch {
		case totals[i] > totals[best]:
			best, ties = i, 1
		case totals[i] == totals[best]:
			ties++
			if s.rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return feasible[best].NodeName()
}
