package cache_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
)

func nodeNames(s *cache.Snapshot) []string {
	var out []string
	for _, ni := range s.List() {
		out = append(out, ni.Node().Name)
	}
	return out
}

func TestAssumeConfirmForget(t *testing.T) {
	c := cache.New(clocktesting.NewFakeClock(time.Now()), time.Minute)
	c.AddNode(frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj())
	pod := frameworktest.MakePod().Name("p").Req("1", "1Gi").Node("n1").Obj()

	if err := c.AssumePod(pod); err != nil {
		t.Fatal(err)
	}
	if err := c.AssumePod(pod); err == nil {
		t.Error("assuming the same pod twice succeeded")
	}
	ni, _ := c.NodeInfo("n1")
	if got := ni.Requested.MilliCPU; got != 1000 {
		t.Errorf("requested cpu after assume = %d, want 1000", got)
	}

	// The informer confirms the binding: still counted once, no longer assumed.
	c.AddPod(pod)
	if c.IsAssumed(pod.UID) {
		t.Error("pod still assumed after the informer confirmed it")
	}
	ni, _ = c.NodeInfo("n1")
	if got := ni.Requested.MilliCPU; got != 1000 {
		t.Errorf("requested cpu after confirm = %d, want 1000 (counted once)", got)
	}
	if c.ForgetPod(pod) {
		t.Error("ForgetPod of a confirmed pod returned true")
	}

	// Forgetting an assumed pod gives the capacity back.
	other := frameworktest.MakePod().Name("q").Req("2", "").Node("n1").Obj()
	_ = c.AssumePod(other)
	if !c.ForgetPod(other) {
		t.Error("ForgetPod of an assumed pod returned false")
	}
	ni, _ = c.NodeInfo("n1")
	if got := ni.Requested.MilliCPU; got != 1000 {
		t.Errorf("requested cpu after forget = %d, want 1000", got)
	}
}

func TestAssumedPodConfirmedOnAnotherNode(t *testing.T) {
	c := cache.New(nil, 0)
	c.AddNode(frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj())
	c.AddNode(frameworktest.MakeNode().Name("n2").Capacity("4", "8Gi", 110).Obj())
	pod := frameworktest.MakePod().Name("p").Req("1", "").Node("n1").Obj()
	_ = c.AssumePod(pod)
	bound := pod.DeepCopy()
	bound.Spec.NodeName = "n2"
	c.AddPod(bound)
	n1, _ := c.NodeInfo("n1")
	n2, _ := c.NodeInfo("n2")
	if n1.Requested.MilliCPU != 0 || n2.Requested.MilliCPU != 1000 {
		t.Errorf("cpu n1=%d n2=%d, want 0 and 1000", n1.Requested.MilliCPU, n2.Requested.MilliCPU)
	}
}

func TestAssumedPodExpiresOnlyAfterBindingFinished(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	c := cache.New(clk, time.Minute)
	c.AddNode(frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj())
	pod := frameworktest.MakePod().Name("p").Req("1", "").Node("n1").Obj()
	_ = c.AssumePod(pod)

	clk.Step(time.Hour)
	if got := c.CleanupExpired(); len(got) != 0 {
		t.Fatalf("expired %d pods whose binding is still in flight", len(got))
	}
	c.FinishBinding(pod)
	clk.Step(30 * time.Second)
	if got := c.CleanupExpired(); len(got) != 0 {
		t.Fatalf("expired before the TTL")
	}
	clk.Step(31 * time.Second)
	if got := c.CleanupExpired(); len(got) != 1 {
		t.Fatalf("expired %d pods, want 1", len(got))
	}
	if _, pods, assumed := c.Counts(); pods != 0 || assumed != 0 {
		t.Errorf("pods=%d assumed=%d after expiry, want 0", pods, assumed)
	}
}

func TestPodBeforeNodeAndNodeRemoval(t *testing.T) {
	c := cache.New(nil, 0)
	s := cache.NewSnapshot()
	// The pod informer can deliver a pod before its node.
	c.AddPod(frameworktest.MakePod().Name("early").Req("1", "").Node("n1").Obj())
	c.UpdateSnapshot(s)
	if s.NumNodes() != 0 {
		t.Fatalf("a node without a Node object is in the snapshot: %v", nodeNames(s))
	}
	c.AddNode(frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj())
	c.UpdateSnapshot(s)
	ni, err := s.Get("n1")
	if err != nil {
		t.Fatal(err)
	}
	if ni.Requested.MilliCPU != 1000 {
		t.Errorf("requested cpu = %d, want the early pod's 1000", ni.Requested.MilliCPU)
	}
	c.RemoveNode(ni.Node())
	c.UpdateSnapshot(s)
	if s.NumNodes() != 0 {
		t.Errorf("removed node still listed: %v", nodeNames(s))
	}
}

func TestSnapshotCopiesOnlyChangedNodes(t *testing.T) {
	c := cache.New(nil, 0)
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(frameworktest.MakeNode().Name(n).Capacity("4", "8Gi", 110).Obj())
	}
	s := cache.NewSnapshot()
	c.UpdateSnapshot(s)
	a, _ := s.Get("a")
	b, _ := s.Get("b")
	aGen, bGen := a.Generation, b.Generation

	c.AddPod(frameworktest.MakePod().Name("p").Req("1", "").Node("b").Obj())
	c.UpdateSnapshot(s)
	if a.Generation != aGen {
		t.Errorf("unchanged node a was copied (generation %d → %d)", aGen, a.Generation)
	}
	if b.Generation == bGen || b.Requested.MilliCPU != 1000 {
		t.Errorf("changed node b not refreshed in place: generation %d, cpu %d", b.Generation, b.Requested.MilliCPU)
	}
	// The snapshot is isolated from later cache changes until the next update.
	c.AddPod(frameworktest.MakePod().Name("q").Req("1", "").Node("b").Obj())
	if b.Requested.MilliCPU != 1000 {
		t.Errorf("snapshot changed under the cycle: cpu %d", b.Requested.MilliCPU)
	}
}

func TestNodeSlots(t *testing.T) {
	c := cache.New(nil, 0)
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(frameworktest.MakeNode().Name(n).Obj())
	}
	slot := func(name string) int {
		ni, ok := c.NodeInfo(name)
		if !ok {
			t.Fatalf("node %s not held", name)
		}
		return ni.Slot
	}
	if got := []int{slot("a"), slot("b"), slot("c")}; fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("slots = %v, want [1 2 3]", got)
	}
	// A pod that arrives before its node holds a slot too; the node keeps it.
	c.AddPod(frameworktest.MakePod().Name("early").Node("d").Obj())
	c.AddNode(frameworktest.MakeNode().Name("d").Obj())
	if slot("d") != 4 {
		t.Errorf("slot of d = %d, want 4", slot("d"))
	}
	// A node that is gone gives its slot to the next new one.
	c.RemoveNode(frameworktest.MakeNode().Name("b").Obj())
	c.AddNode(frameworktest.MakeNode().Name("e").Obj())
	if slot("e") != 2 {
		t.Errorf("slot of e = %d, want b's freed 2", slot("e"))
	}
	// The snapshot carries the slots.
	s := cache.NewSnapshot()
	c.UpdateSnapshot(s)
	if ni, _ := s.Get("e"); ni.Slot != 2 {
		t.Errorf("snapshot slot of e = %d, want 2", ni.Slot)
	}
}

func TestSnapshotInterleavesZones(t *testing.T) {
	c := cache.New(nil, 0)
	for _, n := range []struct{ name, zone string }{
		{"a1", "a"}, {"a2", "a"}, {"a3", "a"}, {"b1", "b"}, {"b2", "b"}, {"c1", "c"},
	} {
		c.AddNode(frameworktest.MakeNode().Name(n.name).Label(v1.LabelTopologyZone, n.zone).Obj())
	}
	s := cache.NewSnapshot()
	c.UpdateSnapshot(s)
	want := []string{"a1", "b1", "c1", "a2", "b2", "a3"}
	if diff := cmp.Diff(want, nodeNames(s)); diff != "" {
		t.Errorf("node order (-want +got):\n%s", diff)
	}
}

func TestAffinityLists(t *testing.T) {
	c := cache.New(nil, 0)
	c.AddNode(frameworktest.MakeNode().Name("a").Obj())
	c.AddNode(frameworktest.MakeNode().Name("b").Obj())
	s := cache.NewSnapshot()
	c.UpdateSnapshot(s)
	if len(s.HavePodsWithAffinityList()) != 0 {
		t.Fatal("affinity list not empty")
	}
	p := frameworktest.MakePod().Name("anti").Node("b").Obj()
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{TopologyKey: v1.LabelHostname}},
	}}
	c.AddPod(p)
	c.UpdateSnapshot(s)
	if got := len(s.HavePodsWithRequiredAntiAffinityList()); got != 1 {
		t.Errorf("required anti-affinity list has %d nodes, want 1", got)
	}
	c.RemovePod(p)
	c.UpdateSnapshot(s)
	if got := len(s.HavePodsWithAffinityList()); got != 0 {
		t.Errorf("affinity list has %d nodes after removal, want 0", got)
	}
}

func TestImageStates(t *testing.T) {
	c := cache.New(nil, 0)
	c.AddNode(frameworktest.MakeNode().Name("a").Image(100, "img:1").Obj())
	c.AddNode(frameworktest.MakeNode().Name("b").Image(100, "img:1").Obj())
	s := cache.NewSnapshot()
	c.UpdateSnapshot(s)
	// Both copies count both nodes, whichever node was added first.
	for _, n := range []string{"a", "b"} {
		ni, _ := s.Get(n)
		if got := ni.ImageStates["img:1"].NumNodes; got != 2 {
			t.Errorf("node %s: NumNodes = %d, want 2", n, got)
		}
	}
}

// checkSlots fails unless s's nodes by slot are exactly its listed nodes.
func checkSlots(t *testing.T, what string, s *cache.Snapshot) {
	t.Helper()
	slots := s.Slots()
	if !slots.Lists(s.List()) && len(s.List()) > 0 {
		t.Errorf("%s: Slots().List is not the snapshot's list", what)
	}
	filed := 0
	for slot, ni := range slots.Nodes {
		if ni == nil {
			if slots.Gens[slot] != 0 {
				t.Errorf("%s: empty slot %d has generation %d", what, slot, slots.Gens[slot])
			}
			continue
		}
		filed++
		if ni.Slot != slot || slots.Gens[slot] != ni.Generation {
			t.Errorf("%s: slot %d holds node %s with slot %d, generation %d (filed %d)", what, slot, ni.Node().Name, ni.Slot, ni.Generation, slots.Gens[slot])
		}
	}
	if filed != len(s.List()) {
		t.Errorf("%s: %d nodes by slot, %d listed", what, filed, len(s.List()))
	}
}

func TestHostnamesUnique(t *testing.T) {
	c := cache.New(nil, 0)
	s := cache.NewSnapshot()
	node := func(name, hostname string) *v1.Node {
		n := frameworktest.MakeNode().Name(name).Obj()
		if hostname == "" {
			delete(n.Labels, v1.LabelHostname)
		} else {
			n.Labels[v1.LabelHostname] = hostname
		}
		return n
	}
	step := func(what string, want bool) {
		t.Helper()
		c.UpdateSnapshot(s)
		if got := s.HostnamesUnique(); got != want {
			t.Errorf("%s: HostnamesUnique() = %v, want %v", what, got, want)
		}
		checkSlots(t, what, s)
	}
	c.AddNode(node("a", "ha"))
	c.AddNode(node("b", "hb"))
	c.AddNode(node("c", ""))
	step("distinct hostnames, one node without", true)
	c.UpdateNode(nil, node("b", "ha"))
	step("b relabelled as a", false)
	c.UpdateNode(nil, node("c", "ha"))
	step("three nodes share one", false)
	c.UpdateNode(nil, node("b", "hb"))
	step("b back, a and c still share", false)
	// A removed node that still holds a pod leaves the snapshot too.
	c.AddPod(frameworktest.MakePod().Name("p").Node("c").Obj())
	c.RemoveNode(node("c", "ha"))
	step("c removed", true)
	c.AddNode(node("c", "hb"))
	step("c back as b's twin", false)
	c.RemoveNode(node("b", "hb"))
	step("b removed", true)
	// Removed and added again between two updates: it may change slot.
	c.RemoveNode(node("a", "ha"))
	c.AddNode(node("d", "hd"))
	c.AddNode(node("a", "ha"))
	step("a removed, d added, a back", true)
}

// The affinity lists change by the nodes that change. Over random changes
// (pods with and without terms come and go, nodes go with pods left on
// them and come back, several changes between two updates), they must
// hold exactly the listed nodes with such pods.
func TestAffinityListsFollowChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := cache.New(nil, 0)
	s := cache.NewSnapshot()
	names := []string{"a", "b", "c", "d", "e", "f"}
	up := map[string]bool{}
	for _, n := range names {
		c.AddNode(frameworktest.MakeNode().Name(n).Obj())
		up[n] = true
	}
	var pods []*v1.Pod
	for step := range 3000 {
		switch r := rng.IntN(10); {
		case r < 5:
			w := frameworktest.MakePod().Name(fmt.Sprintf("p%d", step)).Node(names[rng.IntN(len(names))])
			term := frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("app", "x").Obj()
			switch rng.IntN(4) {
			case 0:
				w.RequiredPodAntiAffinity(term)
			case 1:
				w.PreferredPodAffinity(1, term)
			}
			p := w.Obj()
			p.UID = types.UID(p.Name)
			c.AddPod(p)
			pods = append(pods, p)
		case r < 8 && len(pods) > 0:
			i := rng.IntN(len(pods))
			c.RemovePod(pods[i])
			pods = append(pods[:i], pods[i+1:]...)
		default:
			n := names[rng.IntN(len(names))]
			if up[n] {
				c.RemoveNode(frameworktest.MakeNode().Name(n).Obj())
			} else {
				c.AddNode(frameworktest.MakeNode().Name(n).Obj())
			}
			up[n] = !up[n]
		}
		if rng.IntN(3) > 0 {
			continue
		}
		c.UpdateSnapshot(s)
		var wantAff, wantAnti []string
		for _, ni := range s.List() {
			if len(ni.PodsWithAffinity) > 0 {
				wantAff = append(wantAff, ni.Node().Name)
			}
			if len(ni.PodsWithRequiredAntiAffinity) > 0 {
				wantAnti = append(wantAnti, ni.Node().Name)
			}
		}
		sorted := func(l []*framework.NodeInfo) []string {
			var out []string
			for _, ni := range l {
				out = append(out, ni.Node().Name)
			}
			slices.Sort(out)
			return out
		}
		if diff := cmp.Diff(wantAff, sorted(s.HavePodsWithAffinityList())); diff != "" {
			t.Fatalf("step %d: nodes with affinity pods (-want +got):\n%s", step, diff)
		}
		if diff := cmp.Diff(wantAnti, sorted(s.HavePodsWithRequiredAntiAffinityList())); diff != "" {
			t.Fatalf("step %d: nodes with required anti-affinity pods (-want +got):\n%s", step, diff)
		}
		if err := s.CheckNodeSets(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		checkSlots(t, fmt.Sprintf("step %d", step), s)
	}
}
