// Package nodepool is a yardmaster plugin written out of tree: NodePool
// keeps each team's pods on the team's pool of nodes and, within the pool,
// prefers the cheapest node.
//
// A node's pool is the value of its pool label (Args.PoolLabel); a pod's
// pool is the value of the same label on the pod, or Args.DefaultPool for
// a pod without it. Filter rejects a node of any other pool, or of none.
// Score ranks the nodes left by the cost in their cost label
// (Args.CostLabel): the cheapest scores MaxNodeScore, the dearest
// MinNodeScore, and a node without a readable cost MinNodeScore too.
//
// The plugin uses yardmaster's public API only, packages framework and
// cmd/yardmaster/app, as every module outside yardmaster must.
package nodepool

import (
	"context"
	"math"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Name is the plugin's name in a configuration file.
const Name = "NodePool"

// ReasonNotInPool is why Filter rejects a node. A constant: the scheduler
// counts nodes by reason in the pod's "0/N nodes are available: …"
// message.
const ReasonNotInPool = "node(s) not in the pod's pool"

// statusNotInPool is Filter's only rejection, made once: a status is
// never changed once returned, so sharing it keeps the per-node loop from
// allocating. Unresolvable: evicting pods cannot move a node into another
// pool, so preemption does not try.
var statusNotInPool = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNotInPool)

// NodePool is the plugin: a filter and a scorer under one name, sharing
// one set of arguments.
type NodePool struct {
	poolLabel, defaultPool, costLabel string
}

var (
	_ framework.PreFilterPlugin   = &NodePool{}
	_ framework.FilterPlugin      = &NodePool{}
	_ framework.ScorePlugin       = &NodePool{}
	_ framework.ScoreExtensions   = &NodePool{}
	_ framework.PodSigner         = &NodePool{}
	_ framework.EnqueueExtensions = &NodePool{}
)

// New returns the plugin for validated args.
func New(args *Args) *NodePool {
	return &NodePool{poolLabel: args.PoolLabel, defaultPool: args.DefaultPool, costLabel: args.CostLabel}
}

// Name returns Name.
func (*NodePool) Name() string { return Name }

// poolOf returns the pod's pool; "" when it may run in any. An empty
// label value counts as no label.
func (pl *NodePool) poolOf(pod *v1.Pod) string {
	if pool := pod.Labels[pl.poolLabel]; pool != "" {
		return pool
	}
	return pl.defaultPool
}

// stateKey is where PreFilter keeps the pod's pool for Filter.
const stateKey framework.StateKey = Name

// poolState is the pod's pool, as PreFilter found it.
type poolState string

// Clone returns the state itself: it never changes after PreFilter.
func (s poolState) Clone() framework.StateData { return s }

// PreFilter finds the pod's pool once per cycle, for Filter to compare
// with each node's. A pod that may run in any pool is not filtered: Skip
// tells the scheduler not to call Filter for it, on any node.
func (pl *NodePool) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	pool := pl.poolOf(pod)
	if pool == "" {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, poolState(pool))
	return nil, nil
}

// Filter rejects a node whose pool is not the pod's. It is called
// concurrently for different nodes and reads only the state and the
// node's NodeInfo.
func (pl *NodePool) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	pool, err := framework.ReadAs[poolState](state, stateKey)
	if err != nil {
		// A profile that lists NodePool at filter but not at preFilter.
		pool = poolState(pl.poolOf(pod))
	}
	if pool != "" && nodeInfo.Labels()[pl.poolLabel] != string(pool) {
		return statusNotInPool
	}
	return nil
}

// unknownCost is the raw score of a node without a readable cost; costs
// are 0 or more.
const unknownCost = -1

// Score returns the node's cost, or unknownCost. It does not read the pod.
func (pl *NodePool) Score(_ context.Context, _ *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s := nodeInfo.Labels()[pl.costLabel]
	if s == "" {
		// Checked first: ParseInt's error allocates, and most clusters
		// have nodes without the label.
		return unknownCost, nil
	}
	// 32 bits, so that NormalizeScore's MaxNodeScore × cost cannot
	// overflow.
	cost, err := strconv.ParseInt(s, 10, 32)
	if err != nil || cost < 0 {
		return unknownCost, nil
	}
	return cost, nil
}

// ScoreExtensions returns the plugin itself: costs need normalizing.
func (pl *NodePool) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps costs to scores, the cheapest node highest: with
// costs from lo to hi, a node costing c scores
// MaxNodeScore × (hi − c) / (hi − lo); every node MaxNodeScore when all
// cost the same, and a node of unknown cost MinNodeScore.
func (*NodePool) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	lo, hi := int64(math.MaxInt64), int64(unknownCost)
	for _, s := range scores {
		if s.Score != unknownCost {
			lo, hi = min(lo, s.Score), max(hi, s.Score)
		}
	}
	for i := range scores {
		switch c := scores[i].Score; {
		case c == unknownCost:
			scores[i].Score = framework.MinNodeScore
		case hi == lo:
			scores[i].Score = framework.MaxNodeScore
		default:
			scores[i].Score = framework.MaxNodeScore * (hi - c) / (hi - lo)
		}
	}
	return nil
}

// SignPod signs the pod's pool, all that PreFilter and Filter read of the
// pod; Score reads nothing of it. Pods of one pool then share the answers
// of every node that has not changed since.
func (pl *NodePool) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignString(sig, pl.poolOf(pod)), true
}
