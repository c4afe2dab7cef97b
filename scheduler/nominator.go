package scheduler

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// nominator keeps the pending pods' nominations, kube-scheduler's
// PodNominator: a pod that preempted here, or whose
// status.nominatedNodeName names a node, keeps room there until it is
// placed or gone. Filters count a nominated pod on its node for pods of no
// higher priority (nominatedView), so the room its victims left is not
// taken by others meanwhile.
type nominator struct {
	mu    sync.Mutex
	byPod map[types.UID]*nomination
	// index is byPod by node; it is rebuilt when version moves.
	index   *nominationIndex
	version uint64
}

// nomination is a pending pod's nomination: made by its preemption here,
// with the victims it chose (until they are gone, the pod waits rather
// than preempts again), or read from its status.
type nomination struct {
	pod     *v1.Pod
	info    *framework.PodInfo
	node    string
	victims []types.UID
	// running is set while the eviction requests are under way (guarded
	// by nominator.mu).
	running bool
	// fromStatus marks a nomination read from the pod's
	// status.nominatedNodeName, not made here (see sync).
	fromStatus bool
}

func newNominator() *nominator {
	return &nominator{byPod: map[types.UID]*nomination{}}
}

// changed marks the index stale; n.mu must be held.
func (n *nominator) changed() { n.version++ }

// sync follows a pending pod's status.nominatedNodeName, as
// kube-scheduler's nominator does: a nomination this replica did not make
// (a replica before a restart or a change of leader made it) keeps its
// room too, and goes when the field is cleared. A nomination made here
// stays until the pod is placed or gone, whatever the informer shows
// meanwhile (the status patch may not be back yet).
func (n *nominator) sync(pod *v1.Pod) {
	node := pod.Status.NominatedNodeName
	n.mu.Lock()
	defer n.mu.Unlock()
	p, ok := n.byPod[pod.UID]
	switch {
	case ok && !p.fromStatus:
	case node == "":
		if ok {
			delete(n.byPod, pod.UID)
			n.changed()
		}
	case !ok || p.node != node:
		n.byPod[pod.UID] = &nomination{pod: pod, info: framework.NewPodInfo(pod), node: node, fromStatus: true}
		n.changed()
	}
}

// preempted records p, a preemption made here, and drops the nominations
// of pods of lower priority than p's on its node: they may no longer fit
// there. It returns those pods, whose status.nominatedNodeName is to be
// cleared.
func (n *nominator) preempted(p *nomination) []*v1.Pod {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.byPod[p.pod.UID] = p
	n.changed()
	var out []*v1.Pod
	priority := corev1helpers.PodPriority(p.pod)
	for uid, o := range n.byPod {
		if o.node != p.node || uid == p.pod.UID || corev1helpers.PodPriority(o.pod) >= priority {
			continue
		}
		delete(n.byPod, uid)
		out = append(out, o.pod)
	}
	return out
}

// evicted records that p's eviction requests are done. When they failed,
// p is dropped (if it is still the pod's): victims left in place must not
// hold the pod back, it may preempt again (on whichever node is best
// then).
func (n *nominator) evicted(p *nomination, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p.running = false
	if !ok && n.byPod[p.pod.UID] == p {
		delete(n.byPod, p.pod.UID)
		n.changed()
	}
}

// forget drops the pod's nomination, once it is placed or gone, and
// returns its node ("" when it had none).
func (n *nominator) forget(uid types.UID) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	p, ok := n.byPod[uid]
	if !ok {
		return ""
	}
	delete(n.byPod, uid)
	n.changed()
	return p.node
}

// get returns the pod's nomination as framework.PreemptionHandle gives
// it, and whether it has one.
func (n *nominator) get(uid types.UID) (framework.Nomination, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p, ok := n.byPod[uid]
	if !ok {
		return framework.Nomination{}, false
	}
	return framework.Nomination{Node: p.node, Victims: p.victims, Running: p.running}, true
}

// nodeOf returns the node where the pod's nomination keeps room, "" if
// it has none.
func (n *nominator) nodeOf(uid types.UID) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p, ok := n.byPod[uid]; ok {
		return p.node
	}
	return ""
}

// len returns how many pods are nominated.
func (n *nominator) len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.byPod)
}

// on returns the pods nominated to node now.
func (n *nominator) on(node string) []*framework.PodInfo {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*framework.PodInfo
	for _, p := range n.byPod {
		if p.node == node {
			out = append(out, p.info)
		}
	}
	return out
}

// forPod returns, by node, the pods other than pod that are nominated
// there and not placed yet, when their priority is at least pod's: pod
// must fit beside them, or it could take the room they evicted pods for
// (kube-scheduler's nominated pods). It is empty in nearly every cycle.
// The nominations are indexed by node once per change of them, not once
// per cycle: on a cluster where 1,000 preemptors wait for their victims,
// each cycle used to build that map afresh.
func (n *nominator) forPod(pod *v1.Pod) nominatedView {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.index == nil || n.index.version != n.version {
		n.index = newNominationIndex(n.byPod, n.version)
	}
	return nominatedView{idx: n.index, priority: corev1helpers.PodPriority(pod), self: pod.UID}
}

// nominationIndex is nominator.byPod by node, immutable once built.
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

func newNominationIndex(preempting map[types.UID]*nomination, version uint64) *nominationIndex {
	idx := &nominationIndex{version: version, total: len(preempting)}
	if len(preempting) == 0 {
		return idx
	}
	idx.byNode = make(map[string]*nodeNominations, len(preempting))
	first := true
	for uid, p := range preempting {
		pr := corev1helpers.PodPriority(p.pod)
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

// take removes the nominations of the pods with these UIDs and returns
// them, for put to restore: a group cycle places the members of a group
// that preempted, and a member's room must not count against its
// siblings while they are placed beside it.
func (n *nominator) take(uids []types.UID) []*nomination {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*nomination
	for _, uid := range uids {
		if p, ok := n.byPod[uid]; ok {
			out = append(out, p)
			delete(n.byPod, uid)
		}
	}
	if len(out) > 0 {
		n.changed()
	}
	return out
}

// put restores nominations take removed, unless the pod has another now.
func (n *nominator) put(ps []*nomination) {
	if len(ps) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range ps {
		if _, ok := n.byPod[p.pod.UID]; !ok {
			n.byPod[p.pod.UID] = p
		}
	}
	n.changed()
}

// isRunning reports whether p's eviction requests are still under way.
func (n *nominator) isRunning(p *nomination) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return p.running
}
