package scheduler

// Preemption's mechanism: the nominations the scheduler keeps (a pod that
// preempted, or whose status names a node, keeps room there), the
// evictions a preempting PostFilter plugin asks for, and the what-if
// filter runs it asks them with (profileHandle, a framework
// .PreemptionHandle). The decision, which victims on which node, is
// DefaultPreemption's (predicates/defaultpreemption).

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

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

// inFlightPreemption is a pending pod's nomination: made by its
// preemption here, with the victims it chose (until they are gone, the
// pod waits rather than preempts again), or read from its status. Either
// way the room on the node is kept for it (nominatedFor).
type inFlightPreemption struct {
	pod     *v1.Pod
	info    *framework.PodInfo
	node    string
	victims []types.UID
	// running is set while the eviction requests are under way (guarded
	// by Scheduler.preemptMu).
	running bool
	// fromStatus marks a nomination read from the pod's
	// status.nominatedNodeName, not made here (see syncNomination).
	fromStatus bool
}

// syncNomination follows a pending pod's status.nominatedNodeName, as
// kube-scheduler's nominator does: a nomination this replica did not make
// (a replica before a restart or a change of leader made it) keeps its
// room too, and goes when the field is cleared. A nomination made here
// stays until the pod is placed or gone, whatever the informer shows
// meanwhile.
func (s *Scheduler) syncNomination(pod *v1.Pod) {
	node := pod.Status.NominatedNodeName
	if node != "" && s.Cache.IsAssumed(pod.UID) {
		// The binding cycle's own nomination: the pod already holds its
		// room as an assumed pod.
		return
	}
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	p, ok := s.preempting[pod.UID]
	switch {
	case ok && !p.fromStatus:
		// Made here: kept until the pod is placed or gone, whatever
		// the informer shows (the status patch may not be back yet).
	case node == "":
		if ok {
			delete(s.preempting, pod.UID)
			s.nominationsChanged()
		}
	case !ok || p.node != node:
		s.preempting[pod.UID] = &inFlightPreemption{pod: pod, info: framework.NewPodInfo(pod), node: node, fromStatus: true}
		s.nominationsChanged()
	}
}

// startEvictions nominates node for pod and evicts victims in the
// background; the pod is requeued by the caller and comes back once the
// victims are gone from the cache.
func (s *Scheduler) startEvictions(pod *v1.Pod, node string, victims []*v1.Pod) {
	uids := make([]types.UID, len(victims))
	for i, v := range victims {
		uids[i] = v.UID
	}
	p := &inFlightPreemption{pod: pod, info: framework.NewPodInfo(pod), node: node, victims: uids, running: s.binder != nil}
	s.preemptMu.Lock()
	s.preempting[pod.UID] = p
	s.nominationsChanged()
	s.preemptMu.Unlock()
	clear := s.lowerPriorityNominated(pod, node)
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
		s.preemptMu.Lock()
		p.running = false
		if err != nil && s.preempting[pod.UID] == p {
			// Victims left in place must not hold the pod back: it may
			// preempt again (on whichever node is best then).
			delete(s.preempting, pod.UID)
			s.nominationsChanged()
		}
		s.preemptMu.Unlock()
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
	if node := s.nominatedNode(pod.UID); node != "" {
		s.forgetPreemption(pod.UID)
		s.nominationReleased(pod, node)
	}
	if pod.Status.NominatedNodeName == "" || s.binder == nil {
		return
	}
	s.binder.ClearNominationLater(pod)
}

// lowerPriorityNominated returns the pods of lower priority than pod whose
// own preemption nominated node: they may no longer fit there, so their
// nomination is cleared (and their preemption forgotten).
func (s *Scheduler) lowerPriorityNominated(pod *v1.Pod, node string) []*v1.Pod {
	var out []*v1.Pod
	priority := podPriority(pod)
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	for uid, p := range s.preempting {
		if p.node != node || uid == pod.UID || podPriority(p.pod) >= priority {
			continue
		}
		delete(s.preempting, uid)
		s.nominationsChanged()
		out = append(out, p.pod)
	}
	return out
}

// nominatedFor returns, by node, the pods other than pod that preempted
// for a place there and are not placed yet, when their priority is at
// least pod's: pod must fit beside them, or it could take the room they
// evicted pods for (kube-scheduler's nominated pods). It is empty in
// nearly every cycle. The nominations are indexed by node once per change
// of them, not once per cycle: on a cluster where 1,000 preemptors wait
// for their victims, each cycle used to build that map afresh.
func (s *Scheduler) nominatedFor(pod *v1.Pod) nominatedView {
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	if s.nominations == nil || s.nominations.version != s.nominationsVersion {
		s.nominations = newNominationIndex(s.preempting, s.nominationsVersion)
	}
	return nominatedView{idx: s.nominations, priority: podPriority(pod), self: pod.UID}
}

// nominationsChanged marks the index of nominations stale; s.preemptMu
// must be held.
func (s *Scheduler) nominationsChanged() { s.nominationsVersion++ }

// nominationIndex is Scheduler.preempting by node, immutable once built.
type nominationIndex struct {
	version uint64
	byNode  map[string]*nodeNominations
	total   int
	// maxPriority is the highest priority of a nominated pod.
	maxPriority int32
}

// nodeNominations are the nominations on one node, with what on reads of
// them kept beside, so that a cycle reads no pod object per node.
type nodeNominations struct {
	infos       []*framework.PodInfo
	uids        []types.UID
	priorities  []int32
	minPriority int32
}

func newNominationIndex(preempting map[types.UID]*inFlightPreemption, version uint64) *nominationIndex {
	idx := &nominationIndex{version: version, total: len(preempting)}
	if len(preempting) == 0 {
		return idx
	}
	idx.byNode = make(map[string]*nodeNominations, len(preempting))
	first := true
	for uid, p := range preempting {
		pr := podPriority(p.pod)
		n := idx.byNode[p.node]
		if n == nil {
			n = &nodeNominations{minPriority: pr}
			idx.byNode[p.node] = n
		}
		n.infos = append(n.infos, p.info)
		n.uids = append(n.uids, uid)
		n.priorities = append(n.priorities, pr)
		n.minPriority = min(n.minPriority, pr)
		if first || pr > idx.maxPriority {
			idx.maxPriority, first = pr, false
		}
	}
	return idx
}

// nominatedView is the nominations one pod must fit beside.
type nominatedView struct {
	idx      *nominationIndex
	priority int32
	self     types.UID
}

// empty reports whether no nomination concerns the pod (it may still
// report false when none does).
func (v nominatedView) empty() bool {
	if v.idx == nil || v.idx.total == 0 || v.idx.maxPriority < v.priority {
		return true
	}
	if v.idx.total == 1 {
		for _, n := range v.idx.byNode {
			return n.uids[0] == v.self
		}
	}
	return false
}

// on returns the nominated pods on node that the pod must fit beside.
func (v nominatedView) on(node string) []*framework.PodInfo {
	if v.idx == nil {
		return nil
	}
	n := v.idx.byNode[node]
	if n == nil {
		return nil
	}
	if n.minPriority >= v.priority && !slices.Contains(n.uids, v.self) {
		return n.infos
	}
	var out []*framework.PodInfo
	for i, info := range n.infos {
		if n.uids[i] != v.self && n.priorities[i] >= v.priority {
			out = append(out, info)
		}
	}
	return out
}

// nominatedOn returns the pods nominated to node now.
func (s *Scheduler) nominatedOn(node string) []*framework.PodInfo {
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	var out []*framework.PodInfo
	for _, p := range s.preempting {
		if p.node == node {
			out = append(out, p.info)
		}
	}
	return out
}

// nominatedNode returns the node where the pod's nomination keeps room,
// "" if it has none.
func (s *Scheduler) nominatedNode(uid types.UID) string {
	s.preemptMu.Lock()
	defer s.preemptMu.Unlock()
	if p, ok := s.preempting[uid]; ok {
		return p.node
	}
	return ""
}

// nominationReleased wakes the pods that pod's nomination on node, now
// dropped (the pod deleted, its nomination cleared or moved), held back:
// for the hints an assigned pod left node. Only pods of priority at most
// pod's are asked, as kube-scheduler's getLEPriorityPreCheck: a pod of
// higher priority never counted the room.
func (s *Scheduler) nominationReleased(pod *v1.Pod, node string) {
	held := *pod
	held.Spec.NodeName = node
	prio := podPriority(pod)
	s.Queue.MoveToActiveOrBackoff(assignedPodDelete, &held, nil, func(q *queue.QueuedPodInfo) bool {
		return podPriority(q.Pod) <= prio
	})
}

// forgetPreemption drops the pod's preemption, once it is bound or gone.
func (s *Scheduler) forgetPreemption(uid types.UID) {
	s.preemptMu.Lock()
	if _, ok := s.preempting[uid]; ok {
		delete(s.preempting, uid)
		s.nominationsChanged()
	}
	s.preemptMu.Unlock()
}

// podPriority is the pod's priority, 0 when unset.
func podPriority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}
