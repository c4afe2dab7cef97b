package scheduler

// Group preemption (kube-scheduler v1.37's DefaultPreemption
// PodGroupPostFilter): a group that did not fit makes room by evicting
// pods of lower priority anywhere in the cluster.
//
//	victims: every bound pod of lower priority than the group; a pod of a
//	  PodGroup with disruptionMode all stands for its whole group
//	→ the group placed on a what-if of the snapshot without them (no
//	  placement: nobody is evicted)
//	→ victims given back, most important first, each kept only if every
//	  member still fits where the what-if put it
//	→ the rest evicted; each member nominated to its node
//
// The what-if is the snapshot's own (cache.WhatIf), undone before the
// cycle ends: nothing is assumed and the cache is untouched.

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// victimUnit is what is evicted together: one pod, or every scheduled
// member of a PodGroup whose disruptionMode is all.
type victimUnit struct {
	pods     []*v1.Pod
	priority int32
	// group is the PodGroup of an all-or-nothing unit; nil for a pod.
	group *schedulingv1beta1.PodGroup
}

// moreImportant orders units as kube-scheduler's MoreImportantVictim:
// higher priority; then a group before a pod; pods by earlier start,
// groups by size, then earlier start.
func moreImportant(a, b victimUnit) int {
	if a.priority != b.priority {
		return int(b.priority) - int(a.priority)
	}
	if (a.group != nil) != (b.group != nil) {
		if a.group != nil {
			return -1
		}
		return 1
	}
	if a.group != nil && len(a.pods) != len(b.pods) {
		return len(b.pods) - len(a.pods)
	}
	return startOf(a).Compare(startOf(b).Time)
}

func startOf(u victimUnit) metav1.Time {
	var t metav1.Time
	for _, p := range u.pods {
		if p.Status.StartTime != nil && (t.IsZero() || p.Status.StartTime.Before(&t)) {
			t = *p.Status.StartTime
		}
	}
	return t
}

// preemptGroup tries to make room for a group that did not fit and
// returns what it found, in kube-scheduler's words (why nobody is
// evicted, or how many victims are), and whether it evicts victims.
func (s *Scheduler) preemptGroup(ctx context.Context, prof *profile, g *framework.PodGroupInfo, live []*queue.QueuedPodInfo, nominated []*nomination) (string, bool) {
	if s.preemptionUnderWay(nominated) {
		return "ongoing preemption on nominated nodes", false
	}
	plan, msg := s.planGroupPreemption(ctx, prof, g, live)
	if plan == nil {
		return msg, false
	}
	for _, pg := range plan.disrupted {
		s.groupStatus.recordDisruption(pg, prof.name)
	}
	s.evictForGroup(live, plan.assigned, plan.victims)
	return msg, true
}

// groupPreemptionPlan is what a group's preemption would do: evict
// victims (among them every member of the disrupted PodGroups), each
// member then going to its assigned node.
type groupPreemptionPlan struct {
	victims   []*v1.Pod
	disrupted []*schedulingv1beta1.PodGroup
	assigned  map[*v1.Pod]string
}

// planGroupPreemption finds the victims a group's preemption would evict
// and where its members would go, on a what-if undone before it returns;
// nil and why not when it would evict nobody. The message is
// kube-scheduler's for either.
func (s *Scheduler) planGroupPreemption(ctx context.Context, prof *profile, g *framework.PodGroupInfo, live []*queue.QueuedPodInfo) (*groupPreemptionPlan, string) {
	if preemptionPolicyOf(live[0].Pod) == v1.PreemptNever {
		return nil, "not eligible due to preemptionPolicy=Never."
	}
	priority := groupPriority(g, live)
	units := s.potentialVictims(priority)
	if len(units) == 0 {
		return nil, "No preemption victims found for incoming preemptor"
	}

	w := s.snapshot.WhatIf()
	defer w.Undo()
	for _, u := range units {
		for _, p := range u.pods {
			if err := w.RemovePod(p); err != nil {
				s.logger.Warn("group preemption: a victim is not where the snapshot says", zap.Error(err))
				return nil, "preemption failed: " + err.Error()
			}
		}
	}
	// The members placed on the what-if only: nothing assumed or
	// reserved.
	assigned := map[*v1.Pod]string{}
	var order []*v1.Pod
	st, placed, err := prof.runMembers(ctx, g, live, func(m *queue.QueuedPodInfo) (bool, error) {
		res, err := s.schedulePod(ctx, prof, framework.NewCycleState(), m.Pod)
		if err != nil {
			if isUnschedulable(err) {
				return false, nil
			}
			return false, err
		}
		assumed := m.Pod.DeepCopy()
		assumed.Spec.NodeName = res.node
		if err := w.AddPod(assumed); err != nil {
			return false, err
		}
		assigned[m.Pod] = res.node
		order = append(order, assumed)
		return true, nil
	})
	if err != nil {
		return nil, err.Error()
	}
	if !st.IsSuccess() || placed == 0 {
		return nil, st.Message()
	}

	// Give back the most important first, those a PodDisruptionBudget
	// protects before the others (kube-scheduler's order); keep each the
	// members allow.
	slices.SortStableFunc(units, moreImportant)
	units = s.protectedFirst(units)
	plan := &groupPreemptionPlan{assigned: assigned}
	for _, u := range units {
		for _, p := range u.pods {
			_ = w.AddPod(p)
		}
		if s.membersStillFit(ctx, prof, w, order) {
			continue
		}
		for _, p := range u.pods {
			_ = w.RemovePod(p)
		}
		plan.victims = append(plan.victims, u.pods...)
		if u.group != nil {
			plan.disrupted = append(plan.disrupted, u.group)
		}
	}
	return plan, fmt.Sprintf("found a placement for podgroup, preempting %d victims", len(plan.victims))
}

// membersStillFit reports whether every member still passes the filters
// on the node the what-if gave it, placed one after another as before,
// with what w now holds.
func (s *Scheduler) membersStillFit(ctx context.Context, prof *profile, w *cache.WhatIf, members []*v1.Pod) bool {
	for _, m := range members {
		_ = w.RemovePod(m)
	}
	fits := true
	var back []*v1.Pod
	for _, m := range members {
		if fits && s.fitsOn(ctx, prof, m, m.Spec.NodeName) {
			_ = w.AddPod(m)
			back = append(back, m)
			continue
		}
		fits = false
	}
	if !fits {
		// As they were, for the next unit.
		for _, m := range members {
			if !slices.Contains(back, m) {
				_ = w.AddPod(m)
			}
		}
	}
	return fits
}

// fitsOn reports whether pod passes the PreFilters over every node and
// the filters on node, in the snapshot as it stands.
func (s *Scheduler) fitsOn(ctx context.Context, prof *profile, pod *v1.Pod, node string) bool {
	state := framework.NewCycleState()
	allowed, _, fitErr, err := prof.runPreFilterPlugins(ctx, state, pod, s.snapshot.List(), false, nil)
	if err != nil || fitErr != nil {
		return false
	}
	if allowed != nil {
		if _, ok := allowed[node]; !ok {
			return false
		}
	}
	ni, err := s.snapshot.Get(node)
	if err != nil {
		return false
	}
	st, _ := prof.runFilters(ctx, prof.appendActiveFilters(nil, state), state, pod, ni, nil)
	return st.IsSuccess()
}

// preemptionUnderWay reports whether the members' earlier preemption
// (their nominations, taken out for the cycle) still has victims in the
// cluster, as the cycle's snapshot or the cache (which may be ahead of
// it) sees it: the group waits for them to go rather than preempting
// again.
func (s *Scheduler) preemptionUnderWay(nominated []*nomination) bool {
	victims := map[types.UID]bool{}
	for _, n := range nominated {
		if n.fromStatus {
			continue
		}
		if s.nominations.isRunning(n) {
			return true
		}
		for _, v := range n.victims {
			if s.Cache.HasPod(v) {
				return true
			}
			victims[v] = true
		}
	}
	if len(victims) == 0 {
		return false
	}
	for _, ni := range s.snapshot.List() {
		for _, pi := range ni.Pods {
			if victims[pi.Pod.UID] {
				return true
			}
		}
	}
	return false
}

// groupPriority is the group's priority: its native PodGroup's, else its
// members'.
func groupPriority(g *framework.PodGroupInfo, live []*queue.QueuedPodInfo) int32 {
	if g.Object != nil {
		if g.Object.Spec.Priority != nil {
			return *g.Object.Spec.Priority
		}
		return 0
	}
	return corev1helpers.PodPriority(live[0].Pod)
}

// potentialVictims returns the bound pods of lower priority than
// priority, not already terminating, as units: a pod of a native
// PodGroup whose disruptionMode is all brings every scheduled member of
// its group.
func (s *Scheduler) potentialVictims(priority int32) []victimUnit {
	var units []victimUnit
	byGroup := map[framework.PodGroupKey]int{}
	for _, ni := range s.snapshot.List() {
		for _, pi := range ni.Pods {
			p := pi.Pod
			if p.DeletionTimestamp != nil || corev1helpers.PodPriority(p) >= priority {
				continue
			}
			if key, ok := framework.PodGroupOf(p); ok && key.API == framework.NativePodGroups {
				if pg := s.groups.object(key); pg != nil && pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.All != nil {
					i, seen := byGroup[key]
					if !seen {
						i = len(units)
						byGroup[key] = i
						units = append(units, victimUnit{priority: corev1helpers.PodPriority(p), group: pg})
					}
					units[i].pods = append(units[i].pods, p)
					continue
				}
			}
			units = append(units, victimUnit{pods: []*v1.Pod{p}, priority: corev1helpers.PodPriority(p)})
		}
	}
	return units
}

// evictForGroup nominates each placed member to its node and evicts the
// victims, each with the member nominated to its node (or the first
// member, for a victim on a node no member goes to).
func (s *Scheduler) evictForGroup(live []*queue.QueuedPodInfo, assigned map[*v1.Pod]string, victims []*v1.Pod) {
	byNode := map[string][]*v1.Pod{}
	for _, v := range victims {
		byNode[v.Spec.NodeName] = append(byNode[v.Spec.NodeName], v)
	}
	type eviction struct {
		pod     *v1.Pod
		node    string
		victims []*v1.Pod
	}
	var plan []*eviction
	taken := map[string]bool{}
	for _, m := range live {
		node, ok := assigned[m.Pod]
		if !ok {
			continue
		}
		e := &eviction{pod: m.Pod, node: node}
		if !taken[node] {
			e.victims = byNode[node]
			taken[node] = true
		}
		plan = append(plan, e)
	}
	if len(plan) == 0 {
		return
	}
	for node, vs := range byNode {
		if !taken[node] {
			plan[0].victims = append(plan[0].victims, vs...)
		}
	}
	for _, e := range plan {
		s.startEvictions(e.pod, e.node, e.victims)
	}
}

// protectedFirst reorders units (most important first) so that those
// with a pod whose eviction a PodDisruptionBudget forbids come first,
// each part in its order.
func (s *Scheduler) protectedFirst(units []victimUnit) []victimUnit {
	if s.informerFactory == nil {
		return units
	}
	pdbs, err := s.informerFactory.Policy().V1().PodDisruptionBudgets().Lister().List(labels.Everything())
	if err != nil || len(pdbs) == 0 {
		return units
	}
	var pods []*framework.PodInfo
	for _, u := range units {
		for _, p := range u.pods {
			pods = append(pods, framework.NewPodInfo(p))
		}
	}
	violating, _ := registry.SplitByPDB(pods, pdbs)
	protected := map[*v1.Pod]bool{}
	for _, pi := range violating {
		protected[pi.Pod] = true
	}
	var first, rest []victimUnit
	for _, u := range units {
		if slices.ContainsFunc(u.pods, func(p *v1.Pod) bool { return protected[p] }) {
			first = append(first, u)
		} else {
			rest = append(rest, u)
		}
	}
	return append(first, rest...)
}
