package queue

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Pod groups: a pod that names a group (framework.PodGroupOf) is queued
// and ordered like any pod, but its group is scheduled whole. When Pop
// returns one member, the scheduler takes the others with TakeGroup, so
// that one group cycle decides them together; a member held back by a
// PreEnqueue plugin or its scheduling gates stays where it is.

// TakeGroup takes every member of key that waits in activeQ, backoffQ
// (after a rejection or an error) or the unschedulable pool, and puts
// them in flight in the current scheduling cycle, as Pop does: the caller
// ends each one's cycle with AddUnschedulable or Done. The members come
// in no particular order.
func (q *PriorityQueue) TakeGroup(key framework.PodGroupKey) []*QueuedPodInfo {
	q.mu.Lock()
	defer q.mu.Unlock()
	var uids []types.UID
	for _, h := range []*podHeap{q.activeQ, q.backoffQ, q.errorBackoffQ} {
		for _, it := range h.items {
			if k, ok := framework.PodGroupOf(it.pod.Pod); ok && k == key {
				uids = append(uids, it.pod.Pod.UID)
			}
		}
	}
	for uid, qpi := range q.unschedulable {
		if k, ok := framework.PodGroupOf(qpi.Pod); ok && k == key {
			uids = append(uids, uid)
		}
	}
	taken := make([]*QueuedPodInfo, 0, len(uids))
	for _, uid := range uids {
		var qpi *QueuedPodInfo
		var ok bool
		for _, h := range []*podHeap{q.activeQ, q.backoffQ, q.errorBackoffQ} {
			if qpi, ok = h.remove(uid); ok {
				break
			}
		}
		if !ok {
			qpi = q.unschedulable[uid]
			q.removeUnschedulable(qpi)
		}
		popped := *qpi
		popped.Attempts++
		q.inFlight[uid] = &inFlightPod{cycle: &popped, pod: popped.Pod, attempts: popped.Attempts,
			firstEvent: q.eventsBase + int64(len(q.events))}
		taken = append(taken, &popped)
	}
	return taken
}

// Activate moves the pods with these UIDs that wait in the unschedulable
// pool or backoffQ to activeQ, and asks the PreEnqueue plugins again about
// those they held back: something they wait for happened (their group's
// PodGroup appeared, or its last missing member). Pods the queue does not
// hold there are ignored.
func (q *PriorityQueue) Activate(uids []types.UID, event Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, uid := range uids {
		if qpi, ok := q.unschedulable[uid]; ok {
			q.removeUnschedulable(qpi)
			q.pushActive(qpi, event, ActiveQ)
			continue
		}
		if qpi, ok := q.backoffQ.remove(uid); ok {
			q.pushActive(qpi, event, ActiveQ)
			continue
		}
		if qpi, ok := q.gated[uid]; ok && !isGated(qpi.Pod) && (q.preEnqueue == nil || q.preEnqueue(qpi.Pod)) {
			delete(q.gated, uid)
			q.pushActive(qpi, event, BackoffQ)
		}
	}
}
