package predicates

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/yardmaster-io/yardmaster/framework"
)

// VolumeBindingName is the name of the VolumeBinding plugin.
const VolumeBindingName = "VolumeBinding"

// The reasons VolumeBinding rejects with. The first three are
// kube-scheduler v1.36's; the last is yardmaster's own (docs/volumes.md).
const (
	// ReasonUnboundImmediateClaims is given by PreFilter when a claim that
	// binds immediately (no StorageClass, an Immediate one, or a claim
	// pre-bound to a volume) is not bound yet: the PV controller has to
	// bind it first.
	ReasonUnboundImmediateClaims = "pod has unbound immediate PersistentVolumeClaims"
	// ReasonVolumeNodeAffinityConflict is given for a node that a bound
	// PersistentVolume's spec.nodeAffinity excludes.
	ReasonVolumeNodeAffinityConflict = "node(s) didn't match PersistentVolume's node affinity"
	// ReasonBoundVolumeMissing is given when a bound claim's volume does
	// not exist.
	ReasonBoundVolumeMissing = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	// ReasonUnboundDelayedClaims is given by PreFilter when a claim of a
	// WaitForFirstConsumer StorageClass is not bound. kube-scheduler would
	// pick a volume or a node to provision on and bind the claim before
	// binding the pod; yardmaster binds nothing but pods, and a pod placed
	// with an unbound claim would wait on its node forever.
	ReasonUnboundDelayedClaims = "pod has unbound WaitForFirstConsumer PersistentVolumeClaims: yardmaster does not bind or provision volumes"
)

// volumeBindingStateKey is where PreFilter leaves the bound volumes.
const volumeBindingStateKey framework.StateKey = "PreFilter" + VolumeBindingName

// boundVolume is the PersistentVolume of one bound claim.
type boundVolume struct {
	// missing is set when the volume does not exist.
	missing bool
	// affinity is the volume's required node affinity; nil when it has
	// none.
	affinity *framework.NodeSelector
}

// volumeBindingState holds the pod's bound volumes, in volume order.
type volumeBindingState struct {
	volumes []boundVolume
}

// Clone returns s: it is never mutated after PreFilter.
func (s *volumeBindingState) Clone() framework.StateData { return s }

// VolumeBinding is the filter for a pod's PersistentVolumeClaims, as far as
// a scheduler that does not bind volumes can take them: every claim must
// exist and be bound, and a node must satisfy the node affinity of every
// bound PersistentVolume. Claims that are not bound yet leave the pod
// pending, with a reason that says which kind they are.
type VolumeBinding struct {
	listers storageListers
}

var (
	_ framework.PreFilterPlugin = &VolumeBinding{}
	_ framework.FilterPlugin    = &VolumeBinding{}
)

// NewVolumeBinding returns the filter, reading claims, volumes and classes
// through h's informers.
func NewVolumeBinding(h framework.Handle) *VolumeBinding {
	return &VolumeBinding{listers: newStorageListers(h)}
}

// Name returns VolumeBindingName.
func (*VolumeBinding) Name() string { return VolumeBindingName }

// PreFilter looks up the pod's claims and their volumes. It returns Skip for
// a pod without claims, and rejects the pod on every node,
// UnschedulableAndUnresolvable, when a claim is missing, lost, being
// deleted, not owned by the pod (an ephemeral volume's), or not bound: the
// PVC and PV informer events requeue it.
func (pl *VolumeBinding) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	claims, st := pl.podClaims(pod)
	if st != nil {
		return nil, st
	}
	if len(claims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}

	var bound []*v1.PersistentVolumeClaim
	immediate, delayed := 0, 0
	for _, claim := range claims {
		if isClaimFullyBound(claim) {
			bound = append(bound, claim)
			continue
		}
		delay, err := isDelayBinding(claim, pl.listers.classes)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		// A claim pre-bound to a volume (spec.volumeName set by its author)
		// waits for the PV controller whatever its class.
		if delay && claim.Spec.VolumeName == "" {
			delayed++
		} else {
			immediate++
		}
	}
	if immediate > 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonUnboundImmediateClaims)
	}
	if delayed > 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonUnboundDelayedClaims)
	}

	s := &volumeBindingState{}
	for _, claim := range bound {
		pv, err := pl.listers.volumes.Get(claim.Spec.VolumeName)
		switch {
		case apierrors.IsNotFound(err):
			s.volumes = append(s.volumes, boundVolume{missing: true})
			continue
		case err != nil:
			return nil, framework.AsStatus(err)
		}
		if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
			// Invalid terms match no node, as in kube-scheduler.
			s.volumes = append(s.volumes, boundVolume{affinity: framework.NewNodeSelector(na.Required)})
		}
	}
	if len(s.volumes) == 0 {
		// Every volume exists and fits every node.
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(volumeBindingStateKey, s)
	return nil, nil
}

// podClaims returns the pod's claims in volume order, or the status that
// rejects the pod: kube-scheduler's checks, with its messages.
func (pl *VolumeBinding) podClaims(pod *v1.Pod) ([]*v1.PersistentVolumeClaim, *framework.Status) {
	var claims []*v1.PersistentVolumeClaim
	for i := range pod.Spec.Volumes {
		pc, ok := claimOf(pod, &pod.Spec.Volumes[i])
		if !ok {
			continue
		}
		claim, err := pl.listers.claims.PersistentVolumeClaims(pod.Namespace).Get(pc.name)
		if err != nil {
			if pc.ephemeral && apierrors.IsNotFound(err) {
				// Normal right after the pod was created.
				err = fmt.Errorf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", pc.name)
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		if claim.Status.Phase == v1.ClaimLost {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", claim.Name, claim.Spec.VolumeName))
		}
		if claim.DeletionTimestamp != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("persistentvolumeclaim %q is being deleted", claim.Name))
		}
		if pc.ephemeral {
			if err := checkEphemeralOwner(pod, claim); err != nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
			}
		}
		claims = append(claims, claim)
	}
	return claims, nil
}

// Filter rejects a node when a bound claim's volume is missing or the
// volume's node affinity excludes the node; the first such volume, in the
// pod's volume order, gives the reason. Both are
// UnschedulableAndUnresolvable: evicting pods changes neither.
func (pl *VolumeBinding) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*volumeBindingState](state, volumeBindingStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	for i := range s.volumes {
		v := &s.volumes[i]
		if v.missing {
			return statusBoundVolumeMissing
		}
		if v.affinity != nil && !v.affinity.MatchNodeLabels(node.Labels) {
			return statusVolumeNodeAffinityConflict
		}
	}
	return nil
}
