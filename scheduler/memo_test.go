package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// TestConstraintsHoldAcrossCycles schedules zone-spread and hostname
// anti-affinity pods one cycle after the other while pods are deleted and
// nodes come and go, and checks after every cycle that spread skew and
// anti-affinity hold. The plugins remember per-node counts between cycles
// (framework.NodeMemo); a count not refreshed when a node changed would
// show here as a broken constraint.
func TestConstraintsHoldAcrossCycles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	node := func(i int) *v1.Node {
		return frameworktest.MakeNode().Name(fmt.Sprintf("n%02d", i)).Capacity("64", "256Gi", 110).
			Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3)).Obj()
	}
	var nodes []*v1.Node
	for i := range 24 {
		nodes = append(nodes, node(i))
	}
	s := newTestScheduler(t, 100, nodes...)
	nextNode := len(nodes)

	spread := func(i int) *v1.Pod {
		p := frameworktest.MakePod().Name(fmt.Sprintf("spread-%d", i)).Label("app", "web").Req("10m", "").Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		}}
		return p
	}
	anti := func(i int) *v1.Pod {
		p := frameworktest.MakePod().Name(fmt.Sprintf("anti-%d", i)).Label("app", "db").Req("10m", "").Obj()
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				TopologyKey:   v1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			}},
		}}
		return p
	}

	placed := map[string]*v1.Pod{} // by name, with NodeName set
	zoneOf := func(nodeName string) string {
		for _, n := range nodes {
			if n.Name == nodeName {
				return n.Labels[v1.LabelTopologyZone]
			}
		}
		return ""
	}
	// check verifies that pod p, just placed, broke no constraint given
	// the pods placed before it.
	check := func(step int, p *v1.Pod) {
		t.Helper()
		zones := map[string]int{"zone-0": 0, "zone-1": 0, "zone-2": 0}
		for _, q := range placed {
			switch {
			case q.Labels["app"] == "web" && p.Labels["app"] == "web":
				zones[zoneOf(q.Spec.NodeName)]++
			case q.Labels["app"] == "db" && p.Labels["app"] == "db" && q.Spec.NodeName == p.Spec.NodeName:
				t.Fatalf("step %d: %s placed on %s next to %s", step, p.Name, p.Spec.NodeName, q.Name)
			}
		}
		if p.Labels["app"] != "web" {
			return
		}
		lo := 1 << 30
		for _, n := range zones {
			lo = min(lo, n)
		}
		if skew := zones[zoneOf(p.Spec.NodeName)] + 1 - lo; skew > 1 {
			t.Fatalf("step %d: %s placed in %s makes skew %d: %v", step, p.Name, zoneOf(p.Spec.NodeName), skew, zones)
		}
	}

	scheduled := 0
	for step := range 300 {
		var p *v1.Pod
		if step%2 == 0 {
			p = spread(step)
		} else {
			p = anti(step)
		}
		p.UID = types.UID(p.Name)
		nodeName, err := s.scheduleForTest(p)
		if err == nil {
			p.Spec.NodeName = nodeName
			check(step, p)
			placed[p.Name] = p
			scheduled++
		}

		switch r := rng.IntN(10); {
		case r < 3 && len(placed) > 0:
			// A pod goes away: one node's counts change.
			for name, q := range placed {
				s.Cache.RemovePod(q)
				delete(placed, name)
				break
			}
		case r == 3:
			// A node goes away with its pods, and a new one takes its slot.
			i := rng.IntN(len(nodes))
			gone := nodes[i]
			for name, q := range placed {
				if q.Spec.NodeName == gone.Name {
					s.Cache.RemovePod(q)
					delete(placed, name)
				}
			}
			s.Cache.RemoveNode(gone)
			nodes[i] = node(nextNode)
			nextNode++
			s.Cache.AddNode(nodes[i])
		}
	}
	if scheduled < 200 {
		t.Errorf("only %d of 300 pods scheduled; the test checks too little", scheduled)
	}
}
