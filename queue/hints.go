package queue

import (
	"context"
	"fmt"
	"math/bits"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Queueing hints: which unschedulable pods a cluster event wakes.
//
// Each profile's plugins register the events that can undo their
// rejections (framework.EnqueueExtensions). SetProfileHints turns them into
// a table where every plugin of the profile has one bit; a pod that comes
// back unschedulable stores the bits of the plugins that rejected it. An
// event first computes, per profile, the bits of the plugins that
// registered it (a few plugins, once per event); a pod whose rejectors
// share no bit with that set is skipped with one AND, with no allocation
// and no hint call. Only pods rejected by an interested plugin run that
// plugin's hint on the event's old and new object.

// maxHintPlugins is how many plugins of a profile get a bit of their own;
// the last bit stands for every plugin beyond them, and for plugin names
// the profile does not know, all of which receive every event.
const maxHintPlugins = 63

const everyEventBit uint64 = 1 << maxHintPlugins

// profileHints is one profile's table.
type profileHints struct {
	// bit maps a plugin's name to its bit.
	bit map[string]uint64
	// plugins[i] holds the registrations of the plugin with bit 1<<i.
	plugins []pluginHints
	// interested is, while an event is being handled, the bits of the
	// plugins that registered it; everyEventBit is always in it.
	interested uint64
	// nodeLocal has the bits of the plugins with a NodeCheck.
	nodeLocal uint64
	// overflow is set when plugins beyond maxHintPlugins share
	// everyEventBit: every event then interests the profile.
	overflow bool
	// rejectorSets holds, per set of rejector bits, the one set of names
	// that the pods rejected by those plugins share (storedRejectors).
	// Guarded by the queue's lock.
	rejectorSets map[uint64]sets.Set[string]
}

type pluginHints struct {
	name   string
	events []framework.ClusterEventWithHint
	// nodeCheck is the plugin's NodeCheck; nil if it is not node-local.
	nodeCheck framework.NodeCheckFn
}

// SetProfileHints registers the events and hints of the plugins of the
// profile that schedules pods with schedulerName: plugins maps each plugin
// name of the profile to its registrations (framework.EveryEvent() for a
// plugin without EnqueueExtensions). Pods of a profile without hints are
// woken by every event. Call it before pods of the profile are queued.
func (q *PriorityQueue) SetProfileHints(schedulerName string, plugins map[string][]framework.ClusterEventWithHint) {
	ph := &profileHints{bit: make(map[string]uint64, len(plugins))}
	for name, events := range plugins {
		if len(ph.plugins) == maxHintPlugins {
			ph.bit[name] = everyEventBit
			ph.overflow = true
			continue
		}
		p := pluginHints{name: name, events: events}
		for _, r := range events {
			if r.NodeCheck != nil {
				p.nodeCheck = r.NodeCheck
				ph.nodeLocal |= 1 << len(ph.plugins)
				break
			}
		}
		ph.bit[name] = 1 << len(ph.plugins)
		ph.plugins = append(ph.plugins, p)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.hints == nil {
		q.hints = map[string]*profileHints{}
	}
	q.hints[schedulerName] = ph
}

// rejectorBits returns the bits of the plugins that rejected qpi in its
// last attempt: 0 when none is recorded, which means every event.
func (ph *profileHints) rejectorBits(qpi *QueuedPodInfo) uint64 {
	if ph == nil {
		return 0
	}
	var b uint64
	for name := range qpi.UnschedulablePlugins {
		bit, ok := ph.bit[name]
		if !ok {
			bit = everyEventBit
		}
		b |= bit
	}
	return b
}

// storedRejectors returns the set of rejector names the queue keeps for a
// pod whose rejectors are names, with bits b (rejectorBits): when every
// name has a bit of its own, the bits say which names they are, and the
// pods rejected by the same plugins share one set (a pool of 20,000 pods
// that fit nowhere keeps a handful, not 20,000); otherwise a copy of
// names. Call it with the queue's lock held.
func (ph *profileHints) storedRejectors(b uint64, names sets.Set[string]) sets.Set[string] {
	if names == nil {
		return nil
	}
	if ph == nil || b&everyEventBit != 0 || bits.OnesCount64(b) != len(names) {
		return names.Clone()
	}
	if s, ok := ph.rejectorSets[b]; ok {
		return s
	}
	if ph.rejectorSets == nil {
		ph.rejectorSets = map[uint64]sets.Set[string]{}
	}
	s := names.Clone()
	ph.rejectorSets[b] = s
	return s
}

// interestIn returns the bits of the plugins that registered an event
// matching ev.
func (ph *profileHints) interestIn(ev framework.ClusterEvent) uint64 {
	m := everyEventBit
	for i := range ph.plugins {
		for _, r := range ph.plugins[i].events {
			if r.Event.Match(ev) {
				m |= 1 << i
				break
			}
		}
	}
	return m
}

func isNodeAdd(ev framework.ClusterEvent) bool {
	return ev.Resource == framework.Node && ev.ActionType&framework.Add != 0
}

// worthRequeuing reports whether ev can make the pod of qpi schedulable,
// as kube-scheduler's isPodWorthRequeuing: a pod with no recorded
// rejector is always retried; otherwise one of its rejectors must have
// registered the event and its hint must say Queue (an error counts as
// Queue). On a Node event, a pod whose rejectors are all node-local
// must pass each one's NodeCheck on the node and, on a Node Add, every
// interested one must say Queue (framework.ClusterEventWithHint). The
// interest of the pod's profile must be current (refreshInterest).
func (q *PriorityQueue) worthRequeuing(qpi *QueuedPodInfo, ev framework.ClusterEvent, oldObj, newObj any) bool {
	if qpi.rejectors == 0 || ev.Resource == framework.WildCard {
		return true
	}
	ph := qpi.hints
	m := qpi.rejectors & ph.interested
	if m == 0 {
		return false
	}
	if m&everyEventBit != 0 {
		return true
	}
	if ev.Resource == framework.Node && qpi.rejectors&^ph.nodeLocal == 0 {
		if node, ok := newObj.(*v1.Node); ok {
			for r := qpi.rejectors; r != 0; r &= r - 1 {
				if !ph.plugins[bits.TrailingZeros64(r)].nodeCheck(qpi.Pod, node) {
					return false
				}
			}
		}
		if isNodeAdd(ev) {
			return q.allSayQueue(qpi, ph, m, ev, oldObj, newObj)
		}
	}
	for ; m != 0; m &= m - 1 {
		if q.pluginSaysQueue(qpi, &ph.plugins[bits.TrailingZeros64(m)], ev, oldObj, newObj) {
			return true
		}
	}
	return false
}

// allSayQueue reports whether every plugin in m says Queue for ev: the
// rule for a pod whose interested rejectors are all node-local, on a
// Node Add.
func (q *PriorityQueue) allSayQueue(qpi *QueuedPodInfo, ph *profileHints, m uint64, ev framework.ClusterEvent, oldObj, newObj any) bool {
	for ; m != 0; m &= m - 1 {
		if !q.pluginSaysQueue(qpi, &ph.plugins[bits.TrailingZeros64(m)], ev, oldObj, newObj) {
			return false
		}
	}
	return true
}

// pluginSaysQueue reports whether one of p's registrations matching ev
// says Queue for qpi's pod: one without a hint always does, and a hint
// that fails counts as Queue (it is logged).
func (q *PriorityQueue) pluginSaysQueue(qpi *QueuedPodInfo, p *pluginHints, ev framework.ClusterEvent, oldObj, newObj any) bool {
	for j := range p.events {
		r := &p.events[j]
		if !r.Event.Match(ev) {
			continue
		}
		if r.QueueingHintFn == nil && r.PodInfoHintFn == nil {
			return true
		}
		hint, err := callHint(q.logger, r, qpi, oldObj, newObj)
		if err != nil {
			q.logger.Error("queueing hint failed: the pod is retried", zap.String("plugin", p.name),
				zap.String("pod", qpi.Pod.Namespace+"/"+qpi.Pod.Name), zap.Error(err))
			return true
		}
		if hint == framework.Queue {
			return true
		}
	}
	return false
}

// callHint runs the registration's hint for qpi: its PodInfoHintFn when
// it has one, else its QueueingHintFn.
func callHint(logger *zap.Logger, r *framework.ClusterEventWithHint, qpi *QueuedPodInfo, oldObj, newObj any) (framework.QueueingHint, error) {
	if r.PodInfoHintFn != nil {
		return r.PodInfoHintFn(logger, qpi.PodInfo, oldObj, newObj)
	}
	return r.QueueingHintFn(logger, qpi.Pod, oldObj, newObj)
}

// addUnschedulable parks qpi in the unschedulable pool. q.mu must be held.
func (q *PriorityQueue) addUnschedulable(qpi *QueuedPodInfo) {
	q.unschedulable[qpi.Pod.UID] = qpi
	q.countRejectors(qpi, 1)
}

// removeUnschedulable takes qpi out of the unschedulable pool. q.mu must
// be held.
func (q *PriorityQueue) removeUnschedulable(qpi *QueuedPodInfo) {
	delete(q.unschedulable, qpi.Pod.UID)
	q.countRejectors(qpi, -1)
}

func (q *PriorityQueue) countRejectors(qpi *QueuedPodInfo, d int) {
	if qpi.rejectors == 0 {
		q.noRejector += d
		return
	}
	for m := qpi.rejectors; m != 0; m &= m - 1 {
		q.byRejector[bits.TrailingZeros64(m)] += d
	}
}

// mayWakeAny reports whether some parked pod could be woken by the event
// whose interest refreshInterest computed: one without rejectors, or one
// rejected by a plugin that registered it. The bits of different profiles
// share counters, which only makes the answer more often yes. q.mu must be
// held.
func (q *PriorityQueue) mayWakeAny() bool {
	if q.noRejector > 0 {
		return true
	}
	var interested uint64
	for _, ph := range q.hints {
		interested |= ph.interested
	}
	for m := interested; m != 0; m &= m - 1 {
		if q.byRejector[bits.TrailingZeros64(m)] > 0 {
			return true
		}
	}
	return false
}

// refreshInterest computes every profile's interest in ev, and reports
// whether some plugin registered it: kube-scheduler's isEventOfInterest.
// No profile registered (a queue used without SetProfileHints) counts as
// interest. q.mu must be held.
func (q *PriorityQueue) refreshInterest(ev framework.ClusterEvent) bool {
	any := len(q.hints) == 0 || ev.Resource == framework.WildCard
	for _, ph := range q.hints {
		ph.interested = ph.interestIn(ev)
		any = any || ph.interested != everyEventBit || ph.overflow
	}
	return any
}

// ProfileHints builds a profile's registrations from its plugins, for
// SetProfileHints: plugins implementing framework.EnqueueExtensions give
// theirs, the others framework.EveryEvent(). Several parts under one name
// (a plugin built as a predicate and a priority) pool their events.
func ProfileHints(ctx context.Context, parts map[string][]framework.Plugin) (map[string][]framework.ClusterEventWithHint, error) {
	out := make(map[string][]framework.ClusterEventWithHint, len(parts))
	for name, ps := range parts {
		var events []framework.ClusterEventWithHint
		declared := false
		for _, p := range ps {
			ext, ok := p.(framework.EnqueueExtensions)
			if !ok {
				continue
			}
			declared = true
			evs, err := ext.EventsToRegister(ctx)
			if err != nil {
				return nil, fmt.Errorf("plugin %q: EventsToRegister: %w", name, err)
			}
			events = append(events, evs...)
		}
		if !declared {
			events = framework.EveryEvent()
		}
		out[name] = events
	}
	return out, nil
}
