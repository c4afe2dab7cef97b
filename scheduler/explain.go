package scheduler

// Explain: one cycle of the real pipeline for one pod, with a recorder.
//
// findFeasible and prioritize take a *cycleRecorder, nil in scheduling
// cycles (each use is a nil check outside the per-node loop). Given one,
// findFeasible filters every node instead of stopping at enough, and keeps
// each node's verdict; prioritize keeps every scorer's raw scores before
// NormalizeScore and the normalized ones after. The plugins, their order,
// their arguments, the snapshot, the kept answers per signature and the
// nominations are the scheduler's own, so an explanation cannot drift
// from what a cycle decides. Preemption runs as planPreemption, which
// evicts nothing.
//
// An explanation runs between two cycles of the loop: cycleMu is held by
// scheduleOne from the snapshot to the hand-off to the binding cycle, and
// by Explain. A scheduler whose loop does not run (the command line's
// snapshot, simulate) takes it uncontended.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
)

// ErrNoProfile is returned by Explain for a pod whose spec.schedulerName
// names no profile of this scheduler.
var ErrNoProfile = errors.New("no profile schedules this pod")

// ErrNotKept is returned by KeptExplanation for a pod without a kept
// attempt: placed, not tried yet, or tried by another replica.
var ErrNotKept = errors.New("no failed attempt kept for this pod")

var errNoInformers = errors.New("explain: the scheduler has no informers")

// cycleRecorder keeps what an explained cycle finds (see above).
type cycleRecorder struct {
	// allNodes makes findFeasible filter every node (explain); without
	// it, the cycle stops where a scheduling cycle stops (annotations).
	allNodes bool
	// placing marks the cycles of a pod group's dry run
	// (explain_group.go): they stop where a scheduling cycle stops, but
	// call no extender either.
	placing bool
	// feasible are the nodes prioritize scored, in its order.
	feasible []string
	// nodesToFind is how many feasible nodes the scheduler's own cycle
	// would have looked for.
	nodesToFind int
	// preFilterBy and preFilter are the PreFilter rejection, if any.
	preFilterBy string
	preFilter   *framework.Status
	// nodes are the nodes filtered; rejections, parallel to it, each
	// one's verdict (a nil status: feasible).
	nodes      []*framework.NodeInfo
	rejections []rejection
	// leftOut are the nodes PreFilter results left out, not filtered;
	// narrowedBy the plugins whose results did.
	leftOut    []string
	narrowedBy []string
	// scorers ran in this order; raw and norm are parallel to it, and
	// each list parallel to the feasible nodes.
	scorers []weightedScorer
	raws    [][]int64
	norms   [][]int64
}

// dryRun reports whether r records an explanation (explain's dry run),
// which calls no extender; nil, and the recorder of a profile writing the
// simulator's annotations, are real cycles.
func (r *cycleRecorder) dryRun() bool { return r != nil && (r.allNodes || r.placing) }

func (r *cycleRecorder) preFilterRejected(plugin string, st *framework.Status) {
	if r != nil {
		r.preFilterBy, r.preFilter = plugin, st
	}
}

func (r *cycleRecorder) filtered(nodes []*framework.NodeInfo, statuses []rejection) {
	if r != nil {
		r.nodes, r.rejections = nodes, slices.Clone(statuses)
	}
}

// narrowed records the nodes of all that allowed, the PreFilter
// results' nodes in common, leaves out.
func (r *cycleRecorder) narrowed(all []*framework.NodeInfo, allowed map[string]struct{}, by []string) {
	if r == nil {
		return
	}
	r.narrowedBy = slices.Clone(by)
	for _, ni := range all {
		if _, ok := allowed[ni.NodeName()]; !ok {
			r.leftOut = append(r.leftOut, ni.NodeName())
		}
	}
}

func (r *cycleRecorder) feasibleNodes(nodes []*framework.NodeInfo) {
	if r != nil {
		r.feasible = make([]string, len(nodes))
		for i, ni := range nodes {
			r.feasible[i] = ni.NodeName()
		}
	}
}

func (r *cycleRecorder) raw(sc weightedScorer, list framework.NodeScoreList) {
	if r != nil {
		r.scorers = append(r.scorers, sc)
		r.raws = append(r.raws, scoresOf(list))
	}
}

func (r *cycleRecorder) normalized(list framework.NodeScoreList) {
	if r != nil {
		r.norms = append(r.norms, scoresOf(list))
	}
}

func scoresOf(list framework.NodeScoreList) []int64 {
	out := make([]int64, len(list))
	for i, ns := range list {
		out[i] = ns.Score
	}
	return out
}

// Explain runs one cycle of pod's profile on the scheduler's current
// cache as scheduleOne would, except that every node is filtered and
// every feasible node scored, nothing is assumed, and preemption is a dry
// run. A pod already bound is explained as if it were not: on a copy of
// its node without it. It waits for the cycle in progress, if any.
func (s *Scheduler) Explain(ctx context.Context, pod *v1.Pod) (*explain.Explanation, error) {
	prof := s.profiles[pod.Spec.SchedulerName]
	if prof == nil {
		return nil, fmt.Errorf("pod %s/%s has schedulerName %q: %w", pod.Namespace, pod.Name, pod.Spec.SchedulerName, ErrNoProfile)
	}
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	s.Cache.UpdateSnapshot(s.snapshot)
	// Plugins are timed in the scheduler's cycles only.
	s.recordPluginMetrics = false
	e, _, err := s.explainLocked(ctx, prof, framework.NewCycleState(), pod, true)
	if err != nil {
		return nil, err
	}
	if key, ok := framework.PodGroupOf(pod); ok && s.groups.Served(key.API) {
		if e.PodGroup, err = s.explainGroupLocked(ctx, key, pod); err != nil {
			return nil, err
		}
		e.Summarize()
	}
	return e, nil
}

// ExplainPod is Explain for the pod namespace/name as the scheduler's
// informer has it: pending, or placed by any scheduler.
func (s *Scheduler) ExplainPod(ctx context.Context, namespace, name string) (*explain.Explanation, error) {
	if s.podLister == nil {
		return nil, errNoInformers
	}
	pod, err := s.podLister.Pods(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	return s.Explain(ctx, pod)
}

// Place is simulate's step: Explain pod and, when it fits, assume it on
// the node the cycle selected and run the profile's Reserve plugins, as
// the scheduling cycle does, so that the next pod sees it there with the
// volumes and devices it was given. Nothing is bound or written: Permit
// and the binding cycle do not run, and the assumption never expires. A
// Reserve failure undoes the reservation and leaves the pod unplaced,
// with the plugin's message. pod needs a UID of its own, and a
// schedulerName that names a profile.
func (s *Scheduler) Place(ctx context.Context, pod *v1.Pod) (*explain.Explanation, error) {
	prof := s.profiles[pod.Spec.SchedulerName]
	if prof == nil {
		return nil, fmt.Errorf("pod %s/%s has schedulerName %q: %w", pod.Namespace, pod.Name, pod.Spec.SchedulerName, ErrNoProfile)
	}
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	s.Cache.UpdateSnapshot(s.snapshot)
	s.recordPluginMetrics = false
	state := framework.NewCycleState()
	e, chosen, err := s.explainLocked(ctx, prof, state, pod, true)
	if err != nil || chosen == nil {
		return e, err
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = e.Selected
	if err := s.Cache.AssumePod(assumed); err != nil {
		return nil, fmt.Errorf("assume %s/%s on %q: %w", pod.Namespace, pod.Name, e.Selected, err)
	}
	j := &bindJob{prof: prof, state: state, assumed: assumed, res: scheduleResult{node: e.Selected}}
	if st, plugin := j.prof.runReserve(ctx, j); st != nil {
		s.unreserveAndForget(ctx, j)
		e.Message = pluginFailure("Reserve", st, plugin, e.Selected).Error()
		e.Selected = ""
		e.Summarize()
	}
	return e, nil
}

// ProfileNames returns the schedulerNames of the profiles.
func (s *Scheduler) ProfileNames() []string {
	out := make([]string, 0, len(s.profiles))
	for name := range s.profiles {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// explainLocked is Explain under cycleMu with the snapshot updated. It
// also returns the chosen node's NodeInfo when the pod fits. preempt runs
// preemption's dry run when the pod fits nowhere; a member of a group
// cycle has none (the group preempts, or nobody).
func (s *Scheduler) explainLocked(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, preempt bool) (*explain.Explanation, *framework.NodeInfo, error) {
	e := &explain.Explanation{
		Pod:           pod.Namespace + "/" + pod.Name,
		Profile:       prof.name,
		BoundTo:       pod.Spec.NodeName,
		NominatedNode: pod.Status.NominatedNodeName,
	}
	for _, x := range s.extenders {
		if (x.IsFilter() || x.IsPrioritizer()) && x.IsInterested(pod) {
			e.NotConsulted = append(e.NotConsulted, x.Name())
		}
	}
	all := s.snapshot.List()
	e.Nodes = len(all)
	if len(all) == 0 {
		e.Message = ErrNoNodesAvailable.Error()
		e.Summarize()
		return e, nil, nil
	}
	if pod.Spec.NodeName != "" {
		all = withoutPod(all, pod)
		pod = pod.DeepCopy()
		pod.Spec.NodeName = ""
	}
	// An explanation leaves the loop where it was.
	defer func(next int) { s.nextStartNodeIndex = next }(s.nextStartNodeIndex)

	rec := &cycleRecorder{allNodes: true}
	feasible, _, fitErr, err := s.findFeasible(ctx, prof, state, pod, all, rec)
	if err != nil {
		return nil, nil, err
	}
	e.NodesToFind = rec.nodesToFind
	var totals []int64
	if fitErr == nil {
		slots := slices.Clone(s.feasibleSlotsBuf[:len(feasible)])
		if totals, err = s.prioritize(ctx, prof, state, pod, feasible, slots, rec); err != nil {
			return nil, nil, err
		}
	}
	byNode := map[string]int{}
	for n, ni := range feasible {
		byNode[ni.NodeName()] = n
	}
	for i, ni := range rec.nodes {
		r := rec.rejections[i]
		v := explain.NodeVerdict{Node: ni.NodeName()}
		if r.status == nil {
			n, ok := byNode[v.Node]
			if !ok {
				continue // not looked at: the cycle ended with an error
			}
			v.Feasible = true
			v.Total = totals[n]
			for j := range rec.scorers {
				v.Raw = append(v.Raw, rec.raws[j][n])
				v.Normalized = append(v.Normalized, rec.norms[j][n])
			}
		} else {
			v.Rejected = &explain.Rejection{Plugin: r.plugin, Reasons: r.status.Reasons(),
				Unresolvable: r.status.Code() == framework.UnschedulableAndUnresolvable}
			if x, ok := prof.filterByName(r.plugin).(framework.RejectionExplainer); ok {
				v.Rejected.Reasons, v.Shortfall = x.ExplainRejection(pod, ni, v.Rejected.Reasons)
			}
		}
		e.Verdicts = append(e.Verdicts, v)
	}
	// As kube-scheduler's diagnosis counts them: rejected, unresolvably,
	// by the plugins whose PreFilter results narrowed the nodes.
	for _, node := range rec.leftOut {
		e.Verdicts = append(e.Verdicts, explain.NodeVerdict{Node: node, Rejected: &explain.Rejection{
			Plugin: rec.narrowedBy[len(rec.narrowedBy)-1], Reasons: []string{absentMessage(rec.narrowedBy)}, Unresolvable: true,
		}})
	}
	for _, sc := range rec.scorers {
		e.Scorers = append(e.Scorers, explain.Scorer{Plugin: sc.Name(), Weight: sc.weight})
	}
	sort.SliceStable(e.Verdicts, func(i, j int) bool {
		a, b := e.Verdicts[i], e.Verdicts[j]
		if a.Feasible != b.Feasible {
			return a.Feasible
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.Node < b.Node
	})

	var chosen *framework.NodeInfo
	if fitErr == nil {
		e.Selected = s.selectHost(feasible, totals)
		chosen = feasible[byNode[e.Selected]]
		for _, v := range e.Verdicts {
			if v.Feasible && v.Total == e.Verdicts[0].Total {
				e.Best = append(e.Best, v.Node)
			}
		}
	} else {
		if rec.preFilter != nil || len(rec.nodes) == 0 {
			e.PreFilter = &explain.Rejection{Plugin: rec.preFilterBy, Unresolvable: fitErr.Unresolvable}
			if rec.preFilter != nil {
				e.PreFilter.Reasons = rec.preFilter.Reasons()
			} else {
				e.PreFilter.Reasons = []string{fitErr.Error()}
			}
		}
		if preempt && prof.planner != nil && ctx.Err() == nil {
			prof.keepActiveFilters(state)
			plan := prof.planner.PlanPreemption(ctx, state, pod, &framework.FilteredNodes{NumAllNodes: fitErr.NumAllNodes, Resolvable: fitErr.candidates})
			p := &explain.Preemption{Eligible: plan.Eligible, Message: plan.Message}
			for _, c := range plan.Candidates {
				pc := explain.PreemptionCandidate{Node: c.Node, PDBViolations: c.PDBViolations}
				for _, v := range c.Victims {
					pc.Victims = append(pc.Victims, v.Namespace+"/"+v.Name)
				}
				p.Candidates = append(p.Candidates, pc)
			}
			if plan.Best != nil {
				p.Node = plan.Best.Node
			}
			e.Preemption = p
			fitErr.PostFilterMessage = plan.Message
		}
		e.Message = fitErr.Error()
	}
	e.Summarize()
	return e, chosen, nil
}

// withoutPod returns all with the node pod is bound to replaced by a copy
// without it, so that the pod is not counted against itself.
func withoutPod(all []*framework.NodeInfo, pod *v1.Pod) []*framework.NodeInfo {
	out := slices.Clone(all)
	for i, ni := range out {
		if ni.NodeName() != pod.Spec.NodeName {
			continue
		}
		c := ni.Clone()
		// Not the cache's node any more: no memo may read it by slot.
		c.Generation, c.Slot = 0, 0
		_ = c.RemovePod(pod) // not there (not in the cache yet): nothing to take out
		out[i] = c
	}
	return out
}

// Drain is simulate's --drain: in the cache only, node is cordoned and
// the pods a drain evicts (all but DaemonSet pods, which a drain leaves)
// are taken off it. It returns those pods, to be placed again.
func (s *Scheduler) Drain(node string) ([]*v1.Pod, error) {
	ni, ok := s.Cache.NodeInfo(node)
	if !ok || ni.Node() == nil {
		return nil, fmt.Errorf("drain: no node %q", node)
	}
	cordoned := ni.Node().DeepCopy()
	cordoned.Spec.Unschedulable = true
	s.Cache.UpdateNode(ni.Node(), cordoned)
	var out []*v1.Pod
	for _, pi := range ni.Pods {
		if owner := metav1.GetControllerOf(pi.Pod); owner != nil && owner.Kind == "DaemonSet" {
			continue
		}
		s.Cache.RemovePod(pi.Pod)
		out = append(out, pi.Pod)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out, nil
}
