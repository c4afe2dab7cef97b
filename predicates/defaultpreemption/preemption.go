package defaultpreemption

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	policylisters "k8s.io/client-go/listers/policy/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/yardmaster-io/yardmaster/framework"
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

// Plugin is DefaultPreemption.
type Plugin struct {
	h    framework.PreemptionHandle
	args Args
	// pdbs reads PodDisruptionBudgets; nil without an informer factory.
	pdbs policylisters.PodDisruptionBudgetLister
}

var (
	_ framework.PostFilterPlugin  = &Plugin{}
	_ framework.PreemptionPlanner = &Plugin{}
)

// New returns DefaultPreemption over h, which must be a
// framework.PreemptionHandle.
func New(args *Args, h framework.Handle) (*Plugin, error) {
	ph, ok := h.(framework.PreemptionHandle)
	if !ok {
		return nil, errors.New("the scheduler's handle cannot preempt (it is no framework.PreemptionHandle)")
	}
	p := &Plugin{h: ph}
	if args != nil {
		p.args = *args
	}
	if f := h.SharedInformerFactory(); f != nil {
		p.pdbs = f.Policy().V1().PodDisruptionBudgets().Lister()
	}
	return p, nil
}

// Name returns Name.
func (*Plugin) Name() string { return Name }

// PostFilter preempts for pod: it nominates the best candidate node and
// has its victims evicted, and returns Success with kube-scheduler v1.37's
// message of where the pod goes ("preemption: found a potential placement
// for pod on node ..."), or Unschedulable saying why preemption does not
// help.
func (p *Plugin) PostFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, filtered *framework.FilteredNodes) *framework.Status {
	plan, clear := p.plan(ctx, state, pod, filtered)
	if len(plan.Candidates) > 0 {
		cands, err := p.h.PreemptionByExtenders(ctx, pod, plan.Candidates)
		switch {
		case err != nil:
			plan, clear = framework.PreemptionPlan{Eligible: true, Message: "preemption: " + err.Error()}, true
		case len(cands) == 0:
			plan, clear = framework.PreemptionPlan{Eligible: true, Message: "preemption: no candidate node for preemption"}, true
		default:
			if len(cands) != len(plan.Candidates) || &cands[0] != &plan.Candidates[0] {
				// Changed by an extender. The order pickCandidate
				// breaks its last ties by; kube-scheduler's comes from
				// a map, so any order is its.
				slices.SortFunc(cands, func(a, b framework.PreemptionCandidate) int { return cmp.Compare(a.Node, b.Node) })
			}
			plan = picked(cands)
		}
	}
	if plan.Best == nil {
		if clear {
			// Its nomination, if any, holds room that helps nobody.
			p.h.ClearNomination(pod)
		}
		return framework.NewStatus(framework.Unschedulable, plan.Message)
	}
	p.h.Preempt(pod, plan.Best.Node, plan.Best.Victims)
	return framework.NewStatus(framework.Success, plan.Message)
}

// PlanPreemption is PostFilter without its effects and without the
// extenders: the victims and the node it would pick.
func (p *Plugin) PlanPreemption(ctx context.Context, state *framework.CycleState, pod *v1.Pod, filtered *framework.FilteredNodes) framework.PreemptionPlan {
	plan, _ := p.plan(ctx, state, pod, filtered)
	if len(plan.Candidates) > 0 {
		plan = picked(plan.Candidates)
	}
	return plan
}

// picked is the plan that preempts on the best of candidates, which must
// not be empty, with kube-scheduler v1.37's message: the FailedScheduling
// message then says where the pod is going, not only why it did not fit.
func picked(candidates []framework.PreemptionCandidate) framework.PreemptionPlan {
	best := pickCandidate(candidates)
	return framework.PreemptionPlan{Eligible: true, Candidates: candidates, Best: &best,
		Message: fmt.Sprintf("preemption: found a potential placement for pod on node %v, preempting %d victims", best.Node, len(best.Victims))}
}

// plan decides, reading the snapshot and the nominations and writing
// nothing: the candidates, none picked yet, or a message saying why there
// are none; clear says the pod's nomination, if any, helps nobody.
func (p *Plugin) plan(ctx context.Context, state *framework.CycleState, pod *v1.Pod, filtered *framework.FilteredNodes) (plan framework.PreemptionPlan, clear bool) {
	if ok, msg := p.eligible(pod, filtered); !ok {
		return framework.PreemptionPlan{Message: "preemption: " + msg}, false
	}
	all := filtered.NumAllNodes
	if len(filtered.Resolvable) == 0 {
		return framework.PreemptionPlan{Eligible: true,
			Message: fmt.Sprintf("preemption: 0/%d nodes are available: %d %s.", all, all, msgPreemptionNotHelpful)}, true
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if p.pdbs != nil {
		var err error
		if pdbs, err = p.pdbs.List(labels.Everything()); err != nil {
			return framework.PreemptionPlan{Eligible: true, Message: "preemption: listing PodDisruptionBudgets: " + err.Error()}, false
		}
	}
	candidates, statuses := p.findCandidates(ctx, state, pod, filtered.Resolvable, pdbs)
	if len(candidates) == 0 {
		counts := map[string]int{}
		for _, st := range statuses {
			for _, r := range st.Reasons() {
				counts[r]++
			}
		}
		if rest := all - len(statuses); rest > 0 {
			counts[msgPreemptionNotHelpful] += rest
		}
		return framework.PreemptionPlan{Eligible: true, Message: "preemption: " + framework.UnavailableMessage(all, counts)}, true
	}
	return framework.PreemptionPlan{Eligible: true, Candidates: candidates}, false
}

// eligible is kube-scheduler's PodEligibleToPreemptOthers: a pod with
// preemptionPolicy Never does not preempt, nor does one whose earlier
// preemption is under way: its evictions are still being requested, its
// victims are still there, or pods that a scheduler preempted, of lower
// priority, are still terminating on its nominated node. That wait ends
// early when the filters rule the nominated node out for good.
func (p *Plugin) eligible(pod *v1.Pod, filtered *framework.FilteredNodes) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, msgPreemptNever
	}
	nominated := pod.Status.NominatedNodeName
	nom, ok := p.h.NominationOf(pod)
	if ok {
		if nom.Running {
			return false, msgPreemptRunning
		}
		nominated = nom.Node
	}
	if nominated == "" || !slices.ContainsFunc(filtered.Resolvable, func(ni *framework.NodeInfo) bool { return ni.NodeName() == nominated }) {
		// No earlier nomination, or the filters say that node cannot
		// take the pod whatever is evicted.
		return true, ""
	}
	// Deleted, the victims may not have reached the cache as terminating
	// yet: until they are gone, they count as terminating.
	for _, uid := range nom.Victims {
		if p.h.PodInCache(uid) {
			return false, msgPreemptTerminating
		}
	}
	ni, err := p.h.SnapshotSharedLister().Get(nominated)
	if err != nil {
		return true, ""
	}
	priority := corev1helpers.PodPriority(pod)
	for _, pi := range ni.Pods {
		if pi.Pod.DeletionTimestamp != nil && corev1helpers.PodPriority(pi.Pod) < priority && preemptedByScheduler(pi.Pod) {
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
// minCandidateNodesAbsolute). It returns the candidates, sorted by node,
// and, for the nodes without victims, why.
func (p *Plugin) findCandidates(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]framework.PreemptionCandidate, []*framework.Status) {
	pct, abs := p.args.CandidateNodes()
	want := max(len(nodes)*int(pct)/100, int(abs))
	want = min(max(want, 1), len(nodes))
	offset := rand.IntN(len(nodes))

	searchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu                     sync.Mutex
		found                  []framework.PreemptionCandidate
		nonViolating, violated int
		statuses               = make([]*framework.Status, len(nodes))
	)
	p.h.Parallelizer().Until(searchCtx, len(nodes), func(i int) {
		if searchCtx.Err() != nil {
			return
		}
		ni := nodes[(offset+i)%len(nodes)]
		victims, violations, st := p.selectVictimsOnNode(ctx, state, pod, ni, pdbs)
		if !st.IsSuccess() {
			statuses[i] = st
			return
		}
		mu.Lock()
		defer mu.Unlock()
		found = append(found, framework.PreemptionCandidate{Node: ni.NodeName(), Victims: victims, PDBViolations: violations})
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
	slices.SortFunc(found, func(a, b framework.PreemptionCandidate) int { return cmp.Compare(a.Node, b.Node) })
	return found, rejected
}

// selectVictimsOnNode is kube-scheduler's SelectVictimsOnNode: take every
// pod of lower priority off a copy of the node; if the pod then fits, put
// them back one by one, most important first and those a
// PodDisruptionBudget protects before the others, keeping back each one
// the pod still fits beside. The ones that cannot come back are the
// victims, most important first, with how many of them violate a budget.
func (p *Plugin) selectVictimsOnNode(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *framework.Status) {
	priority := corev1helpers.PodPriority(pod)
	var potential []*framework.PodInfo
	for _, pi := range ni.Pods {
		if corev1helpers.PodPriority(pi.Pod) < priority {
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
		if status := p.h.RunPreFilterExtensionRemovePod(ctx, st, pod, pi, what); !status.IsSuccess() {
			return nil, 0, status
		}
	}
	if status := p.h.RunFilterPluginsWithNominatedPods(ctx, st, pod, what); !status.IsSuccess() {
		return nil, 0, status
	}

	slices.SortStableFunc(potential, func(a, b *framework.PodInfo) int { return moreImportant(a.Pod, b.Pod) })
	violating, nonViolating := SplitByPDB(potential, pdbs)
	var victims []*v1.Pod
	violations := 0
	reprieve := func(pi *framework.PodInfo) (bool, *framework.Status) {
		what.AddPodInfo(pi)
		if status := p.h.RunPreFilterExtensionAddPod(ctx, st, pod, pi, what); !status.IsSuccess() {
			return false, status
		}
		if fits := p.h.RunFilterPluginsWithNominatedPods(ctx, st, pod, what); fits.IsSuccess() {
			return true, nil
		}
		if err := what.RemovePod(pi.Pod); err != nil {
			return false, framework.AsStatus(err)
		}
		if status := p.h.RunPreFilterExtensionRemovePod(ctx, st, pod, pi, what); !status.IsSuccess() {
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
		return nil, 0, framework.NewStatus(framework.Unschedulable, fmt.Sprintf("expected at least one victim pod on node %q", ni.NodeName()))
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		slices.SortStableFunc(victims, moreImportant)
	}
	return victims, violations, nil
}

// moreImportant orders pods most important first: higher priority, then
// the one that started earlier (kube-scheduler's MoreImportantPod).
func moreImportant(a, b *v1.Pod) int {
	if c := cmp.Compare(corev1helpers.PodPriority(b), corev1helpers.PodPriority(a)); c != 0 {
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

// pickCandidate is kube-scheduler's pickOneNodeForPreemption: in turn,
// the fewest victims that violate a PodDisruptionBudget, the lowest
// highest victim priority, the smallest sum of victim priorities, the
// fewest victims, and the latest start of the most important victims;
// then the first.
func pickCandidate(candidates []framework.PreemptionCandidate) framework.PreemptionCandidate {
	scores := []func(c framework.PreemptionCandidate) int64{
		func(c framework.PreemptionCandidate) int64 { return -int64(c.PDBViolations) },
		func(c framework.PreemptionCandidate) int64 { return -int64(corev1helpers.PodPriority(c.Victims[0])) },
		func(c framework.PreemptionCandidate) int64 {
			var sum int64
			for _, v := range c.Victims {
				// Shifted so that negative priorities add up too.
				sum += int64(corev1helpers.PodPriority(v)) + math.MaxInt32 + 1
			}
			return -sum
		},
		func(c framework.PreemptionCandidate) int64 { return -int64(len(c.Victims)) },
		func(c framework.PreemptionCandidate) int64 { return earliestStartOfMostImportant(c.Victims).UnixNano() },
	}
	left := candidates
	for _, score := range scores {
		best := int64(math.MinInt64)
		var next []framework.PreemptionCandidate
		for _, c := range left {
			switch v := score(c); {
			case v > best:
				best, next = v, []framework.PreemptionCandidate{c}
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
	top := corev1helpers.PodPriority(victims[0])
	earliest := startTime(victims[0])
	for _, v := range victims[1:] {
		if corev1helpers.PodPriority(v) != top {
			continue
		}
		if t := startTime(v); t.Before(earliest) {
			earliest = t
		}
	}
	return earliest
}
