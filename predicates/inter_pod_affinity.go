package predicates

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	listersv1 "k8s.io/client-go/listers/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// InterPodAffinityName is the name of the InterPodAffinity plugin (this
// filter and the scorer in priorities/).
const InterPodAffinityName = "InterPodAffinity"

// The reasons InterPodAffinity rejects with, kube-scheduler v1.36's.
const (
	// ReasonPodAffinityRulesNotMatch is given for a node outside every
	// topology domain holding pods that match all of the pod's required
	// affinity terms, or lacking one of their topology keys.
	ReasonPodAffinityRulesNotMatch = "node(s) didn't match pod affinity rules"
	// ReasonPodAntiAffinityRulesNotMatch is given for a node in a topology
	// domain holding a pod that one of the pod's required anti-affinity
	// terms matches.
	ReasonPodAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
	// ReasonExistingAntiAffinityRulesNotMatch is given for a node in a
	// topology domain holding a pod whose required anti-affinity matches
	// the incoming pod (symmetry).
	ReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
)

// interPodAffinityStateKey is where PreFilter leaves the counts.
const interPodAffinityStateKey framework.StateKey = "PreFilter" + InterPodAffinityName

// affinityDomain is one topology domain: a node label key and value.
type affinityDomain struct {
	key, value string
}

// affinityDomainCounts counts, per topology domain, the pods that match (or whose
// terms match); only positive counts are stored.
type affinityDomainCounts map[affinityDomain]int64

// add counts n matches in the domain of the node with nodeLabels named by
// key, when the node has that label: a node without the topology key is in
// no domain.
func (m *affinityDomainCounts) add(nodeLabels map[string]string, key string, n int64) {
	v, ok := nodeLabels[key]
	if !ok {
		return
	}
	if *m == nil {
		*m = make(affinityDomainCounts)
	}
	(*m)[affinityDomain{key, v}] += n
}

// interPodAffinityState is what Filter needs, computed once per cycle so
// that Filter is a few map lookups per node, whatever the number of pods.
type interPodAffinityState struct {
	// affinityTerms and antiAffinityTerms are the incoming pod's required
	// terms, their namespaceSelectors resolved.
	affinityTerms     []framework.AffinityTerm
	antiAffinityTerms []framework.AffinityTerm
	// affinityCounts counts, per domain of each affinity term's topology
	// key, the existing pods that match all the affinity terms.
	affinityCounts affinityDomainCounts
	// antiAffinityCounts counts, per domain, the existing pods that an
	// anti-affinity term (of that topology key) matches.
	antiAffinityCounts affinityDomainCounts
	// existingAntiAffinityCounts counts, per domain, the required
	// anti-affinity terms of existing pods that match the incoming pod.
	existingAntiAffinityCounts affinityDomainCounts
	// existingAntiAffinityKeys are the topology keys of
	// existingAntiAffinityCounts, each once, so Filter looks up those keys
	// rather than every label of the node.
	existingAntiAffinityKeys []string
	// firstOfGroup is kube-scheduler's rule for the first pod of a group
	// with affinity to itself: when no existing pod matches the affinity
	// terms and the pod matches them itself, any node carrying every
	// topology key will do.
	firstOfGroup bool
}

// Clone returns s: it is never mutated after PreFilter.
func (s *interPodAffinityState) Clone() framework.StateData { return s }

// InterPodAffinity is the filter for spec.affinity.podAffinity and
// podAntiAffinity requiredDuringSchedulingIgnoredDuringExecution:
//
//   - affinity: the node must be in a topology domain (say a zone) that
//     already holds a pod matching all of the pod's affinity terms, or the
//     pod must be the first of a group that matches its own terms;
//   - anti-affinity: the node's domain must hold no pod that one of the
//     pod's anti-affinity terms matches;
//   - symmetry: the node's domain must hold no pod whose own required
//     anti-affinity matches the incoming pod.
type InterPodAffinity struct {
	snapshot   framework.NodeInfoLister
	namespaces listersv1.NamespaceLister
	// incomingMatches remembers, per node and term, how many of its pods
	// an incoming pod's term matches; existingMatches, per node and kind
	// of incoming pod, which anti-affinity terms of its pods match it.
	incomingMatches *framework.NodeMemo[int32]
	existingMatches *framework.NodeMemo[[]topologyCount]
	// sizes are the sizes of the last cycle's count maps (affinity, anti,
	// existing anti), to make the next ones that big at once: in a backlog
	// they grow by at most one domain per cycle, and a hostname term has a
	// domain per node, so growing them entry by entry rehashes thousands.
	sizes [3]atomic.Int64
}

// The count maps sizes remembers.
const (
	sizeAffinity = iota
	sizeAnti
	sizeExisting
)

// newCounts returns an empty count map as big as the last one of kind.
func (pl *InterPodAffinity) newCounts(kind int) affinityDomainCounts {
	return make(affinityDomainCounts, pl.sizes[kind].Load())
}

var (
	_ framework.PreFilterPlugin = &InterPodAffinity{}
	_ framework.FilterPlugin    = &InterPodAffinity{}
)

// NewInterPodAffinity returns the filter. It reads the cycle's snapshot and
// namespace labels through h; asking for the namespace lister here is what
// makes the daemon start the namespace informer (see
// framework.NamespaceLister).
func NewInterPodAffinity(h framework.Handle) (*InterPodAffinity, error) {
	if h == nil || h.SnapshotSharedLister() == nil {
		return nil, errors.New("InterPodAffinity needs the snapshot lister")
	}
	p := framework.NewParallelizer(framework.DefaultParallelism)
	return &InterPodAffinity{
		snapshot:        h.SnapshotSharedLister(),
		namespaces:      framework.NamespaceLister(h, InterPodAffinityName),
		incomingMatches: framework.NewNodeMemo[int32](p),
		existingMatches: framework.NewNodeMemo[[]topologyCount](p),
	}, nil
}

// Name returns InterPodAffinityName.
func (*InterPodAffinity) Name() string { return InterPodAffinityName }

// PreFilter counts, per topology domain, the existing pods that the pod's
// required affinity and anti-affinity terms match, and the existing pods'
// required anti-affinity terms that match the pod. It returns Skip when the
// pod has no required terms and no existing pod's anti-affinity matches it,
// and rejects the pod, UnschedulableAndUnresolvable, when its terms do not
// parse.
//
// Existing pods' anti-affinity is looked for only on the nodes the snapshot
// lists as holding such pods; the pod's own terms need every pod.
func (pl *InterPodAffinity) PreFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	terms := framework.NewPodAffinityTerms(pod)
	var affinity, anti []framework.AffinityTerm
	if terms != nil {
		if terms.Err != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %v", terms.Err))
		}
		affinity, anti = terms.RequiredAffinity, terms.RequiredAntiAffinity
	}
	withAnti := pl.snapshot.HavePodsWithRequiredAntiAffinityList()
	if len(affinity) == 0 && len(anti) == 0 && len(withAnti) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}

	var err error
	if affinity, err = framework.ResolveNamespaceSelectors(affinity, pl.namespaces); err != nil {
		return nil, framework.AsStatus(err)
	}
	if anti, err = framework.ResolveNamespaceSelectors(anti, pl.namespaces); err != nil {
		return nil, framework.AsStatus(err)
	}
	s := &interPodAffinityState{affinityTerms: affinity, antiAffinityTerms: anti}
	if len(withAnti) > 0 {
		nsLabels := framework.NamespaceLabels(pl.namespaces, pod.Namespace)
		s.existingAntiAffinityCounts = pl.countExistingAntiAffinity(pod, nsLabels, withAnti)
	}
	if len(affinity) > 0 || len(anti) > 0 {
		s.affinityCounts, s.antiAffinityCounts = pl.countIncoming(affinity, anti, nodes)
	}
	if err := ctx.Err(); err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(s.existingAntiAffinityCounts) == 0 && len(affinity) == 0 && len(anti) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	for p := range s.existingAntiAffinityCounts {
		if !slices.Contains(s.existingAntiAffinityKeys, p.key) {
			s.existingAntiAffinityKeys = append(s.existingAntiAffinityKeys, p.key)
		}
	}
	s.firstOfGroup = len(s.affinityCounts) == 0 && framework.PodMatchesAllTerms(affinity, pod)
	state.Write(interPodAffinityStateKey, s)
	return nil, nil
}

// topologyCount is how many matches one node adds to the domain of a
// topology key.
type topologyCount struct {
	key string
	n   int64
}

// countExistingAntiAffinity counts, per domain, the required anti-affinity
// terms of pods on nodes that match pod (whose namespace has nsLabels).
// Per node, the matches are remembered for pods of the same namespace,
// labels and namespace labels.
func (pl *InterPodAffinity) countExistingAntiAffinity(pod *v1.Pod, nsLabels labels.Set, nodes []*framework.NodeInfo) affinityDomainCounts {
	key := framework.IncomingPodKey(pod, nsLabels)
	match := func(ni *framework.NodeInfo) []topologyCount {
		var out []topologyCount
		for _, existing := range ni.PodsWithRequiredAntiAffinity {
			terms := existing.RequiredAntiAffinityTerms()
			for i := range terms {
				if terms[i].Matches(pod, nsLabels) {
					out = addTopologyCount(out, terms[i].TopologyKey, 1)
				}
			}
		}
		return out
	}
	total := pl.newCounts(sizeExisting)
	pl.existingMatches.ForEach(key, nodes, match, func(i int, matches []topologyCount) {
		for _, m := range matches {
			total.add(nodes[i].Node().Labels, m.key, m.n)
		}
	})
	pl.sizes[sizeExisting].Store(int64(len(total)))
	return total
}

// addTopologyCount adds n matches for key to counts.
func addTopologyCount(counts []topologyCount, key string, n int64) []topologyCount {
	for i := range counts {
		if counts[i].key == key {
			counts[i].n += n
			return counts
		}
	}
	return append(counts, topologyCount{key, n})
}

// countIncoming counts, per domain, the existing pods that match all of
// affinity (once per affinity term's topology key) and, per domain, the
// existing pods each term of anti matches. Per node, the matching pods are
// remembered for each term (and for the affinity terms together).
func (pl *InterPodAffinity) countIncoming(affinity, anti []framework.AffinityTerm, nodes []*framework.NodeInfo) (affinityDomainCounts, affinityDomainCounts) {
	var affinityCounts, antiCounts affinityDomainCounts
	if len(affinity) > 0 {
		affinityCounts = pl.newCounts(sizeAffinity)
	}
	if len(anti) > 0 {
		antiCounts = pl.newCounts(sizeAnti)
	}
	if len(affinity) > 0 {
		keys := make([]string, len(affinity))
		for i := range affinity {
			keys[i] = affinity[i].MatchKey()
		}
		count := func(ni *framework.NodeInfo) int32 {
			var n int32
			for _, existing := range ni.Pods {
				if framework.PodMatchesAllTerms(affinity, existing.Pod) {
					n++
				}
			}
			return n
		}
		pl.incomingMatches.ForEach("all:"+strings.Join(keys, "&"), nodes, count, func(i int, n int32) {
			if n == 0 {
				return
			}
			for j := range affinity {
				affinityCounts.add(nodes[i].Node().Labels, affinity[j].TopologyKey, int64(n))
			}
		})
	}
	for j := range anti {
		term := &anti[j]
		count := func(ni *framework.NodeInfo) int32 { return term.CountMatches(ni.Pods) }
		pl.incomingMatches.ForEach("one:"+term.MatchKey(), nodes, count, func(i int, n int32) {
			if n > 0 {
				antiCounts.add(nodes[i].Node().Labels, term.TopologyKey, int64(n))
			}
		})
	}
	if len(affinity) > 0 {
		pl.sizes[sizeAffinity].Store(int64(len(affinityCounts)))
	}
	if len(anti) > 0 {
		pl.sizes[sizeAnti].Store(int64(len(antiCounts)))
	}
	return affinityCounts, antiCounts
}

// Filter rejects a node that fails the pod's affinity
// (UnschedulableAndUnresolvable: evicting pods adds no matching pod), the
// pod's anti-affinity, or an existing pod's anti-affinity (Unschedulable:
// evicting the offending pods would help), checked in that order.
func (pl *InterPodAffinity) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*interPodAffinityState](state, interPodAffinityStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if !s.satisfiesAffinity(node.Labels) {
		return statusPodAffinityRulesNotMatch
	}
	if !s.satisfiesAntiAffinity(node.Labels) {
		return statusPodAntiAffinityRulesNotMatch
	}
	if !s.satisfiesExistingAntiAffinity(node.Labels) {
		return statusExistingAntiAffinityRulesNotMatch
	}
	return nil
}

// satisfiesAffinity reports whether a node with nodeLabels carries every
// affinity term's topology key and each of its domains holds a matching
// pod, or the pod is the first of its group.
func (s *interPodAffinityState) satisfiesAffinity(nodeLabels map[string]string) bool {
	podsExist := true
	for i := range s.affinityTerms {
		key := s.affinityTerms[i].TopologyKey
		v, ok := nodeLabels[key]
		if !ok {
			return false
		}
		if s.affinityCounts[affinityDomain{key, v}] <= 0 {
			podsExist = false
		}
	}
	return podsExist || s.firstOfGroup
}

// satisfiesAntiAffinity reports whether no domain of the node holds a pod
// that an anti-affinity term matches. A node without a term's topology key
// is in no domain of it.
func (s *interPodAffinityState) satisfiesAntiAffinity(nodeLabels map[string]string) bool {
	if len(s.antiAffinityCounts) == 0 {
		return true
	}
	for i := range s.antiAffinityTerms {
		key := s.antiAffinityTerms[i].TopologyKey
		if v, ok := nodeLabels[key]; ok && s.antiAffinityCounts[affinityDomain{key, v}] > 0 {
			return false
		}
	}
	return true
}

// satisfiesExistingAntiAffinity reports whether no domain of the node holds
// an existing pod whose required anti-affinity matches the incoming pod.
func (s *interPodAffinityState) satisfiesExistingAntiAffinity(nodeLabels map[string]string) bool {
	for _, key := range s.existingAntiAffinityKeys {
		if v, ok := nodeLabels[key]; ok && s.existingAntiAffinityCounts[affinityDomain{key, v}] > 0 {
			return false
		}
	}
	return true
}
