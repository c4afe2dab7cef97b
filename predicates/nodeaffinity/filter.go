package nodeaffinity

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The reasons NodeAffinity rejects with.
const (
	// ReasonNodeAffinity is given for a node that lacks a spec.nodeSelector
	// label or matches no required node affinity term.
	ReasonNodeAffinity = "node(s) didn't match Pod's node affinity/selector"
	// ReasonNodeAffinityEnforced is given for a node that matches none of
	// the required terms of the profile's addedAffinity (Args).
	ReasonNodeAffinityEnforced = "node(s) didn't match scheduler-enforced node affinity"
	// ReasonNodeAffinityConflict is given by PreFilter when every required
	// term pins metadata.name and no name satisfies a whole term (two
	// matchFields In that share no name): no node can ever match.
	ReasonNodeAffinityConflict = "pod affinity terms conflict"
)

// The rejections of a node, made once and shared: the scheduler never
// changes a status a filter returns, and a rejection then costs the
// per-node loop no allocation.
var (
	statusNodeAffinity         = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeAffinity)
	statusNodeAffinityEnforced = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeAffinityEnforced)
)

// filterStateKey is where PreFilter leaves the compiled selector.
const filterStateKey framework.StateKey = "PreFilter" + Name

// filterState is the pod's required node affinity, compiled once.
type filterState struct {
	required *framework.RequiredNodeAffinity
}

// Clone returns s: it is never mutated after PreFilter.
func (s *filterState) Clone() framework.StateData { return s }

// Filter is the filter for spec.nodeSelector and
// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution:
// a node must carry every nodeSelector label and match one of the required
// terms. Invalid required terms match no node, as in kube-scheduler.
//
// A profile may add required terms of its own (Args'
// addedAffinity): a node must then match one of those too, checked first
// and rejected with ReasonNodeAffinityEnforced.
type Filter struct {
	// added is the compiled addedAffinity required selector; nil when the
	// profile adds none.
	added *framework.NodeSelector
}

var (
	_ framework.PreFilterPlugin = &Filter{}
	_ framework.FilterPlugin    = &Filter{}
	_ framework.PodSigner       = &Filter{}
)

// NewFilter returns the filter configured by args (nil: none added).
// The args must have passed ValidateArgs.
func NewFilter(args *Args) *Filter {
	pl := &Filter{}
	if args != nil && args.AddedAffinity != nil && args.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		pl.added = framework.NewNodeSelector(args.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	}
	return pl
}

// Name returns Name.
func (*Filter) Name() string { return Name }

// PreFilter compiles the pod's nodeSelector and required node affinity into
// the cycle state, or returns Skip when the pod has neither and the profile
// adds no required affinity. When every
// required term pins metadata.name with matchFields In, it narrows the cycle
// to those nodes (the union over terms of each term's intersection), the
// way DaemonSet pods are placed; when those names cannot match at all, it
// rejects the pod on every node.
func (pl *Filter) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	required := framework.RequiredNodeSelector(pod)
	if required == nil && len(pod.Spec.NodeSelector) == 0 && pl.added == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(filterStateKey, &filterState{required: framework.NewRequiredNodeAffinity(pod)})

	names, pinned := pinnedNodeNames(required)
	if !pinned {
		return nil, nil
	}
	if len(names) == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeAffinityConflict)
	}
	return &framework.PreFilterResult{NodeNames: names}, nil
}

// Filter rejects a node the profile's added affinity, or the pod's
// nodeSelector or required node affinity, excludes (in that order, as
// kube-scheduler checks them), UnschedulableAndUnresolvable: evicting pods
// changes no label.
func (pl *Filter) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	if pl.added != nil && !pl.added.Match(node) {
		return statusNodeAffinityEnforced
	}
	var required *framework.RequiredNodeAffinity
	if s, err := framework.ReadAs[*filterState](state, filterStateKey); err == nil {
		required = s.required
	} else {
		// PreFilter was not run (a profile that disables it): compile here,
		// per node, as kube-scheduler does.
		required = framework.NewRequiredNodeAffinity(pod)
	}
	if !required.Match(node) {
		return statusNodeAffinity
	}
	return nil
}

// SignPod signs the pod's nodeSelector and required node affinity, all
// that PreFilter and Filter read of it. The added affinity is the
// plugin's configuration, the same for every pod of the profile, whose
// answers are kept apart from other profiles'.
func (*Filter) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	spec := v1.PodSpec{NodeSelector: pod.Spec.NodeSelector}
	if required := framework.RequiredNodeSelector(pod); required != nil {
		spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required}}
	}
	return framework.SignSpec(sig, &spec)
}

// pinnedNodeNames returns the node names the required terms allow, when
// every term names its nodes with matchFields metadata.name In: within a
// term the In lists intersect (requirements are ANDed), across terms they
// unite (terms are ORed). pinned is false when some term does not name its
// nodes, so any node may match. The set may be empty: a conflict.
func pinnedNodeNames(ns *v1.NodeSelector) (names map[string]struct{}, pinned bool) {
	if ns == nil || len(ns.NodeSelectorTerms) == 0 {
		return nil, false
	}
	names = make(map[string]struct{})
	for i := range ns.NodeSelectorTerms {
		var term map[string]struct{}
		for _, r := range ns.NodeSelectorTerms[i].MatchFields {
			if r.Key != framework.NodeNameField || r.Operator != v1.NodeSelectorOpIn {
				continue
			}
			if term == nil {
				term = make(map[string]struct{}, len(r.Values))
				for _, v := range r.Values {
					term[v] = struct{}{}
				}
				continue
			}
			keep := make(map[string]struct{}, len(term))
			for _, v := range r.Values {
				if _, ok := term[v]; ok {
					keep[v] = struct{}{}
				}
			}
			term = keep
		}
		if term == nil {
			return nil, false
		}
		for n := range term {
			names[n] = struct{}{}
		}
	}
	return names, true
}
