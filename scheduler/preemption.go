package scheduler

// Preemption (DefaultPreemption, kube-scheduler v1.37's rules): when a pod
// fits nowhere, look for a node where evicting pods of lower priority would
// let it fit, pick the node where that costs least, and evict those pods.
// The pod is nominated to the node (status.nominatedNodeName) and tried
// again once the victims are gone.
//
// Victims are chosen on a what-if copy of each candidate node and of the
// cycle's PreFilter state (PreFilterExtensions), so every filter, inter-pod
// affinity and topology spread included, agrees that the pod fits once
// they are gone. A candidate is never evicted on a guess: a filter whose
// state preemption cannot update (a ReadWriteOncePod claim held elsewhere,
// say) keeps rejecting, and the node is not a candidate.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/queue"
)

// Messages of kube-scheduler's preemption, which users and tools match.
const (
	msgPreemptNever         = "not eligible due to preemptionPolicy=Never."
	msgPreemptTerminating   = "not eligible due to a terminating pod on the nominated node."
	msgPreemptRunning       = "waiting for the preemption for this pod to be finished"
	msgNoVictims            = "No preemption victims found for incoming pod"
	msgPreemptionNotHelpful = "Preemption is not helpful for scheduling"
)

// statusNoVictims is shared: statuses are never changed once made, and a
// full cluster gives it for every node.
var statusNoVictims = framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNoVictims)

// preemptTimeout bounds the API requests of one preemption.
const preemptTimeout = 30 * time.Second

// maxPreemptionsInFlight bounds the preemptions whose requests (the
// nomination; each victim's condition, deletion and event) are under way;
// the others wait their turn. The client sends 64 requests at a time
// whatever waits, so more in flight only holds memory: 1,000 preemptors
// tried in a second started 4,000 goroutines, each with its requests
// built, and peak RSS went past kube-scheduler's.
const maxPreemptionsInFlight = 32

// preemptionCandidate is a node where evicting victims lets the pod fit.
type preemptionCandidate struct {
	node    string
	victims []*v1.Pod
	// pdbViolations counts the victims whose eviction a
	// PodDisruptionBudget does not allow.
	pdbViolations int
}

// inFlightPreemption is a pending pod's nomination: made by its
// preemption here, with the victims it chose (until they are gone, the
// pod waits rather than preempts again), or read from its status. Either
// way the room on the node is kept for it (nominatedFor).
type inFlightPreemption struct {
	pod     *v1.Pod
	info    *framework.PodInfo
	node    string
	victims []types.UID
	// running is set while the eviction requests are under way (guarded
	// by Scheduler.preemptMu).
	running bool
	// fromStatus marks a nomination read from the pod's
	// status.nominatedNodeName, not made here (see syncNomination).
	fromStatus bool
}

// syncNomination follows a pending pod's status.nominatedNodeName, as
// kube-scheduler's nominator does: a nomination this replica did not make
// (a replica before a restart or a change of leader made it) keeps its
// room too, and goes when the field is cleared. A nomination made here
// stays until the pod is placed or gone, whatever the informer shows
// meanwhile.
func (s *Scheduler) syncNomination(pod *v1.Pod) {
	node := pod.Status.NominatedNodeName
	if node != "" && s.Cache.IsAssumed(pod.UID) {
		// The binding cycle's own nomination: the pod already holds its
		// room as an assumed pod.
		return
	}
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	p, ok := s.preempting[pod.UID]
	switch {
	case ok && !p.fromStatus:
		// Made here: kept until the pod is placed or gone, whatever
		// the informer shows (the status patch may not be back yet).
	case node == "":
		if ok {
			delete(s.preempting, pod.UID)
			s.nominationsChanged()
		}
	case !ok || p.node != node:
		s.preempting[pod.UID] = &inFlightPreemption{pod: pod, info: framework.NewPodInfo(pod), node: node, fromStatus: true}
		s.nominationsChanged()
	}
}

// preempt runs DefaultPreemption for pod, which fitErr says fits nowhere.
// It returns the nominated node, or "", and kube-scheduler's message for
// the pod's FailedScheduling event: where the pod will go and how many
// pods make room for it, or why preemption does not help. Evictions
// happen in the background.
func (s *Scheduler) preempt(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, fitErr *FitError) (string, string) {
	plan := s.planPreemption(ctx, prof, state, pod, fitErr)
	if plan.best != nil {
		plan = s.preemptionByExtenders(ctx, pod, plan)
	}
	if plan.best == nil {
		if plan.clearNomination {
			// Its nomination, if any, holds room that helps nobody.
			s.clearNomination(pod)
		}
		return "", plan.message
	}
	s.metrics.PreemptionVictims(len(plan.best.victims))
	s.startEvictions(pod, *plan.best)
	return plan.best.node, plan.message
}

// placementMessage is what kube-scheduler v1.37 appends to the
// FailedScheduling message of a pod whose preemption found a node
// (DefaultPreemption's PostFilter and Evaluator.Preempt): the message
// then says where the pod is going, not only why it did not fit. v1.36
// appended nothing.
func (c preemptionCandidate) placementMessage() string {
	return fmt.Sprintf("preemption: found a potential placement for pod on node %v, preempting %d victims", c.node, len(c.victims))
}

// preemptionPlan is what DefaultPreemption decided, before anything is
// done about it.
type preemptionPlan struct {
	// eligible is false when the pod may not preempt now.
	eligible   bool
	candidates []preemptionCandidate
	// best is the candidate picked, nil when there is none; message
	// says why (kube-scheduler's "preemption: ..."), or, with a
	// candidate, where the pod goes (placementMessage).
	best    *preemptionCandidate
	message string
	// clearNomination: the pod's nomination, if any, helps nobody.
	clearNomination bool
}

// planPreemption is DefaultPreemption without its effects: the victims and
// the node it would pick. It reads the snapshot and the nominations and
// writes nothing, so explain runs it as a dry run.
func (s *Scheduler) planPreemption(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, fitErr *FitError) preemptionPlan {
	if ok, msg := s.eligibleToPreempt(pod, fitErr); !ok {
		return preemptionPlan{message: "preemption: " + msg}
	}
	all := s.snapshot.List()
	if len(fitErr.candidates) == 0 {
		return preemptionPlan{eligible: true, clearNomination: true,
			message: fmt.Sprintf("preemption: 0/%d nodes are available: %d %s.", len(all), len(all), msgPreemptionNotHelpful)}
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if s.pdbLister != nil {
		var err error
		if pdbs, err = s.pdbLister.List(labels.Everything()); err != nil {
			return preemptionPlan{eligible: true, message: "preemption: listing PodDisruptionBudgets: " + err.Error()}
		}
	}
	candidates, statuses := s.findCandidates(ctx, prof, state, pod, fitErr.candidates, pdbs)
	if len(candidates) == 0 {
		f := &FitError{NumAllNodes: len(all), ReasonCounts: map[string]int{}}
		for _, st := range statuses {
			f.addStatus(st, "")
		}
		if rest := len(all) - len(statuses); rest > 0 {
			f.ReasonCounts[msgPreemptionNotHelpful] += rest
		}
		return preemptionPlan{eligible: true, clearNomination: true, message: "preemption: " + f.Error()}
	}
	best := pickCandidate(candidates)
	return preemptionPlan{eligible: true, candidates: candidates, best: &best, message: best.placementMessage()}
}

// eligibleToPreempt is kube-scheduler's PodEligibleToPreemptOthers: a pod
// with preemptionPolicy Never does not preempt, nor does one whose earlier
// preemption is under way: its evictions are still being requested, its
// victims are still there, or pods that the scheduler preempted, of lower
// priority, are still terminating on its nominated node. That wait ends
// early when the filters rule the nominated node out for good.
func (s *Scheduler) eligibleToPreempt(pod *v1.Pod, fitErr *FitError) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, msgPreemptNever
	}
	nominated := pod.Status.NominatedNodeName
	var victims []types.UID
	s.preemptMu.Lock()
	if p, ok := s.preempting[pod.UID]; ok {
		if p.running {
			s.preemptMu.Unlock()
			return false, msgPreemptRunning
		}
		nominated, victims = p.node, p.victims
	}
	s.preemptMu.Unlock()
	if nominated == "" || !slices.ContainsFunc(fitErr.candidates, func(ni *framework.NodeInfo) bool { return ni.Node().Name == nominated }) {
		// No earlier nomination, or the filters say that node cannot
		// take the pod whatever is evicted.
		return true, ""
	}
	// Deleted, the victims may not have reached the cache as terminating
	// yet: until they are gone, they count as terminating.
	for _, uid := range victims {
		if s.Cache.HasPod(uid) {
			return false, msgPreemptTerminating
		}
	}
	ni, err := s.snapshot.Get(nominated)
	if err != nil {
		return true, ""
	}
	priority := podPriority(pod)
	for _, pi := range ni.Pods {
		if pi.Pod.DeletionTimestamp != nil && podPriority(pi.Pod) < priority && preemptedByScheduler(pi.Pod) {
			return false, msgPreemptTerminating
		}
	}
	return true, ""
}

// preemptedByScheduler reports whether p carries the DisruptionTarget
// condition a scheduler's preemption sets.
func preemptedByScheduler(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler {
			return true
		}
	}
	return false
}

// findCandidates looks for victims on the nodes where preemption might
// help, in parallel, from a random offset, and stops once it has enough
// candidates: at least one that violates no PodDisruptionBudget and, in
// all, max(minCandidateNodesPercentage of those nodes,
// minCandidateNodesAbsolute). It returns the candidates and, for the
// nodes without victims, why.
func (s *Scheduler) findCandidates(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]preemptionCandidate, []*framework.Status) {
	pct, abs := prof.preemption.CandidateNodes()
	want := max(len(nodes)*int(pct)/100, int(abs))
	want = min(max(want, 1), len(nodes))
	offset := s.rng.IntN(len(nodes))

	active := make([]int, 0, len(prof.filter))
	for i, pl := range prof.filter {
		if _, skip := state.SkipFilterPlugins[pl.Name()]; !skip {
			active = append(active, i)
		}
	}
	nominated := s.nominatedFor(pod)
	searchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu                     sync.Mutex
		found                  []preemptionCandidate
		nonViolating, violated int
		statuses               = make([]*framework.Status, len(nodes))
	)
	s.parallelizer.Until(searchCtx, len(nodes), func(i int) {
		if searchCtx.Err() != nil {
			return
		}
		ni := nodes[(offset+i)%len(nodes)]
		victims, violations, st := s.selectVictimsOnNode(ctx, prof, active, state, pod, ni, nominated.on(ni.Node().Name), pdbs)
		if !st.IsSuccess() {
			statuses[i] = st
			return
		}
		mu.Lock()
		defer mu.Unlock()
		found = append(found, preemptionCandidate{node: ni.Node().Name, victims: victims, pdbViolations: violations})
		if violations == 0 {
			nonViolating++
		} else {
			violated++
		}
		if nonViolating > 0 && nonViolating+violated >= want {
			cancel()
		}
	})
	var rejected []*framework.Status
	for _, st := range statuses {
		if st != nil {
			rejected = append(rejected, st)
		}
	}
	// Parallel search finds candidates in any order: sorted, the choice
	// among equals does not depend on which worker was faster.
	slices.SortFunc(found, func(a, b preemptionCandidate) int { return cmp.Compare(a.node, b.node) })
	return found, rejected
}

// selectVictimsOnNode is kube-scheduler's SelectVictimsOnNode: take every
// pod of lower priority off a copy of the node; if the pod then fits, put
// them back one by one, most important first and those a
// PodDisruptionBudget protects before the others, keeping back each one
// the pod still fits beside. The ones that cannot come back are the
// victims, most important first, with how many of them violate a budget.
func (s *Scheduler) selectVictimsOnNode(ctx context.Context, prof *profile, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, nominated []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *framework.Status) {
	priority := podPriority(pod)
	var potential []*framework.PodInfo
	for _, pi := range ni.Pods {
		if podPriority(pi.Pod) < priority {
			potential = append(potential, pi)
		}
	}
	if len(potential) == 0 {
		// Decided before any copy: in a full cluster of equal priorities
		// every pending pod asks this of every node, cycle after cycle.
		return nil, 0, statusNoVictims
	}
	what := ni.Clone()
	// Not the cache's node state any more: no memo may read it by slot.
	what.Generation, what.Slot = 0, 0
	st := state.Clone()
	for _, pi := range potential {
		if err := what.RemovePod(pi.Pod); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
		if status := whatIf(ctx, prof, st, pod, pi, what, false); !status.IsSuccess() {
			return nil, 0, status
		}
	}
	if status := fitsBesideNominated(ctx, prof, active, st, pod, what, nominated); !status.IsSuccess() {
		return nil, 0, status
	}

	slices.SortStableFunc(potential, func(a, b *framework.PodInfo) int { return moreImportant(a.Pod, b.Pod) })
	violating, nonViolating := splitByPDB(potential, pdbs)
	var victims []*v1.Pod
	violations := 0
	reprieve := func(pi *framework.PodInfo) (bool, *framework.Status) {
		what.AddPodInfo(pi)
		if status := whatIf(ctx, prof, st, pod, pi, what, true); !status.IsSuccess() {
			return false, status
		}
		if fits := fitsBesideNominated(ctx, prof, active, st, pod, what, nominated); fits.IsSuccess() {
			return true, nil
		}
		if err := what.RemovePod(pi.Pod); err != nil {
			return false, framework.AsStatus(err)
		}
		if status := whatIf(ctx, prof, st, pod, pi, what, false); !status.IsSuccess() {
			return false, status
		}
		victims = append(victims, pi.Pod)
		return false, nil
	}
	for _, pi := range violating {
		kept, status := reprieve(pi)
		if status != nil {
			return nil, 0, status
		}
		if !kept {
			violations++
		}
	}
	for _, pi := range nonViolating {
		if _, status := reprieve(pi); status != nil {
			return nil, 0, status
		}
	}
	if len(victims) == 0 {
		// The pod fits beside every pod of the node after all: not a
		// node to preempt on (kube-scheduler's words).
		return nil, 0, framework.NewStatus(framework.Unschedulable, fmt.Sprintf("expected at least one victim pod on node %q", ni.Node().Name))
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		slices.SortStableFunc(victims, moreImportant)
	}
	return victims, violations, nil
}

// whatIf tells the PreFilter states of the plugins that did not skip that
// pi was added to (add) or removed from node ni.
func whatIf(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, pi *framework.PodInfo, ni *framework.NodeInfo, add bool) *framework.Status {
	for _, ext := range prof.preFilterExt {
		if _, skip := state.SkipFilterPlugins[ext.name]; skip {
			continue
		}
		var st *framework.Status
		if add {
			st = ext.AddPod(ctx, state, pod, pi, ni)
		} else {
			st = ext.RemovePod(ctx, state, pod, pi, ni)
		}
		if !st.IsSuccess() {
			return st
		}
	}
	return nil
}

// moreImportant orders pods most important first: higher priority, then
// the one that started earlier (kube-scheduler's MoreImportantPod).
func moreImportant(a, b *v1.Pod) int {
	if c := cmp.Compare(podPriority(b), podPriority(a)); c != 0 {
		return c
	}
	return startTime(a).Compare(startTime(b))
}

// startTime is when the pod started, or now when it has not: a pod that
// has not started counts as the youngest.
func startTime(p *v1.Pod) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return time.Now()
}

// splitByPDB splits pods (most important first) into those whose eviction
// some PodDisruptionBudget does not allow and the others, as kube-scheduler
// v1.37's FilterVictimsWithPDBViolation: each eviction is counted against
// the budgets it falls under, in the order of pdbs, until one of them goes
// below zero; the pod then violates, and the budgets after that one are
// not charged for it (v1.36 charged them all, so a pod already violating
// one budget used up another and made the next pod under it violate too).
// A pod the budget already counts as disrupted does not use it up again.
func splitByPDB(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			selectors[i] = sel
		}
	}
	for _, pi := range pods {
		p := pi.Pod
		violated := false
		if len(p.Labels) > 0 {
			for i, pdb := range pdbs {
				sel := selectors[i]
				// A budget with no (or an empty) selector covers nothing.
				if pdb.Namespace != p.Namespace || sel == nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
					continue
				}
				if _, done := pdb.Status.DisruptedPods[p.Name]; done {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violated = true
					break
				}
			}
		}
		if violated {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// pickCandidate is kube-scheduler's pickOneNodeForPreemption: in turn,
// the fewest victims that violate
// a PodDisruptionBudget, the lowest highest victim priority, the smallest
// sum of victim priorities, the fewest victims, and the latest start of
// the most important victims; then the first.
func pickCandidate(candidates []preemptionCandidate) preemptionCandidate {
	scores := []func(c preemptionCandidate) int64{
		func(c preemptionCandidate) int64 { return -int64(c.pdbViolations) },
		func(c preemptionCandidate) int64 { return -int64(podPriority(c.victims[0])) },
		func(c preemptionCandidate) int64 {
			var sum int64
			for _, v := range c.victims {
				// Shifted so that negative priorities add up too.
				sum += int64(podPriority(v)) + math.MaxInt32 + 1
			}
			return -sum
		},
		func(c preemptionCandidate) int64 { return -int64(len(c.victims)) },
		func(c preemptionCandidate) int64 { return earliestStartOfMostImportant(c.victims).UnixNano() },
	}
	left := candidates
	for _, score := range scores {
		best := int64(math.MinInt64)
		var next []preemptionCandidate
		for _, c := range left {
			switch v := score(c); {
			case v > best:
				best, next = v, []preemptionCandidate{c}
			case v == best:
				next = append(next, c)
			}
		}
		if left = next; len(left) == 1 {
			break
		}
	}
	return left[0]
}

// earliestStartOfMostImportant is the earliest start among the victims of
// the highest priority.
func earliestStartOfMostImportant(victims []*v1.Pod) time.Time {
	top := podPriority(victims[0])
	earliest := startTime(victims[0])
	for _, v := range victims[1:] {
		if podPriority(v) != top {
			continue
		}
		if t := startTime(v); t.Before(earliest) {
			earliest = t
		}
	}
	return earliest
}

// startEvictions nominates c's node for pod and evicts c's victims in the
// background; the pod is requeued by the caller and comes back once the
// victims are gone from the cache.
func (s *Scheduler) startEvictions(pod *v1.Pod, c preemptionCandidate) {
	uids := make([]types.UID, len(c.victims))
	for i, v := range c.victims {
		uids[i] = v.UID
	}
	p := &inFlightPreemption{pod: pod, info: framework.NewPodInfo(pod), node: c.node, victims: uids, running: s.binder != nil}
	s.preemptMu.Lock()
	s.preempting[pod.UID] = p
	s.nominationsChanged()
	s.preemptMu.Unlock()
	clear := s.lowerPriorityNominated(pod, c.node)
	s.logger.Info("preempting",
		zap.String("pod", pod.Namespace+"/"+pod.Name),
		zap.String("node", c.node),
		zap.Int("victims", len(c.victims)),
		zap.Int("pdbViolations", c.pdbViolations))
	if s.binder == nil {
		return
	}
	s.bindWG.Add(1)
	go func() {
		defer s.bindWG.Done()
		select {
		case s.preemptSlots <- struct{}{}:
			defer func() { <-s.preemptSlots }()
		case <-s.bindCtx.Done():
			// Stopping: Preempt fails at once below, and says so.
		}
		ctx, cancel := context.WithTimeout(s.bindCtx, preemptTimeout)
		defer cancel()
		err := s.binder.Preempt(ctx, pod, c.node, c.victims, clear)
		s.preemptMu.Lock()
		p.running = false
		if err != nil && s.preempting[pod.UID] == p {
			// Victims left in place must not hold the pod back: it may
			// preempt again (on whichever node is best then).
			delete(s.preempting, pod.UID)
			s.nominationsChanged()
		}
		s.preemptMu.Unlock()
		if err != nil {
			s.logger.Warn("preemption incomplete", zap.String("pod", pod.Namespace+"/"+pod.Name),
				zap.String("node", c.node), zap.Error(err))
			// Nothing else may wake the pod: the victims that were
			// deleted, if any, were already counted out of its way.
			s.Queue.MoveToActiveOrBackoff(forceActivate, nil, pod,
				func(qpi *queue.QueuedPodInfo) bool { return qpi.Pod.UID == pod.UID })
		}
	}()
}

// clearNomination drops pod's nomination: the room kept for it and its
// status.nominatedNodeName (in the background, with the binder's other
// status patches).
func (s *Scheduler) clearNomination(pod *v1.Pod) {
	if node := s.nominatedNode(pod.UID); node != "" {
		s.forgetPreemption(pod.UID)
		s.nominationReleased(pod, node)
	}
	if pod.Status.NominatedNodeName == "" || s.binder == nil {
		return
	}
	s.binder.ClearNominationLater(pod)
}

// lowerPriorityNominated returns the pods of lower priority than pod whose
// own preemption nominated node: they may no longer fit there, so their
// nomination is cleared (and their preemption forgotten).
func (s *Scheduler) lowerPriorityNominated(pod *v1.Pod, node string) []*v1.Pod {
	var out []*v1.Pod
	priority := podPriority(pod)
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	for uid, p := range s.preempting {
		if p.node != node || uid == pod.UID || podPriority(p.pod) >= priority {
			continue
		}
		delete(s.preempting, uid)
		s.nominationsChanged()
		out = append(out, p.pod)
	}
	return out
}

// nominatedFor returns, by node, the pods other than pod that preempted
// for a place there and are not placed yet, when their priority is at
// least pod's: pod must fit beside them, or it could take the room they
// evicted pods for (kube-scheduler's nominated pods). It is empty in
// nearly every cycle. The nominations are indexed by node once per change
// of them, not once per cycle: on a cluster where 1,000 preemptors wait
// for their victims, each cycle used to build that map afresh.
func (s *Scheduler) nominatedFor(pod *v1.Pod) nominatedView {
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	if s.nominations == nil || s.nominations.version != s.nominationsVersion {
		s.nominations = newNominationIndex(s.preempting, s.nominationsVersion)
	}
	return nominatedView{idx: s.nominations, priority: podPriority(pod), self: pod.UID}
}

// nominationsChanged marks the index of nominations stale; s.preemptMu
// must be held.
func (s *Scheduler) nominationsChanged() { s.nominationsVersion++ }

// nominationIndex is Scheduler.preempting by node, immutable once built.
type nominationIndex struct {
	version uint64
	byNode  map[string]*nodeNominations
	total   int
	// maxPriority is the highest priority of a nominated pod.
	maxPriority int32
}

// nodeNominations are the nominations on one node, with what on reads of
// them kept beside, so that a cycle reads no pod object per node.
type nodeNominations struct {
	infos       []*framework.PodInfo
	uids        []types.UID
	priorities  []int32
	minPriority int32
}

func newNominationIndex(preempting map[types.UID]*inFlightPreemption, version uint64) *nominationIndex {
	idx := &nominationIndex{version: version, total: len(preempting)}
	if len(preempting) == 0 {
		return idx
	}
	idx.byNode = make(map[string]*nodeNominations, len(preempting))
	first := true
	for uid, p := range preempting {
		pr := podPriority(p.pod)
		n := idx.byNode[p.node]
		if n == nil {
			n = &nodeNominations{minPriority: pr}
			idx.byNode[p.node] = n
		}
		n.infos = append(n.infos, p.info)
		n.uids = append(n.uids, uid)
		n.priorities = append(n.priorities, pr)
		n.minPriority = min(n.minPriority, pr)
		if first || pr > idx.maxPriority {
			idx.maxPriority, first = pr, false
		}
	}
	return idx
}

// nominatedView is the nominations one pod must fit beside.
type nominatedView struct {
	idx      *nominationIndex
	priority int32
	self     types.UID
}

// empty reports whether no nomination concerns the pod (it may still
// report false when none does).
func (v nominatedView) empty() bool {
	if v.idx == nil || v.idx.total == 0 || v.idx.maxPriority < v.priority {
		return true
	}
	if v.idx.total == 1 {
		for _, n := range v.idx.byNode {
			return n.uids[0] == v.self
		}
	}
	return false
}

// on returns the nominated pods on node that the pod must fit beside.
func (v nominatedView) on(node string) []*framework.PodInfo {
	if v.idx == nil {
		return nil
	}
	n := v.idx.byNode[node]
	if n == nil {
		return nil
	}
	if n.minPriority >= v.priority && !slices.Contains(n.uids, v.self) {
		return n.infos
	}
	var out []*framework.PodInfo
	for i, info := range n.infos {
		if n.uids[i] != v.self && n.priorities[i] >= v.priority {
			out = append(out, info)
		}
	}
	return out
}

// runFiltersWithNominated is runFilters on ni for pod, which must also
// fit beside the nominated pods given (kube-scheduler's
// RunFilterPluginsWithNominatedPods): on a copy of ni and of state that
// hold them. Without nominated pods it is runFilters.
//
// kube-scheduler filters with the nominated pods first, then without
// them; the pod must pass both. yardmaster filters without them first,
// and makes the copies only when the pod passes: on a full cluster where
// every node holds a preemptor's nomination, a pod that fits nowhere then
// costs no copy per node. The verdict is the same; when both runs reject
// the node, the reason given is the run without the nominated pods'.
func runFiltersWithNominated(ctx context.Context, prof *profile, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, nominated []*framework.PodInfo, timers []*metrics.PluginTimer) (*framework.Status, string) {
	if len(nominated) > 0 {
		if status, by := runFilters(ctx, prof, active, state, pod, ni, timers); !status.IsSuccess() {
			return status, by
		}
		return runFiltersBesideNominated(ctx, prof, active, state, pod, ni, nominated)
	}
	return runFilters(ctx, prof, active, state, pod, ni, timers)
}

// fitsBesideNominated is runFiltersWithNominated in kube-scheduler's
// order, for preemption's what-if runs: beside the nominated pods first,
// then without them. The verdict is the same; the reason, when the pod
// fails beside them, is kube-scheduler's, which a node that is no
// candidate gives in the "preemption: ..." message. It costs a copy per
// check on a node that holds nominations of the pod's priority or more
// (rare), where the other order spares the copy when the pod fails
// without them.
func fitsBesideNominated(ctx context.Context, prof *profile, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, nominated []*framework.PodInfo) *framework.Status {
	if len(nominated) > 0 {
		if status, _ := runFiltersBesideNominated(ctx, prof, active, state, pod, ni, nominated); !status.IsSuccess() {
			return status
		}
	}
	status, _ := runFilters(ctx, prof, active, state, pod, ni, nil)
	return status
}

// runFiltersBesideNominated runs the filters for pod on a copy of ni and
// of state that hold the nominated pods: the second half of
// runFiltersWithNominated, for a pod that passed on ni as it is.
func runFiltersBesideNominated(ctx context.Context, prof *profile, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, nominated []*framework.PodInfo) (*framework.Status, string) {
	what := ni.Clone()
	what.Generation, what.Slot = 0, 0
	st := state.Clone()
	for _, pi := range nominated {
		what.AddPodInfo(pi)
		if status := whatIf(ctx, prof, st, pod, pi, what, true); !status.IsSuccess() {
			return status, ""
		}
	}
	return runFilters(ctx, prof, active, st, pod, what, nil)
}

// nominatedOn returns the pods nominated to node now.
func (s *Scheduler) nominatedOn(node string) []*framework.PodInfo {
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	var out []*framework.PodInfo
	for _, p := range s.preempting {
		if p.node == node {
			out = append(out, p.info)
		}
	}
	return out
}

// nominatedNode returns the node where the pod's nomination keeps room,
// "" if it has none.
func (s *Scheduler) nominatedNode(uid types.UID) string {
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	if p, ok := s.preempting[uid]; ok {
		return p.node
	}
	return ""
}

// nominationReleased wakes the pods that pod's nomination on node, now
// dropped (the pod deleted, its nomination cleared or moved), held back:
// for the hints an assigned pod left node. Only pods of priority at most
// pod's are asked, as kube-scheduler's getLEPriorityPreCheck: a pod of
// higher priority never counted the room.
func (s *Scheduler) nominationReleased(pod *v1.Pod, node string) {
	held := *pod
	held.Spec.NodeName = node
	prio := podPriority(pod)
	s.Queue.MoveToActiveOrBackoff(assignedPodDelete, &held, nil, func(q *queue.QueuedPodInfo) bool {
		return podPriority(q.Pod) <= prio
	})
}

// forgetPreemption drops the pod's preemption, once it is bound or gone.
func (s *Scheduler) forgetPreemption(uid types.UID) {
	s.preemptMu.Lock()
	if _, ok := s.preempting[uid]; ok {
		delete(s.preempting, uid)
		s.nominationsChanged()
	}
	s.preemptMu.Unlock()
}

// podPriority is the pod's priority, 0 when unset.
func podPriority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}
