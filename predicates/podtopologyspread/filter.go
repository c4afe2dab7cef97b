package podtopologyspread

import (
	"context"
	"maps"
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The reasons PodTopologySpread rejects with.
const (
	// ReasonSpreadConstraintsNotMatch is given for a node where placing the
	// pod would make some DoNotSchedule constraint's skew exceed maxSkew.
	ReasonSpreadConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	// ReasonSpreadMissingLabel is given for a node that lacks a
	// constraint's topology key: it belongs to no domain.
	ReasonSpreadMissingLabel = ReasonSpreadConstraintsNotMatch + " (missing required label)"
)

// The statuses Filter rejects with, made once and shared by every call: the
// scheduler never changes a status a filter returns, and a rejection then
// costs the per-node loop no allocation (a spread pod is rejected by most
// nodes in a big cluster).
var (
	statusSpreadMissingLabel        = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonSpreadMissingLabel)
	statusSpreadConstraintsNotMatch = framework.NewStatus(framework.Unschedulable, ReasonSpreadConstraintsNotMatch)
)

// spreadFilterStateKey is where PreFilter leaves the per-domain counts.
const spreadFilterStateKey framework.StateKey = "PreFilter" + Name

// spreadDomainCounts is one DoNotSchedule constraint, reduced to what
// Filter needs.
type spreadDomainCounts struct {
	topologyKey string
	maxSkew     int
	// selfMatch is 1 when the incoming pod matches the selector, else 0.
	selfMatch int
	// globalMin is the fewest matching pods in any domain, or 0 when there
	// are fewer domains than minDomains.
	globalMin int
	// counts maps each domain (topology value) of the eligible nodes to the
	// number of matching pods in it.
	counts map[string]int
	// shares, for counts kept as running totals, are the nodes' own
	// shares by slot: a node in a domain has the domain's name there, and
	// Filter need not look the topology key up among the node's labels.
	shares     framework.NodeValues[framework.SpreadShare]
	minDomains int
}

// setGlobalMin sets globalMin from counts. With no domain at all the
// minimum stays MaxInt32, as in kube-scheduler; minDomains (at least 1)
// then lowers it to 0.
func (dc *spreadDomainCounts) setGlobalMin() {
	dc.globalMin = math.MaxInt32
	for _, n := range dc.counts {
		dc.globalMin = min(dc.globalMin, n)
	}
	if len(dc.counts) < dc.minDomains {
		dc.globalMin = 0
	}
}

// spreadFilterState holds every DoNotSchedule constraint of the pod, and
// what AddPod and RemovePod need to count a pod in or out.
type spreadFilterState struct {
	constraints []spreadDomainCounts
	compiled    []framework.SpreadConstraint
	required    *framework.RequiredNodeAffinity
}

// Clone returns a copy whose counts AddPod and RemovePod may change; the
// counts of a cycle's state are the memo's running totals, never changed.
// The copy reads every node's domain from its labels.
func (s *spreadFilterState) Clone() framework.StateData {
	c := &spreadFilterState{constraints: slices.Clone(s.constraints), compiled: s.compiled, required: s.required}
	for i := range c.constraints {
		c.constraints[i].counts = maps.Clone(c.constraints[i].counts)
		c.constraints[i].shares = framework.NodeValues[framework.SpreadShare]{}
	}
	return c
}

// updateWithPod counts pod pi in (sign 1) or out (sign -1) of the domains
// of node, for the constraints of the incoming pod that count it there:
// the node carries every topology key and passes the constraint's node
// inclusion policies, and the constraint's selector counts pi.
func (s *spreadFilterState) updateWithPod(pod *v1.Pod, pi *framework.PodInfo, node *v1.Node, sign int) {
	if node == nil || pi.Pod.Namespace != pod.Namespace || !framework.NodeHasSpreadKeys(node, s.compiled) {
		return
	}
	one := []*framework.PodInfo{pi}
	for i := range s.compiled {
		c := &s.compiled[i]
		if !c.IncludesNode(pod, node, s.required) || c.CountMatchingPods(one, pod.Namespace) == 0 {
			continue
		}
		dc := &s.constraints[i]
		dc.counts[node.Labels[c.TopologyKey]] += sign
		dc.setGlobalMin()
	}
}

// Filter is PodTopologySpread's filter, for DoNotSchedule topology spread
// constraints: a node passes when, for every constraint, the matching pods
// in the node's domain plus the pod itself (when it matches) exceed the
// smallest domain by at most maxSkew.
//
// PreFilter counts the matching pods per domain once, over every node; the
// per-node check is then a map lookup per constraint.
type Filter struct {
	spread *framework.TopologySpread
	// totals keeps, per constraint that counts every node with its keys,
	// the matching pods per domain as a running total over the nodes.
	totals *framework.NodeMemo[framework.SpreadShare]
}

var (
	_ framework.PreFilterPlugin     = &Filter{}
	_ framework.PreFilterExtensions = &Filter{}
	_ framework.FilterPlugin        = &Filter{}
	_ framework.SlotFilter          = &Filter{}
)

// NewFilter returns the filter. spread (NewSpread) is shared with the
// scorer.
func NewFilter(spread *framework.TopologySpread) *Filter {
	return &Filter{
		spread: spread,
		totals: framework.NewNodeMemo[framework.SpreadShare](framework.NewParallelizer(framework.DefaultParallelism)),
	}
}

// Name returns Name.
func (*Filter) Name() string { return Name }

// PreFilter compiles the pod's DoNotSchedule constraints (its own, or the
// defaults) and counts the matching pods in each domain; it returns Skip
// when the pod has none.
//
// Counting is one sequential pass per constraint: per node a few label
// lookups and the node's count of matching pods, which is taken again only
// for nodes that changed since an earlier cycle counted them (see
// TopologySpread.ForEachNodeCount). That is far cheaper than handing nodes to
// goroutines (see BenchmarkPodTopologySpreadFilter).
func (pl *Filter) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	constraints, err := pl.spread.Constraints(pod, v1.DoNotSchedule)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(constraints) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}

	s := &spreadFilterState{constraints: make([]spreadDomainCounts, len(constraints))}
	for i := range constraints {
		c := &constraints[i]
		dc := &s.constraints[i]
		dc.topologyKey = c.TopologyKey
		dc.maxSkew = int(c.MaxSkew)
		if c.Selector.Matches(labels.Set(pod.Labels)) {
			dc.selfMatch = 1
		}
	}

	required := framework.NewRequiredNodeAffinity(pod)
	s.compiled, s.required = constraints, required
	var keys []string
	for i := range constraints {
		c := &constraints[i]
		if c.CountsEveryNode(pod) {
			// A node counts only with every constraint's key.
			if keys == nil {
				keys = framework.SpreadKeys(constraints)
			}
			totals, shares := pl.spread.DomainTotals(pl.totals, c, pod.Namespace, keys, nodes)
			s.constraints[i].counts, s.constraints[i].shares = totals.Pods, shares
			continue
		}
		size := 0
		if c.TopologyKey == v1.LabelHostname {
			size = len(nodes) // one domain per node
		}
		counts := make(map[string]int, size)
		s.constraints[i].counts = counts
		pl.spread.ForEachNodeCount(c, pod.Namespace, nodes, func(j, matching int) {
			node := nodes[j].Node()
			if node == nil {
				return
			}
			value, ok := node.Labels[c.TopologyKey]
			if !ok || (len(constraints) > 1 && !framework.NodeHasSpreadKeys(node, constraints)) || !c.IncludesNode(pod, node, required) {
				return
			}
			// A domain with no matching pod still counts as a domain.
			counts[value] += matching
		})
	}

	for i := range s.constraints {
		s.constraints[i].minDomains = int(constraints[i].MinDomains)
		s.constraints[i].setGlobalMin()
	}
	state.Write(spreadFilterStateKey, s)
	return nil, nil
}

// FilterSlot is Filter for a node whose every constraint has its domain
// in the running totals' shares (constraints that count every node): the
// node's NodeInfo is not read. Otherwise it leaves the node to Filter.
func (pl *Filter) FilterSlot(_ context.Context, state *framework.CycleState, _ *v1.Pod, slot int, gen int64) (*framework.Status, bool) {
	s, err := framework.ReadAs[*spreadFilterState](state, spreadFilterStateKey)
	if err != nil {
		return nil, false
	}
	for i := range s.constraints {
		c := &s.constraints[i]
		share, filed := c.shares.GetSlot(slot, gen)
		if !filed || !share.In {
			return nil, false
		}
		if skew := c.counts[share.Domain] + c.selfMatch - c.globalMin; skew > c.maxSkew {
			return statusSpreadConstraintsNotMatch, true
		}
	}
	return nil, true
}

// AddPod counts podInfoToAdd in, on nodeInfo's domains, in a state cloned
// for a what-if (preemption).
func (pl *Filter) AddPod(_ context.Context, state *framework.CycleState, pod *v1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return pl.update(state, pod, podInfoToAdd, nodeInfo, 1)
}

// RemovePod counts podInfoToRemove out, as AddPod counts a pod in.
func (pl *Filter) RemovePod(_ context.Context, state *framework.CycleState, pod *v1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return pl.update(state, pod, podInfoToRemove, nodeInfo, -1)
}

func (pl *Filter) update(state *framework.CycleState, pod *v1.Pod, pi *framework.PodInfo, ni *framework.NodeInfo, sign int) *framework.Status {
	s, err := framework.ReadAs[*spreadFilterState](state, spreadFilterStateKey)
	if err != nil {
		return nil // PreFilter skipped: no constraint to count for
	}
	s.updateWithPod(pod, pi, ni.Node(), sign)
	return nil
}

// Filter rejects a node that lacks a constraint's topology key
// (UnschedulableAndUnresolvable: no pod leaving changes a label) or where
// the pod would push a constraint's skew past maxSkew (Unschedulable: pods
// leaving other domains can fix it).
func (pl *Filter) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*spreadFilterState](state, spreadFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	for i := range s.constraints {
		c := &s.constraints[i]
		var value string
		var ok bool
		if share, filed := c.shares.Get(nodeInfo); filed && share.In {
			value, ok = share.Domain, true
		} else {
			value, ok = node.Labels[c.topologyKey]
		}
		if !ok {
			return statusSpreadMissingLabel
		}
		// existing matches in the domain + the pod itself - global minimum
		if skew := c.counts[value] + c.selfMatch - c.globalMin; skew > c.maxSkew {
			return statusSpreadConstraintsNotMatch
		}
	}
	return nil
}
