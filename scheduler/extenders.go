package scheduler

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/extender"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// ExtenderName is the name an extender's rejection is recorded under, as in
// kube-scheduler: the queue knows no events for it, so a pod an extender
// rejected is retried on every cluster event.
const ExtenderName = "Extender"

// defaultBinderName is DefaultBinder's, whose Binding is the scheduler's
// own (binder.Binder, through the handle's PostBinding).
const defaultBinderName = registry.DefaultBinderName

// This file runs kube-scheduler's HTTP extenders (package extender) at the
// places kube-scheduler does: after the filter plugins, on the nodes they
// passed, one extender after another on what the previous one passed;
// after the score plugins, all at once, adding their scaled scores; and in
// place of the Binding, when one binds. Extenders never see explain's dry
// runs (cycleRecorder.dryRun), which must not call out.

// filterByExtenders runs the extenders that filter and take an interest in
// pod on feasible (and its parallel slots), compacting both in place, and
// returns what is left of feasible (slots[:len] is left parallel to it).
// The nodes they refused are added to rejected. An extender's error ends
// the attempt unless it is ignorable, then it is skipped.
func (s *Scheduler) filterByExtenders(ctx context.Context, pod *v1.Pod, feasible []*framework.NodeInfo, slots []int, rejected *extenderRejections) ([]*framework.NodeInfo, error) {
	for _, e := range s.extenders {
		if len(feasible) == 0 {
			break
		}
		if !e.IsFilter() || !e.IsInterested(pod) {
			continue
		}
		res, err := e.Filter(ctx, pod, nodeObjects(feasible))
		if err != nil {
			if e.IsIgnorable() {
				s.logger.Info("skipping an extender that failed: it is ignorable", zap.String("extender", e.Name()), zap.Error(err))
				continue
			}
			return nil, err
		}
		rejected.add(feasible, res)
		passed := make(map[string]struct{}, len(res.Passed))
		for _, name := range res.Passed {
			passed[name] = struct{}{}
		}
		kept := 0
		for i, ni := range feasible {
			if _, ok := passed[ni.NodeName()]; ok {
				feasible[kept], slots[kept] = ni, slots[i]
				kept++
			}
		}
		feasible, slots = feasible[:kept], slots[:kept]
	}
	return feasible, nil
}

// nodeObjects returns the Node of each of nodes, as extenders are sent
// them.
func nodeObjects(nodes []*framework.NodeInfo) []*v1.Node {
	out := make([]*v1.Node, len(nodes))
	for i, ni := range nodes {
		out[i] = ni.Node()
	}
	return out
}

// extendersChoose reports whether an extender filters or scores nodes,
// so that finding one feasible node is not enough.
func (s *Scheduler) extendersChoose() bool {
	for _, e := range s.extenders {
		if e.IsFilter() || e.IsPrioritizer() {
			return true
		}
	}
	return false
}

// extenderRejections are the nodes extenders refused in one attempt, in
// order, with the status each was refused with.
type extenderRejections struct {
	nodes    []*framework.NodeInfo
	statuses []*framework.Status
}

// add records the nodes of sent that res refuses by name (an unresolvable
// refusal wins over a plain one). A name that was not sent is not a node
// of this attempt and is left out.
func (r *extenderRejections) add(sent []*framework.NodeInfo, res extender.FilterResult) {
	if len(res.Failed) == 0 && len(res.FailedAndUnresolvable) == 0 {
		return
	}
	for _, ni := range sent {
		name := ni.NodeName()
		if msg, ok := res.FailedAndUnresolvable[name]; ok {
			r.nodes = append(r.nodes, ni)
			r.statuses = append(r.statuses, framework.NewStatus(framework.UnschedulableAndUnresolvable, msg))
		} else if msg, ok := res.Failed[name]; ok {
			r.nodes = append(r.nodes, ni)
			r.statuses = append(r.statuses, framework.NewStatus(framework.Unschedulable, msg))
		}
	}
}

// addTo counts the refusals into fitErr, as a filter plugin's are counted,
// and reports whether every one of them is UnschedulableAndUnresolvable.
func (r *extenderRejections) addTo(fitErr *FitError) (unresolvable bool) {
	unresolvable = true
	for i, st := range r.statuses {
		fitErr.addStatus(st, ExtenderName)
		fitErr.tally(rejection{status: st, plugin: ExtenderName}, r.nodes[i])
		if st.Code() != framework.UnschedulableAndUnresolvable {
			unresolvable = false
			fitErr.candidates = append(fitErr.candidates, r.nodes[i])
		}
	}
	return unresolvable
}

// prioritizeByExtenders adds to totals (parallel to feasible) the scores of
// the extenders that prioritize and take an interest in pod, called at
// once. An extender that fails gives no score, as in kube-scheduler.
func (s *Scheduler) prioritizeByExtenders(ctx context.Context, pod *v1.Pod, feasible []*framework.NodeInfo, totals []int64) {
	var calls []*extender.Extender
	for _, e := range s.extenders {
		if e.IsPrioritizer() && e.IsInterested(pod) {
			calls = append(calls, e)
		}
	}
	if len(calls) == 0 {
		return
	}
	nodes := nodeObjects(feasible)
	results := make([]map[string]int64, len(calls))
	var wg sync.WaitGroup
	for i, e := range calls {
		wg.Go(func() {
			scores, err := e.Prioritize(ctx, pod, nodes)
			if err != nil {
				s.logger.Debug("an extender's prioritize failed: no score from it", zap.String("extender", e.Name()),
					zap.String("pod", pod.Namespace+"/"+pod.Name), zap.Error(err))
				return
			}
			results[i] = scores
		})
	}
	wg.Wait()
	for _, scores := range results {
		if len(scores) == 0 {
			continue
		}
		for i, ni := range feasible {
			totals[i] += scores[ni.NodeName()]
		}
	}
}

// bind binds pod to node and returns who did: the extender that binds
// pod, if any, in place of the bind plugins, as in kube-scheduler; else
// (or when it is ignorable and failed) the profile's bind plugins in
// order, the first that does not Skip.
func (s *Scheduler) bind(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, node string) (by string, err error) {
	for _, e := range s.extenders {
		if !e.IsBinder() || !e.IsInterested(pod) {
			continue
		}
		err := e.Bind(ctx, pod, node)
		if err == nil || !e.IsIgnorable() {
			return ExtenderName, err
		}
		s.logger.Info("skipping an extender's bind that failed: it is ignorable", zap.String("extender", e.Name()),
			zap.String("pod", pod.Namespace+"/"+pod.Name), zap.Error(err))
	}
	if len(prof.bind) == 0 {
		return defaultBinderName, s.postBinding(ctx, pod, node)
	}
	return prof.runBindPlugins(ctx, state, pod, node)
}

// OrderExtenders returns es in the order kube-scheduler calls them: the
// ones that are not ignorable first, each group in configuration order.
func OrderExtenders(es []*extender.Extender) []*extender.Extender {
	out := make([]*extender.Extender, 0, len(es))
	for _, e := range es {
		if !e.IsIgnorable() {
			out = append(out, e)
		}
	}
	for _, e := range es {
		if e.IsIgnorable() {
			out = append(out, e)
		}
	}
	return out
}

// preemptionByExtenders lets the extenders that take part in preemption
// and take an interest in pod narrow the candidates and change their
// victims, one after another, as kube-scheduler's callExtenders. It
// returns candidates unchanged when no extender takes part.
func (s *Scheduler) preemptionByExtenders(ctx context.Context, pod *v1.Pod, candidates []framework.PreemptionCandidate) ([]framework.PreemptionCandidate, error) {
	var calls []*extender.Extender
	for _, e := range s.extenders {
		if e.SupportsPreemption() && e.IsInterested(pod) {
			calls = append(calls, e)
		}
	}
	if len(calls) == 0 {
		return candidates, nil
	}
	victims := make(map[string]*extenderv1.Victims, len(candidates))
	for _, c := range candidates {
		victims[c.Node] = &extenderv1.Victims{Pods: c.Victims, NumPDBViolations: int64(c.PDBViolations)}
	}
	podsOn := func(node string) ([]*v1.Pod, bool) {
		ni, err := s.snapshot.Get(node)
		if err != nil {
			return nil, false
		}
		pods := make([]*v1.Pod, len(ni.Pods))
		for i, pi := range ni.Pods {
			pods[i] = pi.Pod
		}
		return pods, true
	}
	for _, e := range calls {
		out, err := e.ProcessPreemption(ctx, pod, victims, podsOn)
		if err != nil {
			if e.IsIgnorable() {
				s.logger.Info("skipping an extender whose preemption failed: it is ignorable", zap.String("extender", e.Name()), zap.Error(err))
				continue
			}
			return nil, err
		}
		for node, v := range out {
			if v == nil || len(v.Pods) == 0 {
				if e.IsIgnorable() {
					delete(out, node)
					continue
				}
				return nil, fmt.Errorf("expected at least one victim pod on node %q", node)
			}
		}
		victims = out
		if len(victims) == 0 {
			break
		}
	}
	out := make([]framework.PreemptionCandidate, 0, len(victims))
	for node, v := range victims {
		out = append(out, framework.PreemptionCandidate{Node: node, Victims: v.Pods, PDBViolations: int(v.NumPDBViolations)})
	}
	return out, nil
}
