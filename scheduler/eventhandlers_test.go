package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/internal/schedtest"
	"github.com/yardmaster-io/yardmaster/queue"
)

// A pod deleted and recreated under the same name can reach the informer
// as one update (after a relist): the old pod must leave the cache and the
// queue, and the new one be taken as new.
func TestUpdateWithNewUIDIsDeleteAndAdd(t *testing.T) {
	pending := func(uid string) *v1.Pod {
		p := schedtest.MakePod().Name("p").UID(uid).Label("app", "web").Req("1", "1Gi").Obj()
		p.ResourceVersion = uid
		return p
	}
	bound := func(uid, node string) *v1.Pod {
		p := pending(uid)
		p.Spec.NodeName = node
		return p
	}
	tests := []struct {
		name string
		// setup puts the old pod where the scheduler keeps it.
		setup    func(s *Scheduler, old *v1.Pod)
		old, new *v1.Pod
		// wantPods is the pods the cache holds on n1 and n2 afterwards.
		wantN1, wantN2 int
		// wantQueued is where the new pod is; the old one must be nowhere.
		wantQueued queue.Location
	}{{
		name:       "bound, recreated pending",
		setup:      func(s *Scheduler, old *v1.Pod) { s.addPod(old) },
		old:        bound("old", "n1"),
		new:        pending("new"),
		wantQueued: queue.ActiveQ,
	}, {
		name:       "bound, recreated bound elsewhere",
		setup:      func(s *Scheduler, old *v1.Pod) { s.addPod(old) },
		old:        bound("old", "n1"),
		new:        bound("new", "n2"),
		wantN2:     1,
		wantQueued: queue.Nowhere,
	}, {
		name:       "pending, recreated pending",
		setup:      func(s *Scheduler, old *v1.Pod) { s.addPod(old) },
		old:        pending("old"),
		new:        pending("new"),
		wantQueued: queue.ActiveQ,
	}, {
		name: "assumed, recreated pending",
		setup: func(s *Scheduler, old *v1.Pod) {
			s.addPod(old)
			a := old.DeepCopy()
			a.Spec.NodeName = "n1"
			if err := s.Cache.AssumePod(a); err != nil {
				t.Fatal(err)
			}
		},
		old:        pending("old"),
		new:        pending("new"),
		wantQueued: queue.ActiveQ,
	}, {
		name: "nominated, recreated pending",
		setup: func(s *Scheduler, old *v1.Pod) {
			old.Status.NominatedNodeName = "n1"
			s.addPod(old)
		},
		old:        pending("old"),
		new:        pending("new"),
		wantQueued: queue.ActiveQ,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestScheduler(t, 0,
				schedtest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj(),
				schedtest.MakeNode().Name("n2").Capacity("4", "8Gi", 110).Obj())
			tc.setup(s, tc.old)
			s.updatePod(tc.old, tc.new)

			for node, want := range map[string]int{"n1": tc.wantN1, "n2": tc.wantN2} {
				ni, ok := s.Cache.NodeInfo(node)
				if !ok {
					t.Fatalf("node %s not in the cache", node)
				}
				if got := len(ni.Pods); got != want {
					t.Errorf("%s holds %d pods, want %d", node, got, want)
				}
			}
			if s.Cache.HasPod(tc.old.UID) {
				t.Errorf("the old pod is still in the cache")
			}
			if loc := s.Queue.Locate(tc.old.UID); loc != queue.Nowhere {
				t.Errorf("the old pod is in %v, want it gone from the queue", loc)
			}
			if loc := s.Queue.Locate(tc.new.UID); loc != tc.wantQueued {
				t.Errorf("the new pod is in %v, want %v", loc, tc.wantQueued)
			}
			if n := s.nominatedFor(schedtest.MakePod().Name("other").Obj()); len(n) != 0 {
				t.Errorf("the old pod's nomination is kept: %v", n)
			}
		})
	}
}
