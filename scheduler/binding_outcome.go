package scheduler

// A Binding that times out, loses its connection or gets an answer that
// proves nothing (a 5xx, a proxy's 404, a 409 after an earlier attempt)
// may have been committed (binder.ErrMayHaveBound). Its pod then keeps its
// assumption, so that no other pod is placed into the room it may hold,
// until the pod itself says what happened, as the informer shows it:
//
//	bound to our node  → the binding cycle succeeded (Scheduled event, PostBind)
//	bound elsewhere    → Unreserve; the cache already holds it where it is
//	gone (or replaced  → Unreserve and forget, nothing to retry or report
//	under its name)
//	still pending      → after bindOutcomeWait, the API server is asked
//	                     (one GET); pending there too, the Binding failed:
//	                     Unreserve, forget, requeue with backoff and a
//	                     FailedScheduling event
//
// kube-scheduler forgets the assumed pod at once and lets the informer add
// it back if it was bound after all; in between, the room looks free. Here
// the room stays taken until the outcome is known.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/queue"
)

// bindOutcomeWait is how long a binding cycle whose Binding may have been
// committed waits for the informer before it asks the API server, and
// between two questions. The informer shows a committed Binding within
// milliseconds, or within a second or two after its watch was cut.
const bindOutcomeWait = 5 * time.Second

// bindingOutcome is what became of a pod whose Binding may have been
// committed.
type bindingOutcome struct {
	// node is where the pod is bound; "" while it is not.
	node string
	// gone says the pod was deleted, or replaced by another of its name.
	gone bool
}

// outcomeWaiters are the binding cycles waiting to learn their pod's
// outcome, by UID. The pod event handlers tell them; with none waiting,
// which is nearly always, telling costs one atomic load.
type outcomeWaiters struct {
	waiting atomic.Int32
	mu      sync.Mutex
	byUID   map[types.UID]chan bindingOutcome
}

// expect registers a waiter for uid. Register before looking at the
// informer, so that no event falls between the look and the wait.
func (w *outcomeWaiters) expect(uid types.UID) <-chan bindingOutcome {
	ch := make(chan bindingOutcome, 1)
	w.mu.Lock()
	if w.byUID == nil {
		w.byUID = map[types.UID]chan bindingOutcome{}
	}
	w.byUID[uid] = ch
	w.waiting.Store(int32(len(w.byUID)))
	w.mu.Unlock()
	return ch
}

// done unregisters the waiter for uid.
func (w *outcomeWaiters) done(uid types.UID) {
	w.mu.Lock()
	delete(w.byUID, uid)
	w.waiting.Store(int32(len(w.byUID)))
	w.mu.Unlock()
}

// tell gives the waiter for uid, if any, an outcome; one that has an
// outcome it has not read yet keeps the first, since a pod bound and then
// deleted was bound.
func (w *outcomeWaiters) tell(uid types.UID, out bindingOutcome) {
	if w.waiting.Load() == 0 {
		return
	}
	w.mu.Lock()
	ch := w.byUID[uid]
	w.mu.Unlock()
	if ch != nil {
		select {
		case ch <- out:
		default:
		}
	}
}

// informerOutcome is what the informer shows of pod: bound, gone, or
// (known false) pending, or no informer to ask.
func (s *Scheduler) informerOutcome(pod *v1.Pod) (bindingOutcome, bool) {
	if s.podLister == nil {
		return bindingOutcome{}, false
	}
	cur, err := s.podLister.Pods(pod.Namespace).Get(pod.Name)
	switch {
	case apierrors.IsNotFound(err):
		return bindingOutcome{gone: true}, true
	case err != nil:
		return bindingOutcome{}, false
	case cur.UID != pod.UID:
		return bindingOutcome{gone: true}, true
	case cur.Spec.NodeName != "":
		return bindingOutcome{node: cur.Spec.NodeName}, true
	}
	return bindingOutcome{}, false
}

// apiOutcome asks the API server what became of pod: bound, or pending
// there too (a known outcome with no node), or gone when another pod has
// its name. A 404 proves nothing (a proxy may answer it), nor does an
// error: those leave the outcome unknown, for the informer to tell.
func (s *Scheduler) apiOutcome(ctx context.Context, pod *v1.Pod) (bindingOutcome, bool) {
	cur, err := s.binder.Pod(ctx, pod)
	switch {
	case err != nil:
		return bindingOutcome{}, false
	case cur.UID != pod.UID:
		return bindingOutcome{gone: true}, true
	}
	return bindingOutcome{node: cur.Spec.NodeName}, true
}

// awaitBindingOutcome settles j's binding cycle, whose Binding failed
// with bindErr but may have been committed, once its outcome is known
// (see the file comment). It owns j's cycle in the queue and one count of
// bindWG; ch is its waiter, registered by the caller.
func (s *Scheduler) awaitBindingOutcome(j bindJob, ch <-chan bindingOutcome, bindErr error) {
	defer s.bindWG.Done()
	pod := j.assumed
	defer s.outcomes.done(pod.UID)
	ctx, cancel := context.WithCancel(framework.WithBindingCycle(s.bindCtx))
	defer cancel()
	name := pod.Namespace + "/" + pod.Name
	s.logger.Info("binding outcome unknown: waiting for the pod to tell", zap.String("pod", name),
		zap.String("node", j.res.node), zap.Error(bindErr))

	out, known := s.informerOutcome(pod)
	for !known {
		t := s.clock.NewTimer(bindOutcomeWait)
		select {
		case out = <-ch:
			known = true
		case <-t.C():
			get, stop := context.WithTimeout(ctx, bindOutcomeWait)
			out, known = s.apiOutcome(get, pod)
			stop()
		case <-s.bindCtx.Done():
			// Aborted: bindingFailed forgets it without a word.
			t.Stop()
			s.bindingFailed(ctx, j, "Bind", framework.AsStatus(bindErr), defaultBinderName)
			return
		}
		t.Stop()
	}
	switch {
	case out.node == j.res.node:
		s.logger.Info("binding committed although its answer was lost", zap.String("pod", name), zap.String("node", out.node))
		s.bindingSucceeded(ctx, j)
		s.Queue.Done(j.qpi)
	case out.gone || out.node != "":
		j.prof.observe(metrics.Bind, framework.Error, j.bindStart)
		s.bindingDropped(ctx, j, out, "Bind")
	default:
		err := fmt.Errorf("%w, but it was not: the pod is still pending", bindErr)
		s.bindingFailed(ctx, j, "Bind", framework.AsStatus(err), defaultBinderName)
	}
}

// bindingDropped ends a binding cycle whose pod is gone or bound by
// someone else: to another node than j's, or to j's node before this
// cycle posted its Binding. There is nothing to retry and nothing to
// tell. The room j held is given back; the cache already holds a pod
// bound where the informer showed it.
func (s *Scheduler) bindingDropped(ctx context.Context, j bindJob, out bindingOutcome, point string) {
	pod := j.assumed
	s.unreserveAndForget(context.WithoutCancel(ctx), &j)
	j.prof.metrics.PodScheduleError(s.clock.Since(j.start))
	s.Queue.Done(j.qpi)
	switch {
	case out.gone:
		s.logger.Info("pod deleted before it was bound", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("at", point))
	case out.node == j.res.node:
		s.logger.Info("pod bound to our node by someone else meanwhile", zap.String("pod", pod.Namespace+"/"+pod.Name),
			zap.String("node", out.node), zap.String("at", point))
	default:
		s.logger.Info("pod bound elsewhere meanwhile", zap.String("pod", pod.Namespace+"/"+pod.Name),
			zap.String("node", out.node), zap.String("ours", j.res.node), zap.String("at", point))
	}
	s.Queue.MoveToActiveOrBackoff(assignedPodDelete, pod, nil, func(qpi *queue.QueuedPodInfo) bool { return qpi.Pod.UID != pod.UID })
}
