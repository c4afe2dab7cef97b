package scheduler

// The group cycle: every queued member of a pod group decided in one
// scheduling cycle, against one snapshot, all or nothing (kube-scheduler
// v1.37's PodGroup scheduling cycle, schedule_one_podgroup.go).
//
//	take the queued members → validate → order them
//	→ for each member: filter/score, assume and Reserve (the next member
//	  sees it), PodGroupFeasible (Wait: go on; rejected: stop)
//	→ group placed: Permit and PreBindPreFlight for every placed member,
//	  then their binding cycles
//	→ group not placed: Unreserve and forget every placed member; every
//	  member back to the queue with the group's reason
//
// Members are assumed in the cache as they are placed, under cycleMu,
// so no other cycle runs in between and nothing else sees them before
// the group is decided: a group that does not fit never holds room that
// another group needs (the deadlocks of interleaved gangs), and members
// are only handed to their binding cycles once enough of them fit.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// errPodGroupUnschedulable marks the failure of a member whose group was
// not placed: unschedulable, not an error.
var errPodGroupUnschedulable = errors.New("pod group is unschedulable")

// podGroupUnschedulable is the failure of a member whose group was not
// placed although the member itself fitted, or was never tried: the
// group's reason, which is what kube-scheduler writes on it.
type podGroupUnschedulable struct {
	message string
	// full is the group's reason with what its PostFilter (preemption)
	// said appended: the PodGroup's condition, and the reason of the
	// members that fitted. Empty: message.
	full string
}

// fullMessage is the group's reason with its PostFilter's.
func (e *podGroupUnschedulable) fullMessage() string {
	if e.full == "" {
		return e.message
	}
	return e.full
}

func (e *podGroupUnschedulable) Error() string {
	if e.message == "" {
		return errPodGroupUnschedulable.Error()
	}
	return e.message
}

func (e *podGroupUnschedulable) Is(target error) bool { return target == errPodGroupUnschedulable }

// memberResult is one member's outcome in a group cycle.
type memberResult struct {
	qpi *queue.QueuedPodInfo
	// job is set once the member was assumed and reserved.
	job *bindJob
	// err is why it was not placed (a *FitError when the filters
	// rejected it); nil when placed or never tried.
	err   error
	tried bool
}

// scheduleGroup runs the group cycle of key's members, the first of
// which Pop returned.
func (s *Scheduler) scheduleGroup(ctx context.Context, prof *profile, key framework.PodGroupKey, members []*queue.QueuedPodInfo) {
	cycle := s.Queue.SchedulingCycle()
	start := s.clock.Now()
	results := make([]memberResult, 0, len(members))
	defer func() {
		if r := recover(); r != nil {
			pe := framework.NewPanicError(r)
			_, err := s.panicFailure(pe)
			s.logger.Error("panic in a group cycle: the group's attempt failed", zap.String("podGroup", key.String()),
				zap.Error(err), zap.ByteString("stack", pe.Stack))
			// cycleMu is released by now: the cache only, not the
			// snapshot, which the next cycle brings up to date.
			for _, r := range results {
				if r.job != nil {
					s.unreserveAndForget(context.WithoutCancel(ctx), r.job)
				}
			}
			for _, m := range members {
				s.handleFailure(ctx, m, cycle, err, start)
			}
		}
	}()
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	s.recordPluginMetrics = s.rng.IntN(100) < metrics.SamplePercent
	// The group's attempt, as kube-scheduler records it: set on every
	// way out once the group is tried.
	var result string
	defer func() {
		if result != "" && prof.metrics != nil {
			prof.metrics.PodGroupAttempt(result, s.clock.Since(start))
		}
	}()

	// Members being deleted, or assumed already (a cycle that took them
	// before), are not this cycle's.
	live := members[:0:0]
	for _, m := range members {
		if m.Pod.DeletionTimestamp != nil || s.Cache.IsAssumed(m.Pod.UID) {
			s.Queue.Done(m)
			continue
		}
		live = append(live, m)
	}
	if len(live) == 0 {
		return
	}
	s.Cache.UpdateSnapshot(s.snapshot)
	group := s.groups.Get(key)
	if err := validateGroup(&group, live); err != nil {
		result = s.failGroup(ctx, &group, live, nil, cycle, start, err)
		return
	}
	slices.SortFunc(live, compareMembers)

	// The members' nominations (from the group's preemption) keep room
	// from others, not from each other: out of the way while they are
	// placed, back if the group is not.
	uids := make([]types.UID, len(live))
	for i, m := range live {
		uids[i] = m.Pod.UID
	}
	nominated := s.nominations.take(uids)
	defer func() { s.nominations.put(nominated) }()
	var st *framework.Status
	var placed int
	var err error
	if key := topologyKey(&group); key == "" {
		st, placed, err = s.placeMembers(ctx, prof, &group, live, start, &results)
	} else {
		st, placed, err = s.placeInDomain(ctx, prof, &group, live, key, start, &results)
	}
	s.metrics.PodGroupAlgorithmDuration(s.clock.Since(start))
	switch {
	case err != nil:
		s.undoGroup(ctx, results)
		result = s.failGroup(ctx, &group, live, nil, cycle, start, err)
		return
	case st.Code() == framework.Error:
		s.undoGroup(ctx, results)
		result = s.failGroup(ctx, &group, live, nil, cycle, start, st.Err())
		return
	case st.IsSuccess() && placed > 0:
		nominated = nil // placed: the room they kept is theirs now
		result = s.bindGroup(ctx, &group, live, results, cycle, start)
		return
	}
	s.undoGroup(ctx, results)
	gu := &podGroupUnschedulable{message: st.Message()}
	evicting := false
	if st.Code() == framework.Unschedulable && prof.planner != nil {
		var msg string
		msg, evicting = s.preemptGroup(ctx, prof, &group, live, nominated)
		gu.full = joinReasons(gu.message, "pod group preemption: "+msg)
	}
	result = s.failGroup(ctx, &group, live, results, cycle, start, gu)
	if evicting {
		result = metrics.WaitingOnPreemptionResult
	}
}

// joinReasons joins two reasons as a status's Message does.
func joinReasons(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// runMembers is the group cycle's loop over its members, in order: the
// PodGroupFeasible plugins asked before the first and after each, the
// loop stopped at a rejection or an error, a final Wait turned into
// Unschedulable (minCount not reached), as kube-scheduler's
// podGroupSchedulingDefaultAlgorithm. try places one member and reports
// whether it was placed; an error from it (not a rejection) ends the
// attempt. It returns the last status and how many members were placed.
func (prof *profile) runMembers(ctx context.Context, group *framework.PodGroupInfo, live []*queue.QueuedPodInfo, try func(*queue.QueuedPodInfo) (bool, error)) (*framework.Status, int, error) {
	progress := framework.PodGroupProgress{Scheduled: group.Scheduled, Remaining: len(live)}
	st := prof.runPodGroupFeasible(ctx, group, progress)
	placed := 0
	if st.IsRejected() || st.Code() == framework.Error {
		return st, 0, nil
	}
	for _, m := range live {
		ok, err := try(m)
		if err != nil {
			return st, placed, err
		}
		progress.Remaining--
		progress.Tried++
		if ok {
			progress.Scheduled++
			placed++
		}
		st = prof.runPodGroupFeasible(ctx, group, progress)
		if st.IsRejected() || st.Code() == framework.Error {
			break
		}
	}
	if st.IsWait() {
		st = framework.NewStatus(framework.Unschedulable, st.Reasons()...)
	}
	return st, placed, nil
}

// placeMembers is runMembers with each member placed by placeMember
// (assumed and reserved): every member's outcome is in *out, those
// placed still assumed and reserved.
func (s *Scheduler) placeMembers(ctx context.Context, prof *profile, group *framework.PodGroupInfo, live []*queue.QueuedPodInfo, start time.Time, out *[]memberResult) (*framework.Status, int, error) {
	*out = (*out)[:0]
	return prof.runMembers(ctx, group, live, func(m *queue.QueuedPodInfo) (bool, error) {
		// Recorded before it is placed, so that a panic undoes it too.
		*out = append(*out, memberResult{qpi: m, tried: true})
		j, err := s.placeMember(ctx, prof, m, start)
		if err != nil && !isUnschedulable(err) {
			return false, err
		}
		r := &(*out)[len(*out)-1]
		r.job, r.err = j, err
		return j != nil, nil
	})
}

// placeMember is one member's part of the group cycle: the pod's
// ordinary scheduling algorithm (no PostFilter: the group preempts, or
// nobody), then assume and Reserve, so the members after it see it. It
// returns the member's job when placed, else why not.
func (s *Scheduler) placeMember(ctx context.Context, prof *profile, m *queue.QueuedPodInfo, start time.Time) (*bindJob, error) {
	pod := m.Pod
	state := framework.NewCycleState()
	res, err := s.schedulePod(ctx, prof, state, pod)
	if err != nil {
		var fitErr *FitError
		if errors.As(err, &fitErr) {
			s.kept.record(pod, prof.name, m.Attempts, fitErr, s.clock.Now())
		}
		return nil, err
	}
	assumedPod := pod.DeepCopy()
	assumedPod.Spec.NodeName = res.node
	j := &bindJob{prof: prof, qpi: m, state: state, assumed: assumedPod, res: res, start: start, sampled: s.recordPluginMetrics}
	if err := s.assumeAndReserve(ctx, j); err != nil {
		return nil, err
	}
	return j, nil
}

// assumeAndReserve assumes j's pod on its node in the cache, runs
// Reserve and brings the snapshot up to date, so that what is placed
// next sees it; on a failure nothing is left.
func (s *Scheduler) assumeAndReserve(ctx context.Context, j *bindJob) error {
	if err := s.Cache.AssumePod(j.assumed); err != nil {
		return fmt.Errorf("assume %s/%s on %q: %w", j.assumed.Namespace, j.assumed.Name, j.res.node, err)
	}
	if st, by := j.prof.runReserve(ctx, j); !st.IsSuccess() {
		j.prof.runUnreserve(ctx, j)
		s.Cache.ForgetPod(j.assumed)
		s.Cache.UpdateSnapshot(s.snapshot)
		return pluginFailure("Reserve", st, by, j.res.node)
	}
	s.Cache.UpdateSnapshot(s.snapshot)
	return nil
}

// bindGroup ends a group cycle that placed the group: every placed
// member goes through Permit and PreBindPreFlight, and then, all of them
// permitted, to its binding cycle; a member that did not fit is
// requeued with its own reason. Should one of them fail Permit (a plugin
// that rejects what it reserved), no member binds and the group fails.
// It returns the attempt's result, as failGroup.
func (s *Scheduler) bindGroup(ctx context.Context, group *framework.PodGroupInfo, live []*queue.QueuedPodInfo, results []memberResult, cycle int64, start time.Time) string {
	for i := range results {
		j := results[i].job
		if j == nil {
			continue
		}
		if err := s.permitBinding(ctx, j); err != nil {
			s.undoGroup(ctx, results)
			msg := fmt.Sprintf("pod %s/%s: %v", j.assumed.Namespace, j.assumed.Name, err)
			if isUnschedulable(err) {
				return s.failGroup(ctx, group, live, nil, cycle, start, &podGroupUnschedulable{message: msg})
			}
			return s.failGroup(ctx, group, live, nil, cycle, start, errors.New(msg))
		}
	}
	tried := map[*queue.QueuedPodInfo]bool{}
	for _, r := range results {
		tried[r.qpi] = true
		if r.job == nil {
			s.handleFailure(ctx, r.qpi, cycle, r.err, start)
			continue
		}
		s.nominations.forget(r.qpi.Pod.UID)
		s.kept.forget(r.qpi.Pod.UID)
		s.logger.Debug("pod assumed", zap.String("pod", r.qpi.Pod.Namespace+"/"+r.qpi.Pod.Name), zap.String("node", r.job.res.node),
			zap.String("podGroup", group.Key.String()))
		s.startBinding(ctx, *r.job)
	}
	for _, m := range live {
		if !tried[m] {
			// Never tried: the loop stops early only on a rejection,
			// so this is defence.
			s.handleFailure(ctx, m, cycle, &podGroupUnschedulable{}, start)
		}
	}
	s.groupStatus.record(group.Object, metav1.ConditionTrue, "Scheduled", "")
	return metrics.ScheduledResult
}

// undoGroup gives back what the placed members hold: Unreserve, in
// reverse order of placement, and the assumptions; the snapshot then
// drops them too, so that what the cycle does next (another domain, a
// preemption's dry run, the real placement) does not count them.
func (s *Scheduler) undoGroup(ctx context.Context, results []memberResult) {
	undone := false
	for i := len(results) - 1; i >= 0; i-- {
		if j := results[i].job; j != nil {
			s.unreserveAndForget(context.WithoutCancel(ctx), j)
			results[i].job = nil
			undone = true
		}
	}
	if undone {
		s.Cache.UpdateSnapshot(s.snapshot)
	}
}

// failGroup requeues every member of a group that was not placed and
// tells each why: a member the filters rejected gets its own reason, the
// others the group's (err), as kube-scheduler does; the PodGroup gets the
// group's reason in its PodGroupInitiallyScheduled condition. results are
// the members' outcomes when members were tried. It returns the
// attempt's result for the metrics: unschedulable or error.
func (s *Scheduler) failGroup(ctx context.Context, group *framework.PodGroupInfo, live []*queue.QueuedPodInfo, results []memberResult, cycle int64, start time.Time, err error) string {
	own := map[*queue.QueuedPodInfo]error{}
	// The group wakes on what rejected any of its members, and on what
	// the gang waits for.
	rejectors := sets.New[string]()
	for _, r := range results {
		var fitErr *FitError
		if errors.As(r.err, &fitErr) {
			own[r.qpi] = r.err
			rejectors = rejectors.Union(fitErr.Plugins)
		}
	}
	unschedulable := isUnschedulable(err)
	rejectors.Insert(registry.GangSchedulingName)
	condition := err.Error()
	// Members that fitted carry the group's whole reason, as in
	// kube-scheduler; members never tried the reason the cycle stopped
	// with.
	var fitted error
	if gu, ok := errors.AsType[*podGroupUnschedulable](err); ok {
		condition = gu.fullMessage()
		fitted = &podGroupUnschedulable{message: joinReasons(errPodGroupUnschedulable.Error(), condition)}
	}
	for _, r := range results {
		if r.tried && r.err == nil && fitted != nil {
			own[r.qpi] = fitted
		}
	}
	for _, m := range live {
		e := err
		if o, ok := own[m]; ok {
			e = o
		}
		if unschedulable && !errors.As(e, new(*FitError)) {
			m.UnschedulablePlugins = rejectors.Clone()
		}
		s.handleFailure(ctx, m, cycle, e, start)
	}
	reason, result := schedulingv1beta1.PodGroupReasonUnschedulable, metrics.UnschedulableResult
	if !unschedulable {
		reason, result = schedulingv1beta1.PodGroupReasonSchedulerError, metrics.ErrorResult
	}
	s.groupStatus.record(group.Object, metav1.ConditionFalse, reason, condition)
	s.logger.Info("pod group did not fit", zap.String("podGroup", group.Key.String()), zap.Int("members", len(live)),
		zap.String("reason", condition))
	return result
}

// isUnschedulable reports whether err is a rejection rather than an error.
func isUnschedulable(err error) bool {
	var fitErr *FitError
	return errors.As(err, &fitErr) || errors.Is(err, ErrNoNodesAvailable) || errors.Is(err, errPodGroupUnschedulable)
}

// runPodGroupFeasible asks the profile's PodGroupFeasible plugins about
// a group cycle's progress: the first rejection or error, else Wait if
// any plugin waits, else Success.
func (prof *profile) runPodGroupFeasible(ctx context.Context, g *framework.PodGroupInfo, progress framework.PodGroupProgress) *framework.Status {
	var wait *framework.Status
	for _, pl := range prof.podGroupFeasible {
		st := pl.PodGroupFeasible(ctx, g, progress)
		switch {
		case st.IsSuccess():
		case st.IsWait():
			if wait == nil {
				wait = st
			}
		default:
			return st
		}
	}
	if wait != nil {
		return wait
	}
	return nil
}

// validateGroup is kube-scheduler's validatePodGroup: a group needs its
// PodGroup, and its members the same scheduler and the PodGroup's
// priority.
func validateGroup(g *framework.PodGroupInfo, members []*queue.QueuedPodInfo) error {
	if !g.Exists() {
		return &podGroupUnschedulable{message: registry.PodGroupMissingMessage(g.Key)}
	}
	// A scheduler-plugins PodGroup has no priority of its own.
	checkPriority := g.Object != nil
	var groupPriority int32
	if checkPriority && g.Object.Spec.Priority != nil {
		groupPriority = *g.Object.Spec.Priority
	}
	schedulerName := members[0].Pod.Spec.SchedulerName
	var policy *v1.PreemptionPolicy
	for _, m := range members {
		pod := m.Pod
		if pod.Spec.SchedulerName != schedulerName {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", pod.Spec.SchedulerName, schedulerName)
		}
		if p := corev1helpers.PodPriority(pod); checkPriority && p != groupPriority {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", p, groupPriority)
		}
		pp := preemptionPolicyOf(pod)
		if policy == nil {
			policy = &pp
		} else if pp != *policy {
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy, got %v and %v", pp, *policy)
		}
	}
	return nil
}

func preemptionPolicyOf(pod *v1.Pod) v1.PreemptionPolicy {
	if pod.Spec.PreemptionPolicy != nil {
		return *pod.Spec.PreemptionPolicy
	}
	return v1.PreemptLowerPriority
}

// compareMembers orders a group's members as kube-scheduler does: higher
// priority first, then more attempts, then earlier queued, then by name.
func compareMembers(a, b *queue.QueuedPodInfo) int {
	if c := cmp.Compare(corev1helpers.PodPriority(b.Pod), corev1helpers.PodPriority(a.Pod)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Attempts, a.Attempts); c != 0 {
		return c
	}
	if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
		return c
	}
	return strings.Compare(a.Pod.Name, b.Pod.Name)
}
