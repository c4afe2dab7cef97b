package tainttoleration

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// taintTolerationStateKey is where PreScore leaves the tolerations that
// matter for scoring.
const taintTolerationStateKey framework.StateKey = "PreScore" + Name

// taintTolerationState holds the pod's tolerations that can tolerate a
// PreferNoSchedule taint: those with that effect or with no effect.
type taintTolerationState struct {
	tolerations []v1.Toleration
}

// Clone returns s: it is never mutated after PreScore.
func (s *taintTolerationState) Clone() framework.StateData { return s }

// Scorer is the scorer for PreferNoSchedule taints: a node's raw
// score is the number of them the pod does not tolerate, and
// NormalizeScore reverses it so that the node with the fewest gets
// MaxNodeScore. (NoSchedule and NoExecute taints are the filter's business:
// a feasible node has none the pod does not tolerate.)
type Scorer struct{}

var (
	_ framework.PreScorePlugin  = &Scorer{}
	_ framework.ScorePlugin     = &Scorer{}
	_ framework.ScoreExtensions = &Scorer{}
	_ framework.PodSigner       = &Scorer{}
)

// NewScorer returns the scorer.
func NewScorer() *Scorer { return &Scorer{} }

// Name returns Name.
func (*Scorer) Name() string { return Name }

// PreScore keeps the pod's tolerations that apply to PreferNoSchedule
// taints. It never skips: a pod without tolerations still prefers nodes
// without such taints.
func (*Scorer) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	s := &taintTolerationState{}
	for _, t := range pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			s.tolerations = append(s.tolerations, t)
		}
	}
	state.Write(taintTolerationStateKey, s)
	return nil
}

// Score returns the number of PreferNoSchedule taints of the node that the
// pod does not tolerate.
func (*Scorer) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*taintTolerationState](state, taintTolerationStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	var intolerable int64
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect == v1.TaintEffectPreferNoSchedule && !framework.TolerationsTolerateTaint(s.tolerations, t) {
			intolerable++
		}
	}
	return intolerable, nil
}

// SignPod signs the pod's tolerations, all that PreScore and Score read
// of it.
func (*Scorer) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignTolerations(sig, pod)
}

// ScoreExtensions returns the scorer itself: raw counts need normalizing.
func (pl *Scorer) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps the counts, reversed, to [0, MaxNodeScore]: the node
// with the most intolerable taints gets 0, a node with none MaxNodeScore;
// when no node has any, all get MaxNodeScore.
func (*Scorer) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	framework.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
	return nil
}
