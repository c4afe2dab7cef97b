package scheduler

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/noderesources"
	"github.com/yardmaster-io/yardmaster/predicates/tainttoleration"
	"github.com/yardmaster-io/yardmaster/queue"
)

// A pod deleted and recreated under the same name can reach the informer
// as one update (after a relist): the old pod must leave the cache and the
// queue, and the new one be taken as new.
func TestUpdateWithNewUIDIsDeleteAndAdd(t *testing.T) {
	pending := func(uid string) *v1.Pod {
		p := frameworktest.MakePod().Name("p").UID(uid).Label("app", "web").Req("1", "1Gi").Obj()
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
				frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj(),
				frameworktest.MakeNode().Name("n2").Capacity("4", "8Gi", 110).Obj())
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
			if n := s.nominations.forPod(frameworktest.MakePod().Name("other").Obj()); n.count() != 0 {
				t.Errorf("the old pod's nomination is kept: %v", n)
			}
		})
	}
}

// TestEventsWakeOnlyThePodsTheyCanHelp parks pods that really failed
// (their rejecting plugins as the cycle recorded them) and delivers
// informer events through the handlers: a heartbeat, an unrelated label, a
// pod finishing that frees nothing they need wake none of them; the
// events their plugins wait for wake exactly the pods they can help.
func TestEventsWakeOnlyThePodsTheyCanHelp(t *testing.T) {
	n1 := frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Label("zone", "a").Obj()
	n1.ResourceVersion = "1"
	n1.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(time.Unix(100, 0))}}
	n2 := frameworktest.MakeNode().Name("n2").Capacity("4", "8Gi", 110).Label("zone", "b").
		Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()
	n2.ResourceVersion = "1"
	s := newTestScheduler(t, 0, n1, n2)

	filler := frameworktest.MakePod().Name("filler").Req("2", "").Node("n1").Obj()
	memOnly := frameworktest.MakePod().Name("mem-only").Req("", "1Gi").Node("n1").Obj()
	s.addPod(filler)
	s.addPod(memOnly)

	pods := map[string]*v1.Pod{
		// NodeResourcesFit on n1, TaintToleration on n2.
		"big": frameworktest.MakePod().Name("big").Req("3", "").Obj(),
		// NodeAffinity on n1, TaintToleration on n2.
		"picky": frameworktest.MakePod().Name("picky").NodeSelector(map[string]string{"disk": "ssd"}).Obj(),
		// InterPodAffinity on n1 (no db pod yet), TaintToleration on n2.
		"friend": frameworktest.MakePod().Name("friend").
			RequiredPodAffinity(frameworktest.MakePodAffinityTerm("zone").MatchLabel("app", "db").Obj()).Obj(),
	}
	wantPlugins := map[string][]string{
		"big":    {noderesources.FitName, tainttoleration.Name},
		"picky":  {nodeaffinity.Name, tainttoleration.Name},
		"friend": {interpodaffinity.Name, tainttoleration.Name},
	}
	for _, name := range []string{"big", "picky", "friend"} {
		fitErr := failAndPark(t, s, pods[name])
		if diff := cmp.Diff(wantPlugins[name], sets.List(fitErr.Plugins)); diff != "" {
			t.Fatalf("pod %s rejected by (-want +got):\n%s", name, diff)
		}
	}
	nodeV := func(n *v1.Node, change func(*v1.Node)) *v1.Node {
		n = n.DeepCopy()
		change(n)
		rv, _ := strconv.Atoi(n.ResourceVersion)
		n.ResourceVersion = strconv.Itoa(rv + 1)
		return n
	}
	steps := []struct {
		name  string
		event func()
		woken []string
	}{{
		name: "heartbeat",
		event: func() {
			s.updateNode(n1, nodeV(n1, func(n *v1.Node) { n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(time.Unix(110, 0)) }))
		},
	}, {
		name:  "unrelated node label",
		event: func() { s.updateNode(n1, nodeV(n1, func(n *v1.Node) { n.Labels["team"] = "blue" })) },
	}, {
		name: "a pod shrinking in memory only",
		event: func() {
			shrunk := memOnly.DeepCopy()
			shrunk.ResourceVersion = "2"
			shrunk.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("512Mi")
			s.updatePod(memOnly, shrunk)
		},
	}, {
		name: "a pending pod of another scheduler deleted",
		event: func() {
			s.deletePod(frameworktest.MakePod().Name("elsewhere").SchedulerName("default-scheduler").Obj())
		},
	}, {
		name:  "a pod that matches nobody's affinity bound",
		event: func() { s.addPod(frameworktest.MakePod().Name("web").Label("app", "web").Node("n2").Obj()) },
	}, {
		name:  "the pod holding the cpu finishes",
		event: func() { s.deletePod(filler) },
		woken: []string{"big"},
	}, {
		name:  "the label picky wants",
		event: func() { s.updateNode(n1, nodeV(n1, func(n *v1.Node) { n.Labels["disk"] = "ssd" })) },
		woken: []string{"picky"},
	}, {
		name:  "a db pod bound",
		event: func() { s.addPod(frameworktest.MakePod().Name("db").Label("app", "db").Node("n1").Obj()) },
		woken: []string{"friend"},
	}}
	parked := sets.New("big", "picky", "friend")
	for _, step := range steps {
		step.event()
		for name := range parked {
			loc := s.Queue.Locate(pods[name].UID)
			woken := loc != queue.UnschedulablePods
			if woken != slices.Contains(step.woken, name) {
				t.Errorf("after %s: pod %s is in %s", step.name, name, loc)
			}
			if woken {
				parked.Delete(name)
			}
		}
	}
}

// A node added, or losing its taint, that the pod cannot use (too small
// for it, though it has none of the taints that also rejected the pod)
// wakes nothing; one that holds it does. kube-scheduler wakes the pod on
// all of them, because TaintToleration alone says Queue.
func TestNodeEventsWakeOnlyWhenEveryNodeLocalRejectorAgrees(t *testing.T) {
	n1 := frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj()
	n2 := frameworktest.MakeNode().Name("n2").Capacity("4", "8Gi", 110).Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()
	s := newTestScheduler(t, 0, n1, n2)
	s.addPod(frameworktest.MakePod().Name("filler").Req("2", "").Node("n1").Obj())
	big := frameworktest.MakePod().Name("big").Req("3", "").Obj()
	failAndPark(t, s, big)
	add := func(n *v1.Node) {
		s.Cache.AddNode(n)
		s.Queue.MoveAllToActiveOrBackoff(nodeAdd, nil, n)
	}
	add(frameworktest.MakeNode().Name("small").Capacity("2", "8Gi", 110).Obj())
	if loc := s.Queue.Locate(big.UID); loc != queue.UnschedulablePods {
		t.Fatalf("a node too small woke the pod: it is in %s", loc)
	}
	// addThenReady adds a node with node.kubernetes.io/not-ready, then
	// takes the taint away, as a node turning Ready does.
	addThenReady := func(name, cpu string) {
		tainted := frameworktest.MakeNode().Name(name).Capacity(cpu, "8Gi", 110).Taint("node.kubernetes.io/not-ready", "", v1.TaintEffectNoSchedule).Obj()
		tainted.ResourceVersion = "1"
		add(tainted)
		ready := tainted.DeepCopy()
		ready.ResourceVersion, ready.Spec.Taints = "2", nil
		s.updateNode(tainted, ready)
	}
	// A small node that loses its taint does not wake it either.
	addThenReady("small-tainted", "2")
	if loc := s.Queue.Locate(big.UID); loc != queue.UnschedulablePods {
		t.Fatalf("a node too small that lost its taint woke the pod: it is in %s", loc)
	}
	// On a node that could hold it, the taint going does.
	addThenReady("large-tainted", "8")
	if loc := s.Queue.Locate(big.UID); loc == queue.UnschedulablePods {
		t.Fatalf("a large node that lost its taint left the pod parked")
	}
}

// A node deleted raises Node Delete, as in kube-scheduler: a pod that
// PodTopologySpread turned away because an empty zone (whose only node it
// could not use) held the skew down is woken when that zone goes, and
// then fits. A pod that only NodeResourcesFit rejected stays parked.
func TestNodeDeleteWakesSpread(t *testing.T) {
	n1 := frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Label("zone", "a").Obj()
	n2 := frameworktest.MakeNode().Name("n2").Capacity("4", "8Gi", 110).Label("zone", "b").
		Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()
	n3 := frameworktest.MakeNode().Name("n3").Capacity("1", "8Gi", 110).Obj()
	s := newTestScheduler(t, 0, n1, n2, n3)
	s.addPod(frameworktest.MakePod().Name("web-0").Label("app", "web").Node("n1").Obj())

	spread := frameworktest.MakePod().Name("web-1").Label("app", "web").
		SpreadConstraint(frameworktest.MakeSpreadConstraint(1, "zone", v1.DoNotSchedule).MatchLabels("app", "web").Obj()).Obj()
	big := frameworktest.MakePod().Name("big").Req("8", "").Obj()
	failAndPark(t, s, spread)
	failAndPark(t, s, big)

	s.deleteNode(toolscache.DeletedFinalStateUnknown{Key: "n2", Obj: n2})
	if loc := s.Queue.Locate(spread.UID); loc == queue.UnschedulablePods {
		t.Fatalf("pod %s still parked after zone b's only node was deleted", spread.Name)
	}
	if loc := s.Queue.Locate(big.UID); loc != queue.UnschedulablePods {
		t.Errorf("pod %s is in %s after a node deletion, want it parked", big.Name, loc)
	}
	s.Cache.UpdateSnapshot(s.snapshot)
	res, err := s.schedulePod(context.Background(), s.profiles["yardmaster"], framework.NewCycleState(), spread)
	if err != nil || res.node != "n1" {
		t.Errorf("after the deletion: placed on %q, %v; want n1", res.node, err)
	}
}

// A pending pod whose nomination kept room is deleted, or its nomination
// is cleared: the pods of lower or equal priority that the room turned
// away are woken (kube-scheduler's AssignedPodDelete with its priority
// pre-check); one of higher priority, which never counted the room, is
// not.
func TestNominationReleasedWakesLowerPriority(t *testing.T) {
	for _, how := range []string{"deleted", "cleared"} {
		t.Run(how, func(t *testing.T) {
			n1 := frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj()
			s := newTestScheduler(t, 0, n1)
			s.addPod(frameworktest.MakePod().Name("base").Req("2", "").Node("n1").Obj())
			high := frameworktest.MakePod().Name("high").Req("2", "").Priority(100).Obj()
			high.Status.NominatedNodeName = "n1"
			s.addPod(high)
			if qpi, err := s.Queue.Pop(context.Background()); err != nil || qpi.Pod.Name != "high" {
				t.Fatalf("pop: %v, %v", qpi, err)
			}
			// low fits only without high's room; higher, which does
			// not count it, would fit if base went.
			low := frameworktest.MakePod().Name("low").Req("1", "").Obj()
			higher := frameworktest.MakePod().Name("higher").Req("3", "").Priority(200).Obj()
			failAndPark(t, s, low)
			failAndPark(t, s, higher)
			if how == "deleted" {
				s.deletePod(high)
			} else {
				s.clearNomination(high)
			}
			if loc := s.Queue.Locate(low.UID); loc == queue.UnschedulablePods {
				t.Errorf("pod low still parked after the nominated pod was %s", how)
			}
			if loc := s.Queue.Locate(higher.UID); loc != queue.UnschedulablePods {
				t.Errorf("pod higher is in %s, want it parked", loc)
			}
		})
	}
}

// failAndPark adds pod, pops it, runs its cycle, which must fit it nowhere,
// and hands it back to the queue unschedulable with the FitError's
// plugins as its rejectors, as handleFailure does. It returns the
// FitError.
func failAndPark(t *testing.T, s *Scheduler, pod *v1.Pod) *FitError {
	t.Helper()
	s.addPod(pod)
	qpi, err := s.Queue.Pop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if qpi.Pod.UID != pod.UID {
		t.Fatalf("popped %s, want %s", qpi.Pod.Name, pod.Name)
	}
	s.Cache.UpdateSnapshot(s.snapshot)
	_, err = s.schedulePod(context.Background(), s.profiles["yardmaster"], framework.NewCycleState(), qpi.Pod)
	var fitErr *FitError
	if !errors.As(err, &fitErr) {
		t.Fatalf("pod %s: want a FitError, got %v", pod.Name, err)
	}
	qpi.UnschedulablePlugins = fitErr.Plugins
	if err := s.Queue.AddUnschedulable(qpi, s.Queue.SchedulingCycle(), true); err != nil {
		t.Fatal(err)
	}
	return fitErr
}
