package queue

import (
	v1 "k8s.io/api/core/v1"
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

// Census is what waits in the queue at one moment, by Location (ActiveQ,
// BackoffQ, UnschedulablePods and GatedPods; pods in flight are not
// counted), for scheduler_pending_pods and scheduler_queued_entities.
type Census struct {
	// Pods counts every pod waiting there, Members those of them that
	// are members of a pod group, Groups the pod groups with members
	// there (a group whose members wait in two places counts in each).
	Pods, Members, Groups [numLocations]int
	// Incomplete counts the members held back because their group's
	// object does not exist (kube-scheduler v1.37's incomplete pod group
	// pods); they are not counted among the gated pods.
	Incomplete int
}

// Census counts what waits in the queue. groupOf says which group a pod
// is scheduled with, if any; missing whether a group's object does not
// exist. Both are called with the queue's lock held.
func (q *PriorityQueue) Census(groupOf func(*v1.Pod) (framework.PodGroupKey, bool), missing func(framework.PodGroupKey) bool) Census {
	q.mu.Lock()
	defer q.mu.Unlock()
	var c Census
	// The group each one was last counted in (the parts are walked one
	// after another, so a group seen in an earlier part is new to this
	// one), and whether each gated member's group is missing.
	groups := map[framework.PodGroupKey]Location{}
	missed := map[framework.PodGroupKey]bool{}
	count := func(l Location, pod *v1.Pod) {
		key, member := groupOf(pod)
		if member && l == GatedPods {
			m, ok := missed[key]
			if !ok {
				m = missing(key)
				missed[key] = m
			}
			if m {
				c.Incomplete++
				return
			}
		}
		c.Pods[l]++
		if !member {
			return
		}
		c.Members[l]++
		if seen, ok := groups[key]; !ok || seen != l {
			groups[key] = l
			c.Groups[l]++
		}
	}
	for _, h := range []struct {
		l Location
		h *podHeap
	}{{ActiveQ, q.activeQ}, {BackoffQ, q.backoffQ}, {BackoffQ, q.errorBackoffQ}} {
		for _, it := range h.h.items {
			count(h.l, it.pod.Pod)
		}
	}
	for _, qpi := range q.unschedulable {
		count(UnschedulablePods, qpi.Pod)
	}
	for _, qpi := range q.gated {
		count(GatedPods, qpi.Pod)
	}
	return c
}
