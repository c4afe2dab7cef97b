package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// spreadScoreStateKey is where PreScore leaves the per-domain counts.
const spreadScoreStateKey framework.StateKey = "PreScore" + Name

// spreadScoreState is what Score needs for the pod's ScheduleAnyway
// constraints.
type spreadScoreState struct {
	constraints []framework.SpreadConstraint
	// ignored are the feasible nodes that lack a topology key; they score
	// 0 after normalization.
	ignored map[string]struct{}
	// counts maps, per constraint, each domain of the feasible nodes to the
	// matching pods in it over all nodes. Hostname constraints have none:
	// a node's own pods are counted in Score.
	counts []map[string]int
	// weights are log(domains + 2) per constraint, so that a topology with
	// many small domains (hosts) weighs more than one with a few big ones
	// (zones).
	weights   []float64
	namespace string
	// hostCounts holds, per hostname constraint (nil for the others), the
	// matching pods of each feasible node, so that Score does not count
	// them again.
	hostCounts []*slotCounts
}

// slotCounts are matching pods by node slot, each with the generation of
// the node state it was counted on.
type slotCounts struct {
	gens   []int64
	counts []int32
}

// reset forgets every count and makes room for slots below n.
func (sc *slotCounts) reset(n int) {
	if len(sc.gens) < n {
		sc.gens, sc.counts = make([]int64, n), make([]int32, n)
		return
	}
	clear(sc.gens)
}

// set records count for ni; a NodeInfo without a slot is not recorded.
func (sc *slotCounts) set(ni *framework.NodeInfo, count int) {
	if ni.Slot > 0 && ni.Slot < len(sc.gens) && ni.Generation != 0 {
		sc.gens[ni.Slot], sc.counts[ni.Slot] = ni.Generation, int32(count)
	}
}

// get returns the count recorded for ni's current state.
func (sc *slotCounts) get(ni *framework.NodeInfo) (int, bool) {
	if ni.Slot <= 0 || ni.Slot >= len(sc.gens) || ni.Generation == 0 || sc.gens[ni.Slot] != ni.Generation {
		return 0, false
	}
	return int(sc.counts[ni.Slot]), true
}

// Clone returns s: it is never mutated after PreScore.
func (s *spreadScoreState) Clone() framework.StateData { return s }

// Scorer is PodTopologySpread's scorer, for ScheduleAnyway topology spread
// constraints (and the cluster's default constraints): a node's raw score
// is, summed over constraints, the matching pods in its domain times the
// topology's weight plus maxSkew-1; NormalizeScore reverses it so that the
// emptiest domain gets MaxNodeScore. This is kube-scheduler's arithmetic,
// float rounding included.
type Scorer struct {
	spread *framework.TopologySpread
	nodes  framework.NodeInfoLister
	// hostScratch backs spreadScoreState.hostCounts. It is reused cycle
	// after cycle: one cycle at a time uses a profile's plugins, and a
	// cycle's Score calls have all returned before the next PreScore.
	hostScratch []*slotCounts
	// countedScratch says, per node of the snapshot list, whether the node
	// counts towards the constraints at all; reused like hostScratch.
	countedScratch []bool
	// seenScratch holds, per constraint, the domains of the feasible
	// nodes; reused like hostScratch.
	seenScratch []map[string]struct{}
	// totals keeps the running totals of the constraints that count every
	// node.
	totals *framework.NodeMemo[framework.SpreadShare]
	// recount makes every constraint count over every node, each cycle,
	// as those that honor node affinity or taints do: tests compare the
	// two ways.
	recount bool
}

var (
	_ framework.PreScorePlugin  = &Scorer{}
	_ framework.ScorePlugin     = &Scorer{}
	_ framework.ScoreExtensions = &Scorer{}
)

// NewScorer returns the scorer. spread (NewSpread) is shared with the
// filter; h gives the snapshot's full node list, since pods on nodes that
// failed the filters still count towards their domains.
func NewScorer(spread *framework.TopologySpread, h framework.Handle) *Scorer {
	return &Scorer{
		spread: spread,
		nodes:  h.SnapshotSharedLister(),
		totals: framework.NewNodeMemo[framework.SpreadShare](framework.NewParallelizer(framework.DefaultParallelism)),
	}
}

// Name returns Name.
func (*Scorer) Name() string { return Name }

// PreScore compiles the pod's ScheduleAnyway constraints and counts the
// matching pods in each domain the feasible nodes belong to; it returns
// Skip when the pod has no such constraint or the cluster no node.
//
// With the System defaults and no constraints of the pod's own, a node
// without a zone label is not ignored: it lands in the "" zone and still
// spreads by hostname, as in kube-scheduler.
//
// A constraint that counts every node (see CountsEveryNode) takes its
// counts from running totals over the snapshot, which only the nodes that
// changed since the last cycle update; the others are counted over every
// node, as kube-scheduler does each cycle.
func (pl *Scorer) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, feasible []*framework.NodeInfo) *framework.Status {
	all := pl.nodes.List()
	if len(all) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	constraints, err := pl.spread.Constraints(pod, v1.ScheduleAnyway)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("calculating preScoreState: %w", err))
	}
	if len(constraints) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	requireAllKeys := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.spread.SystemDefaulted()
	var keys []string
	if requireAllKeys {
		keys = framework.SpreadKeys(constraints)
	}

	s := &spreadScoreState{
		constraints: constraints,
		counts:      make([]map[string]int, len(constraints)),
		weights:     make([]float64, len(constraints)),
		namespace:   pod.Namespace,
	}
	// Per constraint: the shares of a running total (running[i]), or
	// counts to fill in below. seen[i] are the domains of the feasible
	// nodes; all domains means every domain of the total is among them.
	shares := make([]framework.NodeValues[framework.SpreadShare], len(constraints))
	running := make([]bool, len(constraints))
	for len(pl.seenScratch) < len(constraints) {
		pl.seenScratch = append(pl.seenScratch, map[string]struct{}{})
	}
	seen := pl.seenScratch
	// With every key required, the shares of any running total say
	// whether a node has them all.
	var keyShares *framework.NodeValues[framework.SpreadShare]
	for i := range constraints {
		c := &constraints[i]
		if c.TopologyKey == v1.LabelHostname {
			continue
		}
		if !c.CountsEveryNode(pod) || pl.recount {
			s.counts[i] = map[string]int{}
			continue
		}
		totals, sh := pl.spread.DomainTotals(pl.totals, c, pod.Namespace, keys, all)
		s.counts[i], shares[i], running[i], keyShares = totals.Pods, sh, true, &shares[i]
		clear(seen[i])
	}
	hasKeys := func(ni *framework.NodeInfo) bool {
		if keyShares != nil {
			if share, ok := keyShares.Get(ni); ok {
				return share.In
			}
		}
		return framework.NodeHasSpreadKeys(ni.Node(), constraints)
	}

	for _, ni := range feasible {
		node := ni.Node()
		if requireAllKeys && !hasKeys(ni) {
			if s.ignored == nil {
				s.ignored = map[string]struct{}{}
			}
			s.ignored[node.Name] = struct{}{}
			continue
		}
		for i := range constraints {
			if constraints[i].TopologyKey == v1.LabelHostname {
				continue
			}
			if !running[i] {
				// The node's domain is scored; its count starts at 0.
				if value := node.Labels[constraints[i].TopologyKey]; !hasKey(s.counts[i], value) {
					s.counts[i][value] = 0
				}
				continue
			}
			if len(seen[i]) == len(s.counts[i]) {
				continue // every domain is a feasible node's already
			}
			if share, ok := shares[i].Get(ni); ok {
				seen[i][share.Domain] = struct{}{}
			} else {
				seen[i][node.Labels[constraints[i].TopologyKey]] = struct{}{}
			}
		}
	}
	for i := range constraints {
		domains := len(s.counts[i])
		switch {
		case constraints[i].TopologyKey == v1.LabelHostname:
			domains = len(feasible) - len(s.ignored)
		case running[i]:
			domains = len(seen[i])
		}
		s.weights[i] = math.Log(float64(domains + 2))
	}

	required := framework.NewRequiredNodeAffinity(pod)
	maxSlot := 0
	for _, ni := range feasible {
		maxSlot = max(maxSlot, ni.Slot)
	}
	var counted []bool
	s.hostCounts = make([]*slotCounts, len(constraints))
	for i := range constraints {
		c := &constraints[i]
		// Only domains of feasible nodes are scored. A hostname domain is
		// one node: its own matching pods, looked up in Score.
		if c.TopologyKey == v1.LabelHostname {
			for len(pl.hostScratch) <= i {
				pl.hostScratch = append(pl.hostScratch, &slotCounts{})
			}
			hc := pl.hostScratch[i]
			hc.reset(maxSlot + 1)
			pl.spread.ForEachNodeCount(c, pod.Namespace, feasible, func(j, matching int) { hc.set(feasible[j], matching) })
			s.hostCounts[i] = hc
			continue
		}
		if running[i] {
			continue
		}
		if counted == nil {
			// Which nodes count is the same for every constraint: decided
			// once.
			counted = pl.counted(all, constraints, requireAllKeys)
		}
		counts := s.counts[i]
		pl.spread.ForEachNodeCount(c, pod.Namespace, all, func(j, matching int) {
			node := all[j].Node()
			if !counted[j] || !c.IncludesNode(pod, node, required) {
				return
			}
			if value := node.Labels[c.TopologyKey]; hasKey(counts, value) {
				counts[value] += matching
			}
		})
	}
	state.Write(spreadScoreStateKey, s)
	return nil
}

// counted says, per node of all, whether it counts towards the
// constraints at all: it exists and, when requireAllKeys, carries every
// topology key. The slice is the plugin's, reused cycle after cycle.
func (pl *Scorer) counted(all []*framework.NodeInfo, constraints []framework.SpreadConstraint, requireAllKeys bool) []bool {
	if cap(pl.countedScratch) < len(all) {
		pl.countedScratch = make([]bool, len(all))
	}
	counted := pl.countedScratch[:len(all)]
	for j, ni := range all {
		node := ni.Node()
		counted[j] = node != nil && (!requireAllKeys || framework.NodeHasSpreadKeys(node, constraints))
	}
	return counted
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// Score returns the weighted count of matching pods in the node's domains,
// rounded: Σ (matching × weight + maxSkew - 1) over the constraints whose
// topology key the node has.
func (pl *Scorer) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*spreadScoreState](state, spreadScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	if _, ok := s.ignored[node.Name]; ok {
		return 0, nil
	}
	var score float64
	for i := range s.constraints {
		c := &s.constraints[i]
		value, ok := node.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		var matching int
		if c.TopologyKey == v1.LabelHostname {
			n, ok := s.hostCounts[i].get(nodeInfo)
			if !ok {
				n = c.CountMatchingPods(nodeInfo.Pods, s.namespace)
			}
			matching = n
		} else {
			matching = s.counts[i][value]
		}
		score += float64(matching)*s.weights[i] + float64(c.MaxSkew-1)
	}
	return int64(math.Round(score)), nil
}

// ScoreExtensions returns the scorer itself: raw scores need normalizing.
func (pl *Scorer) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps raw scores to [0, MaxNodeScore], reversed and offset
// by the minimum: score = MaxNodeScore × (max + min - raw) / max, so that
// the node with the fewest matching pods gets MaxNodeScore. Ignored nodes
// get 0; when every raw score is 0 all others get MaxNodeScore.
func (pl *Scorer) NormalizeScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := framework.ReadAs[*spreadScoreState](state, spreadScoreStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i := range scores {
		if _, ok := s.ignored[scores[i].Name]; ok {
			continue
		}
		minScore = min(minScore, scores[i].Score)
		maxScore = max(maxScore, scores[i].Score)
	}
	for i := range scores {
		switch _, ignored := s.ignored[scores[i].Name]; {
		case ignored:
			scores[i].Score = 0
		case maxScore == 0:
			scores[i].Score = framework.MaxNodeScore
		default:
			scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
		}
	}
	return nil
}
