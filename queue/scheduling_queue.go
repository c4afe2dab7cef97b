// Package queue holds the pods that wait to be scheduled and decides which
// one the scheduler tries next.
//
// The model follows kube-scheduler's scheduling queue. A pending pod of ours
// is in exactly one of these places, keyed by UID:
//
//   - activeQ: a heap of pods ready to be tried, ordered by .spec.priority
//     (higher first; no priority counts as 0), then by Timestamp, the time the
//     pod last entered the queue (earlier first), then by insertion order.
//     Pop takes its head.
//   - backoffQ: pods that failed an attempt and wait out a per-pod
//     exponential backoff. The backoff is InitialBackoff × 2^(n−1), capped
//     at MaxBackoff, counted from the failed attempt (Timestamp), where n
//     is the number of attempts in a row that ended in an error, or, after
//     none, the number that ended unschedulable. The backoff lasts until
//     the end of the second in which it would end, and pods whose backoff
//     ends in the same second are ordered as in activeQ. Run moves
//     finished pods to activeQ. Pods a plugin rejected and pods whose
//     attempt failed with an error are kept in two heaps: when activeQ is
//     empty, Pop takes the head of the first, backing off or not, so an
//     idle scheduler retries at once a pod that an event may have helped;
//     an error always waits. All three as in kube-scheduler v1.37
//     (SchedulerPopFromBackoffQ, on by default; unchanged since v1.33).
//   - unschedulablePods: pods that failed for lack of fit. Retrying them
//     before the cluster changes would fail again, so they wait for a cluster
//     event that the plugins which rejected them say can help
//     (MoveAllToActiveOrBackoff and the queueing hints, hints.go), for an
//     update to their own spec or labels, or at most MaxUnschedulableStay;
//     then they go to backoffQ if still backing off, else to activeQ.
//   - gated pods: pods with spec.schedulingGates, or that a PreEnqueue
//     plugin turns away (Options.PreEnqueue: a pod whose ResourceClaims do
//     not exist yet). A pod is only put in activeQ once neither holds it:
//     an update that removes the last gate, or, for a pod a plugin turned
//     away, an update, any cluster event, or the periodic flush once the
//     pod waited MaxUnschedulableStay, asks again.
//   - in flight: popped, its scheduling cycle running. The cycle ends with
//     AddUnschedulable (the attempt failed) or Done (the pod was bound).
//
// Each Pop hands out a new QueuedPodInfo, which the caller owns for good and
// which identifies that one cycle: AddUnschedulable and Done act only on the
// cycle that is still in flight. A Done deferred by a cycle whose pod was
// requeued and popped again by another cycle is thereby harmless.
//
// A failed attempt goes to unschedulablePods, except that it goes to backoffQ
// when the failure was an error rather than a misfit, or when the pod itself
// changed or a cluster event that its hints say can help it arrived while
// the attempt ran: the verdict was reached on a cluster (or pod) that no
// longer exists, so it must not park the pod until the next event. The
// queue records the cluster events that arrive while pods are in flight
// and asks each failed pod's hints about those since its Pop, as
// kube-scheduler does.
//
// Informer events for in-flight pods are remembered, not applied: an update
// is kept and replaces the pod object when the pod comes back; a delete makes
// AddUnschedulable drop the pod.
//
// Pods with a deletionTimestamp are never queued; adding or updating one
// removes it.
//
// One mutex guards all of it; it is a leaf lock (see PriorityQueue.mu). Pop
// waits on a sync.Cond of that mutex, woken by new active pods, Close, and
// the Pop's own context.
package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Defaults for Options, as in kube-scheduler.
const (
	DefaultInitialBackoff       = 1 * time.Second
	DefaultMaxBackoff           = 10 * time.Second
	DefaultMaxUnschedulableStay = 5 * time.Minute
)

// How often Run looks at the queues. backoffQ is flushed at the latest every
// backoffFlushPeriod and otherwise exactly when its head's backoff ends; the
// unschedulable pool is scanned (O(n)) every unschedulableFlushPeriod, which
// is fine-grained enough against a 5-minute stay. Both as in kube-scheduler.
const (
	backoffFlushPeriod       = 1 * time.Second
	unschedulableFlushPeriod = 30 * time.Second
)

// backoffWindow is the grain of backoff ends: kube-scheduler (v1.33 and
// later, with SchedulerPopFromBackoffQ on by default) truncates a pod's
// backoff end to it, orders pods of one window by priority, and keeps a pod
// backing off until its window has passed.
const backoffWindow = time.Second

// ErrClosed is returned by Pop once the queue is closed or the caller's
// context is done.
var ErrClosed = errors.New("scheduling queue closed")

// ErrNotInFlight is returned by AddUnschedulable for a QueuedPodInfo whose
// cycle is not in flight: it already ended, or it is not from Pop.
var ErrNotInFlight = errors.New("pod is not in flight")

// QueuedPodInfo is a pending pod with its history in the queue. Pop returns
// a new one per scheduling cycle, which the caller owns: the queue never
// reads or writes it after Pop, except to recognise it (by pointer) in
// AddUnschedulable and Done, and to copy it in AddUnschedulable.
type QueuedPodInfo struct {
	framework.QueuedPodInfo

	// hints is the pod's profile's table, and rejectors the bits of
	// UnschedulablePlugins in it (0: wake on every event); set by
	// AddUnschedulable on the queue's own copy.
	hints     *profileHints
	rejectors uint64
	// unschedulableCount counts the attempts that ended unschedulable, and
	// consecutiveErrors the attempts since the last of those that ended in
	// an error (kube-scheduler's UnschedulableCount and
	// ConsecutiveErrorsCount). The backoff grows with the second while it
	// is not zero, else with the first; a pod with consecutiveErrors backs
	// off in errorBackoffQ. Set by AddUnschedulable.
	unschedulableCount int
	consecutiveErrors  int
	// flushedAt is when the periodic flush last asked the PreEnqueue
	// plugins about the pod while it waited with the gated pods; the
	// next flush asks again only MaxUnschedulableStay after it
	// (kube-scheduler v1.37's FlushTimestamp). Cleared by
	// AddUnschedulable.
	flushedAt time.Time
}

// Options configure a PriorityQueue. Zero (or negative) durations mean the
// defaults.
type Options struct {
	// Clock is the time source; nil means the real clock.
	Clock clock.WithTicker
	// InitialBackoff is the backoff after the first failed attempt.
	InitialBackoff time.Duration
	// MaxBackoff caps the backoff, which doubles per failed attempt.
	MaxBackoff time.Duration
	// MaxUnschedulableStay is how long a pod stays unschedulable at most
	// before it is retried without any event.
	MaxUnschedulableStay time.Duration
	// Metrics receives transitions; nil records nothing.
	Metrics Metrics
	// Logger logs hints that fail; nil logs nothing.
	Logger *zap.Logger
	// PreEnqueue, when set, is asked whether a pod without scheduling
	// gates may go to activeQ; a pod it refuses waits with the gated pods
	// until an update of the pod or a cluster event, when it is asked
	// again. It runs with the queue's lock held: it must be quick and must
	// not call the queue.
	PreEnqueue func(pod *v1.Pod) bool
	// Less orders activeQ: whether a goes before b (the profiles'
	// QueueSortPlugin). Nil orders as PrioritySort: higher priority first,
	// then earlier Timestamp.
	Less func(a, b *framework.QueuedPodInfo) bool
}

// PriorityQueue is the scheduling queue. All methods are safe for concurrent
// use.
type PriorityQueue struct {
	clock                clock.WithTicker
	initialBackoff       time.Duration
	maxBackoff           time.Duration
	maxUnschedulableStay time.Duration
	metrics              Metrics
	entities             EntityMetrics // nil: Metrics does not count entities
	logger               *zap.Logger
	preEnqueue           func(pod *v1.Pod) bool

	// mu guards every field below it. It is the queue's only lock and a leaf
	// in yardmaster's lock order: callers may hold their own locks (the
	// cache's, a handler's) while calling the queue, and the queue calls out
	// with mu held only to the clock and to Metrics.PodQueued, which must
	// therefore take no lock that is held around a call into the queue.
	mu sync.Mutex
	// cond is broadcast when activeQ or backoffQ gains a pod or the queue
	// closes, and by a Pop's context when it is done; Pop waits on it.
	cond *sync.Cond

	activeQ *podHeap
	// backoffQ holds the backing-off pods whose last attempt a plugin
	// rejected, errorBackoffQ those whose last attempt failed with an
	// error; Pop takes from backoffQ when activeQ is empty.
	backoffQ      *podHeap
	errorBackoffQ *podHeap
	unschedulable map[types.UID]*QueuedPodInfo
	gated         map[types.UID]*QueuedPodInfo
	inFlight      map[types.UID]*inFlightPod
	// hints are the profiles' queueing hints by scheduler name (hints.go).
	hints map[string]*profileHints

	// events are the cluster events some plugin registered that arrived
	// while pods were in flight, in order; events[i] has sequence number
	// eventsBase+i. A pod whose attempt fails is checked against those
	// that arrived since its Pop. Cleared when no pod is in flight, and
	// cut to its newer half beyond maxInFlightEvents: a pod whose events
	// were cut goes to backoffQ, as if one of them could help it.
	events     []inFlightEvent
	eventsBase int64

	// byRejector[i] counts the unschedulable pods whose rejectors have
	// bit i (in their profile's table), noRejector those with none: an
	// event that no parked pod's rejector registered skips the pool
	// (hints.go).
	byRejector [64]int
	noRejector int

	// schedulingCycle counts Pops.
	schedulingCycle int64
	closed          bool

	// closedCh is closed by Close, so that Run returns.
	closedCh chan struct{}
	// backoffHeadChanged tells Run that backoffQ has a new head, which may
	// expire before Run's timer. Buffered; sends never block.
	backoffHeadChanged chan struct{}
}

// inFlightPod is what the queue remembers about a popped pod. The
// QueuedPodInfo itself belongs to the scheduling goroutine meanwhile, so
// informer events are recorded here instead of on it.
type inFlightPod struct {
	// cycle is the QueuedPodInfo Pop returned; only its address is used.
	cycle *QueuedPodInfo
	// pod is the latest object: the popped one, or a later update.
	pod *v1.Pod
	// attempts is the QueuedPodInfo's Attempts after the pop, for
	// PendingPodsList.
	attempts int
	// changed is set when an update changed the pod's spec or labels.
	changed bool
	// deleted is set when the pod was deleted (or bound) meanwhile.
	deleted bool
	// firstEvent is the sequence number of the first cluster event
	// recorded after the Pop (PriorityQueue.events).
	firstEvent int64
}

// inFlightEvent is a cluster event recorded while pods were in flight.
type inFlightEvent struct {
	event          framework.ClusterEvent
	oldObj, newObj any
}

// maxInFlightEvents bounds PriorityQueue.events: at 1,000 events a second
// with pods always in flight, a few seconds of them.
const maxInFlightEvents = 4096

// New returns an empty, open queue. Call Run to have backed-off and
// long-unschedulable pods retried.
func New(opts Options) *PriorityQueue {
	q := &PriorityQueue{
		clock:                opts.Clock,
		initialBackoff:       orDefault(opts.InitialBackoff, DefaultInitialBackoff),
		maxBackoff:           orDefault(opts.MaxBackoff, DefaultMaxBackoff),
		maxUnschedulableStay: orDefault(opts.MaxUnschedulableStay, DefaultMaxUnschedulableStay),
		metrics:              opts.Metrics,
		logger:               opts.Logger,
		preEnqueue:           opts.PreEnqueue,
		unschedulable:        make(map[types.UID]*QueuedPodInfo),
		gated:                make(map[types.UID]*QueuedPodInfo),
		inFlight:             make(map[types.UID]*inFlightPod),
		closedCh:             make(chan struct{}),
		backoffHeadChanged:   make(chan struct{}, 1),
	}
	if q.clock == nil {
		q.clock = clock.RealClock{}
	}
	if q.metrics == nil {
		q.metrics = noMetrics{}
	}
	q.entities, _ = q.metrics.(EntityMetrics)
	if q.logger == nil {
		q.logger = zap.NewNop()
	}
	q.cond = sync.NewCond(&q.mu)
	active := compareActive
	if opts.Less != nil {
		active = func(a, b *QueuedPodInfo) int {
			switch {
			case opts.Less(&a.QueuedPodInfo, &b.QueuedPodInfo):
				return -1
			case opts.Less(&b.QueuedPodInfo, &a.QueuedPodInfo):
				return 1
			}
			return 0
		}
	}
	q.activeQ = newPodHeap(active)
	// Within a window, backoffQ is in activeQ's order, since Pop may take
	// its head in activeQ's stead; errors wait and come out by end alone.
	q.backoffQ = newPodHeap(func(a, b *QueuedPodInfo) int {
		if c := q.backoffEnd(a).Compare(q.backoffEnd(b)); c != 0 {
			return c
		}
		return active(a, b)
	})
	q.errorBackoffQ = newPodHeap(func(a, b *QueuedPodInfo) int {
		return q.backoffEnd(a).Compare(q.backoffEnd(b))
	})
	return q
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// compareActive orders activeQ: higher priority first, then earlier Timestamp.
func compareActive(a, b *QueuedPodInfo) int {
	if c := cmp.Compare(podPriority(b.Pod), podPriority(a.Pod)); c != 0 {
		return c
	}
	return a.Timestamp.Compare(b.Timestamp)
}

func podPriority(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

func isGated(pod *v1.Pod) bool { return len(pod.Spec.SchedulingGates) > 0 }

// Add queues a new pending pod: gated pods are held, others go to activeQ. A
// pod the queue already has is updated instead; a pod being deleted is
// removed.
func (q *PriorityQueue) Add(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(pod, UnscheduledPodAdd)
}

func (q *PriorityQueue) addLocked(pod *v1.Pod, event Event) {
	if pod.DeletionTimestamp != nil {
		q.deleteLocked(pod.UID)
		return
	}
	if q.updateLocked(pod) {
		return
	}
	qpi := &QueuedPodInfo{QueuedPodInfo: framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod), Timestamp: q.clock.Now()}}
	q.pushActive(qpi, event, Nowhere)
}

// gatedLocked reports whether the pod must wait with the gated pods: it
// has scheduling gates, or the PreEnqueue plugins turn it away.
func (q *PriorityQueue) gatedLocked(pod *v1.Pod) bool {
	return isGated(pod) || (q.preEnqueue != nil && !q.preEnqueue(pod))
}

// Update replaces the stored object of the pod wherever the queue holds it.
// A gated pod whose last gate was removed goes to activeQ; an unschedulable
// pod whose spec or labels changed goes to backoffQ or activeQ, since the
// change may make it fit (both counted under kube-scheduler v1.37's
// TargetPod events: TargetPodUpdatePodSchedulingGatesEliminated,
// TargetPodUpdatePodLabel, ...). An in-flight pod's update is kept for when
// it comes back. A pod the queue does not know is added (counted as
// UnscheduledPodAdd, as kube-scheduler v1.37 counts it); a pod being
// deleted is removed.
//
// The queue compares newPod with the object it holds, which is oldPod unless
// events were coalesced; oldPod is taken to match informer handlers.
func (q *PriorityQueue) Update(oldPod, newPod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(newPod, UnscheduledPodAdd)
}

// updateLocked refreshes the pod wherever it is and reports whether it was
// found. q.mu must be held.
func (q *PriorityQueue) updateLocked(newPod *v1.Pod) bool {
	uid := newPod.UID
	if e, ok := q.inFlight[uid]; ok {
		if schedulingPropertiesChanged(e.pod, newPod) {
			e.changed = true
		}
		e.pod = newPod
		return true
	}
	if qpi, ok := q.activeQ.get(uid); ok {
		if refresh(qpi, newPod) {
			q.activeQ.fix(uid)
		}
		return true
	}
	if qpi, ok := q.backoffQ.get(uid); ok {
		if refresh(qpi, newPod) {
			q.backoffQ.fix(uid) // the order reads the priority
		}
		return true
	}
	if qpi, ok := q.errorBackoffQ.get(uid); ok {
		// The backoff's end depends on the counts and Timestamp only.
		refresh(qpi, newPod)
		return true
	}
	if qpi, ok := q.unschedulable[uid]; ok {
		old := qpi.Pod
		changed := schedulingPropertiesChanged(old, newPod)
		refresh(qpi, newPod)
		if changed {
			q.removeUnschedulable(qpi)
			q.activateOrBackoff(qpi, q.clock.Now(), targetPodEvent(framework.PodUpdateActions(old, newPod)))
		}
		return true
	}
	if qpi, ok := q.gated[uid]; ok {
		old := qpi.Pod
		refresh(qpi, newPod)
		if !q.gatedLocked(newPod) {
			delete(q.gated, uid)
			q.pushActive(qpi, targetPodEvent(framework.PodUpdateActions(old, newPod)), BackoffQ)
		}
		return true
	}
	return false
}

// refresh points qpi at pod and reports whether the object changed. A resync
// (same resourceVersion) keeps the derived PodInfo.
func refresh(qpi *QueuedPodInfo, pod *v1.Pod) bool {
	old := qpi.Pod
	if old == pod || (old.ResourceVersion != "" && old.ResourceVersion == pod.ResourceVersion) {
		return false
	}
	qpi.PodInfo = framework.NewPodInfo(pod)
	return true
}

// schedulingPropertiesChanged reports whether newPod differs from oldPod in
// what scheduling reads: the spec (requests, tolerations, affinity, node
// selector, ...), the labels (which other pods' affinity matches), or the
// claims generated for it as its status records them (DynamicResources
// waits for those: kube-scheduler's UpdatePodGeneratedResourceClaim).
// kube-scheduler v1.37 asks the rejectors' hints about the pod's own
// update instead (TargetPod events; v1.36 without queueing hints also
// counted annotations and owner references); this is coarser and never
// keeps a pod parked that those hints would wake. The rest of the status,
// resourceVersion, managed fields and finalizers change often without
// changing the verdict.
func schedulingPropertiesChanged(oldPod, newPod *v1.Pod) bool {
	if oldPod == newPod {
		return false
	}
	return !maps.Equal(oldPod.Labels, newPod.Labels) || !equality.Semantic.DeepEqual(oldPod.Spec, newPod.Spec) ||
		!equality.Semantic.DeepEqual(oldPod.Status.ResourceClaimStatuses, newPod.Status.ResourceClaimStatuses) ||
		!equality.Semantic.DeepEqual(oldPod.Status.ExtendedResourceClaimStatus, newPod.Status.ExtendedResourceClaimStatus)
}

// Delete removes the pod wherever the queue holds it. An in-flight pod is
// marked, so that AddUnschedulable drops it. Callers unwrap
// cache.DeletedFinalStateUnknown first.
func (q *PriorityQueue) Delete(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.deleteLocked(pod.UID)
}

func (q *PriorityQueue) deleteLocked(uid types.UID) {
	if e, ok := q.inFlight[uid]; ok {
		e.deleted = true
		return
	}
	if _, ok := q.activeQ.remove(uid); ok {
		return
	}
	if _, ok := q.backoffQ.remove(uid); ok {
		return
	}
	if _, ok := q.errorBackoffQ.remove(uid); ok {
		return
	}
	if qpi, ok := q.unschedulable[uid]; ok {
		q.removeUnschedulable(qpi)
	}
	delete(q.gated, uid)
}

// Pop takes the head of activeQ, or, when activeQ is empty, the head of
// backoffQ (a pod a plugin rejected, backing off or not, as kube-scheduler
// does with SchedulerPopFromBackoffQ), waiting while both are empty. A pod
// backing off after an error is never taken early. It starts a scheduling
// cycle: SchedulingCycle then returns this pod's cycle until the
// next Pop, and the pod is in flight until AddUnschedulable or Done. Pop
// returns an error matching ErrClosed once Close is called or ctx is done
// (also matching ctx's error then), even when pods are waiting.
func (q *PriorityQueue) Pop(ctx context.Context) (*QueuedPodInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.activeQ.len() == 0 && q.backoffQ.len() == 0 && !q.closed && ctx.Err() == nil {
		// Wake this waiter when ctx is done. stop does not wait for the
		// func, which takes mu, so calling it with mu held is safe.
		stop := context.AfterFunc(ctx, func() {
			q.mu.Lock()
			q.cond.Broadcast()
			q.mu.Unlock()
		})
		defer stop()
	}
	for {
		if q.closed {
			return nil, ErrClosed
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ErrClosed, context.Cause(ctx))
		}
		if q.activeQ.len() > 0 || q.backoffQ.len() > 0 {
			break
		}
		q.cond.Wait()
	}
	var head *QueuedPodInfo
	if q.activeQ.len() > 0 {
		head = q.activeQ.pop()
	} else {
		head = q.backoffQ.pop()
		q.queued(ActiveQ, Nowhere, PopFromBackoffQ)
	}
	// Hand out a copy, so that this cycle's QueuedPodInfo is unique and
	// the caller's alone; the queued one is dropped.
	popped := *head
	popped.Attempts++
	q.schedulingCycle++
	q.inFlight[popped.Pod.UID] = &inFlightPod{cycle: &popped, pod: popped.Pod, attempts: popped.Attempts,
		firstEvent: q.eventsBase + int64(len(q.events))}
	return &popped, nil
}

// SchedulingCycle returns the number of Pops so far, which right after a Pop
// is the popped pod's scheduling cycle. The scheduler reads it there and
// passes it to AddUnschedulable.
func (q *PriorityQueue) SchedulingCycle() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.schedulingCycle
}

// Done ends the cycle that popped qpi, if it is still in flight: the queue
// forgets the pod, which was bound (or is not ours to schedule). It is a
// no-op once AddUnschedulable took the pod back, even when the pod was popped
// again since, so the scheduler may defer Done right after Pop and still
// hand a pod whose binding failed to AddUnschedulable first.
func (q *PriorityQueue) Done(qpi *QueuedPodInfo) {
	q.mu.Lock()
	defer q.mu.Unlock()
	uid := qpi.Pod.UID
	if e, ok := q.inFlight[uid]; ok && e.cycle == qpi {
		q.endInFlight(uid)
	}
}

// endInFlight forgets an in-flight pod, and the recorded events once no
// pod is in flight. q.mu must be held.
func (q *PriorityQueue) endInFlight(uid types.UID) {
	delete(q.inFlight, uid)
	if len(q.inFlight) == 0 {
		q.eventsBase += int64(len(q.events))
		clear(q.events)
		q.events = q.events[:0]
	}
}

// missedEvent reports whether a cluster event that arrived while the pod
// of e was in flight may make qpi schedulable. q.mu must be held.
func (q *PriorityQueue) missedEvent(e *inFlightPod, qpi *QueuedPodInfo) bool {
	if e.firstEvent < q.eventsBase {
		return true // its events were cut
	}
	for i := e.firstEvent - q.eventsBase; i < int64(len(q.events)); i++ {
		ev := &q.events[i]
		if qpi.hints != nil {
			qpi.hints.interested = qpi.hints.interestIn(ev.event)
		}
		if q.worthRequeuing(qpi, ev.event, ev.oldObj, ev.newObj) {
			return true
		}
	}
	return false
}

// AddUnschedulable ends the cycle that popped qpi, whose attempt failed, and
// queues the pod again. podSchedulingCycle is SchedulingCycle read right
// after the Pop.
//
// The pod goes to backoffQ when the attempt failed with an error
// (unschedulable false), or when a cluster event that may make it
// schedulable (by its queueing hints) or an update of the pod's spec or
// labels arrived during the attempt; otherwise to the unschedulable pool. The queue stores a copy of qpi (the caller keeps qpi), with the
// latest object the informer delivered meanwhile; a pod deleted meanwhile is
// dropped.
//
// It returns an error matching ErrNotInFlight, and changes nothing, when
// qpi's cycle is not in flight (it already ended).
func (q *PriorityQueue) AddUnschedulable(qpi *QueuedPodInfo, podSchedulingCycle int64, unschedulable bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	uid := qpi.Pod.UID
	e, ok := q.inFlight[uid]
	if !ok || e.cycle != qpi {
		return fmt.Errorf("requeue pod %s/%s (uid %s), found in %q: %w",
			qpi.Pod.Namespace, qpi.Pod.Name, uid, q.locateLocked(uid), ErrNotInFlight)
	}
	if e.deleted {
		q.endInFlight(uid)
		return nil
	}
	stored := *qpi
	qpi = &stored
	if e.pod != qpi.Pod {
		qpi.PodInfo = framework.NewPodInfo(e.pod)
	}
	qpi.Timestamp = q.clock.Now()
	qpi.flushedAt = time.Time{}
	if unschedulable {
		qpi.unschedulableCount++
		qpi.consecutiveErrors = 0
	} else {
		qpi.consecutiveErrors++
	}
	qpi.hints = q.hints[qpi.Pod.Spec.SchedulerName]
	qpi.rejectors = qpi.hints.rejectorBits(qpi)
	qpi.UnschedulablePlugins = qpi.hints.storedRejectors(qpi.rejectors, qpi.UnschedulablePlugins)
	missed := unschedulable && !e.changed && q.missedEvent(e, qpi)
	q.endInFlight(uid)
	// The move aims at backoffQ or the pool (kube-scheduler's queueing
	// strategy for a pod back from its attempt), so only a pod held back
	// in the gated pods counts as an entity arriving (EntityMetrics).
	switch {
	case isGated(qpi.Pod):
		// Gates cannot be added to a pod after creation; this is defence.
		q.gated[uid] = qpi
		q.queued(GatedPods, BackoffQ, ScheduleAttemptFailure)
	case !unschedulable, missed, e.changed:
		q.pushBackoff(qpi, ScheduleAttemptFailure, BackoffQ)
	default:
		q.addUnschedulable(qpi)
		q.queued(UnschedulablePods, UnschedulablePods, ScheduleAttemptFailure)
	}
	return nil
}

// MoveAllToActiveOrBackoff reacts to a cluster event, given as its old and
// new object (old nil for an Add, new nil for a Delete), that may make
// unschedulable pods fit: each pod whose queueing hints say the event can
// help it (hints.go) goes to backoffQ if still backing off, else to
// activeQ. A pod in flight is checked against the event when its attempt
// fails. Pods a PreEnqueue plugin turned away are asked again; pods with
// scheduling gates stay gated.
func (q *PriorityQueue) MoveAllToActiveOrBackoff(ev framework.ClusterEvent, oldObj, newObj any) {
	q.MoveToActiveOrBackoff(ev, oldObj, newObj, nil)
}

// MoveToActiveOrBackoff is MoveAllToActiveOrBackoff for the unschedulable
// pods that worth accepts (nil: all), before their hints are asked.
func (q *PriorityQueue) MoveToActiveOrBackoff(ev framework.ClusterEvent, oldObj, newObj any, worth func(*QueuedPodInfo) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	label := EventOf(ev)
	// An event no plugin registered wakes no unschedulable pod, not even
	// one without recorded rejectors, and cannot matter to a pod in
	// flight, as in kube-scheduler: a heartbeat costs nothing.
	interesting := q.refreshInterest(ev)
	now := q.clock.Now()
	// The pool is walked only when the event can wake one of its pods.
	walk := ev.Resource == framework.WildCard || (interesting && q.mayWakeAny())
	for _, qpi := range q.unschedulable {
		if !walk {
			break
		}
		if worth != nil && !worth(qpi) {
			continue
		}
		if !q.worthRequeuing(qpi, ev, oldObj, newObj) {
			continue
		}
		q.removeUnschedulable(qpi)
		q.activateOrBackoff(qpi, now, label)
	}
	// Pods a PreEnqueue plugin turned away are asked again: the event may
	// be the one they wait for (their claim created, say).
	if q.preEnqueue != nil {
		for uid, qpi := range q.gated {
			if !isGated(qpi.Pod) && q.preEnqueue(qpi.Pod) {
				delete(q.gated, uid)
				q.pushActive(qpi, label, BackoffQ)
			}
		}
	}
	if interesting && len(q.inFlight) > 0 {
		if len(q.events) == maxInFlightEvents {
			half := maxInFlightEvents / 2
			q.eventsBase += int64(half)
			n := copy(q.events, q.events[half:])
			clear(q.events[n:])
			q.events = q.events[:n]
		}
		q.events = append(q.events, inFlightEvent{event: ev, oldObj: oldObj, newObj: newObj})
	}
}

// Run retries pods in the background until ctx is done or the queue is
// closed: it moves pods whose backoff ended from backoffQ to activeQ (when
// the earliest ends, and at least every second), and pods unschedulable for
// longer than MaxUnschedulableStay to backoffQ or activeQ (every 30s).
func (q *PriorityQueue) Run(ctx context.Context) {
	// Flush first: pods may have backed off before Run started.
	backoffTimer := q.clock.NewTimer(q.flushBackoffCompleted())
	defer backoffTimer.Stop()
	leftoverTicker := q.clock.NewTicker(unschedulableFlushPeriod)
	defer leftoverTicker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.closedCh:
			return
		case <-leftoverTicker.C():
			q.flushUnschedulableLeftover()
			continue
		case <-backoffTimer.C():
		case <-q.backoffHeadChanged:
		}
		// Go ≥ 1.23 timers (and the fake clock's) may be Reset whether or
		// not they fired; a stale tick would only cause an early, empty flush.
		backoffTimer.Reset(q.flushBackoffCompleted())
	}
}

// flushBackoffCompleted moves every pod whose backoff ended to activeQ and
// returns how long Run may wait before the next flush: until a new head's
// backoff ends, at most backoffFlushPeriod.
func (q *PriorityQueue) flushBackoffCompleted() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	return min(q.flushBackoffHeap(q.backoffQ, now), q.flushBackoffHeap(q.errorBackoffQ, now))
}

// flushBackoffHeap moves the pods of h whose backoff ended by now to
// activeQ and returns how long until its new head's ends, at most
// backoffFlushPeriod. q.mu must be held.
func (q *PriorityQueue) flushBackoffHeap(h *podHeap, now time.Time) time.Duration {
	for {
		head := h.peek()
		if head == nil {
			return backoffFlushPeriod
		}
		if wait := q.backoffEnd(head).Sub(now); wait > 0 {
			return min(wait, backoffFlushPeriod)
		}
		h.pop()
		q.pushActive(head, BackoffComplete, Nowhere)
	}
}

// flushUnschedulableLeftover retries pods that have been unschedulable for
// longer than maxUnschedulableStay, and asks the PreEnqueue plugins again
// about the gated pods that waited that long, as kube-scheduler v1.37's
// flushUnschedulableEntitiesLeftover does (it holds gated pods in its
// unschedulable pool): a pod a plugin turned away (its ResourceClaim
// missing, say) is not left waiting for good when no event comes. A pod
// still turned away, or still carrying scheduling gates, is asked again
// only maxUnschedulableStay later, not at every flush (v1.37's
// FlushTimestamp; v1.36 asked at every flush once the first stay was
// over), and is counted as kube-scheduler counts it: an
// UnschedulableTimeout into the unschedulable pool.
func (q *PriorityQueue) flushUnschedulableLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for _, qpi := range q.unschedulable {
		if now.Sub(qpi.Timestamp) > q.maxUnschedulableStay {
			q.removeUnschedulable(qpi)
			q.activateOrBackoff(qpi, now, UnschedulableTimeout)
		}
	}
	for uid, qpi := range q.gated {
		since := qpi.Timestamp
		if qpi.flushedAt.After(since) {
			since = qpi.flushedAt
		}
		if now.Sub(since) <= q.maxUnschedulableStay {
			continue
		}
		qpi.flushedAt = now
		if q.gatedLocked(qpi.Pod) {
			q.queued(GatedPods, BackoffQ, UnschedulableTimeout)
			continue
		}
		delete(q.gated, uid)
		q.activateOrBackoff(qpi, now, UnschedulableTimeout)
	}
}

// Close wakes every Pop and makes it return ErrClosed, now and later, and
// stops Run. Pods stay queued; Add, Update and Delete still work.
func (q *PriorityQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	close(q.closedCh)
	q.cond.Broadcast()
}

// backoffDuration is InitialBackoff × 2^(attempts−1), capped at MaxBackoff;
// zero for a pod never tried.
func (q *PriorityQueue) backoffDuration(attempts int) time.Duration {
	if attempts <= 0 {
		return 0
	}
	// Shifting right by the exponent instead of left avoids overflow; a
	// shift of 63 or more yields 0, which also means "capped".
	shift := uint(attempts - 1)
	if shift >= 63 || q.initialBackoff > q.maxBackoff>>shift {
		return q.maxBackoff
	}
	return q.initialBackoff << shift
}

// backoffEnd is when qpi's backoff is over: the end of the window
// (backoffWindow) in which Timestamp plus the backoff falls, as
// kube-scheduler counts it; zero for a pod that has no backoff. The
// backoff grows with the errors in a row, else with the attempts that
// ended unschedulable (kube-scheduler's ConsecutiveErrorsCount and
// UnschedulableCount).
func (q *PriorityQueue) backoffEnd(qpi *QueuedPodInfo) time.Time {
	n := qpi.unschedulableCount
	if qpi.consecutiveErrors > 0 {
		n = qpi.consecutiveErrors
	}
	d := q.backoffDuration(n)
	if d == 0 {
		return time.Time{}
	}
	return qpi.Timestamp.Add(d).Truncate(backoffWindow).Add(backoffWindow)
}

// activateOrBackoff queues qpi, which is in no queue, into backoffQ while its
// backoff lasts, else into activeQ: a pod an event, its own update or the
// unschedulable timeout woke (kube-scheduler's queueAfterBackoff). q.mu
// must be held.
func (q *PriorityQueue) activateOrBackoff(qpi *QueuedPodInfo, now time.Time, event Event) {
	if q.backoffEnd(qpi).After(now) {
		q.pushBackoff(qpi, event, BackoffQ)
		return
	}
	q.pushActive(qpi, event, BackoffQ)
}

// pushActive adds qpi, which is in no queue, to activeQ and wakes Pop, or
// to the gated pods when its scheduling gates or a PreEnqueue plugin hold
// it back. aim is where the move was aimed (queued). q.mu must be held.
func (q *PriorityQueue) pushActive(qpi *QueuedPodInfo, event Event, aim Location) {
	if q.gatedLocked(qpi.Pod) {
		q.gated[qpi.Pod.UID] = qpi
		q.queued(GatedPods, aim, event)
		return
	}
	if qpi.InitialAttemptTimestamp.IsZero() {
		qpi.InitialAttemptTimestamp = q.clock.Now()
	}
	q.activeQ.add(qpi)
	q.queued(ActiveQ, aim, event)
	// Broadcast, not Signal: a signalled waiter whose context is done would
	// return without taking the pod, and the other waiters would sleep on.
	q.cond.Broadcast()
}

// pushBackoff adds qpi, which is in no queue, to backoffQ (errorBackoffQ
// after an error), or to the gated pods when a PreEnqueue plugin holds it
// back, and tells Run when qpi is the new head. A pod in backoffQ
// may be popped at once: waiting Pops are woken. q.mu must be held.
func (q *PriorityQueue) pushBackoff(qpi *QueuedPodInfo, event Event, aim Location) {
	// Pop may take the pod from backoffQ at once: the PreEnqueue plugins
	// are asked on the way in, as kube-scheduler (with
	// SchedulerPopFromBackoffQ) asks them.
	if q.gatedLocked(qpi.Pod) {
		q.gated[qpi.Pod.UID] = qpi
		q.queued(GatedPods, aim, event)
		return
	}
	h := q.backoffQ
	if qpi.consecutiveErrors > 0 {
		h = q.errorBackoffQ
	}
	if h.add(qpi) {
		select {
		case q.backoffHeadChanged <- struct{}{}:
		default: // Run has a wake-up pending already.
		}
	}
	q.queued(BackoffQ, aim, event)
	if h == q.backoffQ {
		q.cond.Broadcast()
	}
}

// queued tells the Metrics hooks that a pod entered queue because of
// event. aim is the queue the move was aimed at, kube-scheduler's queueing
// strategy: Nowhere for a pod new to the queue or done with its backoff
// (kube-scheduler has none then), BackoffQ for a pod woken by an event,
// its own update or the unschedulable timeout, and for a pod back from a
// failed attempt the queue it was meant for. As kube-scheduler counts
// scheduler_queue_incoming_entities_total, the pod counts as an entity
// arriving unless it arrived where it was aimed; the gated pods and the
// unschedulable pool are one queue there (unschedulableEntities). q.mu
// must be held.
func (q *PriorityQueue) queued(queue, aim Location, event Event) {
	q.metrics.PodQueued(queue, event)
	if q.entities == nil {
		return
	}
	same := func(l Location) Location {
		if l == GatedPods {
			return UnschedulablePods
		}
		return l
	}
	if aim == Nowhere || same(aim) != same(queue) {
		q.entities.EntityQueued(queue, event)
	}
}

// PendingPods returns how many pods wait in each place; in-flight pods are
// not counted.
func (q *PriorityQueue) PendingPods() (active, backoff, unschedulable, gated int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.activeQ.len(), q.backoffQ.len() + q.errorBackoffQ.len(), len(q.unschedulable), len(q.gated)
}

// Has reports whether the queue holds the pod, in flight included.
func (q *PriorityQueue) Has(uid types.UID) bool {
	return q.Locate(uid) != Nowhere
}

// Locate returns where the queue holds the pod.
func (q *PriorityQueue) Locate(uid types.UID) Location {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.locateLocked(uid)
}

func (q *PriorityQueue) locateLocked(uid types.UID) Location {
	if _, ok := q.inFlight[uid]; ok {
		return InFlight
	}
	if _, ok := q.activeQ.pos[uid]; ok {
		return ActiveQ
	}
	if _, ok := q.backoffQ.pos[uid]; ok {
		return BackoffQ
	}
	if _, ok := q.errorBackoffQ.pos[uid]; ok {
		return BackoffQ
	}
	if _, ok := q.unschedulable[uid]; ok {
		return UnschedulablePods
	}
	if _, ok := q.gated[uid]; ok {
		return GatedPods
	}
	return Nowhere
}

// PendingPod describes one pod the queue holds, for debugging endpoints.
type PendingPod struct {
	Pod      *v1.Pod
	Location Location
	// Attempts is how often the pod was popped.
	Attempts int
	// Timestamp is when the pod last entered the queue; zero in flight.
	Timestamp time.Time
}

// PendingPodsList returns every pod the queue holds, in flight included,
// sorted by location, then by activeQ's order (priority, then Timestamp).
func (q *PriorityQueue) PendingPodsList() []PendingPod {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.activeQ.len() + q.backoffQ.len() + q.errorBackoffQ.len() + len(q.unschedulable) + len(q.gated) + len(q.inFlight)
	list := make([]PendingPod, 0, n)
	add := func(loc Location, qpi *QueuedPodInfo) {
		list = append(list, PendingPod{Pod: qpi.Pod, Location: loc, Attempts: qpi.Attempts, Timestamp: qpi.Timestamp})
	}
	for _, it := range q.activeQ.items {
		add(ActiveQ, it.pod)
	}
	for _, it := range q.backoffQ.items {
		add(BackoffQ, it.pod)
	}
	for _, it := range q.errorBackoffQ.items {
		add(BackoffQ, it.pod)
	}
	for _, qpi := range q.unschedulable {
		add(UnschedulablePods, qpi)
	}
	for _, qpi := range q.gated {
		add(GatedPods, qpi)
	}
	for _, e := range q.inFlight {
		list = append(list, PendingPod{Pod: e.pod, Location: InFlight, Attempts: e.attempts})
	}
	slices.SortFunc(list, func(a, b PendingPod) int {
		if c := cmp.Compare(a.Location, b.Location); c != 0 {
			return c
		}
		if c := cmp.Compare(podPriority(b.Pod), podPriority(a.Pod)); c != 0 {
			return c
		}
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.Pod.UID, b.Pod.UID)
	})
	return list
}
