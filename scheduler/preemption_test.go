package scheduler

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/defaultpreemption"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// placed returns pod p on node, with a UID, as the cache holds it.
func placed(p *frameworktest.PodWrapper, node string) *v1.Pod {
	pod := p.Node(node).Obj()
	pod.UID = types.UID(pod.Name)
	return pod
}

// preempt runs the profile's PostFilter plugins (DefaultPreemption) for
// pod, which fitErr says fits nowhere, and returns the node a preemption
// nominated in that run ("" when none did) and the message for the pod's
// FailedScheduling event.
func (s *Scheduler) preempt(ctx context.Context, prof *profile, state *framework.CycleState, pod *v1.Pod, fitErr *FitError) (string, string) {
	s.nominations.mu.Lock()
	before := s.nominations.byPod[pod.UID]
	s.nominations.mu.Unlock()
	msg := prof.runPostFilter(ctx, state, pod, fitErr)
	s.nominations.mu.Lock()
	defer s.nominations.mu.Unlock()
	if p, ok := s.nominations.byPod[pod.UID]; ok && p != before && !p.fromStatus {
		return p.node, msg
	}
	return "", msg
}

// tryPreempt runs a cycle for pod, which must fit nowhere, then
// preemption, and returns the nominated node, the victims' names (sorted)
// and the message.
func tryPreempt(t *testing.T, s *Scheduler, pod *v1.Pod) (string, []string, string) {
	t.Helper()
	pod.UID = types.UID(pod.Name)
	s.Cache.UpdateSnapshot(s.snapshot)
	prof := s.profiles[pod.Spec.SchedulerName]
	state := framework.NewCycleState()
	_, err := s.schedulePod(context.Background(), prof, state, pod)
	var fitErr *FitError
	if !errors.As(err, &fitErr) {
		t.Fatalf("the pod fits somewhere (%v): nothing to preempt", err)
	}
	node, msg := s.preempt(context.Background(), prof, state, pod, fitErr)
	var victims []string
	if p, ok := s.nominations.byPod[pod.UID]; ok {
		for _, uid := range p.victims {
			victims = append(victims, string(uid))
		}
	}
	slices.Sort(victims)
	return node, victims, msg
}

func TestPreemption(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	low := func(name string) *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name(name).Priority(10).Label("app", "low")
	}
	high := func() *v1.Pod { return frameworktest.MakePod().Name("high").Priority(1000).Req("500m", "").Obj() }
	node := func(name string) *v1.Node { return frameworktest.MakeNode().Name(name).Capacity("1", "4Gi", 110).Obj() }
	budget := func(allowed int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "low"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "low"}}},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
		}
	}
	tests := []struct {
		name        string
		nodes       []*v1.Node
		pods        []*v1.Pod
		pdbs        []*policyv1.PodDisruptionBudget
		pod         *v1.Pod
		wantNode    string
		wantVictims []string
		wantMsg     string
	}{{
		name:  "only the pods that must go: the other is put back",
		nodes: []*v1.Node{node("n1")},
		pods: []*v1.Pod{
			placed(low("small").Req("200m", ""), "n1"),
			placed(low("big").Req("700m", ""), "n1"),
		},
		pod:         high(),
		wantNode:    "n1",
		wantVictims: []string{"big"},
		wantMsg:     "preemption: found a potential placement for pod on node n1, preempting 1 victims",
	}, {
		name:  "the most important pods are put back first",
		nodes: []*v1.Node{node("n1")},
		pods: []*v1.Pod{
			placed(low("young").Req("500m", "").StartTime(time.Now()), "n1"),
			placed(low("old").Req("500m", "").StartTime(old), "n1"),
		},
		pod:         high(),
		wantNode:    "n1",
		wantVictims: []string{"young"},
		wantMsg:     "preemption: found a potential placement for pod on node n1, preempting 1 victims",
	}, {
		name:  "pods of equal or higher priority are never victims",
		nodes: []*v1.Node{node("n1")},
		pods: []*v1.Pod{
			placed(frameworktest.MakePod().Name("peer").Priority(1000).Req("800m", ""), "n1"),
			placed(low("low").Req("200m", ""), "n1"),
		},
		pod:     high(),
		wantMsg: "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
	}, {
		name:    "nothing of lower priority anywhere",
		nodes:   []*v1.Node{node("n1")},
		pods:    []*v1.Pod{placed(frameworktest.MakePod().Name("peer").Priority(1000).Req("800m", ""), "n1")},
		pod:     high(),
		wantMsg: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
	}, {
		name:  "the lowest priority victims",
		nodes: []*v1.Node{node("n1"), node("n2")},
		pods: []*v1.Pod{
			placed(frameworktest.MakePod().Name("mid").Priority(500).Req("800m", ""), "n1"),
			placed(low("low").Req("800m", ""), "n2"),
		},
		pod:         high(),
		wantNode:    "n2",
		wantVictims: []string{"low"},
		wantMsg:     "preemption: found a potential placement for pod on node n2, preempting 1 victims",
	}, {
		name:  "fewest victims",
		nodes: []*v1.Node{node("n1"), node("n2")},
		pods: []*v1.Pod{
			placed(low("a").Req("400m", ""), "n1"),
			placed(low("b").Req("400m", ""), "n1"),
			placed(low("c").Req("800m", ""), "n2"),
		},
		pod:         high(),
		wantNode:    "n2",
		wantVictims: []string{"c"},
		wantMsg:     "preemption: found a potential placement for pod on node n2, preempting 1 victims",
	}, {
		name:  "a node whose victims a budget protects comes last",
		nodes: []*v1.Node{node("n1"), node("n2")},
		pods: []*v1.Pod{
			placed(low("protected").Req("800m", ""), "n1"),
			placed(frameworktest.MakePod().Name("free").Priority(10).Label("app", "other").Req("600m", ""), "n2"),
			placed(frameworktest.MakePod().Name("free2").Priority(10).Label("app", "other").Req("300m", ""), "n2"),
		},
		pdbs:        []*policyv1.PodDisruptionBudget{budget(0)},
		pod:         frameworktest.MakePod().Name("high").Priority(1000).Req("800m", "").Obj(),
		wantNode:    "n2",
		wantVictims: []string{"free", "free2"},
		wantMsg:     "preemption: found a potential placement for pod on node n2, preempting 2 victims",
	}, {
		name:  "a budget that allows the disruption protects nothing",
		nodes: []*v1.Node{node("n1"), node("n2")},
		pods: []*v1.Pod{
			placed(low("protected").Req("800m", ""), "n1"),
			placed(frameworktest.MakePod().Name("free").Priority(10).Label("app", "other").Req("600m", ""), "n2"),
			placed(frameworktest.MakePod().Name("free2").Priority(10).Label("app", "other").Req("300m", ""), "n2"),
		},
		pdbs:        []*policyv1.PodDisruptionBudget{budget(1)},
		pod:         frameworktest.MakePod().Name("high").Priority(1000).Req("800m", "").Obj(),
		wantNode:    "n1",
		wantVictims: []string{"protected"},
		wantMsg:     "preemption: found a potential placement for pod on node n1, preempting 1 victims",
	}, {
		name:    "preemptionPolicy Never",
		nodes:   []*v1.Node{node("n1")},
		pods:    []*v1.Pod{placed(low("low").Req("800m", ""), "n1")},
		pod:     func() *v1.Pod { p := high(); p.Spec.PreemptionPolicy = new(v1.PreemptNever); return p }(),
		wantMsg: "preemption: not eligible due to preemptionPolicy=Never.",
	}, {
		name:    "a node the filters rule out for good is no candidate",
		nodes:   []*v1.Node{frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Unschedulable().Obj()},
		pods:    []*v1.Pod{placed(low("low").Req("800m", ""), "n1")},
		pod:     high(),
		wantMsg: "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
	}, {
		name:  "anti-affinity: the pod's anti-affinity target is the victim",
		nodes: []*v1.Node{node("n1")},
		pods: []*v1.Pod{
			placed(low("target").Label("role", "db").Req("100m", ""), "n1"),
			placed(low("bystander").Req("100m", ""), "n1"),
		},
		pod: frameworktest.MakePod().Name("high").Priority(1000).Req("100m", "").
			RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("role", "db").Obj()).Obj(),
		wantNode:    "n1",
		wantVictims: []string{"target"},
		wantMsg:     "preemption: found a potential placement for pod on node n1, preempting 1 victims",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range tt.nodes {
				n.Labels = map[string]string{v1.LabelHostname: n.Name}
			}
			s := newPDBScheduler(t, tt.pdbs, tt.nodes...)
			for _, p := range tt.pods {
				s.Cache.AddPod(p)
			}
			node, victims, msg := tryPreempt(t, s, tt.pod)
			if node != tt.wantNode || !slices.Equal(victims, tt.wantVictims) || msg != tt.wantMsg {
				t.Errorf("got node %q, victims %v, message %q; want %q, %v, %q", node, victims, msg, tt.wantNode, tt.wantVictims, tt.wantMsg)
			}
		})
	}
}

// A pod whose victims are still in the cache does not preempt again; once
// they are gone it may.
func TestPreemptionWaitsForItsVictims(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
	victim := placed(frameworktest.MakePod().Name("low").Priority(10).Req("800m", ""), "n1")
	s.Cache.AddPod(victim)
	pod := frameworktest.MakePod().Name("high").Priority(1000).Req("500m", "").Obj()
	if node, _, msg := tryPreempt(t, s, pod); node != "n1" {
		t.Fatalf("first preemption: node %q, %s", node, msg)
	}
	if _, _, msg := tryPreempt(t, s, pod); !strings.Contains(msg, msgPreemptTerminating) {
		t.Errorf("second attempt while the victim is there: %q, want %q", msg, msgPreemptTerminating)
	}
	s.Cache.RemovePod(victim)
	s.Cache.AddPod(placed(frameworktest.MakePod().Name("other").Priority(10).Req("800m", ""), "n1"))
	if node, victims, msg := tryPreempt(t, s, pod); node != "n1" || !slices.Equal(victims, []string{"other"}) {
		t.Errorf("after the victim left and another took its place: node %q, victims %v, %s", node, victims, msg)
	}
}

// fakePDBLister lists the given budgets.
// A pod whose preemption found a node is told so: its FailedScheduling
// event and PodScheduled condition end with kube-scheduler v1.37's
// "preemption: found a potential placement for pod on node ...", not
// with the reasons alone.
func TestPreemptionMessageInFailedScheduling(t *testing.T) {
	low := placed(frameworktest.MakePod().Namespace("ns").Name("low").Priority(10).Req("800m", ""), "n1")
	pod := frameworktest.MakePod().Namespace("ns").Name("high").SchedulerName("yardmaster").Priority(1000).Req("500m", "").Obj()
	pod.UID = "high"
	client := fake.NewClientset(pod, low)
	rec := events.NewFakeRecorder(10)
	s, err := New(Options{
		Client:   client,
		Binder:   binder.New(client, rec, nil),
		Registry: registry.NewInTree(),
		Profiles: []framework.Profile{registry.DefaultProfile("yardmaster")},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Cache.AddNode(frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
	s.Cache.AddPod(low)
	s.Queue.Add(pod)
	s.scheduleOne(context.Background())
	s.bindWG.Wait() // the evictions
	s.binder.Wait() // the status patches

	// 800m (low) + 500m > 1 cpu; without low, 500m fits.
	const want = "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 1 victims"
	var failed []string
	for len(rec.Events) > 0 {
		if ev := <-rec.Events; strings.HasPrefix(ev, "Warning FailedScheduling ") {
			failed = append(failed, strings.TrimPrefix(ev, "Warning FailedScheduling "))
		}
	}
	if !slices.Equal(failed, []string{want}) {
		t.Errorf("FailedScheduling events %q, want one saying %q", failed, want)
	}
	got, err := client.CoreV1().Pods("ns").Get(context.Background(), "high", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.NominatedNodeName != "n1" {
		t.Errorf("nominated %q, want n1", got.Status.NominatedNodeName)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == v1.PodScheduled {
			if c.Status != v1.ConditionFalse || c.Message != want {
				t.Errorf("PodScheduled %s %q, want False %q", c.Status, c.Message, want)
			}
			return
		}
	}
	t.Error("no PodScheduled condition")
}

// DefaultPreemption's messages, kube-scheduler's words, which users and
// tools match.
const (
	msgPreemptTerminating = "not eligible due to a terminating pod on the nominated node."
	msgNoVictims          = "No preemption victims found for incoming pod"
)

// pdbHandle is a profile's handle whose informer factory holds
// PodDisruptionBudgets, for DefaultPreemption.
type pdbHandle struct {
	framework.PreemptionHandle
	f informers.SharedInformerFactory
}

func (h pdbHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.f }

// newPDBScheduler is newTestScheduler whose DefaultPreemption reads pdbs.
func newPDBScheduler(t *testing.T, pdbs []*policyv1.PodDisruptionBudget, nodes ...*v1.Node) *Scheduler {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	idx := f.Policy().V1().PodDisruptionBudgets().Informer().GetIndexer()
	for _, p := range pdbs {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	reg := registry.NewInTree()
	r := reg[defaultpreemption.Name]
	build := r.New
	r.New = func(args any, h framework.Handle) ([]framework.Plugin, error) {
		return build(args, pdbHandle{PreemptionHandle: h.(framework.PreemptionHandle), f: f})
	}
	reg[defaultpreemption.Name] = r
	s, err := New(Options{Registry: reg, Profiles: []framework.Profile{registry.DefaultProfile("yardmaster")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		s.Cache.AddNode(n)
	}
	return s
}

// Once its victims are gone, the room a pod preempted for is kept for it:
// a pod of lower priority does not fit beside it there, one of higher
// priority ignores it, and the pod itself takes the room.
func TestPreemptedRoomIsKept(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
	victim := placed(frameworktest.MakePod().Name("victim").Priority(10).Req("800m", ""), "n1")
	s.Cache.AddPod(victim)
	pod := frameworktest.MakePod().Name("preemptor").Priority(1000).Req("600m", "").Obj()
	if node, _, msg := tryPreempt(t, s, pod); node != "n1" {
		t.Fatalf("preemption: node %q, %s", node, msg)
	}
	s.Cache.RemovePod(victim)

	lower := frameworktest.MakePod().Name("lower").Priority(100).Req("600m", "").Obj()
	lower.UID = "lower"
	if node, err := s.scheduleForTest(lower); err == nil {
		t.Errorf("a lower-priority pod took the preempted room on %s", node)
	}
	higher := frameworktest.MakePod().Name("higher").Priority(2000).Req("100m", "").Obj()
	higher.UID = "higher"
	if _, err := s.scheduleForTest(higher); err != nil {
		t.Errorf("a higher-priority pod must ignore the nomination: %v", err)
	}
	if node, err := s.scheduleForTest(pod); err != nil || node != "n1" {
		t.Errorf("the preemptor: %q, %v", node, err)
	}
	if s.nominations.forPod(lower).count() != 0 {
		t.Errorf("the nomination outlived the preemptor's placement")
	}
}

// A pod nominated to a node waits only for the pods a scheduler preempted
// there, not for any pod that happens to be terminating.
func TestPreemptionWaitsOnlyForPreemptedPods(t *testing.T) {
	for _, preempted := range []bool{false, true} {
		s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
		leaving := placed(frameworktest.MakePod().Name("leaving").Priority(10).Req("500m", ""), "n1")
		leaving.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		if preempted {
			leaving.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
		}
		s.Cache.AddPod(leaving)
		s.Cache.AddPod(placed(frameworktest.MakePod().Name("low").Priority(10).Req("400m", ""), "n1"))
		pod := frameworktest.MakePod().Name("high").Priority(1000).Req("500m", "").Obj()
		pod.Status.NominatedNodeName = "n1"
		node, _, msg := tryPreempt(t, s, pod)
		if preempted && msg != "preemption: "+msgPreemptTerminating {
			t.Errorf("a victim of an earlier preemption is terminating: got node %q, %q", node, msg)
		}
		if !preempted && node != "n1" {
			t.Errorf("a pod terminating for another reason held the preemption back: %q", msg)
		}
	}
}

// When preemption finds nothing, the room kept for an earlier nomination
// is given up.
func TestPreemptionWithoutCandidatesDropsTheNomination(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
	victim := placed(frameworktest.MakePod().Name("low").Priority(10).Req("800m", ""), "n1")
	s.Cache.AddPod(victim)
	pod := frameworktest.MakePod().Name("high").Priority(1000).Req("500m", "").Obj()
	if node, _, msg := tryPreempt(t, s, pod); node != "n1" {
		t.Fatalf("preemption: %q, %s", node, msg)
	}
	// The victim went, and a pod of equal priority took the room.
	s.Cache.RemovePod(victim)
	s.Cache.AddPod(placed(frameworktest.MakePod().Name("peer").Priority(1000).Req("800m", ""), "n1"))
	if node, _, msg := tryPreempt(t, s, pod); node != "" || !strings.Contains(msg, msgNoVictims) {
		t.Fatalf("nothing to preempt: got %q, %q", node, msg)
	}
	if n := s.nominations.forPod(frameworktest.MakePod().Name("other").Obj()); n.count() != 0 {
		t.Errorf("the room is still kept: %v", n)
	}
}

// A nomination read from a pod's status (made before a restart, or by
// the leader before this one) keeps the room too, until it is cleared or
// the pod is placed.
func TestNominationFromStatus(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
	nominated := frameworktest.MakePod().Name("nominated").SchedulerName("yardmaster").Priority(1000).Req("600m", "").Obj()
	nominated.UID = "nominated"
	nominated.Status.NominatedNodeName = "n1"
	s.addPod(nominated)

	lower := frameworktest.MakePod().Name("lower").Priority(100).Req("600m", "").Obj()
	lower.UID = "lower"
	if node, err := s.scheduleForTest(lower); err == nil {
		t.Fatalf("a lower-priority pod took the nominated room on %s", node)
	}
	cleared := nominated.DeepCopy()
	cleared.ResourceVersion = "2"
	cleared.Status.NominatedNodeName = ""
	s.updatePod(nominated, cleared)
	if _, err := s.scheduleForTest(lower); err != nil {
		t.Errorf("the nomination was cleared, yet the room is kept: %v", err)
	}
}

// A nominated pod that waits with the gated pods (scheduling gates, or a
// PreEnqueue plugin turning it away) keeps its room too: kube-scheduler
// v1.37 records an added pod's nomination whether or not it is gated
// (PriorityQueue.addPod), where v1.36 recorded it only for a pod that
// entered activeQ.
func TestGatedNominationKeepsItsRoom(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
	gated := frameworktest.MakePod().Name("gated").SchedulerName("yardmaster").Priority(1000).Req("600m", "").SchedulingGate("wait").Obj()
	gated.UID = "gated"
	gated.Status.NominatedNodeName = "n1"
	s.addPod(gated)
	if loc := s.Queue.Locate(gated.UID); loc != queue.GatedPods {
		t.Fatalf("the gated pod is in %s", loc)
	}

	// 600m kept for the gated pod + 600m > 1 cpu.
	lower := frameworktest.MakePod().Name("lower").Priority(100).Req("600m", "").Obj()
	lower.UID = "lower"
	if node, err := s.scheduleForTest(lower); err == nil {
		t.Fatalf("a lower-priority pod took the gated pod's nominated room on %s", node)
	}
	// A pod of higher priority does not count it.
	higher := frameworktest.MakePod().Name("higher").Priority(2000).Req("600m", "").Obj()
	higher.UID = "higher"
	if _, err := s.scheduleForTest(higher); err != nil {
		t.Errorf("a higher-priority pod was kept out by a lower nomination: %v", err)
	}
}

// A pod nominated to a node tries that node first and, when it fits there,
// takes it without scoring the others, as kube-scheduler does: here an
// empty node added since would score higher under LeastAllocated.
func TestNominatedNodeFirst(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Capacity("1", "4Gi", 110).Obj())
	victim := placed(frameworktest.MakePod().Name("victim").Priority(10).Req("800m", ""), "n1")
	s.Cache.AddPod(victim)
	pod := frameworktest.MakePod().Name("preemptor").Priority(1000).Req("600m", "").Obj()
	if node, _, msg := tryPreempt(t, s, pod); node != "n1" {
		t.Fatalf("preemption: node %q, %s", node, msg)
	}
	s.Cache.RemovePod(victim)
	s.Cache.AddPod(placed(frameworktest.MakePod().Name("small").Priority(10).Req("100m", ""), "n1"))
	s.Cache.AddNode(frameworktest.MakeNode().Name("big").Capacity("64", "256Gi", 110).Obj())
	s.Cache.UpdateSnapshot(s.snapshot)
	for range 5 {
		res, err := s.schedulePod(context.Background(), s.profiles[pod.Spec.SchedulerName], framework.NewCycleState(), pod)
		if err != nil || res.node != "n1" || res.evaluated != 1 {
			t.Fatalf("the preemptor went to %q after evaluating %d nodes (%v), want its nominated n1 alone", res.node, res.evaluated, err)
		}
	}

	// Nominated by status only (another leader's preemption): the same.
	other := frameworktest.MakePod().Name("by-status").Priority(1000).Req("100m", "").Obj()
	other.UID = "by-status"
	other.Status.NominatedNodeName = "n1"
	if node, err := s.scheduleForTest(other); err != nil || node != "n1" {
		t.Errorf("a pod nominated by its status went to %q (%v), want n1", node, err)
	}
}

// count returns how many nominated pods the pod must fit beside.
func (v nominatedView) count() int {
	n := 0
	if v.idx != nil {
		for node := range v.idx.byNode {
			n += len(v.on(node))
		}
	}
	return n
}

// On a node that holds a nomination, the reason preemption gives is the
// one the pod gets beside the nominated pods when it fails there, as in
// kube-scheduler (RunFilterPluginsWithNominatedPods runs that check
// first): here Insufficient cpu, though without the nominated pod the
// pod would fail for the anti-affinity alone.
func TestPreemptionReasonBesideNominatedPods(t *testing.T) {
	s := newTestScheduler(t, 0, frameworktest.MakeNode().Name("n1").Label(v1.LabelHostname, "n1").Capacity("1", "4Gi", 110).Obj())
	s.Cache.AddPod(placed(frameworktest.MakePod().Name("db").Priority(2000).Label("role", "db").Req("100m", ""), "n1"))
	s.Cache.AddPod(placed(frameworktest.MakePod().Name("low").Priority(10).Req("100m", ""), "n1"))
	nominated := frameworktest.MakePod().Name("nominated").SchedulerName("yardmaster").Priority(2000).Req("600m", "").Obj()
	nominated.UID = "nominated"
	nominated.Status.NominatedNodeName = "n1"
	s.addPod(nominated)

	// 100m (db) + 600m (nominated) + 500m > 1 cpu once low is gone.
	pod := frameworktest.MakePod().Name("high").Priority(1000).Req("500m", "").
		RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("role", "db").Obj()).Obj()
	node, _, msg := tryPreempt(t, s, pod)
	if want := "preemption: 0/1 nodes are available: 1 Insufficient cpu."; node != "" || msg != want {
		t.Errorf("got node %q, %q; want no node, %q", node, msg, want)
	}
}
