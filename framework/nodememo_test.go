package framework

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// memoNode is a NodeInfo as the cache makes them, with n pods.
func memoNode(slot int, gen int64, n int) *NodeInfo {
	ni := &NodeInfo{Slot: slot, Generation: gen}
	for range n {
		ni.Pods = append(ni.Pods, &PodInfo{})
	}
	return ni
}

// memoRun returns what ForEach hands out for nodes under key, and how many
// nodes it computed.
func memoRun(m *NodeMemo[int], key string, nodes []*NodeInfo) ([]int, int) {
	var computed atomic.Int32
	var out []int
	m.ForEach(key, nodes, func(ni *NodeInfo) int {
		computed.Add(1)
		return len(ni.Pods)
	}, func(i, v int) {
		if i != len(out) {
			panic(fmt.Sprintf("node %d handed out of order", i))
		}
		out = append(out, v)
	})
	return out, int(computed.Load())
}

func TestNodeMemo(t *testing.T) {
	a, b, handMade := memoNode(1, 10, 2), memoNode(2, 11, 0), memoNode(0, 0, 1)
	nodes := []*NodeInfo{a, b, handMade}
	m := NewNodeMemo[int](NewParallelizer(2))

	check := func(step string, nodes []*NodeInfo, want string, wantComputed int) {
		t.Helper()
		got, computed := memoRun(m, "k", nodes)
		if fmt.Sprint(got) != want || computed != wantComputed {
			t.Errorf("%s: got %v with %d computed, want %s with %d computed", step, got, computed, want, wantComputed)
		}
	}
	check("first run", nodes, "[2 0 1]", 3)
	// Pods changed behind the memo's back but not the generation: the
	// remembered value comes out. Hand-made NodeInfos are always computed.
	a.Pods = append(a.Pods, &PodInfo{})
	handMade.Pods = append(handMade.Pods, &PodInfo{})
	check("same generations", nodes, "[2 0 2]", 1)
	a.Generation = 12
	check("a's generation moved", nodes, "[3 0 2]", 2)
	check("reordered", []*NodeInfo{b, handMade, a}, "[0 2 3]", 1)
	// Another node in a's slot (a is gone): computed, then remembered.
	c := memoNode(1, 13, 5)
	check("slot reused", []*NodeInfo{c, b}, "[5 0]", 1)
	check("slot reused, again", []*NodeInfo{c, b}, "[5 0]", 0)
	// Two NodeInfos in one slot: each gets its own value.
	d := memoNode(1, 14, 7)
	got, _ := memoRun(m, "k", []*NodeInfo{c, d, c, d})
	if fmt.Sprint(got) != "[5 7 5 7]" {
		t.Errorf("two nodes in one slot: got %v, want [5 7 5 7]", got)
	}
	// Another key is another memo.
	if _, computed := memoRun(m, "other", []*NodeInfo{c, b}); computed != 2 {
		t.Errorf("another key: %d computed, want 2", computed)
	}
}

func TestNodeMemoManyStaleNodes(t *testing.T) {
	// Enough nodes to compute on the parallelizer's workers.
	nodes := make([]*NodeInfo, 3*memoParallelAbove)
	want := make([]int, len(nodes))
	for i := range nodes {
		nodes[i] = memoNode(i+1, int64(1000+i), i%7)
		want[i] = i % 7
	}
	m := NewNodeMemo[int](NewParallelizer(4))
	for round, wantComputed := range []int{len(nodes), 0} {
		got, computed := memoRun(m, "k", nodes)
		if fmt.Sprint(got) != fmt.Sprint(want) || computed != wantComputed {
			t.Errorf("round %d: %d computed (want %d), values match: %v", round, computed, wantComputed, fmt.Sprint(got) == fmt.Sprint(want))
		}
	}
}

func TestNodeMemoForgetsLeastRecentlyUsed(t *testing.T) {
	nodes := []*NodeInfo{memoNode(1, 1, 1)}
	m := NewNodeMemo[int](NewParallelizer(1))
	key := func(i int) string { return fmt.Sprintf("key-%d", i) }
	for i := range maxMemoKeys {
		memoRun(m, key(i), nodes)
	}
	memoRun(m, key(0), nodes) // key-1 is now the oldest
	memoRun(m, key(maxMemoKeys), nodes)
	if len(m.entries) != maxMemoKeys {
		t.Fatalf("%d keys remembered, want %d", len(m.entries), maxMemoKeys)
	}
	if _, ok := m.entries[key(1)]; ok {
		t.Error("key-1, the least recently used, was kept")
	}
	if _, computed := memoRun(m, key(0), nodes); computed != 0 {
		t.Error("key-0, used again recently, was forgotten")
	}
}

func TestNodeMemoUniqueKeysReuseArrays(t *testing.T) {
	nodes := make([]*NodeInfo, 1000)
	for i := range nodes {
		nodes[i] = memoNode(i+1, int64(i+1), 1)
	}
	m := NewNodeMemo[int](NewParallelizer(1))
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprintf("pod-%d", i)
	}
	compute := func(ni *NodeInfo) int { return len(ni.Pods) }
	sum := 0
	fn := func(_, v int) { sum += v }
	next := 0
	run := func() {
		m.ForEach(keys[next], nodes, compute, fn)
		next++
	}
	for range maxMemoKeys {
		run() // fill the memo
	}
	// Every further key is new and evicts one: its arrays are reused.
	if allocs := testing.AllocsPerRun(100, run); allocs > 1 && !raceEnabled {
		t.Errorf("%.1f allocations per ForEach of a new key, want the evicted entry's arrays reused", allocs)
	}
	if want := 1000 * next; sum != want {
		t.Errorf("values summed to %d, want %d", sum, want)
	}
}
