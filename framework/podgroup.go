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

// PodGroupAPI is the API a pod group comes from.
type PodGroupAPI uint8

const (
	// NativePodGroups are Kubernetes 1.37's scheduling.k8s.io/v1beta1
	// PodGroups; a pod names its group in spec.schedulingGroup.podGroupName.
	NativePodGroups PodGroupAPI = iota
	// CoschedulingPodGroups are scheduler-plugins' PodGroups
	// (scheduling.x-k8s.io/v1alpha1, a CRD, Coscheduling's); a pod names
	// its group in the label CoschedulingPodGroupLabel.
	CoschedulingPodGroups
)

// CoschedulingPodGroupLabel is the label by which a pod names its
// scheduler-plugins PodGroup.
const CoschedulingPodGroupLabel = "scheduling.x-k8s.io/pod-group"

// String returns the API's group.
func (a PodGroupAPI) String() string {
	if a == CoschedulingPodGroups {
		return "scheduling.x-k8s.io"
	}
	return "scheduling.k8s.io"
}

// PodGroupKey names a pod group: its API, namespace and name.
type PodGroupKey struct {
	API             PodGroupAPI
	Namespace, Name string
}

// String returns "namespace/name".
func (k PodGroupKey) String() string { return k.Namespace + "/" + k.Name }

// PodGroupOf returns the group pod belongs to, if any: the native group
// its spec names, else the scheduler-plugins group its label names.
func PodGroupOf(pod *v1.Pod) (PodGroupKey, bool) {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		return PodGroupKey{API: NativePodGroups, Namespace: pod.Namespace, Name: *g.PodGroupName}, true
	}
	if name := pod.Labels[CoschedulingPodGroupLabel]; name != "" {
		return PodGroupKey{API: CoschedulingPodGroups, Namespace: pod.Namespace, Name: name}, true
	}
	return PodGroupKey{}, false
}

// CoschedulingPodGroup is what the scheduler reads of a scheduler-plugins
// PodGroup's spec.
type CoschedulingPodGroup struct {
	UID types.UID
	// MinMember is how many members must be scheduled together.
	MinMember int32
	// MinResources, when set, is what the cluster must have free for the
	// group (its minMember pods) before its members are tried.
	MinResources v1.ResourceList
	// ScheduleTimeoutSeconds bounds a member's wait at Permit.
	ScheduleTimeoutSeconds *int32
}

// PodGroupInfo is what the scheduler knows of a group: its object and its
// members.
type PodGroupInfo struct {
	Key PodGroupKey
	// Object is the group's native PodGroup, Coscheduling its
	// scheduler-plugins PodGroup, by Key.API; nil while the API server
	// has none (not created yet, or deleted).
	Object       *schedulingv1beta1.PodGroup
	Coscheduling *CoschedulingPodGroup
	// Members are the group's pods that have not finished, pending and
	// bound; Scheduled counts those bound or assumed (on their way to
	// being bound).
	Members   int
	Scheduled int
}

// Exists reports whether the group's PodGroup exists.
func (g *PodGroupInfo) Exists() bool { return g.Object != nil || g.Coscheduling != nil }

// MinCount is how many members must be scheduled together: the gang
// policy's minCount, or a scheduler-plugins PodGroup's minMember; 1 for a
// group without one (basic policy) or without its object.
func (g *PodGroupInfo) MinCount() int {
	switch {
	case g.Object != nil && g.Object.Spec.SchedulingPolicy.Gang != nil:
		return int(g.Object.Spec.SchedulingPolicy.Gang.MinCount)
	case g.Coscheduling != nil && g.Coscheduling.MinMember > 1:
		return int(g.Coscheduling.MinMember)
	}
	return 1
}

// IsGang reports whether the group is all or nothing: a native gang
// policy, or any scheduler-plugins PodGroup.
func (g *PodGroupInfo) IsGang() bool {
	return (g.Object != nil && g.Object.Spec.SchedulingPolicy.Gang != nil) || g.Coscheduling != nil
}

// PodGroupLister reads the scheduler's view of the pod groups: the
// informer's PodGroups and the members it knows, assumed pods counted as
// scheduled. It is safe for concurrent use and never calls the API.
type PodGroupLister interface {
	// Get returns the group named key. Members and Scheduled are counted
	// now; Exists is false when the group has no PodGroup.
	Get(key PodGroupKey) PodGroupInfo
	// Peek is Get without Scheduled (left 0): its PodGroup and how many
	// members it has, cheap enough for PreEnqueue and queueing hints,
	// which run for every waiting pod on many events.
	Peek(key PodGroupKey) PodGroupInfo
	// Served reports whether the API server served the API's PodGroups
	// when the scheduler started: native ones need kube-apiserver v1.37
	// with GenericWorkload, scheduler-plugins' their CRD. A pod naming a
	// group of an API not served is scheduled on its own.
	Served(api PodGroupAPI) bool
}

// PodGroupHandle is implemented by the Handle the scheduler gives
// plugins: the pod groups as it sees them.
type PodGroupHandle interface {
	PodGroups() PodGroupLister
}

// PodGroupProgress is where a group cycle stands: how many members are
// scheduled (bound, assumed, or placed earlier in this cycle), how many
// of this cycle's members remain to try, and how many were tried.
type PodGroupProgress struct {
	Scheduled, Remaining, Tried int
}

// PodGroupFeasiblePlugin judges a group cycle's progress (kube-scheduler's
// PlacementFeasible). The scheduler calls it before the first member is
// placed (Tried 0) and after each member it tries: Success means the
// group may be bound as it stands, Wait that more members must be placed
// (the cycle goes on), and a rejection that the group cannot succeed (the
// cycle stops, and its message is the group's reason).
type PodGroupFeasiblePlugin interface {
	Plugin
	PodGroupFeasible(ctx context.Context, group *PodGroupInfo, progress PodGroupProgress) *Status
}
