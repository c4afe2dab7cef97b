package prommetric

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// nodeInSlot is a NodeInfo for node name in slot, as the cache makes them.
func nodeInSlot(name string, slot int) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	ni.Slot, ni.Generation = slot, 1
	return ni
}

// Lookup by slot gives the value of the node in the slot, also when the
// slot has been given to another node since a lookup; slots past the cache
// and NodeInfos without one are looked up by name.
func TestTableLookup(t *testing.T) {
	tb := &Table{Values: map[string]float64{"a": 1, "b": 2}}
	tb.index()
	for _, tt := range []struct {
		ni   *framework.NodeInfo
		want float64
		ok   bool
	}{
		{nodeInSlot("a", 1), 1, true},
		{nodeInSlot("a", 1), 1, true}, // cached
		{nodeInSlot("b", 1), 2, true}, // slot 1 given to b
		{nodeInSlot("c", 1), 0, false},
		{nodeInSlot("a", 1), 1, true},
		{nodeInSlot("b", 0), 2, true},         // no slot
		{nodeInSlot("b", 1_000_000), 2, true}, // past the cache
	} {
		got, ok := tb.Lookup(tt.ni)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%s in slot %d) = %v, %v; want %v, %v", tt.ni.NodeName(), tt.ni.Slot, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPoolSharesEqualSpecs(t *testing.T) {
	p := NewPool()
	spec := Spec{Connection: Connection{Address: "http://127.0.0.1:1"}, Query: "up", Label: "nodename",
		RefreshInterval: time.Second, StaleAfter: time.Minute, Timeout: time.Second}
	m1, err := p.Metric(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := p.Metric(spec, Options{})
	other := spec
	other.Query = "down"
	m3, _ := p.Metric(other, Options{})
	if m1 != m2 || m1 == m3 || p.Len() != 2 {
		t.Errorf("pool: equal specs share (%v), different ones do not (%v), %d metrics; want true, true, 2", m1 == m2, m1 != m3, p.Len())
	}
	if m1.Client() != m3.Client() {
		t.Errorf("two metrics on one Prometheus have two clients, want one")
	}
}
