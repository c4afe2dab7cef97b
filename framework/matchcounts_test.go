package framework

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func countsPod(namespace, app string, terminating bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: app, Labels: map[string]string{"app": app}}}
	if terminating {
		p.DeletionTimestamp = &metav1.Time{}
	}
	return p
}

func collectCounts(m *MatchCounts, selector labels.Selector, namespace string, nodes []*NodeInfo) []int {
	var out []int
	m.ForEach(selector, namespace, nodes, func(i, n int) {
		if i != len(out) {
			panic(fmt.Sprintf("node %d visited out of order", i))
		}
		out = append(out, n)
	})
	return out
}

func TestMatchCounts(t *testing.T) {
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	a := NewNodeInfo(countsPod("ns", "web", false), countsPod("ns", "web", false), countsPod("other", "web", false))
	b := NewNodeInfo(countsPod("ns", "web", true), countsPod("ns", "db", false))
	a.Generation, b.Generation = 1, 2
	unstamped := NewNodeInfo(countsPod("ns", "web", false))
	nodes := []*NodeInfo{a, b, unstamped}

	m := NewMatchCounts()
	want := []int{2, 0, 1}
	if got := collectCounts(m, web, "ns", nodes); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first count = %v, want %v", got, want)
	}

	// A node whose generation did not move is not counted again: change
	// its pods behind the cache's back and the old count must come out.
	a.AddPodInfo(NewPodInfo(countsPod("ns", "web", false)))
	unstamped.AddPodInfo(NewPodInfo(countsPod("ns", "web", false)))
	want = []int{2, 0, 2}
	if got := collectCounts(m, web, "ns", nodes); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("count with a at the same generation = %v, want %v (generation 0 is always counted)", got, want)
	}
	// A new generation is counted again.
	a.Generation = 3
	want = []int{3, 0, 2}
	if got := collectCounts(m, web, "ns", nodes); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("count after a's generation moved = %v, want %v", got, want)
	}
	// The same nodes in another order are counted by position.
	want = []int{0, 3, 2}
	if got := collectCounts(m, web, "ns", []*NodeInfo{b, a, unstamped}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("count of reordered nodes = %v, want %v", got, want)
	}
	// Another namespace and another selector are other entries.
	if got := collectCounts(m, web, "other", nodes); fmt.Sprint(got) != "[1 0 0]" {
		t.Errorf("count in namespace other = %v, want [1 0 0]", got)
	}
	db := labels.SelectorFromSet(labels.Set{"app": "db"})
	if got := collectCounts(m, db, "ns", nodes); fmt.Sprint(got) != "[0 1 0]" {
		t.Errorf("count of app=db = %v, want [0 1 0]", got)
	}
	// An empty selector counts nothing.
	if got := collectCounts(m, labels.Everything(), "ns", nodes); fmt.Sprint(got) != "[0 0 0]" {
		t.Errorf("count of the empty selector = %v, want [0 0 0]", got)
	}
}

func TestMatchCountsForgetsLeastRecentlyUsed(t *testing.T) {
	ni := NewNodeInfo(countsPod("ns", "app-0", false))
	ni.Generation = 7
	nodes := []*NodeInfo{ni}
	m := NewMatchCounts()
	selector := func(i int) labels.Selector {
		return labels.SelectorFromSet(labels.Set{"app": fmt.Sprintf("app-%d", i)})
	}
	for i := range maxMatchCountSelectors {
		collectCounts(m, selector(i), "ns", nodes)
	}
	collectCounts(m, selector(0), "ns", nodes) // app-1 is now the oldest
	collectCounts(m, selector(maxMatchCountSelectors), "ns", nodes)
	if len(m.entries) != maxMatchCountSelectors {
		t.Fatalf("%d selectors remembered, want at most %d", len(m.entries), maxMatchCountSelectors)
	}
	if _, ok := m.entries["ns/"+selector(1).String()]; ok {
		t.Error("app-1, the least recently used selector, was kept")
	}
	if _, ok := m.entries["ns/"+selector(0).String()]; !ok {
		t.Error("app-0, used again recently, was forgotten")
	}
}
