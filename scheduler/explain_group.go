package scheduler

// Explain for a pod group: a dry run of the group cycle (schedule_group.go)
// on the scheduler's snapshot. The group's pending members are taken in
// the cycle's order and each is explained as a member is scheduled (its
// profile's filters and scores, no preemption); one that fits is put on
// its node in a what-if of the snapshot (cache.WhatIf), so the next
// member sees it, and GangScheduling's PodGroupFeasible judges the
// progress after each, as in the cycle. Nothing is assumed in the cache
// and no Reserve plugin runs: the cache, the plugins' own caches
// (volumes, devices) and the queue are left as they were, and the
// what-if is undone before cycleMu is let go. Simulate places copies of
// a group the same way, except that its members are assumed and
// reserved, as the cycle does, and kept when the group is placed.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
)

// ErrPodGroupNotFound is returned by ResolvePodGroup for a name that
// names no PodGroup of an API the scheduler reads.
var ErrPodGroupNotFound = errors.New("no such PodGroup")

// ErrPodGroupAmbiguous is returned by ResolvePodGroup for a name that
// names both a native PodGroup and a scheduler-plugins one.
var ErrPodGroupAmbiguous = errors.New("both a scheduling.k8s.io and a scheduling.x-k8s.io PodGroup have this name")

// ResolvePodGroup returns the group namespace/name of api
// ("scheduling.k8s.io", "scheduling.x-k8s.io"), or of whichever API has
// a PodGroup of that name when api is empty: ErrPodGroupAmbiguous when
// both have one, ErrPodGroupNotFound when neither has.
func (s *Scheduler) ResolvePodGroup(namespace, name, api string) (framework.PodGroupKey, error) {
	var found []framework.PodGroupKey
	for _, a := range []framework.PodGroupAPI{framework.NativePodGroups, framework.CoschedulingPodGroups} {
		if api != "" && api != a.String() {
			continue
		}
		key := framework.PodGroupKey{API: a, Namespace: namespace, Name: name}
		if !s.groups.Served(a) {
			continue
		}
		if g := s.groups.Get(key); g.Exists() {
			found = append(found, key)
		}
	}
	switch len(found) {
	case 0:
		if api == "" {
			api = "scheduling.k8s.io or scheduling.x-k8s.io"
		}
		return framework.PodGroupKey{}, fmt.Errorf("PodGroup %s/%s (%s): %w", namespace, name, api, ErrPodGroupNotFound)
	case 1:
		return found[0], nil
	}
	return framework.PodGroupKey{}, fmt.Errorf("PodGroup %s/%s: %w", namespace, name, ErrPodGroupAmbiguous)
}

// ExplainPodGroup runs a dry run of key's group cycle on the scheduler's
// current cache: would the group be placed now, and if not, how many of
// its pending members fit together and what stops the next one. It
// waits for the cycle in progress, if any.
func (s *Scheduler) ExplainPodGroup(ctx context.Context, key framework.PodGroupKey) (*explain.PodGroupExplanation, error) {
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	s.Cache.UpdateSnapshot(s.snapshot)
	s.recordPluginMetrics = false
	return s.explainGroupLocked(ctx, key, nil)
}

// explainGroupLocked is ExplainPodGroup under cycleMu with the snapshot
// updated. also, when not nil and pending, is a member to count with the
// others although the informer has not shown it yet (a pod explained
// before it is created).
func (s *Scheduler) explainGroupLocked(ctx context.Context, key framework.PodGroupKey, also *v1.Pod) (*explain.PodGroupExplanation, error) {
	group := s.groups.Get(key)
	var pending []*v1.Pod
	if s.groups != nil {
		pending = s.groups.pendingMembers(key)
	}
	if also != nil && also.Spec.NodeName == "" && !slices.ContainsFunc(pending, func(p *v1.Pod) bool { return p.UID == also.UID }) {
		pending = append(pending, also)
		if !s.groups.known(key, also.UID) {
			group.Members++
		}
	}
	g := &explain.PodGroupExplanation{
		PodGroup: key.String(), API: key.API.String(), Exists: group.Exists(), Gang: group.IsGang(),
		MinCount: group.MinCount(), Members: group.Members, Scheduled: group.Scheduled, Pending: len(pending),
	}
	defer g.Summarize()
	if len(pending) == 0 {
		return g, nil
	}
	prof := s.profiles[pending[0].Spec.SchedulerName]
	if prof == nil {
		return nil, fmt.Errorf("pod group %s: its member %s/%s has schedulerName %q: %w", key, pending[0].Namespace, pending[0].Name, pending[0].Spec.SchedulerName, ErrNoProfile)
	}
	g.Profile = prof.name
	// Members the PreEnqueue plugins hold back wait in the queue and are
	// not in the cycle; when all are, no cycle runs.
	var live []*queue.QueuedPodInfo
	for _, pod := range pending {
		if st, by := prof.preEnqueueStatus(ctx, pod); st != nil {
			if g.Waiting == nil {
				g.Waiting = &explain.Rejection{Plugin: by, Reasons: st.Reasons(), Unresolvable: st.Code() == framework.UnschedulableAndUnresolvable}
			}
			continue
		}
		live = append(live, &queue.QueuedPodInfo{QueuedPodInfo: framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod)}})
	}
	if len(live) == 0 {
		return g, nil
	}
	g.Waiting = nil
	w := &whatIfPlacer{w: s.snapshot.WhatIf()}
	defer w.w.Undo()
	if err := s.placeGroupLocked(ctx, prof, &group, live, w, g); err != nil {
		return nil, err
	}
	return g, nil
}

// preEnqueueStatus returns the first PreEnqueue plugin's refusal of pod
// and the plugin's name; nil when they all let it in.
func (prof *profile) preEnqueueStatus(ctx context.Context, pod *v1.Pod) (*framework.Status, string) {
	for _, pl := range prof.preEnqueue {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			return st, pl.Name()
		}
	}
	return nil, ""
}

// groupPlacer puts a member the group's dry run placed where the next
// members see it, and takes back what it put.
type groupPlacer interface {
	// place puts assumed (spec.nodeName set) on its node. It returns why
	// not when the member cannot stay there (a Reserve plugin refused).
	place(ctx context.Context, s *Scheduler, prof *profile, state *framework.CycleState, assumed *v1.Pod) error
	// undo takes back everything placed.
	undo(ctx context.Context, s *Scheduler)
}

// whatIfPlacer is explain's: on a what-if of the snapshot, nothing
// reserved.
type whatIfPlacer struct{ w *cache.WhatIf }

func (p *whatIfPlacer) place(_ context.Context, _ *Scheduler, _ *profile, _ *framework.CycleState, assumed *v1.Pod) error {
	return p.w.AddPod(assumed)
}

func (p *whatIfPlacer) undo(context.Context, *Scheduler) { p.w.Undo() }

// cachePlacer is simulate's: members assumed in the cache and reserved,
// as the group cycle does.
type cachePlacer struct{ jobs []*bindJob }

func (p *cachePlacer) place(ctx context.Context, s *Scheduler, prof *profile, state *framework.CycleState, assumed *v1.Pod) error {
	j := &bindJob{prof: prof, state: state, assumed: assumed, res: scheduleResult{node: assumed.Spec.NodeName}}
	if err := s.assumeAndReserve(ctx, j); err != nil {
		return err
	}
	p.jobs = append(p.jobs, j)
	return nil
}

func (p *cachePlacer) undo(ctx context.Context, s *Scheduler) {
	for i := len(p.jobs) - 1; i >= 0; i-- {
		s.unreserveAndForget(ctx, p.jobs[i])
	}
	p.jobs = nil
	s.Cache.UpdateSnapshot(s.snapshot)
}

// placeGroupLocked is the group cycle's placement (scheduleGroup) as a
// dry run: validate, order, then each member explained and, when it
// fits, placed with p, PodGroupFeasible asked after each. It fills g's
// placements, counts, blocker and message; a group not placed is undone.
func (s *Scheduler) placeGroupLocked(ctx context.Context, prof *profile, group *framework.PodGroupInfo, live []*queue.QueuedPodInfo, p groupPlacer, g *explain.PodGroupExplanation) error {
	g.Requests = sameRequests(live)
	if err := validateGroup(group, live); err != nil {
		g.Message = err.Error()
		return nil
	}
	slices.SortFunc(live, compareMembers)
	// A dry run leaves the loop where it was.
	defer func(next int) { s.nextStartNodeIndex = next }(s.nextStartNodeIndex)
	st, _, err := prof.runMembers(ctx, group, live, func(m *queue.QueuedPodInfo) (bool, error) {
		node, blocker, err := s.placeMemberDryRun(ctx, prof, m.Pod, p, g.Blocker == nil)
		if err != nil {
			return false, err
		}
		g.Placements = append(g.Placements, explain.MemberPlacement{Pod: m.Pod.Namespace + "/" + m.Pod.Name, Node: node})
		if node != "" {
			g.Fit++
		} else if g.Blocker == nil {
			g.Blocker = blocker
		}
		return node != "", nil
	})
	if err != nil {
		p.undo(ctx, s)
		return err
	}
	switch {
	case st.Code() == framework.Error:
		p.undo(ctx, s)
		return st.Err()
	case st.IsSuccess() && g.Fit > 0:
		g.Placed = true
		return nil
	}
	p.undo(ctx, s)
	g.Message = st.Message()
	if st.Code() == framework.Unschedulable && prof.planner != nil {
		// What its preemption would find, evicting nobody.
		_, msg := s.planGroupPreemption(ctx, prof, group, live)
		g.Message = joinReasons(g.Message, "pod group preemption: "+msg)
	}
	return nil
}

// placeMemberDryRun is one member's part of a group's dry run: the
// member's scheduling algorithm as the group cycle runs it (filters until
// enough nodes are found, scores, no preemption, no extender), and, when
// it fits, p places it. It returns the node, or "" and, when explain is
// set, the full explanation of why it does not fit (every node filtered,
// on the snapshot with the members before it).
func (s *Scheduler) placeMemberDryRun(ctx context.Context, prof *profile, pod *v1.Pod, p groupPlacer, explainFailure bool) (string, *explain.Explanation, error) {
	state := framework.NewCycleState()
	res, err := s.scheduleRecorded(ctx, prof, state, pod, &cycleRecorder{placing: true})
	if err == nil {
		assumed := pod.DeepCopy()
		assumed.Spec.NodeName = res.node
		if err = p.place(ctx, s, prof, state, assumed); err == nil {
			return res.node, nil, nil
		}
	}
	if !isUnschedulable(err) {
		return "", nil, err
	}
	if !explainFailure {
		return "", nil, nil
	}
	e, _, xerr := s.explainLocked(ctx, prof, framework.NewCycleState(), pod, false)
	if xerr != nil {
		return "", nil, xerr
	}
	if e.Selected != "" {
		// It passed the filters; a Reserve plugin refused the node.
		e.Message, e.Selected = err.Error(), ""
		e.Summarize()
	}
	return "", e, nil
}

// sameRequests returns what each member requests when they all request
// the same, as quantities by resource name; nil otherwise.
func sameRequests(members []*queue.QueuedPodInfo) map[string]string {
	first := &members[0].PodInfo.Requests
	for _, m := range members[1:] {
		r := &m.PodInfo.Requests
		if r.MilliCPU != first.MilliCPU || r.Memory != first.Memory || r.EphemeralStorage != first.EphemeralStorage || !mapsEqual(r.ScalarResources, first.ScalarResources) {
			return nil
		}
	}
	out := map[string]string{}
	if first.MilliCPU > 0 {
		out[string(v1.ResourceCPU)] = resource.NewMilliQuantity(first.MilliCPU, resource.DecimalSI).String()
	}
	if first.Memory > 0 {
		out[string(v1.ResourceMemory)] = resource.NewQuantity(first.Memory, resource.BinarySI).String()
	}
	if first.EphemeralStorage > 0 {
		out[string(v1.ResourceEphemeralStorage)] = resource.NewQuantity(first.EphemeralStorage, resource.BinarySI).String()
	}
	for name, v := range first.ScalarResources {
		if v > 0 {
			out[string(name)] = resource.NewQuantity(v, resource.DecimalSI).String()
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func mapsEqual(a, b map[v1.ResourceName]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// PlaceGroup is simulate's step for a pod group: the group cycle's
// placement of pods, the members of pg (a native PodGroup), on the
// scheduler's cache, each member assumed on its node and reserved as
// the cycle does. When the group is placed its members stay assumed, so
// that what comes next sees them; otherwise nothing is left. Nothing is
// bound or written. Each pod needs a UID of its own, and the first a
// schedulerName that names a profile.
func (s *Scheduler) PlaceGroup(ctx context.Context, pg *schedulingv1beta1.PodGroup, pods []*v1.Pod) (*explain.PodGroupExplanation, error) {
	if len(pods) == 0 {
		return nil, fmt.Errorf("pod group %s/%s: no pods", pg.Namespace, pg.Name)
	}
	prof := s.profiles[pods[0].Spec.SchedulerName]
	if prof == nil {
		return nil, fmt.Errorf("pod %s/%s has schedulerName %q: %w", pods[0].Namespace, pods[0].Name, pods[0].Spec.SchedulerName, ErrNoProfile)
	}
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	s.Cache.UpdateSnapshot(s.snapshot)
	s.recordPluginMetrics = false
	group := framework.PodGroupInfo{Key: framework.PodGroupKey{API: framework.NativePodGroups, Namespace: pg.Namespace, Name: pg.Name},
		Object: pg, Members: len(pods)}
	g := &explain.PodGroupExplanation{
		PodGroup: group.Key.String(), API: group.Key.API.String(), Profile: prof.name, Exists: true, Gang: group.IsGang(),
		MinCount: group.MinCount(), Members: len(pods), Pending: len(pods),
	}
	defer g.Summarize()
	live := make([]*queue.QueuedPodInfo, len(pods))
	for i, pod := range pods {
		live[i] = &queue.QueuedPodInfo{QueuedPodInfo: framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod)}}
	}
	if err := s.placeGroupLocked(ctx, prof, &group, live, &cachePlacer{}, g); err != nil {
		return nil, err
	}
	return g, nil
}
