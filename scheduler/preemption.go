package scheduler

// Preemption's mechanism: the evictions a preempting PostFilter plugin
// asks for (through profileHandle, a framework.PreemptionHandle), and the
// nominations they make (nominator.go), which the filters then count. The
// decision, which victims on which node, is DefaultPreemption's
// (predicates/defaultpreemption).

import (
	"context"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
)

// preemptTimeout bounds the API requests of one preemption.
const preemptTimeout = 30 * time.Second

// maxPreemptionsInFlight bounds the preemptions whose requests (the
// nomination; each victim's condition, deletion and event) are under way;
// the others wait their turn. The client sends 64 requests at a time
// whatever waits, so more in flight only holds memory: 1,000 preemptors
// tried in a second started 4,000 goroutines, each with its requests
// built, and peak RSS went past kube-scheduler's.
const maxPreemptionsInFlight = 32

// syncNomination follows a pending pod's status.nominatedNodeName (see
// nominator.sync), but for the binding cycle's own nomination: an assumed
// pod already holds its room.
func (s *Scheduler) syncNomination(pod *v1.Pod) {
	if pod.Status.NominatedNodeName != "" && s.Cache.IsAssumed(pod.UID) {
		return
	}
	s.nominations.sync(pod)
}

// startEvictions nominates node for pod and evicts victims in the
// background; the pod is requeued by the caller and comes back once the
// victims are gone from the cache.
func (s *Scheduler) startEvictions(pod *v1.Pod, node string, victims []*v1.Pod) {
	uids := make([]types.UID, len(victims))
	for i, v := range victims {
		uids[i] = v.UID
	}
	p := &nomination{pod: pod, info: framework.NewPodInfo(pod), node: node, victims: uids, running: s.binder != nil}
	clear := s.nominations.preempted(p)
	s.metrics.PreemptionVictims(len(victims))
	s.logger.Info("preempting",
		zap.String("pod", pod.Namespace+"/"+pod.Name),
		zap.String("node", node),
		zap.Int("victims", len(victims)))
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
		err := s.binder.Preempt(ctx, pod, node, victims, clear)
		s.nominations.evicted(p, err == nil)
		if err != nil {
			s.logger.Warn("preemption incomplete", zap.String("pod", pod.Namespace+"/"+pod.Name),
				zap.String("node", node), zap.Error(err))
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
	if node := s.nominations.forget(pod.UID); node != "" {
		s.nominationReleased(pod, node)
	}
	if pod.Status.NominatedNodeName == "" || s.binder == nil {
		return
	}
	s.binder.ClearNominationLater(pod)
}

// nominationReleased wakes the pods that pod's nomination on node, now
// dropped (the pod deleted, its nomination cleared or moved), held back:
// for the hints an assigned pod left node. Only pods of priority at most
// pod's are asked, as kube-scheduler's getLEPriorityPreCheck: a pod of
// higher priority never counted the room.
func (s *Scheduler) nominationReleased(pod *v1.Pod, node string) {
	held := *pod
	held.Spec.NodeName = node
	prio := corev1helpers.PodPriority(pod)
	s.Queue.MoveToActiveOrBackoff(assignedPodDelete, &held, nil, func(q *queue.QueuedPodInfo) bool {
		return corev1helpers.PodPriority(q.Pod) <= prio
	})
}

// wholeGroups adds to victims every other scheduled member of a native
// PodGroup whose disruptionMode is all, when one of its members is a
// victim, and marks that PodGroup DisruptionTarget: such a group is
// disrupted whole or not at all (kube-scheduler v1.37 counts it as one
// victim).
func (s *Scheduler) wholeGroups(preemptor *v1.Pod, victims []*v1.Pod) []*v1.Pod {
	if !s.groups.Served(framework.NativePodGroups) {
		return victims
	}
	seen := map[types.UID]bool{}
	for _, v := range victims {
		seen[v.UID] = true
	}
	done := map[framework.PodGroupKey]bool{}
	out := victims
	for _, v := range victims {
		key, ok := framework.PodGroupOf(v)
		if !ok || key.API != framework.NativePodGroups || done[key] {
			continue
		}
		done[key] = true
		pg := s.groups.object(key)
		if pg == nil || pg.Spec.DisruptionMode == nil || pg.Spec.DisruptionMode.All == nil {
			continue
		}
		for _, m := range s.groups.scheduledPods(key) {
			if !seen[m.UID] {
				seen[m.UID] = true
				out = append(out, m)
			}
		}
		s.groupStatus.recordDisruption(pg, preemptor.Spec.SchedulerName)
	}
	return out
}
