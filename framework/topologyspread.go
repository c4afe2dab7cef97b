package framework

// Pod topology spread as the PodTopologySpread filter (DoNotSchedule
// constraints) and scorer (ScheduleAnyway constraints) share it: which
// constraints a pod has, compiled once per cycle, and which nodes and pods
// count towards them. The semantics are kube-scheduler v1.37's with its
// default feature gates (NodeInclusionPolicyInPodTopologySpread and
// MatchLabelKeysInPodTopologySpread on):
//
//   - a pod's own constraints win; a pod without any gets the cluster
//     defaults, whose label selector is deduced from the Services,
//     ReplicationController, ReplicaSet or StatefulSet that select or own
//     it (no such owner: no default spreading);
//   - matchLabelKeys add "key = the pod's value" requirements to the
//     selector, for the keys the pod has;
//   - a node counts towards a constraint only when it carries every
//     constraint's topology key and passes the constraint's node inclusion
//     policies: nodeAffinityPolicy Honor (the default) keeps the nodes the
//     pod's nodeSelector and required node affinity accept; nodeTaintsPolicy
//     Honor (default Ignore) keeps the nodes without a NoSchedule/NoExecute
//     taint the pod does not tolerate;
//   - a pod counts when it is in the incoming pod's namespace, is not
//     terminating, and matches the selector. An empty selector
//     (labelSelector: {}) matches every pod but counts none, and no
//     labelSelector at all matches nothing: both kube-scheduler's corners.

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// SpreadConstraint is a compiled v1.TopologySpreadConstraint.
type SpreadConstraint struct {
	MaxSkew     int32
	TopologyKey string
	// Selector is the labelSelector with matchLabelKeys merged in, or the
	// owners' selector for a default constraint.
	Selector labels.Selector
	// MinDomains is 1 when unset.
	MinDomains         int32
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
}

// IncludesNode reports whether node counts towards the constraint under its
// node inclusion policies. required is the pod's compiled node affinity.
func (c *SpreadConstraint) IncludesNode(pod *v1.Pod, node *v1.Node, required *RequiredNodeAffinity) bool {
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && !required.Match(node) {
		return false
	}
	if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		if _, untolerated := FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, IsDoNotScheduleTaint); untolerated {
			return false
		}
	}
	return true
}

// CountMatchingPods returns how many of pods are in namespace, not
// terminating, and match the constraint's selector. An empty selector
// counts nothing, as in kube-scheduler.
func (c *SpreadConstraint) CountMatchingPods(pods []*PodInfo, namespace string) int {
	return CountMatchingPods(c.Selector, pods, namespace)
}

// CountMatchingPods returns how many of pods are in namespace, not
// terminating, and match selector. An empty selector counts nothing, as in
// kube-scheduler's topology spreading.
func CountMatchingPods(selector labels.Selector, pods []*PodInfo, namespace string) int {
	if selector.Empty() {
		return 0
	}
	n := 0
	for _, pi := range pods {
		p := pi.Pod
		if p.DeletionTimestamp != nil || p.Namespace != namespace {
			continue
		}
		if selector.Matches(labels.Set(p.Labels)) {
			n++
		}
	}
	return n
}

// NodeHasSpreadKeys reports whether node carries the topology key of every
// constraint; a node that lacks one does not count towards any of them.
func NodeHasSpreadKeys(node *v1.Node, constraints []SpreadConstraint) bool {
	for i := range constraints {
		if _, ok := node.Labels[constraints[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// TopologySpread gives each pod its spread constraints: its own, or the
// cluster defaults. It is built once per plugin from PodTopologySpread's
// args and shared read-only by the filter and the scorer.
type TopologySpread struct {
	// snapshot is the cycle's snapshot, nil in tests without one.
	snapshot        NodeInfoLister
	defaults        []v1.TopologySpreadConstraint
	systemDefaulted bool
	// The listers are nil when there are no default constraints, or no
	// informer factory (tests): then no pod gets default constraints.
	services     corelisters.ServiceLister
	controllers  corelisters.ReplicationControllerLister
	replicaSets  appslisters.ReplicaSetLister
	statefulSets appslisters.StatefulSetLister
	// counts remembers matching pods per node across cycles, for the filter
	// and the scorer alike.
	counts *NodeMemo[int32]
}

// NewTopologySpread returns the constraints' source with the given
// default constraints (systemDefaulted when they are kube-scheduler's
// System ones: see SystemDefaulted) and, when there are defaults, takes
// the listers of the objects that select pods from h's informer factory
// (which registers those informers: call it before the factory starts).
// The caller has validated the defaults (PodTopologySpread's args).
func NewTopologySpread(defaults []v1.TopologySpreadConstraint, systemDefaulted bool, h Handle) *TopologySpread {
	ts := &TopologySpread{defaults: defaults, systemDefaulted: systemDefaulted, counts: NewNodeMemo[int32](NewParallelizer(DefaultParallelism))}
	if h != nil {
		ts.snapshot = h.SnapshotSharedLister()
	}
	if len(ts.defaults) > 0 && h != nil {
		if f := h.SharedInformerFactory(); f != nil {
			ts.services = f.Core().V1().Services().Lister()
			ts.controllers = f.Core().V1().ReplicationControllers().Lister()
			ts.replicaSets = f.Apps().V1().ReplicaSets().Lister()
			ts.statefulSets = f.Apps().V1().StatefulSets().Lister()
		}
	}
	return ts
}

// Slots returns the snapshot's nodes by slot (see SyncTotal), or none
// without a snapshot.
func (ts *TopologySpread) Slots() NodeSlots {
	if ts.snapshot == nil {
		return NodeSlots{}
	}
	return ts.snapshot.Slots()
}

// ForEachNodeCount calls fn(i, count) for each node in nodes with the
// number of its pods that c counts: in namespace, not terminating, matching
// c's selector. Counts of nodes unchanged since an earlier call are reused.
func (ts *TopologySpread) ForEachNodeCount(c *SpreadConstraint, namespace string, nodes []*NodeInfo, fn func(i, count int)) {
	if c.Selector.Empty() {
		for i := range nodes {
			fn(i, 0)
		}
		return
	}
	count := func(ni *NodeInfo) int32 { return int32(CountMatchingPods(c.Selector, ni.Pods, namespace)) }
	ts.counts.ForEach(namespace+"/"+SelectorKey(c.Selector), nodes, count, func(i int, n int32) { fn(i, int(n)) })
}

// SystemDefaulted reports whether the defaults are the System ones. The
// scorer then tolerates nodes without a zone label: they still take part
// in hostname spreading.
func (ts *TopologySpread) SystemDefaulted() bool { return ts.systemDefaulted }

// Constraints returns the pod's constraints with the given
// whenUnsatisfiable, compiled: the pod's own when it has any, else the
// defaults, else none. An invalid labelSelector (which the API server
// rejects) is an error.
func (ts *TopologySpread) Constraints(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]SpreadConstraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		cs, err := compileSpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
		if err != nil {
			return nil, fmt.Errorf("topology spread constraints of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		return cs, nil
	}
	cs, err := compileSpreadConstraints(ts.defaults, pod.Labels, action)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	selector := ts.defaultSelector(pod)
	if selector.Empty() {
		return nil, nil
	}
	for i := range cs {
		cs[i].Selector = selector
	}
	return cs, nil
}

// compileSpreadConstraints compiles the constraints with the given
// whenUnsatisfiable.
func compileSpreadConstraints(constraints []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]SpreadConstraint, error) {
	var out []SpreadConstraint
	for i := range constraints {
		c := &constraints[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			selector = mergeMatchLabelKeys(selector, c.MatchLabelKeys, podLabels)
		}
		sc := SpreadConstraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           selector,
			MinDomains:         1,
			NodeAffinityPolicy: v1.NodeInclusionPolicyHonor,
			NodeTaintsPolicy:   v1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			sc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			sc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			sc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, sc)
	}
	return out, nil
}

// mergeMatchLabelKeys returns selector with "key = value" added for each of
// keys the pod has a label for. A selector that matches nothing (no
// labelSelector) stays so.
func mergeMatchLabelKeys(selector labels.Selector, keys []string, podLabels map[string]string) labels.Selector {
	set := labels.Set{}
	for _, k := range keys {
		if v, ok := podLabels[k]; ok {
			set[k] = v
		}
	}
	if len(set) == 0 {
		return selector
	}
	reqs, selectable := selector.Requirements()
	if !selectable {
		return selector
	}
	return labels.SelectorFromSet(set).Add(reqs...)
}

// The controller kinds whose selector default spreading uses.
var (
	replicationControllerKind = v1.SchemeGroupVersion.WithKind("ReplicationController")
	replicaSetKind            = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	statefulSetKind           = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// defaultSelector is the union of the selectors of the Services that select
// pod and of its controller, when that is a ReplicationController,
// ReplicaSet or StatefulSet. Objects that select the same pod cannot
// disagree on a label, so merging is safe. A lookup that fails leaves its
// part out.
func (ts *TopologySpread) defaultSelector(pod *v1.Pod) labels.Selector {
	if ts.services == nil {
		return labels.Everything()
	}
	set := labels.Set{}
	if services, err := ts.services.Services(pod.Namespace).List(labels.Everything()); err == nil {
		for _, svc := range services {
			// A Service without a selector selects nothing, not everything.
			if svc.Spec.Selector == nil {
				continue
			}
			if labels.SelectorFromValidatedSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				set = labels.Merge(set, svc.Spec.Selector)
			}
		}
	}
	selector := set.AsSelector()

	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return selector
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return selector
	}
	var ownerSelector *metav1.LabelSelector
	switch gv.WithKind(owner.Kind) {
	case replicationControllerKind:
		if rc, err := ts.controllers.ReplicationControllers(pod.Namespace).Get(owner.Name); err == nil {
			return labels.Merge(set, rc.Spec.Selector).AsSelector()
		}
		return selector
	case replicaSetKind:
		if rs, err := ts.replicaSets.ReplicaSets(pod.Namespace).Get(owner.Name); err == nil {
			ownerSelector = rs.Spec.Selector
		}
	case statefulSetKind:
		if ss, err := ts.statefulSets.StatefulSets(pod.Namespace).Get(owner.Name); err == nil {
			ownerSelector = ss.Spec.Selector
		}
	}
	if ownerSelector == nil {
		return selector
	}
	if s, err := metav1.LabelSelectorAsSelector(ownerSelector); err == nil {
		if reqs, ok := s.Requirements(); ok {
			selector = selector.Add(reqs...)
		}
	}
	return selector
}
