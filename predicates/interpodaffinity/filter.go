package interpodaffinity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	listersv1 "k8s.io/client-go/listers/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The reasons InterPodAffinity rejects with, kube-scheduler v1.37's.
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

// The statuses Filter rejects with, made once and shared by every call: the
// scheduler never changes a status a filter returns, and a rejection then
// costs the per-node loop no allocation (an anti-affinity pod is rejected
// by most nodes in a big cluster).
var (
	statusPodAffinityRulesNotMatch          = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonPodAffinityRulesNotMatch)
	statusPodAntiAffinityRulesNotMatch      = framework.NewStatus(framework.Unschedulable, ReasonPodAntiAffinityRulesNotMatch)
	statusExistingAntiAffinityRulesNotMatch = framework.NewStatus(framework.Unschedulable, ReasonExistingAntiAffinityRulesNotMatch)
)

// filterStateKey is where PreFilter leaves the counts.
const filterStateKey framework.StateKey = "PreFilter" + Name

// domainCounts counts matches per topology domain, by topology key and
// then label value, so that Filter hashes only the node's label value.
// Only positive counts are stored, and only keys with one.
type domainCounts map[string]map[string]int64

func newDomainCounts() domainCounts { return domainCounts{} }

// apply adds (sign 1) or takes out (sign -1) one node's matches: the
// running total framework.SyncTotal keeps.
func (c domainCounts) apply(node []framework.DomainCount, sign int64) {
	for _, d := range node {
		values := c[d.Domain.Key]
		if values == nil {
			values = map[string]int64{}
			c[d.Domain.Key] = values
		}
		if n := values[d.Domain.Value] + sign*d.N; n != 0 {
			values[d.Domain.Value] = n
			continue
		}
		delete(values, d.Domain.Value)
		if len(values) == 0 {
			delete(c, d.Domain.Key)
		}
	}
}

// keyCounts are the counts of one topology key, by label value.
type keyCounts struct {
	key    string
	values map[string]int64
	// nodeDomains is set when key is the hostname label and no two nodes
	// share a value: a node's domain is then the node itself, and Filter
	// reads the node's own share of the counts (own, by slot) instead of
	// looking its label value up among thousands.
	nodeDomains bool
	own         framework.NodeValues[[]framework.DomainCount]
	// existing marks the counts of existing pods' anti-affinity terms: a
	// node has a share of them only while it holds such a pod, and its
	// share also names other keys' domains. A share of the incoming pod's
	// term names the term's domain only, and only with a match.
	existing bool
}

// inDomain reports whether node ni, whose labels are nodeLabels, is in a
// domain of kc holding a match.
func (kc *keyCounts) inDomain(ni *framework.NodeInfo, nodeLabels map[string]string) bool {
	if len(kc.values) == 0 {
		return false
	}
	if kc.nodeDomains {
		if kc.existing && len(ni.PodsWithRequiredAntiAffinity) == 0 {
			return false
		}
		if own, ok := kc.own.Get(ni); ok {
			if !kc.existing {
				return len(own) > 0
			}
			for _, d := range own {
				if d.Domain.Key == kc.key && d.N > 0 {
					return true
				}
			}
			return false
		}
	}
	v, ok := nodeLabels[kc.key]
	return ok && kc.values[v] > 0
}

// inDomainSlot is inDomain for the node in slot with generation gen, from
// the node's own share alone; ok is false when that does not tell (the
// key's domains are not nodes, or the node has no share filed).
func (kc *keyCounts) inDomainSlot(slot int, gen int64) (in, ok bool) {
	if len(kc.values) == 0 {
		return false, true
	}
	if !kc.nodeDomains {
		return false, false
	}
	own, filed := kc.own.GetSlot(slot, gen)
	if !filed {
		return false, false
	}
	if !kc.existing {
		return len(own) > 0, true
	}
	for _, d := range own {
		if d.Domain.Key == kc.key && d.N > 0 {
			return true, true
		}
	}
	return false, true
}

// filterState is what Filter needs, computed once per cycle so
// that Filter is a few map lookups per node, whatever the number of pods.
type filterState struct {
	// affinityTerms and antiAffinityTerms are the incoming pod's required
	// terms, their namespaceSelectors resolved.
	affinityTerms     []framework.AffinityTerm
	antiAffinityTerms []framework.AffinityTerm
	// affinityCounts counts, per label value of each affinity term's
	// topology key (in the order of affinityTerms), the existing pods that
	// match all the affinity terms.
	affinityCounts []map[string]int64
	// antiAffinityCounts counts, per label value of each anti-affinity
	// term's topology key (in the order of antiAffinityTerms), the existing
	// pods that term matches.
	antiAffinityCounts []keyCounts
	// existingAntiAffinity counts, per topology key and label value, the
	// required anti-affinity terms of existing pods that match the
	// incoming pod.
	existingAntiAffinity []keyCounts
	// firstOfGroup is kube-scheduler's rule for the first pod of a group
	// with affinity to itself: when no existing pod matches the affinity
	// terms and the pod matches them itself, any node carrying every
	// topology key will do.
	firstOfGroup bool
}

// Clone returns a copy whose counts AddPod and RemovePod may change; the
// counts of a cycle's state are the memos' running totals, never changed.
// The copy reads every node's domains from its labels.
func (s *filterState) Clone() framework.StateData {
	c := *s
	// Terms with one topology key share one map of counts, to which
	// PreFilter added once per term: the copy shares it too, so that
	// updateWithPod, also once per term, keeps the counts as PreFilter
	// would make them.
	c.affinityCounts = make([]map[string]int64, len(s.affinityCounts))
	byKey := map[string]map[string]int64{}
	for i := range s.affinityCounts {
		key := s.affinityTerms[i].TopologyKey
		m, ok := byKey[key]
		if !ok {
			m = maps.Clone(s.affinityCounts[i])
			if m == nil {
				m = map[string]int64{}
			}
			byKey[key] = m
		}
		c.affinityCounts[i] = m
	}
	c.antiAffinityCounts = cloneKeyCounts(s.antiAffinityCounts)
	c.existingAntiAffinity = cloneKeyCounts(s.existingAntiAffinity)
	return &c
}

func cloneKeyCounts(in []keyCounts) []keyCounts {
	out := make([]keyCounts, len(in))
	for i, kc := range in {
		out[i] = keyCounts{key: kc.key, values: maps.Clone(kc.values), existing: kc.existing}
	}
	return out
}

// addCount adds n to values[v] of m, keeping only non-zero counts.
func addCount(m map[string]int64, v string, n int64) {
	if m[v] += n; m[v] == 0 {
		delete(m, v)
	}
}

// updateWithPod counts pod pi on node in (sign 1) or out (sign -1): the
// existing pods' anti-affinity terms that match the incoming pod (whose
// namespace has nsLabels), and the pods the incoming pod's terms match.
func (s *filterState) updateWithPod(pod *v1.Pod, nsLabels labels.Set, pi *framework.PodInfo, node *v1.Node, sign int64) {
	if node == nil {
		return
	}
	terms := pi.RequiredAntiAffinityTerms()
	for i := range terms {
		t := &terms[i]
		v, ok := node.Labels[t.TopologyKey]
		if !ok || !t.Matches(pod, nsLabels) {
			continue
		}
		j := slices.IndexFunc(s.existingAntiAffinity, func(kc keyCounts) bool { return kc.key == t.TopologyKey })
		if j < 0 {
			s.existingAntiAffinity = append(s.existingAntiAffinity, keyCounts{key: t.TopologyKey, values: map[string]int64{}, existing: true})
			j = len(s.existingAntiAffinity) - 1
		}
		addCount(s.existingAntiAffinity[j].values, v, sign)
	}
	if len(s.affinityTerms) > 0 && framework.PodMatchesAllTerms(s.affinityTerms, pi.Pod) {
		for i := range s.affinityTerms {
			// A clone's maps exist (see Clone); the cycle's state is
			// never updated.
			if v, ok := node.Labels[s.affinityTerms[i].TopologyKey]; ok {
				addCount(s.affinityCounts[i], v, sign)
			}
		}
		// Only once every term has counted: terms may share a map.
		anyAffinity := slices.ContainsFunc(s.affinityCounts, func(m map[string]int64) bool { return len(m) > 0 })
		s.firstOfGroup = !anyAffinity && framework.PodMatchesAllTerms(s.affinityTerms, pod)
	}
	one := []*framework.PodInfo{pi}
	for i := range s.antiAffinityTerms {
		t := &s.antiAffinityTerms[i]
		v, ok := node.Labels[t.TopologyKey]
		if !ok || t.CountMatches(one) == 0 {
			continue
		}
		if s.antiAffinityCounts[i].values == nil {
			s.antiAffinityCounts[i].values = map[string]int64{}
		}
		addCount(s.antiAffinityCounts[i].values, v, sign)
	}
}

// Filter is InterPodAffinity's filter, for spec.affinity.podAffinity and
// podAntiAffinity requiredDuringSchedulingIgnoredDuringExecution:
//
//   - affinity: the node must be in a topology domain (say a zone) that
//     already holds a pod matching all of the pod's affinity terms, or the
//     pod must be the first of a group that matches its own terms;
//   - anti-affinity: the node's domain must hold no pod that one of the
//     pod's anti-affinity terms matches;
//   - symmetry: the node's domain must hold no pod whose own required
//     anti-affinity matches the incoming pod.
type Filter struct {
	snapshot   framework.NodeInfoLister
	namespaces listersv1.NamespaceLister
	// incomingMatches keeps, per term, how many pods it matches per
	// topology domain; existingMatches, per kind of incoming pod, how many
	// existing pods' anti-affinity terms match it per domain. Both are
	// running totals over the nodes, updated by the nodes that changed.
	incomingMatches *framework.NodeMemo[[]framework.DomainCount]
	existingMatches *framework.NodeMemo[[]framework.DomainCount]
}

var (
	_ framework.PreFilterPlugin     = &Filter{}
	_ framework.PreFilterExtensions = &Filter{}
	_ framework.FilterPlugin        = &Filter{}
	_ framework.SlotFilter          = &Filter{}
)

// NewFilter returns the filter. It reads the cycle's snapshot and
// namespace labels through h; asking for the namespace lister here is what
// makes the daemon start the namespace informer (see
// framework.NamespaceLister).
func NewFilter(h framework.Handle) (*Filter, error) {
	if h == nil || h.SnapshotSharedLister() == nil {
		return nil, errors.New("InterPodAffinity needs the snapshot lister")
	}
	p := framework.NewParallelizer(framework.DefaultParallelism)
	return &Filter{
		snapshot:        h.SnapshotSharedLister(),
		namespaces:      framework.NamespaceLister(h, Name),
		incomingMatches: framework.NewNodeMemo[[]framework.DomainCount](p),
		existingMatches: framework.NewNodeMemo[[]framework.DomainCount](p),
	}, nil
}

// Name returns Name.
func (*Filter) Name() string { return Name }

// PreFilter counts, per topology domain, the existing pods that the pod's
// required affinity and anti-affinity terms match, and the existing pods'
// required anti-affinity terms that match the pod. It returns Skip when the
// pod has no required terms and no existing pod's anti-affinity matches it,
// and rejects the pod, UnschedulableAndUnresolvable, when its terms do not
// parse.
//
// Existing pods' anti-affinity is looked for only on the nodes the snapshot
// lists as holding such pods; the pod's own terms need every pod.
func (pl *Filter) PreFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
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
	s := &filterState{affinityTerms: affinity, antiAffinityTerms: anti}
	hostnamesUnique := pl.snapshot.HostnamesUnique()
	if len(withAnti) > 0 {
		nsLabels := framework.NamespaceLabels(pl.namespaces, pod.Namespace)
		// Summed over every node, not only withAnti: the snapshot's own
		// list lets the running total find the changed nodes by slot,
		// where withAnti (thousands of nodes in an anti-affinity backlog)
		// would be read node by node. A node without such pods adds
		// nothing.
		counts, own := pl.countExistingAntiAffinity(pod, nsLabels, pl.snapshot.List())
		for key, values := range counts {
			kc := keyCounts{key: key, values: values, existing: true}
			if key == v1.LabelHostname && hostnamesUnique {
				kc.nodeDomains, kc.own = true, own
			}
			s.existingAntiAffinity = append(s.existingAntiAffinity, kc)
		}
	}
	var anyAffinity bool
	if len(affinity) > 0 || len(anti) > 0 {
		var affinityCounts domainCounts
		affinityCounts, s.antiAffinityCounts = pl.countIncoming(affinity, anti, nodes, hostnamesUnique)
		anyAffinity = len(affinityCounts) > 0
		for i := range affinity {
			s.affinityCounts = append(s.affinityCounts, affinityCounts[affinity[i].TopologyKey])
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(s.existingAntiAffinity) == 0 && len(affinity) == 0 && len(anti) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	s.firstOfGroup = !anyAffinity && framework.PodMatchesAllTerms(affinity, pod)
	state.Write(filterStateKey, s)
	return nil, nil
}

// countExistingAntiAffinity counts, per domain, the required anti-affinity
// terms of pods on nodes that match pod (whose namespace has nsLabels): a
// running total for pods of the same namespace, labels and namespace
// labels, brought up to date by the nodes that changed.
func (pl *Filter) countExistingAntiAffinity(pod *v1.Pod, nsLabels labels.Set, nodes []*framework.NodeInfo) (domainCounts, framework.NodeValues[[]framework.DomainCount]) {
	match := func(ni *framework.NodeInfo) []framework.DomainCount {
		var out []framework.DomainCount
		nodeLabels := ni.Labels()
		for _, existing := range ni.PodsWithRequiredAntiAffinity {
			terms := existing.RequiredAntiAffinityTerms()
			for i := range terms {
				if terms[i].Matches(pod, nsLabels) {
					out = framework.AddDomainCount(out, nodeLabels, terms[i].TopologyKey, 1)
				}
			}
		}
		return out
	}
	return framework.SyncTotal(pl.existingMatches, framework.IncomingPodKey(pod, nsLabels), nodes, pl.snapshot.Slots(), match, newDomainCounts, domainCounts.apply)
}

// countIncoming counts, per domain, the existing pods that match all of
// affinity (once per affinity term's topology key) and, per term of anti,
// the existing pods it matches per domain. Each is a running total, kept
// per set of terms (affinity) or term (anti) and topology keys. A hostname
// term's counts come with the nodes' own shares when hostnamesUnique.
func (pl *Filter) countIncoming(affinity, anti []framework.AffinityTerm, nodes []*framework.NodeInfo, hostnamesUnique bool) (domainCounts, []keyCounts) {
	var affinityCounts domainCounts
	if len(affinity) > 0 {
		topologyKeys := make([]string, len(affinity))
		matchKeys := make([]string, len(affinity))
		for i := range affinity {
			topologyKeys[i], matchKeys[i] = affinity[i].TopologyKey, affinity[i].MatchKey()
		}
		count := func(ni *framework.NodeInfo) []framework.DomainCount {
			var n int64
			for _, existing := range ni.Pods {
				if framework.PodMatchesAllTerms(affinity, existing.Pod) {
					n++
				}
			}
			if n == 0 {
				return nil
			}
			var out []framework.DomainCount
			nodeLabels := ni.Labels()
			for j := range affinity {
				out = framework.AddDomainCount(out, nodeLabels, affinity[j].TopologyKey, n)
			}
			return out
		}
		key := "all:" + strings.Join(topologyKeys, ",") + "#" + strings.Join(matchKeys, "&")
		affinityCounts, _ = framework.SyncTotal(pl.incomingMatches, key, nodes, pl.snapshot.Slots(), count, newDomainCounts, domainCounts.apply)
	}
	var antiCounts []keyCounts
	for j := range anti {
		term := &anti[j]
		key := "one:" + term.TopologyKey + "#" + term.MatchKey()
		counts, own := framework.SyncTotal(pl.incomingMatches, key, nodes, pl.snapshot.Slots(), term.NodeMatches, newDomainCounts, domainCounts.apply)
		kc := keyCounts{key: term.TopologyKey, values: counts[term.TopologyKey]}
		if kc.key == v1.LabelHostname && hostnamesUnique {
			kc.nodeDomains, kc.own = true, own
		}
		antiCounts = append(antiCounts, kc)
	}
	return affinityCounts, antiCounts
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

func (pl *Filter) update(state *framework.CycleState, pod *v1.Pod, pi *framework.PodInfo, ni *framework.NodeInfo, sign int64) *framework.Status {
	s, err := framework.ReadAs[*filterState](state, filterStateKey)
	if err != nil {
		// PreFilter skipped: the pod has no terms and no existing pod's
		// anti-affinity matched it. A pod added back was there then, and
		// a pod taken away only takes matches away.
		return nil
	}
	s.updateWithPod(pod, framework.NamespaceLabels(pl.namespaces, pod.Namespace), pi, ni.Node(), sign)
	return nil
}

// Filter rejects a node that fails the pod's affinity
// (UnschedulableAndUnresolvable: evicting pods adds no matching pod), the
// pod's anti-affinity, or an existing pod's anti-affinity (Unschedulable:
// evicting the offending pods would help), checked in that order.
func (pl *Filter) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*filterState](state, filterStateKey)
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
	if !s.satisfiesAntiAffinity(nodeInfo, node.Labels) {
		return statusPodAntiAffinityRulesNotMatch
	}
	if !s.satisfiesExistingAntiAffinity(nodeInfo, node.Labels) {
		return statusExistingAntiAffinityRulesNotMatch
	}
	return nil
}

// FilterSlot is Filter for a pod without required affinity terms whose
// anti-affinity terms, and the existing pods' ones, are by hostname (each
// node its own domain): the node's own shares, by slot, decide without
// reading its NodeInfo. Otherwise it leaves the node to Filter.
func (pl *Filter) FilterSlot(_ context.Context, state *framework.CycleState, _ *v1.Pod, slot int, gen int64) (*framework.Status, bool) {
	s, err := framework.ReadAs[*filterState](state, filterStateKey)
	if err != nil || len(s.affinityTerms) > 0 {
		return nil, false
	}
	// Filter's order: the pod's own terms, then the existing pods'.
	if in, ok := anyInDomainSlot(s.antiAffinityCounts, slot, gen); !ok || in {
		return slotVerdict(in, ok, statusPodAntiAffinityRulesNotMatch)
	}
	in, ok := anyInDomainSlot(s.existingAntiAffinity, slot, gen)
	return slotVerdict(in, ok, statusExistingAntiAffinityRulesNotMatch)
}

// slotVerdict is FilterSlot's answer for one kind of term: undecided
// unless ok, reject if in, else pass.
func slotVerdict(in, ok bool, reject *framework.Status) (*framework.Status, bool) {
	switch {
	case !ok:
		return nil, false
	case in:
		return reject, true
	}
	return nil, true
}

// anyInDomainSlot reports whether the node in slot (generation gen) is in a
// domain that one of counts has a match in; ok is false when one of them
// cannot tell by slot.
func anyInDomainSlot(counts []keyCounts, slot int, gen int64) (in, ok bool) {
	for i := range counts {
		if in, ok := counts[i].inDomainSlot(slot, gen); !ok || in {
			return in, ok
		}
	}
	return false, true
}

// satisfiesAffinity reports whether a node with nodeLabels carries every
// affinity term's topology key and each of its domains holds a matching
// pod, or the pod is the first of its group.
func (s *filterState) satisfiesAffinity(nodeLabels map[string]string) bool {
	podsExist := true
	for i := range s.affinityTerms {
		v, ok := nodeLabels[s.affinityTerms[i].TopologyKey]
		if !ok {
			return false
		}
		if s.affinityCounts[i][v] <= 0 {
			podsExist = false
		}
	}
	return podsExist || s.firstOfGroup
}

// satisfiesAntiAffinity reports whether no domain of the node holds a pod
// that an anti-affinity term matches. A node without a term's topology key
// is in no domain of it.
func (s *filterState) satisfiesAntiAffinity(ni *framework.NodeInfo, nodeLabels map[string]string) bool {
	for i := range s.antiAffinityCounts {
		if s.antiAffinityCounts[i].inDomain(ni, nodeLabels) {
			return false
		}
	}
	return true
}

// satisfiesExistingAntiAffinity reports whether no domain of the node holds
// an existing pod whose required anti-affinity matches the incoming pod.
func (s *filterState) satisfiesExistingAntiAffinity(ni *framework.NodeInfo, nodeLabels map[string]string) bool {
	for i := range s.existingAntiAffinity {
		if s.existingAntiAffinity[i].inDomain(ni, nodeLabels) {
			return false
		}
	}
	return true
}
