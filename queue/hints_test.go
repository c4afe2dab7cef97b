package queue

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/yardmaster-io/yardmaster/framework"
)

// testHints is a profile of four plugins:
//   - "Labels" registers node label changes and queues only for a node
//     named "good";
//   - "Deletes" registers assigned pod deletions, without a hint;
//   - "Broken" registers node additions with a hint that fails;
//   - "Silent" registers nothing.
func testHints() map[string][]framework.ClusterEventWithHint {
	goodNode := func(_ *zap.Logger, _ *v1.Pod, _, newObj any) (framework.QueueingHint, error) {
		if n, ok := newObj.(*v1.Node); ok && n.Name == "good" {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	fails := func(*zap.Logger, *v1.Pod, any, any) (framework.QueueingHint, error) {
		return framework.QueueSkip, errors.New("cannot tell")
	}
	return map[string][]framework.ClusterEventWithHint{
		"Labels":  {{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel}, QueueingHintFn: goodNode}},
		"Deletes": {{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}}},
		"Broken":  {{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, QueueingHintFn: fails}},
		"Silent":  nil,
	}
}

var (
	nodeLabelled      = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel}
	nodeHeartbeatLike = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeCondition}
)

func namedNode(name string) *v1.Node {
	n := &v1.Node{}
	n.Name = name
	return n
}

// failWith pops the head and hands it back unschedulable, rejected by
// plugins.
func failWith(t *testing.T, q *PriorityQueue, plugins ...string) *QueuedPodInfo {
	t.Helper()
	qpi := mustPop(t, q)
	if len(plugins) > 0 {
		qpi.UnschedulablePlugins = sets.New(plugins...)
	}
	if err := q.AddUnschedulable(qpi, q.SchedulingCycle(), true); err != nil {
		t.Fatalf("AddUnschedulable: %v", err)
	}
	return qpi
}

// recordedMetrics counts PodQueued calls by event.
type recordedMetrics map[Event]int

func (m recordedMetrics) PodQueued(_ Location, e Event) { m[e]++ }

func TestHintsMoveOnlyTheRightPods(t *testing.T) {
	pods := map[string][]string{
		"labels":  {"Labels"},
		"deletes": {"Deletes"},
		"both":    {"Labels", "Deletes"},
		"none":    nil,         // no recorded rejector: every event
		"unknown": {"Foreign"}, // a plugin the profile does not list: every event
		"silent":  {"Silent"},
		"broken":  {"Broken"},
	}
	tests := []struct {
		name     string
		event    framework.ClusterEvent
		old, new any
		// moved are the pods that leave the unschedulable pool.
		moved []string
		label Event
	}{
		{name: "label change on the good node", event: nodeLabelled, old: namedNode("good"), new: namedNode("good"),
			moved: []string{"labels", "both", "none", "unknown"}, label: EventOf(nodeLabelled)},
		{name: "label change elsewhere", event: nodeLabelled, old: namedNode("bad"), new: namedNode("bad"),
			moved: []string{"none", "unknown"}, label: EventOf(nodeLabelled)},
		// As kube-scheduler's isEventOfInterest: not even the pods
		// without recorded rejectors.
		{name: "event nobody registered", event: nodeHeartbeatLike, old: namedNode("good"), new: namedNode("good"),
			label: EventOf(nodeHeartbeatLike)},
		{name: "assigned pod deleted", event: assignedPodDelete, old: makePod("gone").Node("n1").Obj(),
			moved: []string{"deletes", "both", "none", "unknown"}, label: AssignedPodDelete},
		{name: "failing hint counts as Queue", event: nodeAdd, new: namedNode("n"),
			moved: []string{"none", "unknown", "broken"}, label: NodeAdd},
		{name: "forced", event: framework.ClusterEvent{Resource: framework.WildCard, ActionType: framework.All},
			moved: []string{"labels", "deletes", "both", "none", "unknown", "silent", "broken"}, label: ForceActivate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := recordedMetrics{}
			q, clk := newTestQueue(Options{Metrics: m})
			q.SetProfileHints("yardmaster", testHints())
			for name, plugins := range pods {
				q.Add(makePod(name).Obj())
				failWith(t, q, plugins...)
			}
			clk.Step(DefaultMaxBackoff) // moved pods go straight to activeQ
			q.MoveAllToActiveOrBackoff(tc.event, tc.old, tc.new)
			want := sets.New(tc.moved...)
			for name := range pods {
				loc := q.Locate(uidOf(name))
				if want.Has(name) && loc != ActiveQ {
					t.Errorf("pod %q is in %s, want it moved to active", name, loc)
				}
				if !want.Has(name) && loc != UnschedulablePods {
					t.Errorf("pod %q is in %s, want it left unschedulable", name, loc)
				}
			}
			if m[tc.label] != len(tc.moved) {
				t.Errorf("%d pods counted under %s, want %d (%v)", m[tc.label], tc.label, len(tc.moved), m)
			}
			q.checkInvariants(t)
		})
	}
}

// A pod of a profile without hints wakes on every event.
func TestHintsOtherProfile(t *testing.T) {
	q, _ := newTestQueue(Options{})
	q.SetProfileHints("yardmaster", testHints())
	p := makePod("p").SchedulerName("other").Obj()
	q.Add(p)
	failWith(t, q, "Labels")
	q.MoveAllToActiveOrBackoff(nodeLabelled, namedNode("bad"), namedNode("bad"))
	wantLocation(t, q, p, BackoffQ)
}

// An event that arrives while the pod is in flight sends it to backoffQ
// when it failed only if its hints say the event can help it.
func TestHintsInFlightEvents(t *testing.T) {
	tests := []struct {
		name     string
		rejector string
		event    framework.ClusterEvent
		new      any
		want     Location
	}{
		{name: "event that helps", rejector: "Labels", event: nodeLabelled, new: namedNode("good"), want: BackoffQ},
		{name: "event the hint turns down", rejector: "Labels", event: nodeLabelled, new: namedNode("bad"), want: UnschedulablePods},
		{name: "event not registered", rejector: "Deletes", event: nodeLabelled, new: namedNode("good"), want: UnschedulablePods},
		{name: "no rejector", event: nodeLabelled, new: namedNode("bad"), want: BackoffQ},
		{name: "no rejector, event nobody registered", event: nodeHeartbeatLike, new: namedNode("n"), want: UnschedulablePods},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newTestQueue(Options{})
			q.SetProfileHints("yardmaster", testHints())
			p := makePod("p").Obj()
			q.Add(p)
			// A second pod keeps a pod in flight after p ends, so that
			// the recorded events outlive p's attempt.
			q.Add(makePod("q").Priority(-1).Obj())
			qpi := mustPop(t, q)
			other := mustPop(t, q)
			q.MoveAllToActiveOrBackoff(tc.event, namedNode("x"), tc.new)
			if tc.rejector != "" {
				qpi.UnschedulablePlugins = sets.New(tc.rejector)
			}
			if err := q.AddUnschedulable(qpi, q.SchedulingCycle(), true); err != nil {
				t.Fatal(err)
			}
			wantLocation(t, q, p, tc.want)
			q.Done(other)
			q.mu.Lock()
			n := len(q.events)
			q.mu.Unlock()
			if n != 0 {
				t.Errorf("%d events kept with no pod in flight", n)
			}
		})
	}
}

// An event that arrived before the pod was popped does not count.
func TestHintsEventBeforePop(t *testing.T) {
	q, _ := newTestQueue(Options{})
	q.SetProfileHints("yardmaster", testHints())
	q.Add(makePod("keeper").Obj())
	keeper := mustPop(t, q)
	q.MoveAllToActiveOrBackoff(nodeLabelled, namedNode("good"), namedNode("good"))
	p := makePod("p").Obj()
	q.Add(p)
	failWith(t, q, "Labels")
	wantLocation(t, q, p, UnschedulablePods)
	q.Done(keeper)
}

// Beyond maxInFlightEvents, the oldest events are cut, and a pod that may
// have missed one of them backs off.
func TestHintsInFlightEventsCut(t *testing.T) {
	q, _ := newTestQueue(Options{})
	q.SetProfileHints("yardmaster", testHints())
	p := makePod("p").Obj()
	q.Add(p)
	qpi := mustPop(t, q)
	for range maxInFlightEvents + 1 {
		q.MoveAllToActiveOrBackoff(nodeLabelled, namedNode("bad"), namedNode("bad"))
	}
	q.mu.Lock()
	n := len(q.events)
	q.mu.Unlock()
	if n > maxInFlightEvents {
		t.Fatalf("%d events kept, want at most %d", n, maxInFlightEvents)
	}
	qpi.UnschedulablePlugins = sets.New("Labels")
	if err := q.AddUnschedulable(qpi, q.SchedulingCycle(), true); err != nil {
		t.Fatal(err)
	}
	wantLocation(t, q, p, BackoffQ)
}

type plainPlugin struct{ name string }

func (p plainPlugin) Name() string { return p.name }

type declaringPlugin struct{ plainPlugin }

func (declaringPlugin) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{Event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add}}}, nil
}

// A plugin without EnqueueExtensions receives every event; the parts of
// one plugin pool their registrations.
func TestProfileHints(t *testing.T) {
	got, err := ProfileHints(context.Background(), map[string][]framework.Plugin{
		"Plain":     {plainPlugin{"Plain"}},
		"Declaring": {plainPlugin{"Declaring"}, declaringPlugin{plainPlugin{"Declaring"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	everything := framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Update}
	if len(got["Plain"]) != 1 || !got["Plain"][0].Event.Match(everything) {
		t.Errorf("Plain registers %v, want every event", got["Plain"])
	}
	if len(got["Declaring"]) != 1 || got["Declaring"][0].Event.Match(everything) {
		t.Errorf("Declaring registers %v, want its CSINode Add only", got["Declaring"])
	}
}

// On a Node Add, a pod whose interested rejectors are all NodeLocal wakes
// only when every one of them says Queue: it can only go to the new node.
// With a rejector that is not NodeLocal, one Queue is enough, as in
// kube-scheduler.
func TestHintsNodeLocalAdd(t *testing.T) {
	nodeAddIf := func(ok func(name string) bool) framework.QueueingHintFn {
		return func(_ *zap.Logger, _ *v1.Pod, _, newObj any) (framework.QueueingHint, error) {
			if ok(newObj.(*v1.Node).Name) {
				return framework.Queue, nil
			}
			return framework.QueueSkip, nil
		}
	}
	add := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	addOrTaint := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}
	profile := map[string][]framework.ClusterEventWithHint{
		"Size":   {{Event: add, QueueingHintFn: nodeAddIf(func(n string) bool { return strings.Contains(n, "big") }), NodeCheck: func(*v1.Pod, *v1.Node) bool { return true }}},
		"Taints": {{Event: addOrTaint, QueueingHintFn: nodeAddIf(func(n string) bool { return !strings.HasPrefix(n, "tainted") }), NodeCheck: func(*v1.Pod, *v1.Node) bool { return true }}},
		"Ports":  {{Event: add, NodeCheck: func(*v1.Pod, *v1.Node) bool { return true }}},
		"Spread": {{Event: add, QueueingHintFn: nodeAddIf(func(string) bool { return true })}},
	}
	pods := map[string][]string{
		"size+taints": {"Size", "Taints"},
		"size+spread": {"Size", "Spread"},
		"size":        {"Size"},
		"ports+size":  {"Ports", "Size"},
	}
	for _, tc := range []struct {
		node  string
		moved []string
	}{
		{node: "small", moved: []string{"size+spread"}},
		{node: "big", moved: []string{"size+taints", "size+spread", "size", "ports+size"}},
		{node: "tainted-big", moved: []string{"size+spread", "size", "ports+size"}},
	} {
		t.Run(tc.node, func(t *testing.T) {
			q, clk := newTestQueue(Options{})
			q.SetProfileHints("yardmaster", profile)
			for name, plugins := range pods {
				q.Add(makePod(name).Obj())
				failWith(t, q, plugins...)
			}
			clk.Step(DefaultMaxBackoff)
			q.MoveAllToActiveOrBackoff(add, nil, namedNode(tc.node))
			want := sets.New(tc.moved...)
			for name := range pods {
				if moved := q.Locate(uidOf(name)) == ActiveQ; moved != want.Has(name) {
					t.Errorf("pod %q moved %v, want %v", name, moved, want.Has(name))
				}
			}
			q.checkInvariants(t)
		})
	}
}

// The queue keeps one set of rejector names per combination of the
// profile's plugins, shared by the pods they rejected, and copies a set
// that names a plugin the profile does not know. Either way the stored set
// is not the caller's.
func TestHintsRejectorSetsShared(t *testing.T) {
	q, _ := newTestQueue(Options{})
	q.SetProfileHints("yardmaster", testHints())
	rejectors := map[string][]string{
		"a": {"Labels", "Deletes"}, "b": {"Deletes", "Labels"}, "c": {"Labels"},
		"d": {"Foreign"}, "e": {"Foreign"},
	}
	callers := map[string]sets.Set[string]{}
	for name, plugins := range rejectors {
		q.Add(makePod(name).Obj())
		callers[name] = failWith(t, q, plugins...).UnschedulablePlugins
	}
	stored := func(name string) sets.Set[string] {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.unschedulable[uidOf(name)].UnschedulablePlugins
	}
	same := func(a, b sets.Set[string]) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	for name, plugins := range rejectors {
		if s := stored(name); !s.Equal(sets.New(plugins...)) || same(s, callers[name]) {
			t.Errorf("pod %s: stored %v (the caller's: %v), want a copy of %v", name, sets.List(s), same(s, callers[name]), plugins)
		}
	}
	if !same(stored("a"), stored("b")) {
		t.Error("pods a and b, rejected by the same plugins, keep two sets")
	}
	if same(stored("a"), stored("c")) || same(stored("d"), stored("e")) {
		t.Error("a set is shared by pods it does not describe, or one naming an unknown plugin is shared")
	}
}
