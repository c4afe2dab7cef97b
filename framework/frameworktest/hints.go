package frameworktest

// Checks of framework.EnqueueExtensions: what the queue decides, through a
// plugin's registrations and hints, for a pod the plugin rejected when a
// cluster event arrives.

import (
	"context"
	"testing"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// HintCase is one cluster event seen by a plugin's registrations, and
// what the queue must decide for a pod the plugin rejected.
type HintCase struct {
	// Name says what the event is.
	Name string
	// Pod is the pod the plugin rejected.
	Pod *v1.Pod
	// Event is the event as the informer handlers raise it.
	Event framework.ClusterEvent
	// Old and New are the event's objects (Old nil for an Add, New nil
	// for a Delete).
	Old, New any
	// Want is Queue or QueueSkip; QueueSkip also when the plugin does
	// not register the event at all.
	Want framework.QueueingHint
}

// CheckHints runs each case through pl's registrations the way the queue
// does: the registrations whose event matches, each hint in turn (none:
// Queue), Queue as soon as one says so; QueueSkip when none matches. A
// registration with a PodInfoHintFn must decide as its QueueingHintFn,
// the first time and from what it kept on the PodInfo.
func CheckHints(t *testing.T, pl framework.EnqueueExtensions, cases []HintCase) {
	t.Helper()
	regs, err := pl.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			got := framework.QueueSkip
			for _, r := range regs {
				if !r.Event.Match(tc.Event) {
					continue
				}
				if r.QueueingHintFn == nil {
					got = framework.Queue
					break
				}
				h, err := r.QueueingHintFn(zap.NewNop(), tc.Pod, tc.Old, tc.New)
				if err != nil {
					t.Fatalf("hint: %v", err)
				}
				if r.PodInfoHintFn != nil {
					pi := framework.NewPodInfo(tc.Pod)
					for range 2 {
						hi, err := r.PodInfoHintFn(zap.NewNop(), pi, tc.Old, tc.New)
						if err != nil || hi != h {
							t.Fatalf("PodInfoHintFn = %v, %v; QueueingHintFn = %v", hi, err, h)
						}
					}
				}
				if h == framework.Queue {
					got = framework.Queue
					break
				}
			}
			if got != tc.Want {
				t.Errorf("%s hint = %v, want %v", pl.Name(), got, tc.Want)
			}
		})
	}
}

// NodeUpdate is the event the informer handlers raise when node o becomes n.
func NodeUpdate(o, n *v1.Node) framework.ClusterEvent {
	return framework.ClusterEvent{Resource: framework.Node, ActionType: framework.NodeUpdateActions(o, n)}
}

// AssignedPodUpdate is the event raised when the bound pod o becomes n.
func AssignedPodUpdate(o, n *v1.Pod) framework.ClusterEvent {
	return framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.PodUpdateActions(o, n)}
}

// UnscheduledPodUpdate is the event raised when the pending pod o (the
// rejected pod itself, say) becomes n.
func UnscheduledPodUpdate(o, n *v1.Pod) framework.ClusterEvent {
	return framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.PodUpdateActions(o, n)}
}
