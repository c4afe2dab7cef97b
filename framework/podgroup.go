package framework

import (
	"context"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod groups: pods scheduled together, all or nothing (gangs). A pod names
// its group in spec.schedulingGroup.podGroupName (Kubernetes 1.37's
// scheduling.k8s.io/v1beta1 PodGroup, same namespace). The scheduler
// takes every queued member of a group into one group cycle, against one
// snapshot: the members are placed one after another, each seeing the
// ones before, and either the group's PodGroupFeasiblePlugins accept the
// outcome and every placed member goes on to its binding cycle, or none
// does and the whole group goes back to the queue with one reason. No
// member holds room on a node while its group is incomplete.

// PodGroupKey names a pod group: its namespace and name.
type PodGroupKey struct {
	Namespace, Name string
}

// String returns "namespace/name".
func (k PodGroupKey) String() string { return k.Namespace + "/" + k.Name }

// PodGroupOf returns the group pod belongs to, if any.
func PodGroupOf(pod *v1.Pod) (PodGroupKey, bool) {
	g := pod.Spec.SchedulingGroup
	if g == nil || g.PodGroupName == nil || *g.PodGroupName == "" {
		return PodGroupKey{}, false
	}
	return PodGroupKey{Namespace: pod.Namespace, Name: *g.PodGroupName}, true
}

// PodGroupInfo is what the scheduler knows of a group: its object and its
// members.
type PodGroupInfo struct {
	Key PodGroupKey
	// Object is the group's PodGroup; nil while the API server has none
	// (not created yet, or deleted).
	Object *schedulingv1beta1.PodGroup
	// Members are the group's pods that have not finished, pending and
	// bound; Scheduled counts those bound or assumed (on their way to
	// being bound).
	Members   int
	Scheduled int
}

// MinCount is how many members must be scheduled together: the gang
// policy's minCount, 1 for a group without one (basic policy) or without
// its object.
func (g *PodGroupInfo) MinCount() int {
	if g.Object != nil && g.Object.Spec.SchedulingPolicy.Gang != nil {
		return int(g.Object.Spec.SchedulingPolicy.Gang.MinCount)
	}
	return 1
}

// IsGang reports whether the group's policy is a gang.
func (g *PodGroupInfo) IsGang() bool {
	return g.Object != nil && g.Object.Spec.SchedulingPolicy.Gang != nil
}

// PodGroupLister reads the scheduler's view of the pod groups: the
// informer's PodGroups and the members it knows, assumed pods counted as
// scheduled. It is safe for concurrent use and never calls the API.
type PodGroupLister interface {
	// Get returns the group named key. Members and Scheduled are counted
	// now; Object is nil when the group has no PodGroup.
	Get(key PodGroupKey) PodGroupInfo
	// Served reports whether the API server serves PodGroups
	// (scheduling.k8s.io/v1beta1): without them no pod can name a group.
	Served() bool
}

// PodGroupHandle is implemented by the Handle the scheduler gives
// plugins: the pod groups as it sees them.
type PodGroupHandle interface {
	PodGroups() PodGroupLister
}

// PodGroupFeasiblePlugin judges a group cycle's progress (kube-scheduler's
// PlacementFeasible). The scheduler calls it before the first member is
// placed and after each member it places, with how many members are
// scheduled (bound, assumed, or placed earlier in this cycle) and how many
// of this cycle's members remain to try: Success means the group may be
// bound as it stands, Wait that more members must be placed (the cycle
// goes on), and a rejection that the group cannot succeed (the cycle
// stops, and its message is the group's reason).
type PodGroupFeasiblePlugin interface {
	Plugin
	PodGroupFeasible(ctx context.Context, group *PodGroupInfo, scheduled, remaining int) *Status
}

// PodGroupUID is the UID of group's PodGroup, empty without one.
func PodGroupUID(group *PodGroupInfo) types.UID {
	if group.Object == nil {
		return ""
	}
	return group.Object.UID
}
