package nodeaffinity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// scoreStateKey is where PreScore leaves the compiled preferred terms.
const scoreStateKey framework.StateKey = "PreScore" + Name

// scoreState is the pod's preferred node affinity, compiled once.
type scoreState struct {
	preferred *framework.PreferredSchedulingTerms
}

// Clone returns s: it is never mutated after PreScore.
func (s *scoreState) Clone() framework.StateData { return s }

// Scorer is the scorer for
// spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution:
// a node's raw score is the sum of the weights (1..100) of the preferred
// terms it matches, normalized so that the best node gets MaxNodeScore.
// The profile's addedAffinity (Args) adds its preferred terms
// to every pod's.
type Scorer struct {
	// added are the compiled addedAffinity preferred terms; nil when the
	// profile adds none.
	added *framework.PreferredSchedulingTerms
}

var (
	_ framework.PreScorePlugin  = &Scorer{}
	_ framework.ScorePlugin     = &Scorer{}
	_ framework.ScoreExtensions = &Scorer{}
	_ framework.PodSigner       = &Scorer{}
)

// NewScorer returns the scorer configured by args (nil: none added).
// It fails when an added preferred term does not parse, which
// ValidateArgs reports first.
func NewScorer(args *Args) (*Scorer, error) {
	pl := &Scorer{}
	if args == nil || args.AddedAffinity == nil || len(args.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return pl, nil
	}
	added, err := framework.NewPreferredSchedulingTerms(args.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	if err != nil {
		return nil, fmt.Errorf("parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: %w", err)
	}
	pl.added = added
	return pl, nil
}

// Name returns Name.
func (*Scorer) Name() string { return Name }

// PreScore compiles the pod's preferred terms, or returns Skip when neither
// the pod nor the profile's added affinity has any that can score (terms of
// weight 0 or without requirements do not count). An invalid preferred term (say Gt with a value that is not an
// integer, which the API server lets through) is an error, as in
// kube-scheduler: the pod is retried with backoff rather than placed
// without its preference.
func (pl *Scorer) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	preferred, err := preferredNodeAffinity(pod)
	if err != nil {
		return framework.AsStatus(err)
	}
	if (preferred == nil || preferred.Len() == 0) && (pl.added == nil || pl.added.Len() == 0) {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(scoreStateKey, &scoreState{preferred: preferred})
	return nil
}

// Score returns the sum of the weights of the preferred terms, the
// profile's and the pod's, that nodeInfo's node matches.
func (pl *Scorer) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*scoreState](state, scoreStateKey)
	if err != nil {
		// PreScore was not run (a profile that disables it): compile here,
		// per node, as kube-scheduler does.
		preferred, err := preferredNodeAffinity(pod)
		if err != nil {
			return 0, framework.AsStatus(err)
		}
		s = &scoreState{preferred: preferred}
	}
	var sum int64
	if pl.added != nil {
		sum = pl.added.Score(node)
	}
	if s.preferred != nil {
		sum += s.preferred.Score(node)
	}
	return sum, nil
}

// SignPod signs the pod's preferred node affinity, all that PreScore and
// Score read of it. The added terms are the plugin's configuration, the
// same for every pod of the profile, whose answers are kept apart from
// other profiles'.
func (*Scorer) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	var spec v1.PodSpec
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		}}
	}
	return framework.SignSpec(sig, &spec)
}

// ScoreExtensions returns the scorer itself: raw sums of weights need
// normalizing.
func (pl *Scorer) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales the sums so that the highest becomes MaxNodeScore;
// when no node matches any term, every score stays 0.
func (*Scorer) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	framework.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
	return nil
}

// preferredNodeAffinity compiles the pod's preferred terms, or returns nil
// when it has none.
func preferredNodeAffinity(pod *v1.Pod) (*framework.PreferredSchedulingTerms, error) {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return nil, nil
	}
	p, err := framework.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	if err != nil {
		return nil, fmt.Errorf("preferred node affinity of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return p, nil
}
