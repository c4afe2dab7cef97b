package framework

// Node selection as the NodeAffinity filter and scorer need it, compiled once
// per pod so that matching a node is a walk over plain slices: no label
// selector parsing, no map built from the node, no allocation.
//
// The semantics are those of kube-scheduler v1.37 (component-helpers'
// nodeaffinity package), including its corners:
//
//   - terms are ORed, the requirements of a term ANDed;
//   - a term with neither matchExpressions nor matchFields matches nothing;
//   - a term with an invalid requirement (unknown operator, a Gt value that is
//     not an integer, a label value that is not a valid label value, …)
//     matches nothing, while the other terms still count;
//   - matchFields only knows metadata.name, with In or NotIn and exactly one
//     value; it is ignored for a node without a name.
//
// It also holds the taint/toleration matching shared by the filters and the
// scorer that look at taints.

import (
	"errors"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NodeNameField is the only field node selector matchFields can select on.
const NodeNameField = "metadata.name"

// inSetThreshold is the number of In/NotIn values above which a requirement
// keeps a set besides the slice: a linear scan beats hashing for a handful of
// values, a set wins for the long host lists some operators generate.
const inSetThreshold = 8

// labelRequirement is one compiled matchExpressions entry.
type labelRequirement struct {
	key    string
	op     v1.NodeSelectorOperator
	values []string            // In, NotIn
	set    map[string]struct{} // In, NotIn with more than inSetThreshold values
	bound  int64               // Gt, Lt
}

func (r *labelRequirement) has(v string) bool {
	if r.set != nil {
		_, ok := r.set[v]
		return ok
	}
	for _, x := range r.values {
		if x == v {
			return true
		}
	}
	return false
}

func (r *labelRequirement) matches(labels map[string]string) bool {
	v, ok := labels[r.key]
	switch r.op {
	case v1.NodeSelectorOpIn:
		return ok && r.has(v)
	case v1.NodeSelectorOpNotIn:
		return !ok || !r.has(v)
	case v1.NodeSelectorOpExists:
		return ok
	case v1.NodeSelectorOpDoesNotExist:
		return !ok
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if !ok {
			return false
		}
		n, valid := parseInt64(v)
		if !valid {
			return false
		}
		if r.op == v1.NodeSelectorOpGt {
			return n > r.bound
		}
		return n < r.bound
	default:
		return false
	}
}

// fieldRequirement is one compiled matchFields entry.
type fieldRequirement struct {
	key   string
	value string
	notIn bool
}

func (r *fieldRequirement) matches(nodeName string) bool {
	var got string
	if r.key == NodeNameField {
		got = nodeName
	}
	if r.notIn {
		return got != r.value
	}
	return got == r.value
}

// NodeSelectorTerm is a compiled v1.NodeSelectorTerm.
type NodeSelectorTerm struct {
	exprs  []labelRequirement
	fields []fieldRequirement
	// empty is set for a term with no requirement at all.
	empty bool
	err   error
}

// NewNodeSelectorTerm compiles term. An invalid term is returned with its
// error (see Err) and never matches.
func NewNodeSelectorTerm(term *v1.NodeSelectorTerm) NodeSelectorTerm {
	return compileTerm(term, func() *field.Path { return nil })
}

// compileTerm compiles term; path locates it in error messages and is only
// called to report an error, so a valid term costs no path allocation.
func compileTerm(term *v1.NodeSelectorTerm, path func() *field.Path) NodeSelectorTerm {
	t := NodeSelectorTerm{empty: len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0}
	if t.empty {
		return t
	}
	var errs field.ErrorList
	if len(term.MatchExpressions) > 0 {
		t.exprs = make([]labelRequirement, 0, len(term.MatchExpressions))
		for i := range term.MatchExpressions {
			r, err := compileLabelRequirement(&term.MatchExpressions[i], func() *field.Path {
				return path().Child("matchExpressions").Index(i)
			})
			if err != nil {
				errs = append(errs, err...)
				continue
			}
			t.exprs = append(t.exprs, r)
		}
	}
	if len(term.MatchFields) > 0 {
		t.fields = make([]fieldRequirement, 0, len(term.MatchFields))
		for i := range term.MatchFields {
			r, err := compileFieldRequirement(&term.MatchFields[i], func() *field.Path {
				return path().Child("matchFields").Index(i)
			})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			t.fields = append(t.fields, r)
		}
	}
	if len(errs) > 0 {
		t.err = errs.ToAggregate()
		t.exprs, t.fields = nil, nil
	}
	return t
}

// compileLabelRequirement validates r as labels.NewRequirement does (label
// key, value count per operator, integer bound, label values) and compiles
// it. path is only called to report an error.
func compileLabelRequirement(r *v1.NodeSelectorRequirement, path func() *field.Path) (labelRequirement, field.ErrorList) {
	var errs field.ErrorList
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Invalid(path().Child("values"), r.Values, "for 'in', 'notin' operators, values set can't be empty"))
		}
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		if len(r.Values) != 0 {
			errs = append(errs, field.Invalid(path().Child("values"), r.Values, "values set must be empty for exists and does not exist"))
		}
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Invalid(path().Child("values"), r.Values, "for 'Gt', 'Lt' operators, exactly one value is required"))
		}
		for i, v := range r.Values {
			if _, ok := parseInt64(v); !ok {
				errs = append(errs, field.Invalid(path().Child("values").Index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
			}
		}
	default:
		// The key and values of an unknown operator are not looked at.
		return labelRequirement{}, field.ErrorList{field.NotSupported(path().Child("operator"), r.Operator, labelOperators)}
	}
	if msgs := content.IsLabelKey(r.Key); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path().Child("key"), r.Key, strings.Join(msgs, "; ")))
	}
	for i, v := range r.Values {
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path().Child("values").Index(i), v, strings.Join(msgs, "; ")))
		}
	}
	if len(errs) > 0 {
		return labelRequirement{}, errs
	}

	c := labelRequirement{key: r.Key, op: r.Operator}
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		c.values = r.Values
		if len(r.Values) > inSetThreshold {
			c.set = make(map[string]struct{}, len(r.Values))
			for _, v := range r.Values {
				c.set[v] = struct{}{}
			}
		}
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		c.bound, _ = parseInt64(r.Values[0])
	}
	return c, nil
}

var (
	labelOperators = []v1.NodeSelectorOperator{
		v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
		v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt,
	}
	fieldOperators = []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn}
)

// compileFieldRequirement compiles a matchFields entry: In or NotIn with
// exactly one value. The key is not validated, as in kube-scheduler: a key
// other than metadata.name reads as the empty string.
func compileFieldRequirement(r *v1.NodeSelectorRequirement, path func() *field.Path) (fieldRequirement, *field.Error) {
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) != 1 {
			return fieldRequirement{}, field.Invalid(path().Child("values"), r.Values, "must have one element")
		}
		return fieldRequirement{key: r.Key, value: r.Values[0], notIn: r.Operator == v1.NodeSelectorOpNotIn}, nil
	default:
		return fieldRequirement{}, field.NotSupported(path().Child("operator"), r.Operator, fieldOperators)
	}
}

// Match reports whether node satisfies every requirement of the term. An
// empty or invalid term matches nothing.
func (t *NodeSelectorTerm) Match(node *v1.Node) bool {
	if t.empty || t.err != nil || node == nil {
		return false
	}
	for i := range t.exprs {
		if !t.exprs[i].matches(node.Labels) {
			return false
		}
	}
	// kube-scheduler ignores matchFields for a node without a name.
	if node.Name != "" {
		for i := range t.fields {
			if !t.fields[i].matches(node.Name) {
				return false
			}
		}
	}
	return true
}

// Err returns why the term is invalid, or nil.
func (t *NodeSelectorTerm) Err() error { return t.err }

// IsEmpty reports whether the term has no requirement (and so matches
// nothing).
func (t *NodeSelectorTerm) IsEmpty() bool { return t.empty }

// NodeSelector is a compiled v1.NodeSelector: a node matches when it matches
// any of the terms. Empty terms are dropped; invalid terms are kept but never
// match, and Err reports them.
type NodeSelector struct {
	terms []NodeSelectorTerm
	err   error
}

// NewNodeSelector compiles ns. It does not fail: callers that must reject an
// invalid selector (a PersistentVolume's node affinity) check Err, callers
// that must ignore invalid terms (a pod's required node affinity) do not.
func NewNodeSelector(ns *v1.NodeSelector) *NodeSelector {
	return NewNodeSelectorTerms(ns.NodeSelectorTerms)
}

// NewNodeSelectorTerms compiles a list of ORed terms; see NewNodeSelector.
func NewNodeSelectorTerms(terms []v1.NodeSelectorTerm) *NodeSelector {
	s := &NodeSelector{terms: make([]NodeSelectorTerm, 0, len(terms))}
	var errs []error
	for i := range terms {
		t := compileTerm(&terms[i], func() *field.Path { return field.NewPath("nodeSelectorTerms").Index(i) })
		if t.empty {
			continue
		}
		if t.err != nil {
			errs = append(errs, t.err)
		}
		s.terms = append(s.terms, t)
	}
	s.err = errors.Join(errs...)
	return s
}

// Match reports whether node matches any term. A selector without terms
// matches nothing.
func (s *NodeSelector) Match(node *v1.Node) bool {
	for i := range s.terms {
		if s.terms[i].Match(node) {
			return true
		}
	}
	return false
}

// Err returns the errors of the invalid terms, or nil.
func (s *NodeSelector) Err() error { return s.err }

// PreferredSchedulingTerms are a pod's compiled preferred node affinity.
type PreferredSchedulingTerms struct {
	terms   []NodeSelectorTerm
	weights []int64
}

// NewPreferredSchedulingTerms compiles terms, dropping those with weight 0
// or no requirement. Unlike the required terms, one invalid preferred term
// is an error, as in kube-scheduler, whose PreScore then fails the pod.
func NewPreferredSchedulingTerms(terms []v1.PreferredSchedulingTerm) (*PreferredSchedulingTerms, error) {
	p := &PreferredSchedulingTerms{}
	var errs []error
	for i := range terms {
		if terms[i].Weight == 0 {
			continue
		}
		// kube-scheduler reports preferred terms by index alone: "[0].matchExpressions[0]...".
		t := compileTerm(&terms[i].Preference, func() *field.Path { return (*field.Path)(nil).Index(i) })
		if t.empty {
			continue
		}
		if t.err != nil {
			errs = append(errs, t.err)
			continue
		}
		p.terms = append(p.terms, t)
		p.weights = append(p.weights, int64(terms[i].Weight))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Len returns the number of terms that can score.
func (p *PreferredSchedulingTerms) Len() int { return len(p.terms) }

// Score returns the sum of the weights of the terms node matches.
func (p *PreferredSchedulingTerms) Score(node *v1.Node) int64 {
	var sum int64
	for i := range p.terms {
		if p.terms[i].Match(node) {
			sum += p.weights[i]
		}
	}
	return sum
}

// labelPair is one spec.nodeSelector entry.
type labelPair struct{ key, value string }

// RequiredNodeAffinity is what a pod demands of its node: every
// spec.nodeSelector label, and, when set, the required node affinity.
type RequiredNodeAffinity struct {
	nodeSelector []labelPair
	// affinity is nil when the pod has no required node affinity; a non-nil
	// affinity without terms matches no node.
	affinity *NodeSelector
}

// NewRequiredNodeAffinity compiles the pod's spec.nodeSelector and
// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.
// Invalid required terms never match and are otherwise ignored, as in
// kube-scheduler; the nodeSelector labels are not validated.
func NewRequiredNodeAffinity(pod *v1.Pod) *RequiredNodeAffinity {
	r := &RequiredNodeAffinity{}
	if n := len(pod.Spec.NodeSelector); n > 0 {
		r.nodeSelector = make([]labelPair, 0, n)
		for k, v := range pod.Spec.NodeSelector {
			r.nodeSelector = append(r.nodeSelector, labelPair{k, v})
		}
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		r.affinity = NewNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	}
	return r
}

// Match reports whether node carries every nodeSelector label and matches
// the required node affinity.
func (r *RequiredNodeAffinity) Match(node *v1.Node) bool {
	if node == nil {
		return false
	}
	for _, p := range r.nodeSelector {
		if v, ok := node.Labels[p.key]; !ok || v != p.value {
			return false
		}
	}
	return r.affinity == nil || r.affinity.Match(node)
}

// parseInt64 parses a base-10 int64 exactly as strconv.ParseInt(s, 10, 64)
// accepts it (an optional sign, then digits) without the error allocation
// strconv makes for a label value that is not a number.
func parseInt64(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg = true
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	limit := uint64(1<<63 - 1)
	if neg {
		limit++
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if d > 9 {
			return 0, false
		}
		if n > (limit-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		return int64(-n), true
	}
	return int64(n), true
}

// ToleratesTaint reports whether toleration tolerates taint: an empty effect
// or key matches every effect or key, Exists matches every value, Equal (or
// no operator) matches the same value. The numeric operators Lt and Gt never
// match, because kube-scheduler v1.37 ships them behind the alpha gate
// TaintTolerationComparisonOperators, off by default. This is
// v1.Toleration.ToleratesTaint with the gate off, minus its logger.
func ToleratesTaint(toleration *v1.Toleration, taint *v1.Taint) bool {
	if toleration.Effect != "" && toleration.Effect != taint.Effect {
		return false
	}
	if toleration.Key != "" && toleration.Key != taint.Key {
		return false
	}
	switch toleration.Operator {
	case "", v1.TolerationOpEqual:
		return toleration.Value == taint.Value
	case v1.TolerationOpExists:
		return true
	default:
		return false
	}
}

// TolerationsTolerateTaint reports whether any of tolerations tolerates taint.
func TolerationsTolerateTaint(tolerations []v1.Toleration, taint *v1.Taint) bool {
	for i := range tolerations {
		if ToleratesTaint(&tolerations[i], taint) {
			return true
		}
	}
	return false
}

// IsDoNotScheduleTaint reports whether taint keeps new pods off the node
// (NoSchedule or NoExecute), as opposed to PreferNoSchedule, which only
// lowers the node's score.
func IsDoNotScheduleTaint(taint *v1.Taint) bool {
	return taint.Effect == v1.TaintEffectNoSchedule || taint.Effect == v1.TaintEffectNoExecute
}

// FindUntoleratedTaint returns the first of taints that include selects and
// none of tolerations tolerates.
func FindUntoleratedTaint(taints []v1.Taint, tolerations []v1.Toleration, include func(*v1.Taint) bool) (*v1.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		if include != nil && !include(t) {
			continue
		}
		if !TolerationsTolerateTaint(tolerations, t) {
			return t, true
		}
	}
	return nil, false
}
