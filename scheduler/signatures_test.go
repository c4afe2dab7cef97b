package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// cycleOutcome is everything a cycle decides before the node is picked: the
// feasible nodes in order with their total scores, or why none is.
type cycleOutcome struct {
	Feasible []string
	Totals   []int64
	Reasons  map[string]int
	Err      string
}

// cycleForTest runs PreFilter to the weighted score totals for pod on the
// current cache, as schedulePod does, and returns what they decided.
func (s *Scheduler) cycleForTest(t *testing.T, pod *v1.Pod) cycleOutcome {
	t.Helper()
	s.Cache.UpdateSnapshot(s.snapshot)
	prof := s.profiles[pod.Spec.SchedulerName]
	state := framework.NewCycleState()
	ctx := context.Background()
	feasible, _, fitErr, err := s.findFeasible(ctx, prof, state, pod, s.snapshot.List(), nil)
	var out cycleOutcome
	switch {
	case err != nil:
		out.Err = err.Error()
		return out
	case fitErr != nil:
		out.Reasons = fitErr.ReasonCounts
		out.Err = fitErr.Error()
		return out
	}
	totals, err := s.prioritize(ctx, prof, state, pod, feasible, s.feasibleSlotsBuf[:len(feasible)], nil)
	if err != nil {
		out.Err = err.Error()
		return out
	}
	for _, ni := range feasible {
		out.Feasible = append(out.Feasible, ni.Node().Name)
	}
	out.Totals = slices.Clone(totals)
	return out
}

// TestSignaturesGiveTheSameAnswers runs two schedulers side by side on one
// changing cluster, one keeping signing plugins' answers across cycles
// (framework.PodSigner) and one asking every plugin every time, and
// requires the same feasible nodes, in the same order, with the same score
// totals, or the same reasons, in every cycle. The pods come from a few
// templates, so that signatures repeat, and differ from each other in one
// thing a signing plugin reads (requests, tolerations, selectors,
// preferred affinity, host ports, images, required node features); between
// cycles, pods are placed and removed and nodes change, come and go, so
// that kept answers go stale. The last seeds run a profile whose
// NodeAffinity adds affinity of its own (addedAffinity), which is the
// plugin's configuration and so in no signature.
func TestSignaturesGiveTheSameAnswers(t *testing.T) {
	const seeds = 6
	added := &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, "zone-0", "zone-1").Obj(),
		}},
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
			{Weight: 20, Preference: frameworktest.MakeNodeSelectorTerm().In("disk", "ssd").Obj()},
		},
	}}
	for seed := range uint64(seeds) {
		var args *nodeaffinity.Args
		if seed >= seeds-2 {
			args = added
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { signaturesDifferential(t, seed, args) })
	}
}

func signaturesDifferential(t *testing.T, seed uint64, nodeAffinity *nodeaffinity.Args) {
	rng := rand.New(rand.NewPCG(seed, 42))
	nodeName := func(i int) string { return fmt.Sprintf("n%03d", i) }
	makeNode := func(i int) *v1.Node {
		nw := frameworktest.MakeNode().Name(nodeName(i)).
			Capacity(fmt.Sprint(2+rng.IntN(6)), fmt.Sprintf("%dGi", 4+rng.IntN(12)), int64(4+rng.IntN(8))).
			Label(v1.LabelHostname, nodeName(i)).
			Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", rng.IntN(3))).
			Label("disk", []string{"ssd", "hdd"}[rng.IntN(2)])
		if rng.IntN(3) == 0 {
			nw = nw.Image(int64(100+rng.IntN(400))<<20, "registry.example/web:1")
		}
		if rng.IntN(2) == 0 {
			nw.Status.DeclaredFeatures = []string{"RestartAllContainersOnContainerExits"}
		}
		switch rng.IntN(8) {
		case 0:
			nw = nw.Taint("dedicated", "gpu", v1.TaintEffectNoSchedule)
		case 1:
			nw = nw.Taint("spot", "", v1.TaintEffectPreferNoSchedule)
		case 2:
			nw = nw.Unschedulable()
		}
		return nw.Obj()
	}

	// Templates: each differs from the first in one thing a signing
	// plugin reads; the last ones also bring plugins that do not sign.
	web := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Label("app", "web").Req("500m", "1Gi")
	}
	templates := []func() *frameworktest.PodWrapper{
		web,
		func() *frameworktest.PodWrapper { return web().Req("1500m", "1Gi") },
		func() *frameworktest.PodWrapper {
			return frameworktest.MakePod().Label("app", "web").Req("500m", "3Gi")
		},
		func() *frameworktest.PodWrapper {
			return web().Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule)
		},
		func() *frameworktest.PodWrapper {
			return web().Toleration("spot", v1.TolerationOpExists, "", v1.TaintEffectPreferNoSchedule)
		},
		func() *frameworktest.PodWrapper {
			return web().Toleration("node.kubernetes.io/unschedulable", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)
		},
		func() *frameworktest.PodWrapper { return web().NodeSelector(map[string]string{"disk": "ssd"}) },
		func() *frameworktest.PodWrapper { return web().NodeSelector(map[string]string{"disk": "hdd"}) },
		func() *frameworktest.PodWrapper {
			return web().PreferredNodeAffinity(10, frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, "zone-1").Obj())
		},
		func() *frameworktest.PodWrapper {
			return web().PreferredNodeAffinity(30, frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, "zone-1").Obj())
		},
		func() *frameworktest.PodWrapper { return web().HostPort(8080, v1.ProtocolTCP, "") },
		func() *frameworktest.PodWrapper { return web().HostPort(8081, v1.ProtocolTCP, "") },
		func() *frameworktest.PodWrapper { return web().InitReq("3", "1Gi") },
		func() *frameworktest.PodWrapper { return web().PodReq(map[v1.ResourceName]string{v1.ResourceCPU: "3"}) },
		func() *frameworktest.PodWrapper {
			w := web()
			w.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers}}
			return w
		},
		func() *frameworktest.PodWrapper {
			w := web()
			w.Spec.Containers[0].Image = "registry.example/web:1"
			return w
		},
		func() *frameworktest.PodWrapper {
			return web().SpreadConstraint(frameworktest.MakeSpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule).MatchLabels("app", "web").Obj())
		},
		func() *frameworktest.PodWrapper {
			return web().RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("app", "web").Obj())
		},
	}

	const initialNodes = 150
	var nodes []*v1.Node
	for i := range initialNodes {
		nodes = append(nodes, makeNode(i))
	}
	profile := registry.DefaultProfile("yardmaster")
	if nodeAffinity != nil {
		profile.Args[nodeaffinity.Name] = nodeAffinity
	}
	newSched := func(signatures bool) *Scheduler {
		t.Helper()
		s, err := New(Options{
			Registry:                 registry.NewInTree(),
			Profiles:                 []framework.Profile{profile},
			PercentageOfNodesToScore: 10, // 100 of 150 nodes: scans stop early
			Parallelism:              1,  // the same node order in both
		})
		if err != nil {
			t.Fatal(err)
		}
		s.noShortcuts = !signatures
		for _, n := range nodes {
			s.Cache.AddNode(n)
		}
		return s
	}
	kept, asked := newSched(true), newSched(false)
	both := func(f func(s *Scheduler)) { f(kept); f(asked) }

	var placed []*v1.Pod
	nextNode := initialNodes
	addNode := func() {
		n := makeNode(nextNode)
		nextNode++
		nodes = append(nodes, n)
		both(func(s *Scheduler) { s.Cache.AddNode(n) })
	}
	// removeNode removes a random node and the pods placed on it.
	removeNode := func() {
		i := rng.IntN(len(nodes))
		gone := nodes[i]
		nodes = slices.Delete(nodes, i, i+1)
		placed = slices.DeleteFunc(placed, func(p *v1.Pod) bool {
			if p.Spec.NodeName == gone.Name {
				both(func(s *Scheduler) { s.Cache.ForgetPod(p) })
				return true
			}
			return false
		})
		both(func(s *Scheduler) { s.Cache.RemoveNode(gone) })
	}
	for cycle := range 1500 {
		pod := templates[rng.IntN(len(templates))]().Name(fmt.Sprintf("p%d", cycle)).Obj()
		pod.UID = types.UID(pod.Name)
		pod.Spec.SchedulerName = "yardmaster"
		got, want := kept.cycleForTest(t, pod), asked.cycleForTest(t, pod)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("cycle %d, pod %s: kept answers differ from asked ones (-asked +kept):\n%s", cycle, pod.Name, diff)
		}
		if len(want.Feasible) > 0 {
			best := 0
			for i, v := range want.Totals {
				if v > want.Totals[best] {
					best = i
				}
			}
			p := pod.DeepCopy()
			p.Spec.NodeName = want.Feasible[best]
			both(func(s *Scheduler) {
				if err := s.Cache.AssumePod(p.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			})
			placed = append(placed, p)
		}

		// Change the cluster now and then, the same way in both.
		switch r := rng.IntN(24); {
		case r < 4 && len(placed) > 0:
			i := rng.IntN(len(placed))
			p := placed[i]
			placed = slices.Delete(placed, i, i+1)
			both(func(s *Scheduler) { s.Cache.ForgetPod(p) })
		case r == 4:
			i := rng.IntN(len(nodes))
			n := makeNode(i)
			n.Name, n.Labels[v1.LabelHostname] = nodes[i].Name, nodes[i].Name
			old := nodes[i]
			nodes[i] = n
			both(func(s *Scheduler) { s.Cache.UpdateNode(old, n) })
		case r == 5:
			// A node goes, with its pods, and another comes: it may take
			// the freed slot.
			removeNode()
			addNode()
		case r == 6:
			// One node more: the node count ImageLocality scales by moves.
			addNode()
		case r == 7 && len(nodes) > 120:
			removeNode()
		}
	}
}
