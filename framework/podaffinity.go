package framework

// Inter-pod affinity as the InterPodAffinity filter and scorer need it: each
// v1.PodAffinityTerm compiled once into label selectors and a namespace set,
// so that asking "does this pod match that term?" is a set lookup and a
// selector walk, with no parsing and no allocation.
//
// Every pod's terms are compiled when its PodInfo is made (NewPodInfo, once
// per pod in the cache and in the queue), so a cycle never re-parses the
// terms of the pods already on nodes. The semantics are kube-scheduler
// v1.37's (k8s.io/kube-scheduler/framework AffinityTerm):
//
//   - a term matches a pod when the pod's namespace is one the term names
//     (its own namespace when the term names none and has no
//     namespaceSelector) or one whose labels its namespaceSelector selects,
//     and the pod's labels match the term's labelSelector;
//   - a nil labelSelector or namespaceSelector selects nothing, an empty one
//     everything;
//   - a term whose selector does not parse drops its whole list (required
//     affinity, required anti-affinity, preferred affinity or preferred
//     anti-affinity), and the error is kept for the incoming pod's PreFilter
//     and PreScore to report.

import (
	"fmt"
	"strings"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	listersv1 "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// AffinityTerm is a compiled v1.PodAffinityTerm. It is never mutated after
// compilation: terms of pods in the cache are shared by every cycle.
type AffinityTerm struct {
	// Namespaces are the namespaces the term names; the pod's own when it
	// names none and has no namespaceSelector.
	Namespaces sets.Set[string]
	// NamespaceSelector selects further namespaces by their labels:
	// labels.Nothing() when the term has none, labels.Everything() when it
	// is empty.
	NamespaceSelector labels.Selector
	// Selector is the labelSelector, with matchLabelKeys and
	// mismatchLabelKeys merged in (see NewPodAffinityTerms).
	Selector    labels.Selector
	TopologyKey string
}

// Matches reports whether pod is one the term selects. nsLabels are the
// labels of pod's namespace, read by the namespaceSelector; a term whose
// namespaceSelector was resolved (ResolveNamespaceSelectors) ignores them.
func (t *AffinityTerm) Matches(pod *v1.Pod, nsLabels labels.Set) bool {
	if t.Namespaces.Has(pod.Namespace) || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a compiled v1.WeightedPodAffinityTerm.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// PodAffinityTerms are a pod's compiled inter-pod affinity and
// anti-affinity terms.
type PodAffinityTerms struct {
	RequiredAffinity      []AffinityTerm
	RequiredAntiAffinity  []AffinityTerm
	PreferredAffinity     []WeightedAffinityTerm
	PreferredAntiAffinity []WeightedAffinityTerm
	// Err says which lists were dropped because a selector did not parse,
	// worded as kube-scheduler words it ("requiredAffinityTerms: ...").
	Err error
}

// NewPodAffinityTerms compiles the pod's spec.affinity.podAffinity and
// podAntiAffinity, or returns nil when it has neither.
//
// matchLabelKeys and mismatchLabelKeys become "key in (value)" and
// "key notin (value)" requirements on the labelSelector, with the pod's own
// label values. kube-apiserver (v1.33+, MatchLabelKeysInPodAffinity) already
// writes them into the stored labelSelector when the pod is created, and
// kube-scheduler v1.37 relies on that; yardmaster merges too, for pods that
// did not pass through such an API server, but skips a key the selector
// already has the API server's requirement for. That keeps the values of the
// pod's labels at creation, as kube-scheduler sees them, when the labels
// change later.
func NewPodAffinityTerms(pod *v1.Pod) *PodAffinityTerms {
	a := pod.Spec.Affinity
	if a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil) {
		return nil
	}
	t := &PodAffinityTerms{}
	var errs []error
	var err error
	if pa := a.PodAffinity; pa != nil {
		if t.RequiredAffinity, err = compileAffinityTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("requiredAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		if t.RequiredAntiAffinity, err = compileAffinityTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("requiredAntiAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAffinity; pa != nil {
		if t.PreferredAffinity, err = compileWeightedAffinityTerms(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("preferredAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		if t.PreferredAntiAffinity, err = compileWeightedAffinityTerms(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("preferredAntiAffinityTerms: %w", err))
		}
	}
	t.Err = utilerrors.NewAggregate(errs)
	return t
}

// compileAffinityTerms compiles terms; one bad term drops them all.
func compileAffinityTerms(pod *v1.Pod, terms []v1.PodAffinityTerm) ([]AffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	out := make([]AffinityTerm, 0, len(terms))
	for i := range terms {
		t, err := compileAffinityTerm(pod, &terms[i])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// compileWeightedAffinityTerms compiles weighted terms; one bad term drops
// them all.
func compileWeightedAffinityTerms(pod *v1.Pod, terms []v1.WeightedPodAffinityTerm) ([]WeightedAffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	out := make([]WeightedAffinityTerm, 0, len(terms))
	for i := range terms {
		t, err := compileAffinityTerm(pod, &terms[i].PodAffinityTerm)
		if err != nil {
			return nil, err
		}
		out = append(out, WeightedAffinityTerm{AffinityTerm: t, Weight: terms[i].Weight})
	}
	return out, nil
}

func compileAffinityTerm(pod *v1.Pod, term *v1.PodAffinityTerm) (AffinityTerm, error) {
	sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	if sel, err = mergeLabelKeys(sel, term, pod.Labels); err != nil {
		return AffinityTerm{}, err
	}
	nsSel, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	var ns sets.Set[string]
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		ns = sets.New(pod.Namespace)
	} else {
		ns = sets.New(term.Namespaces...)
	}
	return AffinityTerm{Namespaces: ns, NamespaceSelector: nsSel, Selector: sel, TopologyKey: term.TopologyKey}, nil
}

// mergeLabelKeys adds the matchLabelKeys and mismatchLabelKeys requirements
// kube-apiserver would have added, unless it did (see NewPodAffinityTerms).
// A nil labelSelector selects nothing and stays so, as in kube-apiserver.
func mergeLabelKeys(sel labels.Selector, term *v1.PodAffinityTerm, podLabels map[string]string) (labels.Selector, error) {
	if term.LabelSelector == nil || (len(term.MatchLabelKeys) == 0 && len(term.MismatchLabelKeys) == 0) {
		return sel, nil
	}
	var reqs []labels.Requirement
	add := func(key string, op selection.Operator) error {
		value, ok := podLabels[key]
		if !ok || alreadyMerged(term.LabelSelector, key, op, value) {
			return nil
		}
		r, err := labels.NewRequirement(key, op, []string{value})
		if err != nil {
			return err
		}
		reqs = append(reqs, *r)
		return nil
	}
	for _, k := range term.MatchLabelKeys {
		if err := add(k, selection.In); err != nil {
			return nil, err
		}
	}
	for _, k := range term.MismatchLabelKeys {
		if err := add(k, selection.NotIn); err != nil {
			return nil, err
		}
	}
	return sel.Add(reqs...), nil
}

// alreadyMerged reports whether ls holds the requirement kube-apiserver
// writes for a matchLabelKeys (op In) or mismatchLabelKeys (op NotIn) key.
// API validation forbids a matchLabelKeys key elsewhere in the selector, so
// any In on it is the API server's; a NotIn on a mismatchLabelKeys key may
// be the user's own, so only the exact requirement counts.
func alreadyMerged(ls *metav1.LabelSelector, key string, op selection.Operator, value string) bool {
	for _, e := range ls.MatchExpressions {
		if e.Key != key {
			continue
		}
		switch {
		case op == selection.In && e.Operator == metav1.LabelSelectorOpIn:
			return true
		case op == selection.NotIn && e.Operator == metav1.LabelSelectorOpNotIn && len(e.Values) == 1 && e.Values[0] == value:
			return true
		}
	}
	return false
}

// RequiredAffinityTerms returns the pod's compiled required affinity terms.
func (p *PodInfo) RequiredAffinityTerms() []AffinityTerm {
	if p.Affinity == nil {
		return nil
	}
	return p.Affinity.RequiredAffinity
}

// RequiredAntiAffinityTerms returns the pod's compiled required
// anti-affinity terms.
func (p *PodInfo) RequiredAntiAffinityTerms() []AffinityTerm {
	if p.Affinity == nil {
		return nil
	}
	return p.Affinity.RequiredAntiAffinity
}

// PreferredAffinityTerms returns the pod's compiled preferred affinity terms.
func (p *PodInfo) PreferredAffinityTerms() []WeightedAffinityTerm {
	if p.Affinity == nil {
		return nil
	}
	return p.Affinity.PreferredAffinity
}

// PreferredAntiAffinityTerms returns the pod's compiled preferred
// anti-affinity terms.
func (p *PodInfo) PreferredAntiAffinityTerms() []WeightedAffinityTerm {
	if p.Affinity == nil {
		return nil
	}
	return p.Affinity.PreferredAntiAffinity
}

// PodMatchesAllTerms reports whether pod matches every one of terms, which
// must have their namespaceSelectors resolved; false when there are none.
func PodMatchesAllTerms(terms []AffinityTerm, pod *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// PodMatchesAnyTerm reports whether pod matches at least one of terms,
// which must have their namespaceSelectors resolved: the test of
// anti-affinity, which one matching term is enough to violate.
func PodMatchesAnyTerm(terms []AffinityTerm, pod *v1.Pod) bool {
	for i := range terms {
		if terms[i].Matches(pod, nil) {
			return true
		}
	}
	return false
}

// ResolveNamespaceSelector returns t with the namespaces its
// namespaceSelector selects now added to Namespaces and the selector
// replaced by labels.Nothing(), so that matching needs no namespace labels.
// This is how kube-scheduler treats the incoming pod's terms: one lister
// call per term per cycle instead of a namespace lookup per existing pod.
// A term without a namespaceSelector, or with an empty one (every
// namespace), is returned as is.
//
// As in kube-scheduler v1.37, a selector that accepts an empty label set
// ("team notin (a)", DoesNotExist) selects only the namespaces it lists
// now. v1.36's mergeAffinityTermNamespacesIfNotEmpty replaced the selector
// on a copy it then dropped, so such a term went on matching the pods of
// every namespace; v1.37 passes the term by pointer.
func ResolveNamespaceSelector(t AffinityTerm, lister listersv1.NamespaceLister) (AffinityTerm, error) {
	if !selectsSomeNamespaces(&t) {
		return t, nil
	}
	nss, err := lister.List(t.NamespaceSelector)
	if err != nil {
		return AffinityTerm{}, fmt.Errorf("list namespaces for selector %q: %w", t.NamespaceSelector.String(), err)
	}
	ns := t.Namespaces.Clone()
	for _, n := range nss {
		ns.Insert(n.Name)
	}
	t.Namespaces = ns
	t.NamespaceSelector = labels.Nothing()
	return t, nil
}

// selectsSomeNamespaces reports whether t has a namespaceSelector that
// selects by labels: neither none (Nothing) nor empty (Everything).
func selectsSomeNamespaces(t *AffinityTerm) bool {
	return !t.NamespaceSelector.Empty() && !labels.MatchesNothing(t.NamespaceSelector)
}

// ResolveNamespaceSelectors resolves each of terms (ResolveNamespaceSelector).
// It returns terms itself, not a copy, when none has a namespaceSelector to
// resolve: the common case costs nothing.
func ResolveNamespaceSelectors(terms []AffinityTerm, lister listersv1.NamespaceLister) ([]AffinityTerm, error) {
	var out []AffinityTerm
	for i := range terms {
		if !selectsSomeNamespaces(&terms[i]) {
			continue
		}
		if out == nil {
			out = append([]AffinityTerm(nil), terms...)
		}
		r, err := ResolveNamespaceSelector(terms[i], lister)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	if out == nil {
		return terms, nil
	}
	return out, nil
}

// ResolveWeightedNamespaceSelectors is ResolveNamespaceSelectors for
// weighted terms.
func ResolveWeightedNamespaceSelectors(terms []WeightedAffinityTerm, lister listersv1.NamespaceLister) ([]WeightedAffinityTerm, error) {
	var out []WeightedAffinityTerm
	for i := range terms {
		if !selectsSomeNamespaces(&terms[i].AffinityTerm) {
			continue
		}
		if out == nil {
			out = append([]WeightedAffinityTerm(nil), terms...)
		}
		r, err := ResolveNamespaceSelector(terms[i].AffinityTerm, lister)
		if err != nil {
			return nil, err
		}
		out[i].AffinityTerm = r
	}
	if out == nil {
		return terms, nil
	}
	return out, nil
}

// NamespaceLister returns the namespace lister of h's informer factory;
// asking for it registers the namespace informer, which the daemon then
// starts with the others. A handle without a factory (a scheduler built
// for a test or a benchmark, with no informers at all) gets a lister that
// knows no namespace, so namespaceSelectors select nothing, and a warning.
func NamespaceLister(h Handle, plugin string) listersv1.NamespaceLister {
	if f := h.SharedInformerFactory(); f != nil {
		return f.Core().V1().Namespaces().Lister()
	}
	h.Logger().Warn("no informer factory: namespace selectors of pod affinity terms will select no namespace", zap.String("plugin", plugin))
	return listersv1.NewNamespaceLister(toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}))
}

// NamespaceLabels returns the labels of namespace ns, or nil when the
// lister does not know it (kube-scheduler then assumes no labels too). The
// map is the informer's: callers only read it.
func NamespaceLabels(lister listersv1.NamespaceLister, ns string) labels.Set {
	n, err := lister.Get(ns)
	if err != nil {
		return nil
	}
	return n.Labels
}

// MatchKey returns a string that is equal for two terms exactly when they
// match the same pods (given the same namespace labels): the namespaces,
// the namespaceSelector and the selector, not the topology key. It keys
// per-node memos of matching pods (NodeMemo).
func (t *AffinityTerm) MatchKey() string {
	var b strings.Builder
	for i, ns := range sets.List(t.Namespaces) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(ns)
	}
	b.WriteByte('|')
	b.WriteString(SelectorKey(t.NamespaceSelector))
	b.WriteByte('|')
	b.WriteString(SelectorKey(t.Selector))
	return b.String()
}

// SelectorKey renders s so that labels.Everything() and labels.Nothing(),
// which both print as "", differ.
func SelectorKey(s labels.Selector) string {
	switch {
	case s.Empty():
		return "*"
	case labels.MatchesNothing(s):
		return "!"
	}
	return s.String()
}

// CountMatches returns how many of pods the term matches. The term's
// namespaceSelector must be resolved (see ResolveNamespaceSelector): no
// namespace labels are looked up.
func (t *AffinityTerm) CountMatches(pods []*PodInfo) int32 {
	var n int32
	for _, pi := range pods {
		if t.Matches(pi.Pod, nil) {
			n++
		}
	}
	return n
}

// NodeMatches is what node ni adds to the term's running total of matches
// per domain (see SyncTotal): the pods there the term matches, in the
// node's domain of the term's topology key; nothing when none matches or
// the node lacks the key.
func (t *AffinityTerm) NodeMatches(ni *NodeInfo) []DomainCount {
	n := t.CountMatches(ni.Pods)
	if n == 0 {
		return nil
	}
	return AddDomainCount(nil, ni.Labels(), t.TopologyKey, int64(n))
}

// IncomingPodKey names what the existing pods' terms see of an incoming
// pod: its namespace, its labels and its namespace's labels. It keys
// per-node memos of which existing terms match the pod (NodeMemo).
func IncomingPodKey(pod *v1.Pod, nsLabels labels.Set) string {
	return pod.Namespace + "|" + labels.Set(pod.Labels).String() + "|" + nsLabels.String()
}

// TopologyDomain is one topology domain: a node label key and value.
type TopologyDomain struct {
	Key, Value string
}

// DomainCount is what the pods of one node add to one topology domain: a
// number of matching pods, or a sum of term weights.
type DomainCount struct {
	Domain TopologyDomain
	N      int64
}

// AddDomainCount adds n to the domain named by key of the node with
// nodeLabels, when the node has that label: a node without the topology
// key is in no domain. An entry stays even when what it holds adds up to 0.
func AddDomainCount(counts []DomainCount, nodeLabels map[string]string, key string, n int64) []DomainCount {
	v, ok := nodeLabels[key]
	if !ok {
		return counts
	}
	d := TopologyDomain{key, v}
	for i := range counts {
		if counts[i].Domain == d {
			counts[i].N += n
			return counts
		}
	}
	return append(counts, DomainCount{d, n})
}
