package scheduler

// The binding cycle: what happens to a pod between the choice of its node
// and its Binding, with kube-scheduler's meaning for each extension point.
//
//	scheduling cycle (one goroutine)     binding cycle (a bind worker, or a
//	                                     goroutine of its own, see startBinding)
//	assume → Reserve → Permit            → wait on Permit → PreBind → Bind
//	       → PreBindPreFlight                                      → PostBind
//
// Reserve and Permit run in the scheduling cycle, so the next cycle sees
// what they reserved; neither may call the API. PreBind makes the writes
// a plugin needs before the Binding (a volume bound, a claim allocated)
// and may wait on the API for as long as its plugin allows, so it runs
// outside the scheduling cycle. PreBindPreFlight, which only reads the
// cycle's state, tells the scheduling cycle whether PreBind has work: a
// pod with none goes to the fixed pool of bind workers, whose Bindings
// take milliseconds; a pod that waits on Permit or has PreBind work gets a
// goroutine of its own, as every pod does in kube-scheduler, so a slow
// volume or a group waiting for its last member never holds up the
// Bindings of other pods.
//
// Every failure after Reserve ends the same way (bindingFailed, or
// unreserve + handleFailure in the scheduling cycle): Unreserve on every
// reserve plugin in reverse order, the assumed pod forgotten, the pod
// requeued (unschedulable when a plugin rejected it, with backoff after
// an error) and a FailedScheduling event that says why; unless the
// informer shows the pod bound elsewhere or gone, when it is dropped
// without a word, or bound to our node by a Binding that failed all the
// same, when the cycle succeeded. A Binding whose failure may hide a
// success is no failure until the pod shows which it was
// (binding_outcome.go).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/queue"
)

// bindJob is one pod's binding cycle: what its scheduling cycle decided
// and reserved.
type bindJob struct {
	prof    *profile
	qpi     *queue.QueuedPodInfo
	state   *framework.CycleState
	assumed *v1.Pod
	res     scheduleResult
	start   time.Time
	// sampled says whether the scheduling cycle timed each plugin; the
	// binding cycle times its plugins likewise.
	sampled bool
	// waiting is set when Permit said Wait.
	waiting *waitingPod
	// preBind are the indexes in prof.preBind of the plugins whose
	// PreBindPreFlight did not Skip.
	preBind []int
	// nominated is set once the binding cycle wrote the node as the pod's
	// status.nominatedNodeName; a failure clears it again.
	nominated bool
	// bindStart is when the Binding was posted; zero before.
	bindStart time.Time
}

// errPodDeleted is the cause that cancels the binding cycle of a pod
// deleted meanwhile.
var errPodDeleted = errors.New("pod deleted")

// prepareBinding runs the scheduling cycle's part of the binding cycle on
// j's assumed pod: Reserve, Permit and PreBindPreFlight. On failure it
// returns a *FitError when a plugin rejected the pod on its node, any
// other error otherwise; the caller then unreserves and forgets.
func (s *Scheduler) prepareBinding(ctx context.Context, j *bindJob) error {
	if st, by := j.prof.runReserve(ctx, j); !st.IsSuccess() {
		return pluginFailure("Reserve", st, by, j.res.node)
	}
	return s.permitBinding(ctx, j)
}

// permitBinding is prepareBinding after Reserve: Permit and
// PreBindPreFlight. A group cycle reserves each member as it places it,
// and permits them once the whole group is placed.
func (s *Scheduler) permitBinding(ctx context.Context, j *bindJob) error {
	st, by, timeouts := j.prof.runPermit(ctx, j)
	switch {
	case st.IsWait():
		j.waiting = newWaitingPod(s.clock, j.assumed, timeouts)
		s.waiting.add(j.waiting)
	case !st.IsSuccess():
		return pluginFailure("Permit", st, by, j.res.node)
	}
	st, by = j.prof.runPreBindPreFlights(ctx, j)
	if !st.IsSuccess() {
		return pluginFailure("PreBindPreFlight", st, by, j.res.node)
	}
	return nil
}

// pluginFailure turns a failed status of plugin at a point of the binding
// cycle into the error handleFailure reports: kube-scheduler's message
// for one node ("0/1 nodes are available: ...") when the plugin rejected
// the pod, the plugin's error otherwise.
func pluginFailure(point string, st *framework.Status, plugin, node string) error {
	if st.IsRejected() {
		fe := &FitError{NumAllNodes: 1, ReasonCounts: map[string]int{}, Unresolvable: st.Code() == framework.UnschedulableAndUnresolvable}
		fe.addStatus(st, plugin)
		return fe
	}
	return fmt.Errorf("running %s plugin %q: %w", point, plugin, st.Err())
}

// startBinding hands j to its binding cycle: a bind worker when the pod
// neither waits on Permit nor has PreBind work, else a goroutine of its
// own (see the file comment). While the workers' queue is full it waits,
// unless ctx ends (a shutdown): then the pod is given back quietly, so
// that a loop stopping behind a hung API server never waits for the
// queue.
func (s *Scheduler) startBinding(ctx context.Context, j bindJob) {
	s.bindWG.Add(1)
	if j.waiting != nil || len(j.preBind) > 0 {
		go s.bindingCycle(j)
		return
	}
	select {
	case s.bindJobs <- j:
	case <-ctx.Done():
		defer s.bindWG.Done()
		s.unreserveAndForget(context.WithoutCancel(ctx), &j)
		_ = s.Queue.AddUnschedulable(j.qpi, s.Queue.SchedulingCycle(), false)
	}
}

// unreserveAndForget undoes what the scheduling cycle did for j's pod:
// every reserve plugin's Unreserve (in reverse order), the wait on Permit
// if it began, and the assumption.
func (s *Scheduler) unreserveAndForget(ctx context.Context, j *bindJob) {
	if j.waiting != nil {
		j.waiting.Reject("", "the binding cycle ended")
		s.waiting.remove(j.assumed.UID)
	}
	j.prof.runUnreserve(ctx, j)
	s.Cache.ForgetPod(j.assumed)
}

// bindWorker runs the binding cycles of pods with nothing to wait for
// until the job queue is closed.
func (s *Scheduler) bindWorker() {
	for j := range s.bindJobs {
		s.bindingCycle(j)
	}
}

// bindingCycle waits on Permit, runs PreBind, posts the Binding and runs
// PostBind, and settles the assumption either way. Its context outlives
// the scheduling loop, so a shutdown lets in-flight bindings finish; only
// Abort, or the pod's deletion, cancels it. A Binding that may have been
// committed although it failed is settled by awaitBindingOutcome, which
// then owns the pod's cycle.
func (s *Scheduler) bindingCycle(j bindJob) {
	defer s.bindWG.Done()
	handedOff := false
	defer func() {
		if !handedOff {
			s.Queue.Done(j.qpi)
		}
	}()
	ctx, cancel := context.WithCancelCause(framework.WithBindingCycle(s.bindCtx))
	defer cancel(nil)
	// A plugin that panics fails this pod's binding cycle at point, not
	// the process (panics.go).
	point := "Permit"
	defer func() {
		if r := recover(); r != nil {
			s.bindingPanicked(ctx, j, point, r)
		}
	}()
	pod, node := j.assumed, j.res.node
	if j.waiting != nil || len(j.preBind) > 0 {
		// The pod's deletion cancels the wait and PreBind.
		s.trackBinding(pod.UID, cancel)
		defer s.untrackBinding(pod.UID)
		// Say where the pod is going while it waits, as kube-scheduler
		// does (NominatedNodeNameForExpectation); the API server clears
		// the nomination when it binds the pod.
		if j.qpi.Pod.Status.NominatedNodeName != node {
			if err := s.binder.Nominate(ctx, j.qpi.Pod, node); err != nil {
				s.logger.Warn("could not nominate the node of a pod in its binding cycle",
					zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("node", node), zap.Error(err))
			} else {
				j.nominated = true
			}
		}
	}

	if j.waiting != nil {
		if st, by := s.waitOnPermit(ctx, j); !st.IsSuccess() {
			s.bindingFailed(ctx, j, "Permit", st, by)
			return
		}
	}
	point = "PreBind"
	if len(j.preBind) > 0 {
		if st, by := j.prof.runPreBind(ctx, j); !st.IsSuccess() {
			s.bindingFailed(ctx, j, "PreBind", st, by)
			return
		}
	}

	point = "Bind"
	bindCtx, cancelBind := context.WithTimeout(ctx, s.bindGracePeriod+30*time.Second)
	defer cancelBind()
	s.metrics.BindingStarted()
	j.bindStart = time.Now()
	bindBy, err := s.bind(bindCtx, j.prof, j.state, pod, node)
	s.metrics.BindingDone(time.Since(j.bindStart), err)
	switch {
	case err == nil:
		point = "PostBind"
		s.bindingSucceeded(ctx, j)
	case errors.Is(err, binder.ErrMayHaveBound) && s.bindCtx.Err() == nil:
		// Not a failure until the pod says so (binding_outcome.go).
		ch := s.outcomes.expect(pod.UID)
		handedOff = true
		s.bindWG.Add(1)
		go s.awaitBindingOutcome(j, ch, err)
	default:
		s.bindingFailed(ctx, j, "Bind", framework.AsStatus(fmt.Errorf("binding rejected: %w", err)), bindBy)
	}
}

// bindingSucceeded ends the binding cycle of a pod that is bound to j's
// node: the assumption waits for the informer's confirmation (if it has
// not come yet), the user is told, PostBind runs. Every binding cycle
// that bound its pod ends here, whatever its Binding was answered.
func (s *Scheduler) bindingSucceeded(ctx context.Context, j bindJob) {
	pod, node := j.assumed, j.res.node
	s.Cache.FinishBinding(pod)
	s.nominations.forget(pod.UID)
	s.scheduled.Add(1)
	j.prof.observe(metrics.Bind, framework.Success, j.bindStart)
	took := s.clock.Since(j.start)
	j.prof.metrics.PodScheduled(took)
	var sinceFirst time.Duration
	if !j.qpi.InitialAttemptTimestamp.IsZero() {
		sinceFirst = s.clock.Since(j.qpi.InitialAttemptTimestamp)
	}
	s.metrics.PodBound(j.qpi.Attempts, sinceFirst)
	s.binder.RecordScheduled(j.qpi.Pod, node)
	j.prof.runPostBind(ctx, j)
	s.logger.Info("pod bound",
		zap.String("pod", pod.Namespace+"/"+pod.Name),
		zap.String("node", node),
		zap.Int("evaluatedNodes", j.res.evaluated),
		zap.Int("feasibleNodes", j.res.feasible),
		zap.Int("attempts", j.qpi.Attempts),
		zap.Duration("duration", took))
}

// waitOnPermit blocks until the pod's wait on Permit ends, or ctx does.
func (s *Scheduler) waitOnPermit(ctx context.Context, j bindJob) (*framework.Status, string) {
	start := time.Now()
	defer s.waiting.remove(j.assumed.UID)
	select {
	case v := <-j.waiting.verdict:
		code := v.status.Code()
		s.metrics.PermitWaited(code, time.Since(start))
		return v.status, v.plugin
	case <-ctx.Done():
		j.waiting.Reject("", "the binding cycle was cancelled")
		s.metrics.PermitWaited(framework.Error, time.Since(start))
		return framework.AsStatus(fmt.Errorf("waiting on permit: %w", context.Cause(ctx))), ""
	}
}

// bindingFailed ends a binding cycle that failed at point with st from
// plugin: Unreserve, forget the assumption, wake the pods the freed room
// may help, requeue the pod and tell the user, unless the pod is gone or
// bound elsewhere (as the informer shows it), or this replica aborted its
// bindings: a FailedScheduling event is never written for a pod that is
// bound. A pod that failed at Bind and that the informer shows bound to
// j's node was bound by the Binding that failed: the cycle succeeded.
func (s *Scheduler) bindingFailed(ctx context.Context, j bindJob, point string, st *framework.Status, plugin string) {
	pod := j.assumed
	others := func(qpi *queue.QueuedPodInfo) bool { return qpi.Pod.UID != pod.UID }
	name := pod.Namespace + "/" + pod.Name

	if point == "Bind" {
		// An answer the binder takes for a refusal can hide a commit: a
		// proxy in front of the API server may answer 429 after it
		// forwarded the Binding. So at Bind, the pod bound to our node is
		// our Binding's doing, as awaitBindingOutcome takes it; before
		// Bind none was posted, and someone else bound the pod
		// (bindingDropped). An aborted replica tells nobody.
		if out, known := s.informerOutcome(pod); known && out.node == j.res.node && s.bindCtx.Err() == nil {
			s.logger.Info("binding committed although it failed", zap.String("pod", name), zap.String("node", j.res.node), zap.Error(st.Err()))
			s.bindingSucceeded(ctx, j)
			s.Queue.Done(j.qpi)
			return
		}
		j.prof.observe(metrics.Bind, framework.Error, j.bindStart)
	}
	switch {
	case s.bindCtx.Err() != nil:
		// Aborted: this replica lost its lease, or its shutdown grace
		// ran out, and tells nobody. Unreserve must run even so: the
		// plugins give back what they hold in memory, which takes no
		// API call.
		s.unreserveAndForget(context.WithoutCancel(ctx), &j)
		j.prof.metrics.PodScheduleError(s.clock.Since(j.start))
		s.logger.Info("binding aborted", zap.String("pod", name), zap.String("node", j.res.node), zap.String("at", point), zap.Error(st.Err()))
		_ = s.Queue.AddUnschedulable(j.qpi, s.Queue.SchedulingCycle(), false)
		return
	case errors.Is(context.Cause(ctx), errPodDeleted):
		s.bindingDropped(ctx, j, bindingOutcome{gone: true}, point)
		return
	}
	if out, known := s.informerOutcome(pod); known {
		s.bindingDropped(ctx, j, out, point)
		return
	}
	s.unreserveAndForget(context.WithoutCancel(ctx), &j)
	j.prof.metrics.PodScheduleError(s.clock.Since(j.start))

	err := pluginFailure(point, st, plugin, j.res.node)
	reason := "SchedulerError"
	if st.IsRejected() {
		reason = v1.PodReasonUnschedulable
	}
	// Only a rejection at Permit makes the pod wait for an event of
	// its rejector. After Permit, as in kube-scheduler, a rejection (by
	// a PreBind plugin) is retried after backoff like an error: no
	// cluster event is tied to it.
	unschedulable := st.IsRejected() && point == "Permit"
	if unschedulable {
		j.qpi.UnschedulablePlugins = sets.New(plugin)
	} else {
		j.qpi.UnschedulablePlugins = nil
	}
	s.logger.Warn("binding cycle failed", zap.String("pod", name), zap.String("node", j.res.node),
		zap.String("at", point), zap.String("plugin", plugin), zap.Error(err))
	if j.nominated {
		s.binder.ClearNominationLater(j.qpi.Pod)
	}
	if err := s.Queue.AddUnschedulable(j.qpi, s.Queue.SchedulingCycle(), unschedulable); err != nil {
		s.logger.Debug("pod not requeued", zap.String("pod", name), zap.Error(err))
	}
	// The room the pod held is free again: wake the pods it may help,
	// after the pod itself is queued, so that a rejected pod waits for
	// an event of its own.
	s.Queue.MoveToActiveOrBackoff(assignedPodDelete, j.assumed, nil, others)
	s.binder.RecordFailure(ctx, j.qpi.Pod, reason, err.Error(), true)
}

// trackBinding lets the pod's deletion cancel its binding cycle.
func (s *Scheduler) trackBinding(uid types.UID, cancel context.CancelCauseFunc) {
	s.bindingMu.Lock()
	s.binding[uid] = cancel
	s.bindingMu.Unlock()
}

func (s *Scheduler) untrackBinding(uid types.UID) {
	s.bindingMu.Lock()
	delete(s.binding, uid)
	s.bindingMu.Unlock()
}

// abandonBinding cancels the binding cycle of a pod deleted while it
// waits on Permit or runs PreBind. A pod with neither is left to its
// Binding, which the API server refuses.
func (s *Scheduler) abandonBinding(uid types.UID) {
	s.bindingMu.Lock()
	cancel := s.binding[uid]
	s.bindingMu.Unlock()
	if cancel != nil {
		cancel(errPodDeleted)
	}
}
