package framework

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// SpreadShare is what one node adds to a constraint's domains: nothing
// when it does not count (In is false), else one node and its Matching
// pods in Domain.
type SpreadShare struct {
	Domain   string
	In       bool
	Matching int32
}

// SpreadTotals are a constraint's running totals: per domain, the matching
// pods (Pods) and the nodes that count (Nodes). A domain is in both while
// it has a node, also with no matching pod, as kube-scheduler counts
// domains.
type SpreadTotals struct {
	Pods  map[string]int
	Nodes map[string]int
}

func newSpreadTotals() *SpreadTotals {
	return &SpreadTotals{Pods: map[string]int{}, Nodes: map[string]int{}}
}

// apply adds (sign 1) or takes out (sign -1) one node's share.
func (t *SpreadTotals) apply(share SpreadShare, sign int64) {
	if !share.In {
		return
	}
	d := share.Domain
	t.Pods[d] += int(sign) * int(share.Matching)
	if t.Nodes[d] += int(sign); t.Nodes[d] == 0 {
		delete(t.Nodes, d)
		delete(t.Pods, d)
	}
}

// CountsEveryNode reports whether c counts every node that carries the
// topology keys it is asked with, whatever else the pod says: no node
// affinity of the pod to honor, no taints to honor. Then its counts depend
// only on the nodes, the namespace, the selector and the keys, and
// DomainTotals can keep them as running totals.
func (c *SpreadConstraint) CountsEveryNode(pod *v1.Pod) bool {
	if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		return false
	}
	if c.NodeAffinityPolicy != v1.NodeInclusionPolicyHonor {
		return true
	}
	a := pod.Spec.Affinity
	return len(pod.Spec.NodeSelector) == 0 &&
		(a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil)
}

// DomainTotals returns the matching pods of c (in namespace) per domain
// over nodes, for a constraint that counts every node (see
// CountsEveryNode): a running total kept in m per namespace, selector,
// topology key and keys, brought up to date by the nodes that changed
// since it was last asked for. A node counts when it carries every label
// key of keys; its domain is its value for c.TopologyKey, "" when it has
// none (which keys may allow: the System defaults spread zoneless nodes in
// the "" zone).
//
// The totals, and the shares by node also returned, are m's: read only,
// and only until the next call for the same key.
func (ts *TopologySpread) DomainTotals(m *NodeMemo[SpreadShare], c *SpreadConstraint, namespace string, keys []string, nodes []*NodeInfo) (*SpreadTotals, NodeValues[SpreadShare]) {
	// "|" is in no namespace, label key or selector: the key is unambiguous.
	key := namespace + "|" + SelectorKey(c.Selector) + "|" + c.TopologyKey + "|" + strings.Join(keys, "|")
	share := func(ni *NodeInfo) SpreadShare {
		node := ni.Node()
		if node == nil {
			return SpreadShare{}
		}
		for _, k := range keys {
			if _, ok := node.Labels[k]; !ok {
				return SpreadShare{}
			}
		}
		return SpreadShare{Domain: node.Labels[c.TopologyKey], In: true, Matching: int32(c.CountMatchingPods(ni.Pods, namespace))}
	}
	return SyncTotal(m, key, nodes, ts.Slots(), share, newSpreadTotals, (*SpreadTotals).apply)
}

// SpreadKeys returns the topology keys of constraints, in order.
func SpreadKeys(constraints []SpreadConstraint) []string {
	keys := make([]string, len(constraints))
	for i := range constraints {
		keys[i] = constraints[i].TopologyKey
	}
	return keys
}
