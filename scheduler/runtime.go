package scheduler

// The per-profile framework runtime. A profile (profile.go) holds the
// plugin instances at each extension point, in configured order; these
// methods run them, as kube-scheduler's framework runtime does: each
// point's plugins in order with their statuses' meaning, their metrics
// (scheduler_framework_extension_point_duration_seconds, the sampled
// scheduler_plugin_execution_duration_seconds), the answers kept per pod
// signature (signatures.go), the what-if runs of preemption and the
// panics of plugins that must not stop the others. The scheduler drives
// them: it owns the snapshot and the cache, the queue, the nominations,
// the extenders and the parallel loops over the nodes (schedule_one.go,
// binding_cycle.go), and calls the profile at each point.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
)

// runFilters runs the active filters (indexes into prof.filter) on one node
// in configured order, cheapest first, and returns the first rejection and
// the name of the plugin that made it. timers, parallel to prof.filter, are
// given in sampled cycles only.
//
// The status is not changed: plugins may return one shared, preallocated
// status for a fixed reason, which keeps the per-node loop from allocating
// on nodes that do not fit.
func (prof *profile) runFilters(ctx context.Context, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, timers []*metrics.PluginTimer) (*framework.Status, string) {
	return prof.runFiltersAt(ctx, active, state, pod, ni, 0, 0, timers)
}

// runFiltersAt is runFilters for a snapshot node in slot with generation
// gen (0 for any other NodeInfo): a plugin that is a SlotFilter decides
// from slot and gen when it can, without reading the NodeInfo.
func (prof *profile) runFiltersAt(ctx context.Context, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, slot int, gen int64, timers []*metrics.PluginTimer) (*framework.Status, string) {
	t0 := startPlugin(timers)
	for _, i := range active {
		var st *framework.Status
		decided := false
		if sf := prof.slotFilter[i]; sf != nil && slot > 0 {
			st, decided = sf.FilterSlot(ctx, state, pod, slot, gen)
		}
		if !decided {
			st = prof.filter[i].Filter(ctx, state, pod, ni)
		}
		t0 = endPlugin(timers, i, st.Code(), t0)
		if !st.IsSuccess() {
			// An Error is returned as it is: findFeasible ends the
			// attempt with it, as kube-scheduler does.
			return st, prof.filter[i].Name()
		}
	}
	return nil, ""
}

// filterAnswers signs pod for the longest run of active filters (indexes
// into prof.filter) from the first whose plugins all sign, and returns
// their answers with the length of that run; nil and 0 when the first
// filter does not sign. The answer kept per node is the run's verdict: the
// first rejection, or none.
func (prof *profile) filterAnswers(state *framework.CycleState, pod *v1.Pod, active []int, slots int) (*slotAnswers[rejection], int) {
	sig := prof.signatures.buf[:0]
	n := 0
	for _, i := range active {
		signer, ok := prof.filter[i].(framework.PodSigner)
		if !ok {
			break
		}
		before := len(sig)
		sig = binary.AppendUvarint(sig, uint64(i))
		if sig, ok = signer.SignPod(state, pod, sig); !ok {
			sig = sig[:before] // the run ends before this plugin
			break
		}
		n++
	}
	prof.signatures.buf = sig
	if n == 0 {
		return nil, 0
	}
	// The run's length is in the signature: the plugin indexes that open
	// each fragment say which plugins signed.
	return prof.signatures.filters.answers(sig, 1, slots), n
}

// runFiltersSigned is runFilters for a node, in slot with generation gen,
// whose first n active filters have kept answers: their verdict is read,
// or computed and kept; the rest run as usual.
func (prof *profile) runFiltersSigned(ctx context.Context, active []int, n int, answers *slotAnswers[rejection], slot int, gen int64, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, timers []*metrics.PluginTimer) (*framework.Status, string) {
	if got, ok := answers.get(slot, gen); ok {
		if got[0].status != nil {
			return got[0].status, got[0].plugin
		}
	} else {
		st, by := prof.runFilters(ctx, active[:n], state, pod, ni, timers)
		// An error is no answer to keep: it ends the attempt.
		if kept := answers.put(slot, gen); kept != nil && ctx.Err() == nil && st.Code() != framework.Error {
			kept[0] = rejection{status: st, plugin: by}
			answers.done(slot, gen)
		}
		if !st.IsSuccess() {
			return st, by
		}
	}
	if n == len(active) {
		return nil, ""
	}
	return prof.runFiltersAt(ctx, active[n:], state, pod, ni, slot, gen, timers)
}

// scoreAnswers signs pod for the scorers that sign (scorers are the
// cycle's, Skip left out) and returns their answers with, parallel to
// scorers, each one's column in them or -1; nil when none signs.
func (prof *profile) scoreAnswers(state *framework.CycleState, pod *v1.Pod, scorers []weightedScorer, columns []int, slots int, sign bool) (*slotAnswers[int64], []int) {
	columns = columns[:0]
	sig := prof.signatures.buf[:0]
	width := 0
	for _, sc := range scorers {
		column := -1
		if signer, ok := sc.ScorePlugin.(framework.PodSigner); ok && sign {
			before := len(sig)
			sig = framework.SignString(sig, sc.Name())
			if sig, ok = signer.SignPod(state, pod, sig); ok {
				column = width
				width++
			} else {
				sig = sig[:before]
			}
		}
		columns = append(columns, column)
	}
	prof.signatures.buf = sig
	if width == 0 {
		return nil, columns
	}
	return prof.signatures.scores.answers(sig, width, slots), columns
}

// whatIf tells the PreFilter states of the plugins that did not skip that
// pi was added to (add) or removed from node ni.
func (prof *profile) whatIf(ctx context.Context, state *framework.CycleState, pod *v1.Pod, pi *framework.PodInfo, ni *framework.NodeInfo, add bool) *framework.Status {
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
func (prof *profile) runFiltersWithNominated(ctx context.Context, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, nominated []*framework.PodInfo, timers []*metrics.PluginTimer) (*framework.Status, string) {
	if len(nominated) > 0 {
		if status, by := prof.runFilters(ctx, active, state, pod, ni, timers); !status.IsSuccess() {
			return status, by
		}
		return prof.runFiltersBesideNominated(ctx, active, state, pod, ni, nominated)
	}
	return prof.runFilters(ctx, active, state, pod, ni, timers)
}

// fitsBesideNominated is runFiltersWithNominated in kube-scheduler's
// order, for preemption's what-if runs: beside the nominated pods first,
// then without them. The verdict is the same; the reason, when the pod
// fails beside them, is kube-scheduler's, which a node that is no
// candidate gives in the "preemption: ..." message. It costs a copy per
// check on a node that holds nominations of the pod's priority or more
// (rare), where the other order spares the copy when the pod fails
// without them.
func (prof *profile) fitsBesideNominated(ctx context.Context, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, nominated []*framework.PodInfo) *framework.Status {
	if len(nominated) > 0 {
		if status, _ := prof.runFiltersBesideNominated(ctx, active, state, pod, ni, nominated); !status.IsSuccess() {
			return status
		}
	}
	status, _ := prof.runFilters(ctx, active, state, pod, ni, nil)
	return status
}

// runFiltersBesideNominated runs the filters for pod on a copy of ni and
// of state that hold the nominated pods: the second half of
// runFiltersWithNominated, for a pod that passed on ni as it is.
func (prof *profile) runFiltersBesideNominated(ctx context.Context, active []int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, nominated []*framework.PodInfo) (*framework.Status, string) {
	what := ni.Clone()
	what.Generation, what.Slot = 0, 0
	st := state.Clone()
	for _, pi := range nominated {
		what.AddPodInfo(pi)
		if status := prof.whatIf(ctx, st, pod, pi, what, true); !status.IsSuccess() {
			return status, ""
		}
	}
	return prof.runFilters(ctx, active, st, pod, what, nil)
}

// runPostFilter runs the profile's PostFilter plugins for a pod that fits
// nowhere, as kube-scheduler's framework does: a plugin that made room
// (preemption nominated a node) ends the chain with its message (v1.37's
// "preemption: found a potential placement for pod on node ..."); an
// Unschedulable one passes on, its reasons kept; any other status ends
// the chain with its message. It returns the message for the pod's
// FailedScheduling event.
func (prof *profile) runPostFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, fitErr *FitError) string {
	start := time.Now()
	filtered := &framework.FilteredNodes{NumAllNodes: fitErr.NumAllNodes, Resolvable: fitErr.candidates}
	prof.keepActiveFilters(state)
	var reasons []string
	for _, pl := range prof.postFilter {
		if _, preempts := pl.(framework.PreemptionPlanner); preempts {
			prof.preemptionAttempted()
		}
		st := pl.PostFilter(ctx, state, pod, filtered)
		switch {
		case st.IsSuccess():
			prof.observe(metrics.PostFilter, framework.Success, start)
			return st.Message()
		case st.Code() == framework.Unschedulable:
			reasons = append(reasons, st.Reasons()...)
		default:
			prof.observe(metrics.PostFilter, st.Code(), start)
			return st.Message()
		}
	}
	prof.observe(metrics.PostFilter, framework.Unschedulable, start)
	return strings.Join(reasons, ", ")
}

// runReserve runs Reserve in order and returns the first failure and its
// plugin.
func (prof *profile) runReserve(ctx context.Context, j *bindJob) (*framework.Status, string) {
	if len(prof.reserve) == 0 {
		return nil, ""
	}
	start := time.Now()
	timers := prof.metrics.timers(j.sampled, metrics.Reserve)
	t0 := startPlugin(timers)
	for i, pl := range prof.reserve {
		st := pl.Reserve(ctx, j.state, j.assumed, j.res.node)
		t0 = endPlugin(timers, i, st.Code(), t0)
		if !st.IsSuccess() {
			prof.observe(metrics.Reserve, st.Code(), start)
			return st, pl.Name()
		}
	}
	prof.observe(metrics.Reserve, framework.Success, start)
	return nil, ""
}

// runUnreserve runs Unreserve on every reserve plugin, in reverse order.
func (prof *profile) runUnreserve(ctx context.Context, j *bindJob) {
	if len(prof.reserve) == 0 {
		return
	}
	start := time.Now()
	timers := prof.metrics.timers(j.sampled, metrics.Unreserve)
	for i := len(prof.reserve) - 1; i >= 0; i-- {
		t0 := startPlugin(timers)
		prof.unreserve(ctx, j, i)
		endPlugin(timers, i, framework.Success, t0)
	}
	prof.observe(metrics.Unreserve, framework.Success, start)
}

// unreserve runs the i-th reserve plugin's Unreserve; a panic there
// keeps no other plugin from giving back what it holds.
func (prof *profile) unreserve(ctx context.Context, j *bindJob, i int) {
	pl := prof.reserve[i]
	defer prof.recoverPlugin("Unreserve", pl.Name())
	pl.Unreserve(ctx, j.state, j.assumed, j.res.node)
}

// runPermit runs Permit in order. A rejection or an error ends it at
// once, with the plugin that made it; otherwise the status is Wait when
// any plugin asked to wait, with each such plugin's timeout.
func (prof *profile) runPermit(ctx context.Context, j *bindJob) (*framework.Status, string, map[string]time.Duration) {
	if len(prof.permit) == 0 {
		return nil, "", nil
	}
	start := time.Now()
	timers := prof.metrics.timers(j.sampled, metrics.Permit)
	var timeouts map[string]time.Duration
	t0 := startPlugin(timers)
	for i, pl := range prof.permit {
		st, timeout := pl.Permit(ctx, j.state, j.assumed, j.res.node)
		t0 = endPlugin(timers, i, st.Code(), t0)
		switch {
		case st.IsSuccess():
		case st.IsWait():
			if timeouts == nil {
				timeouts = map[string]time.Duration{}
			}
			timeouts[pl.Name()] = min(timeout, framework.MaxPermitWait)
		default:
			prof.observe(metrics.Permit, st.Code(), start)
			return st, pl.Name(), nil
		}
	}
	if timeouts != nil {
		prof.observe(metrics.Permit, framework.Wait, start)
		return framework.NewStatus(framework.Wait), "", timeouts
	}
	prof.observe(metrics.Permit, framework.Success, start)
	return nil, "", nil
}

// runPreBindPreFlights asks every PreBind plugin whether it has work for
// the pod and records in j those that have. Only Success, Skip and Error
// are allowed.
func (prof *profile) runPreBindPreFlights(ctx context.Context, j *bindJob) (*framework.Status, string) {
	if len(prof.preBind) == 0 {
		return nil, ""
	}
	start := time.Now()
	timers := prof.metrics.timers(j.sampled, metrics.PreBindPreFlight)
	t0 := startPlugin(timers)
	for i, pl := range prof.preBind {
		st := pl.PreBindPreFlight(ctx, j.state, j.assumed, j.res.node)
		t0 = endPlugin(timers, i, st.Code(), t0)
		switch {
		case st.IsSkip():
		case st.IsSuccess():
			j.preBind = append(j.preBind, i)
		case st.Code() == framework.Error:
			prof.observe(metrics.PreBindPreFlight, framework.Error, start)
			return st, pl.Name()
		default:
			prof.observe(metrics.PreBindPreFlight, framework.Error, start)
			return framework.AsStatus(fmt.Errorf("PreBindPreFlight returned %s; only Success, Skip or Error are allowed", st.Code())), pl.Name()
		}
	}
	code := framework.Skip
	if len(j.preBind) > 0 {
		code = framework.Success
	}
	prof.observe(metrics.PreBindPreFlight, code, start)
	return nil, ""
}

// runPreBind runs the PreBind plugins that have work, in order, and
// returns the first failure and its plugin.
func (prof *profile) runPreBind(ctx context.Context, j bindJob) (*framework.Status, string) {
	start := time.Now()
	timers := prof.metrics.timers(j.sampled, metrics.PreBind)
	for _, i := range j.preBind {
		pl := prof.preBind[i]
		t0 := startPlugin(timers)
		st := pl.PreBind(ctx, j.state, j.assumed, j.res.node)
		endPlugin(timers, i, st.Code(), t0)
		if !st.IsSuccess() {
			prof.observe(metrics.PreBind, st.Code(), start)
			return st, pl.Name()
		}
	}
	prof.observe(metrics.PreBind, framework.Success, start)
	return nil, ""
}

// runPostBind tells the PostBind plugins that the pod is bound.
func (prof *profile) runPostBind(ctx context.Context, j bindJob) {
	if len(prof.postBind) == 0 {
		return
	}
	start := time.Now()
	timers := prof.metrics.timers(j.sampled, metrics.PostBind)
	for i, pl := range prof.postBind {
		t0 := startPlugin(timers)
		func() {
			// The pod is bound: a panic is only logged.
			defer prof.recoverPlugin("PostBind", pl.Name())
			pl.PostBind(ctx, j.state, j.assumed, j.res.node)
		}()
		endPlugin(timers, i, framework.Success, t0)
	}
	prof.observe(metrics.PostBind, framework.Success, start)
}

// recoverPlugin, deferred around one plugin call that must not keep the
// others from running (Unreserve, PostBind), logs a panic and lets the
// caller go on.
func (prof *profile) recoverPlugin(point, plugin string) {
	if r := recover(); r != nil {
		pe := framework.NewPanicError(r)
		prof.logger.Error("plugin panicked", zap.String("at", point), zap.String("plugin", plugin),
			zap.Error(pe), zap.ByteString("stack", pe.Stack))
	}
}

// preemptionAttempted counts a run of a preempting PostFilter plugin.
func (prof *profile) preemptionAttempted() {
	if prof.counters != nil {
		prof.counters.PreemptionAttempted()
	}
}

// runPreFilterPlugins runs the PreFilter plugins in order. A Skip marks the
// plugin's filter skipped in state; as in kube-scheduler, an Unschedulable
// plugin lets the others run (the last one's reason is the pod's), an
// UnschedulableAndUnresolvable one ends the step at once, and the nodes
// the results name are intersected. It returns the nodes the results
// allow (nil: every node) and the plugins that narrowed them, or the
// FitError of a pod rejected before any Filter, or the error of a plugin
// that failed. rec, nil in scheduling cycles, keeps the rejection for
// explain.
func (prof *profile) runPreFilterPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, all []*framework.NodeInfo, sampled bool, rec *cycleRecorder) (allowed map[string]struct{}, narrowedBy []string, fitErr *FitError, err error) {
	preFilterStart := time.Now()
	preFilterTimers := prof.metrics.timers(sampled, metrics.PreFilter)
	t0 := startPlugin(preFilterTimers)
	var rejected *framework.Status
	var rejectedBy []string
	for i, pl := range prof.preFilter {
		res, st := pl.PreFilter(ctx, state, pod, all)
		t0 = endPlugin(preFilterTimers, i, st.Code(), t0)
		switch {
		case st.IsSkip():
			if state.SkipFilterPlugins == nil {
				state.SkipFilterPlugins = map[string]struct{}{}
			}
			state.SkipFilterPlugins[pl.Name()] = struct{}{}
			continue
		case st.Code() == framework.Unschedulable:
			rejected = st
			rejectedBy = append(rejectedBy, pl.Name())
			continue
		case st.IsRejected():
			rec.preFilterRejected(pl.Name(), st)
			prof.observe(metrics.PreFilter, st.Code(), preFilterStart)
			f := newFitError(len(all))
			f.addPlugins(pl.Name())
			f.PreFilterMessage, f.preFilterPlugin = st.Message(), pl.Name()
			f.Unresolvable = true
			return nil, nil, f, nil
		case !st.IsSuccess():
			prof.observe(metrics.PreFilter, framework.Error, preFilterStart)
			return nil, nil, nil, fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), st.Err())
		}
		if res != nil && res.NodeNames != nil {
			allowed = intersect(allowed, res.NodeNames)
			narrowedBy = append(narrowedBy, pl.Name())
			if len(allowed) == 0 {
				prof.observe(metrics.PreFilter, framework.UnschedulableAndUnresolvable, preFilterStart)
				f := newFitError(len(all))
				f.addPlugins(narrowedBy...)
				f.PreFilterMessage = notSatisfiedMessage(narrowedBy)
				rec.preFilterRejected(pl.Name(), framework.NewStatus(framework.UnschedulableAndUnresolvable, f.PreFilterMessage))
				f.Unresolvable = true
				return nil, nil, f, nil
			}
		}
	}
	if rejected != nil {
		// The last one's status is the pod's, as in kube-scheduler.
		last := rejectedBy[len(rejectedBy)-1]
		rec.preFilterRejected(last, rejected)
		prof.observe(metrics.PreFilter, framework.Unschedulable, preFilterStart)
		f := newFitError(len(all))
		f.addPlugins(rejectedBy...)
		f.PreFilterMessage, f.preFilterPlugin = rejected.Message(), last
		f.candidates = all
		return nil, nil, f, nil
	}
	prof.observe(metrics.PreFilter, framework.Success, preFilterStart)
	return allowed, narrowedBy, nil, nil
}

// runBindPlugins runs the Bind plugins in order until one does not Skip,
// and returns its name and its error; an error when every one skipped.
func (prof *profile) runBindPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) (by string, err error) {
	for _, b := range prof.bind {
		st := b.Bind(ctx, state, pod, node)
		switch {
		case st.IsSkip():
			continue
		case st.IsSuccess():
			return b.Name(), nil
		}
		return b.Name(), st.Err()
	}
	return "", errors.New("every bind plugin skipped the pod")
}

// runPreScorePlugins runs the PreScore plugins in order over the feasible
// nodes; a Skip marks the plugin's scorer skipped in state.
func (prof *profile) runPreScorePlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, feasible []*framework.NodeInfo, sampled bool) error {
	preScoreStart := time.Now()
	preScoreTimers := prof.metrics.timers(sampled, metrics.PreScore)
	t0 := startPlugin(preScoreTimers)
	for i, pl := range prof.preScore {
		st := pl.PreScore(ctx, state, pod, feasible)
		t0 = endPlugin(preScoreTimers, i, st.Code(), t0)
		if st.IsSkip() {
			if state.SkipScorePlugins == nil {
				state.SkipScorePlugins = map[string]struct{}{}
			}
			state.SkipScorePlugins[pl.Name()] = struct{}{}
			continue
		}
		if !st.IsSuccess() {
			prof.observe(metrics.PreScore, framework.Error, preScoreStart)
			return st.Err()
		}
	}
	prof.observe(metrics.PreScore, framework.Success, preScoreStart)
	return nil
}
