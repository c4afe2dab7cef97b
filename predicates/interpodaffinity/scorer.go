package interpodaffinity

import (
	"context"
	"errors"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	listersv1 "k8s.io/client-go/listers/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// scoreStateKey is where PreScore leaves the domain scores.
const scoreStateKey framework.StateKey = "PreScore" + Name

// affinityDomainScores accumulates, per topology key and value, the weights of the
// terms that relate the incoming pod to the pods in that domain.
type affinityDomainScores map[string]map[string]int64

// addDomain adds delta to the domain of key and value. The entry is made
// even for a delta that cancels out, as kube-scheduler makes it: a matched
// term is what keeps PreScore from skipping.
func (m *affinityDomainScores) addDomain(key, v string, delta int64) {
	if *m == nil {
		*m = make(affinityDomainScores)
	}
	byValue := (*m)[key]
	if byValue == nil {
		byValue = make(map[string]int64)
		(*m)[key] = byValue
	}
	byValue[v] += delta
}

// affinityTopologyScore is one topology key's domain scores.
type affinityTopologyScore struct {
	key     string
	byValue map[string]int64
}

// scoreState holds the domain scores as a slice: Score walks it
// for every feasible node.
type scoreState struct {
	scores []affinityTopologyScore
}

// Clone returns s: it is never mutated after PreScore.
func (s *scoreState) Clone() framework.StateData { return s }

// Scorer is InterPodAffinity's scorer. For every existing pod, the
// topology domain of its node (the zone, say, for a term with
// topologyKey topology.kubernetes.io/zone) gains:
//
//   - the weight of each preferred affinity term of the incoming pod the
//     existing pod matches, and loses that of each preferred anti-affinity
//     term;
//   - HardPodAffinityWeight for each required affinity term of the existing
//     pod that the incoming pod matches;
//   - the weight of each preferred affinity term of the existing pod that the
//     incoming pod matches, and loses that of each preferred anti-affinity
//     term.
//
// A node's raw score is the sum over the domains it is in; NormalizeScore
// scales the raw scores, which may be negative, from [min, max] to [0, 100].
type Scorer struct {
	hardPodAffinityWeight              int64
	ignorePreferredTermsOfExistingPods bool
	snapshot                           framework.NodeInfoLister
	namespaces                         listersv1.NamespaceLister
	// matches keeps running totals per topology domain: for each term of
	// an incoming pod, how many pods it matches ("in:" keys); for each kind
	// of incoming pod, what the terms of existing pods give ("ex:" keys).
	matches *framework.NodeMemo[[]framework.DomainCount]
}

var (
	_ framework.PreScorePlugin  = &Scorer{}
	_ framework.ScorePlugin     = &Scorer{}
	_ framework.ScoreExtensions = &Scorer{}
)

// NewScorer returns the scorer, or an error for invalid args (see
// ValidateArgs). Nil args mean the defaults.
func NewScorer(args *Args, h framework.Handle) (*Scorer, error) {
	if err := ValidateArgs(args); err != nil {
		return nil, err
	}
	if h == nil || h.SnapshotSharedLister() == nil {
		return nil, errors.New("InterPodAffinity needs the snapshot lister")
	}
	p := framework.NewParallelizer(framework.DefaultParallelism)
	pl := &Scorer{
		hardPodAffinityWeight: int64(args.Weight()),
		snapshot:              h.SnapshotSharedLister(),
		namespaces:            framework.NamespaceLister(h, Name),
		matches:               framework.NewNodeMemo[[]framework.DomainCount](p),
	}
	if args != nil {
		pl.ignorePreferredTermsOfExistingPods = args.IgnorePreferredTermsOfExistingPods
	}
	return pl, nil
}

// Name returns Name.
func (*Scorer) Name() string { return Name }

// PreScore sums the term weights per topology domain over the existing
// pods: every pod of every node when the incoming pod has preferred terms
// of its own, otherwise only the pods with affinity terms (the only ones
// that can add anything). It returns Skip when no term matched in any
// domain, or, with IgnorePreferredTermsOfExistingPods, when the pod has no
// preferred terms.
func (pl *Scorer) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	a := pod.Spec.Affinity
	hasPreferred := a != nil && ((a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) ||
		(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0))
	if pl.ignorePreferredTermsOfExistingPods && !hasPreferred {
		return framework.NewStatus(framework.Skip)
	}

	terms := framework.NewPodAffinityTerms(pod)
	var preferred, preferredAnti []framework.WeightedAffinityTerm
	if terms != nil {
		if terms.Err != nil {
			return framework.AsStatus(fmt.Errorf("failed to parse pod: %w", terms.Err))
		}
		var err error
		if preferred, err = framework.ResolveWeightedNamespaceSelectors(terms.PreferredAffinity, pl.namespaces); err != nil {
			return framework.AsStatus(fmt.Errorf("updating PreferredAffinityTerms: %w", err))
		}
		if preferredAnti, err = framework.ResolveWeightedNamespaceSelectors(terms.PreferredAntiAffinity, pl.namespaces); err != nil {
			return framework.AsStatus(fmt.Errorf("updating PreferredAntiAffinityTerms: %w", err))
		}
	}
	var total affinityDomainScores
	if hasPreferred {
		all := pl.snapshot.List()
		pl.addIncomingTerms(&total, preferred, 1, all)
		pl.addIncomingTerms(&total, preferredAnti, -1, all)
	}
	pl.addExistingTerms(&total, pod, framework.NamespaceLabels(pl.namespaces, pod.Namespace))
	if len(total) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s := &scoreState{scores: make([]affinityTopologyScore, 0, len(total))}
	for key, byValue := range total {
		s.scores = append(s.scores, affinityTopologyScore{key: key, byValue: byValue})
	}
	state.Write(scoreStateKey, s)
	return nil
}

// domainSum is what the nodes of one topology domain add up to: the sum
// of their deltas, and how many node values went into it. A domain with
// values in it counts as matched even when they cancel out.
type domainSum struct {
	sum, n int64
}

// domainSums are running totals (framework.SyncTotal) of per-node deltas,
// by topology domain. Only domains with values in them are stored.
type domainSums map[framework.TopologyDomain]domainSum

func newDomainSums() domainSums { return domainSums{} }

// apply adds (sign 1) or takes out (sign -1) one node's deltas.
func (t domainSums) apply(node []framework.DomainCount, sign int64) {
	for _, d := range node {
		s := t[d.Domain]
		s.sum += sign * d.N
		s.n += sign
		if s.n == 0 {
			delete(t, d.Domain)
			continue
		}
		t[d.Domain] = s
	}
}

// addTo adds scale × each domain's sum to scores.
func (t domainSums) addTo(scores *affinityDomainScores, scale int64) {
	for d, s := range t {
		scores.addDomain(d.Key, d.Value, scale*s.sum)
	}
}

// addIncomingTerms adds, for each of the incoming pod's terms, sign ×
// weight to the domain of each node per pod there that the term matches.
// The matches per domain are a running total per term, over nodes (the
// snapshot's list, so that the total follows it by slot).
func (pl *Scorer) addIncomingTerms(scores *affinityDomainScores, terms []framework.WeightedAffinityTerm, sign int64, nodes []*framework.NodeInfo) {
	for i := range terms {
		term := &terms[i]
		key := "in:" + term.TopologyKey + "#" + term.MatchKey()
		matches, _ := framework.SyncTotal(pl.matches, key, nodes, pl.snapshot.Slots(), term.NodeMatches, newDomainSums, domainSums.apply)
		matches.addTo(scores, sign*int64(term.Weight))
	}
}

// addExistingTerms adds what the terms of existing pods that match the
// incoming pod (whose namespace has nsLabels) give the domains of their
// nodes: HardPodAffinityWeight per required affinity term, ± weight per
// preferred term. Only pods with affinity terms have any. The deltas per
// domain are a running total over the snapshot's nodes, kept for pods of
// the same namespace, labels and namespace labels.
func (pl *Scorer) addExistingTerms(scores *affinityDomainScores, pod *v1.Pod, nsLabels labels.Set) {
	if len(pl.snapshot.HavePodsWithAffinityList()) == 0 {
		return
	}
	deltas := func(ni *framework.NodeInfo) []framework.DomainCount {
		if len(ni.PodsWithAffinity) == 0 {
			return nil
		}
		nodeLabels := ni.Labels()
		var out []framework.DomainCount
		// Kept even when deltas cancel out: a matched term makes the
		// domain's entry (see affinityDomainScores.addDomain).
		add := func(key string, delta int64) { out = framework.AddDomainCount(out, nodeLabels, key, delta) }
		for _, ep := range ni.PodsWithAffinity {
			if pl.hardPodAffinityWeight > 0 {
				required := ep.RequiredAffinityTerms()
				for i := range required {
					if required[i].Matches(pod, nsLabels) {
						add(required[i].TopologyKey, pl.hardPodAffinityWeight)
					}
				}
			}
			for _, t := range ep.PreferredAffinityTerms() {
				if t.Matches(pod, nsLabels) {
					add(t.TopologyKey, int64(t.Weight))
				}
			}
			for _, t := range ep.PreferredAntiAffinityTerms() {
				if t.Matches(pod, nsLabels) {
					add(t.TopologyKey, -int64(t.Weight))
				}
			}
		}
		return out
	}
	key := "ex:" + framework.IncomingPodKey(pod, nsLabels)
	all := pl.snapshot.List()
	sums, _ := framework.SyncTotal(pl.matches, key, all, pl.snapshot.Slots(), deltas, newDomainSums, domainSums.apply)
	sums.addTo(scores, 1)
}

// Score returns the sum of the scores of the domains nodeInfo's node is in.
// It may be negative.
func (*Scorer) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*scoreState](state, scoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	var score int64
	for i := range s.scores {
		if v, ok := node.Labels[s.scores[i].key]; ok {
			score += s.scores[i].byValue[v]
		}
	}
	return score, nil
}

// ScoreExtensions returns the scorer itself: raw sums need normalizing.
func (pl *Scorer) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps raw scores from [min, max] to [0, MaxNodeScore],
// truncating: MaxNodeScore × (score − min) / (max − min), in floating point
// as kube-scheduler computes it. When every node scored the same, all get 0.
func (*Scorer) NormalizeScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := framework.ReadAs[*scoreState](state, scoreStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.scores) == 0 {
		return nil
	}
	minScore, maxScore := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range scores {
		minScore = min(minScore, scores[i].Score)
		maxScore = max(maxScore, scores[i].Score)
	}
	diff := maxScore - minScore
	for i := range scores {
		var f float64
		if diff > 0 {
			f = float64(framework.MaxNodeScore) * (float64(scores[i].Score-minScore) / float64(diff))
		}
		scores[i].Score = int64(f)
	}
	return nil
}
