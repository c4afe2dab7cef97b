package framework

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// domainValue is what a node adds to a total: count pods in domain.
type domainValue struct {
	domain string
	count  int
}

// syncDomains runs SyncTotal with a total of pods per domain (the node's
// "zone" label), dropping domains that fall to zero, as the plugins do.
func syncDomains(m *NodeMemo[domainValue], key string, nodes []*NodeInfo) (map[string]int, int) {
	total, _, computed := syncDomainsValues(m, key, nodes, NodeSlots{})
	return total, computed
}

// syncDomainsValues is syncDomains that also returns the values by node,
// and may be given the slots nodes are the list of.
func syncDomainsValues(m *NodeMemo[domainValue], key string, nodes []*NodeInfo, slots NodeSlots) (map[string]int, NodeValues[domainValue], int) {
	computed := 0
	total, values := SyncTotal(m, key, nodes, slots, func(ni *NodeInfo) domainValue {
		computed++ // not in parallel: the tests list fewer nodes than memoParallelAbove
		return domainValue{ni.node.Labels["zone"], len(ni.Pods)}
	}, func() map[string]int { return map[string]int{} }, func(total map[string]int, v domainValue, sign int64) {
		if v.count == 0 {
			return
		}
		total[v.domain] += int(sign) * v.count
		if total[v.domain] == 0 {
			delete(total, v.domain)
		}
	})
	return total, values, computed
}

// fromScratch is the total SyncTotal must equal.
func fromScratch(nodes []*NodeInfo) map[string]int {
	out := map[string]int{}
	for _, ni := range nodes {
		if n := len(ni.Pods); n > 0 {
			out[ni.node.Labels["zone"]] += n
		}
	}
	return out
}

func zoneNode(slot int, gen int64, zone string, pods int) *NodeInfo {
	ni := memoNode(slot, gen, pods)
	ni.node = &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"zone": zone}}}
	return ni
}

func TestSyncTotal(t *testing.T) {
	m := NewNodeMemo[domainValue](NewParallelizer(2))
	a, b, handMade := zoneNode(1, 10, "z1", 2), zoneNode(2, 11, "z1", 1), zoneNode(0, 0, "z2", 4)
	check := func(step string, nodes []*NodeInfo, wantComputed int) {
		t.Helper()
		got, computed := syncDomains(m, "k", nodes)
		if want := fromScratch(nodes); !maps.Equal(got, want) || computed != wantComputed {
			t.Errorf("%s: total %v with %d computed, want %v with %d computed", step, got, computed, want, wantComputed)
		}
	}
	check("first", []*NodeInfo{a, b, handMade}, 3)
	check("again: only the hand-made node", []*NodeInfo{a, b, handMade}, 1)
	check("hand-made node gone", []*NodeInfo{a, b}, 0)
	// a moves to z2 with a new pod: its old count leaves z1.
	a2 := zoneNode(1, 12, "z2", 3)
	check("a changed", []*NodeInfo{a2, b}, 1)
	check("b no longer listed", []*NodeInfo{a2}, 0)
	check("b listed again", []*NodeInfo{a2, b}, 1)
	// Two NodeInfos with one slot: both count, the second as a transient.
	dup := zoneNode(2, 20, "z3", 5)
	check("duplicate slot", []*NodeInfo{a2, b, dup}, 1)
	check("duplicate gone", []*NodeInfo{a2, b}, 0)
	check("nothing listed", nil, 0)
	check("back", []*NodeInfo{a2, b}, 2)
}

// Random churn, several keys (some forgotten for lack of room), duplicate
// slots and hand-made nodes: the running total always equals the sum.
func TestSyncTotalRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := NewNodeMemo[domainValue](NewParallelizer(2))
	const slots = 40
	var gen int64
	nodes := make([]*NodeInfo, slots)
	for i := range nodes {
		gen++
		nodes[i] = zoneNode(i+1, gen, fmt.Sprintf("z%d", rng.IntN(4)), rng.IntN(3))
	}
	keys := maxMemoKeys + 8
	for step := range 3000 {
		// Change a few nodes: pods, zone, or a new node in the slot.
		for range rng.IntN(4) {
			i := rng.IntN(slots)
			gen++
			nodes[i] = zoneNode(i+1, gen, fmt.Sprintf("z%d", rng.IntN(4)), rng.IntN(4))
		}
		// List a random subset, sometimes with a duplicate or a hand-made
		// node; or every node, with their slots as a snapshot has them.
		var listed []*NodeInfo
		var slots NodeSlots
		if rng.IntN(3) == 0 {
			listed = slices.Clone(nodes)
			slots = NodeSlots{List: listed, Nodes: make([]*NodeInfo, len(nodes)+1), Gens: make([]int64, len(nodes)+1)}
			for _, ni := range nodes {
				slots.Nodes[ni.Slot], slots.Gens[ni.Slot] = ni, ni.Generation
			}
		} else {
			for _, ni := range nodes {
				if rng.IntN(5) > 0 {
					listed = append(listed, ni)
				}
			}
			if rng.IntN(10) == 0 && len(listed) > 0 {
				d := *listed[rng.IntN(len(listed))]
				d.Generation++
				listed = append(listed, &d)
			}
			if rng.IntN(10) == 0 {
				listed = append(listed, zoneNode(0, 0, "z9", 1+rng.IntN(3)))
			}
			rng.Shuffle(len(listed), func(i, j int) { listed[i], listed[j] = listed[j], listed[i] })
		}
		key := fmt.Sprintf("k%d", rng.IntN(keys))
		got, values, _ := syncDomainsValues(m, key, listed, slots)
		if want := fromScratch(listed); !maps.Equal(got, want) {
			t.Fatalf("step %d, key %s: total %v, want %v", step, key, got, want)
		}
		// Every node the cache made has its own value, but for a second
		// NodeInfo with a slot already listed.
		first := map[int]*NodeInfo{}
		for _, ni := range listed {
			if _, ok := first[ni.Slot]; !ok {
				first[ni.Slot] = ni
			}
		}
		for _, ni := range listed {
			v, ok := values.Get(ni)
			filed := ni.Generation != 0 && first[ni.Slot] == ni
			if ok != filed || (ok && v != (domainValue{ni.node.Labels["zone"], len(ni.Pods)})) {
				t.Fatalf("step %d, key %s: Get(slot %d) = %v, %v; filed %v", step, key, ni.Slot, v, ok, filed)
			}
		}
	}
}

// NodeValues of a key the memo forgot (its arrays now another key's) say
// so, rather than hand out the other key's values.
func TestNodeValuesOfForgottenKey(t *testing.T) {
	m := NewNodeMemo[domainValue](NewParallelizer(2))
	nodes := []*NodeInfo{zoneNode(1, 1, "z1", 1), zoneNode(2, 2, "z2", 2)}
	_, values, _ := syncDomainsValues(m, "first", nodes, NodeSlots{})
	if v, ok := values.Get(nodes[1]); !ok || v.count != 2 {
		t.Fatalf("Get = %v, %v; want a count of 2", v, ok)
	}
	if _, ok := values.Get(zoneNode(2, 3, "z2", 2)); ok {
		t.Error("Get of a newer node state: found")
	}
	for i := range maxMemoKeys {
		syncDomains(m, fmt.Sprint("other", i), nodes)
	}
	if v, ok := values.Get(nodes[1]); ok {
		t.Errorf("Get after the key was forgotten = %v, found", v)
	}
}
