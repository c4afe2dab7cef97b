package volumes

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	csitrans "k8s.io/csi-translation-lib"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The volume filters' events, those the scheduler's storage handlers raise
// (which already drop changes no filter can use: a StorageClass update
// other than allowedTopologies, a CSIStorageCapacity that shrank...), with
// kube-scheduler v1.37's hints where they tell one pod from another.

var (
	_ framework.EnqueueExtensions = &Binding{}
	_ framework.EnqueueExtensions = &Zone{}
	_ framework.EnqueueExtensions = &Restrictions{}
	_ framework.EnqueueExtensions = &NodeLimits{}
)

// EventsToRegister: a StorageClass, PV, CSINode or CSIStorageCapacity
// created or changed, a CSIDriver changed, one of the pod's claims created
// or changed, a node added or relabelled.
func (*Binding) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: podsClaimChanged},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}},
		{Event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.CSIDriver, ActionType: framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.CSIStorageCapacity, ActionType: framework.Add | framework.Update}},
	}, nil
}

// EventsToRegister: a StorageClass created, a PV created or changed, one of
// the pod's claims created or changed, a node added or relabelled.
func (*Zone) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: podsClaimChanged},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Add | framework.Update}},
	}, nil
}

// EventsToRegister: an assigned pod deleted that used a volume the pod
// conflicts on, a node added, one of the pod's claims created.
func (*Restrictions) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: sharedVolumeFreed},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}, QueueingHintFn: podsClaimChanged},
	}, nil
}

// EventsToRegister: a CSINode created or changed (a driver's limit
// raised), an assigned pod with volumes deleted, a VolumeAttachment
// deleted (a volume detached), one of the pod's claims created.
func (*NodeLimits) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, QueueingHintFn: attachedVolumeFreed},
		{Event: framework.ClusterEvent{Resource: framework.VolumeAttachment, ActionType: framework.Delete}, QueueingHintFn: detachMayHelp},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}, QueueingHintFn: podsClaimChanged},
	}, nil
}

// usesClaim reports whether pod uses the claim named name in its
// namespace: named by a volume, or generated for an ephemeral volume
// ("<pod>-<volume>").
func usesClaim(pod *v1.Pod, name string) bool {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		switch {
		case vol.PersistentVolumeClaim != nil:
			if vol.PersistentVolumeClaim.ClaimName == name {
				return true
			}
		case vol.Ephemeral != nil:
			if len(name) == len(pod.Name)+1+len(vol.Name) && name[:len(pod.Name)] == pod.Name &&
				name[len(pod.Name)] == '-' && name[len(pod.Name)+1:] == vol.Name {
				return true
			}
		}
	}
	return false
}

// podsClaimChanged queues the pod when the claim created or changed is one
// of its own.
func podsClaimChanged(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, claim, err := framework.AsObjects[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if claim != nil && claim.Namespace == pod.Namespace && usesClaim(pod, claim.Name) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// sharedVolumeFreed queues the pod when the deleted pod was bound (or
// nominated) and used one of the pod's claims, or a disk volume (GCE PD,
// AWS EBS, RBD, iSCSI) the pod may conflict with.
func sharedVolumeFreed(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	deleted, _, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if deleted == nil || !framework.AssignedOrNominated(deleted) {
		return framework.QueueSkip, nil
	}
	podDisks := false
	for i := range pod.Spec.Volumes {
		if isDiskVolume(&pod.Spec.Volumes[i]) {
			podDisks = true
			break
		}
	}
	for i := range deleted.Spec.Volumes {
		vol := &deleted.Spec.Volumes[i]
		if podDisks && isDiskVolume(vol) {
			return framework.Queue, nil
		}
		if deleted.Namespace != pod.Namespace {
			continue
		}
		if vol.PersistentVolumeClaim != nil && usesClaim(pod, vol.PersistentVolumeClaim.ClaimName) {
			return framework.Queue, nil
		}
		if vol.Ephemeral != nil && usesClaim(pod, deleted.Name+"-"+vol.Name) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

func isDiskVolume(vol *v1.Volume) bool {
	return vol.GCEPersistentDisk != nil || vol.AWSElasticBlockStore != nil || vol.RBD != nil || vol.ISCSI != nil
}

// detachMayHelp queues the pod when a VolumeAttachment is deleted and the
// pod has a volume that counts against an attach limit through a claim
// (a claim or an ephemeral volume) or an in-tree volume migrated to the
// detached volume's driver, as kube-scheduler's CSILimits does (which
// leaves out ephemeral volumes, though their claims count the same).
func detachMayHelp(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	detached, _, err := framework.AsObjects[*storagev1.VolumeAttachment](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if detached == nil {
		return framework.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil {
			return framework.Queue, nil
		}
		if v, ok, _ := inlineAttachableVolume(vol, pod.Namespace); ok && v.driver == detached.Spec.Attacher {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// attachedVolumeFreed queues the pod when the deleted pod was bound to a
// node the pod may run on and had volumes that count against a node's
// attach limit (claims, CSI or ephemeral volumes, in-tree volumes written
// inline whose plugin migrates to CSI), as kube-scheduler does without
// looking up the drivers.
func attachedVolumeFreed(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	deleted, _, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if deleted == nil || deleted.Spec.NodeName == "" || !framework.MayRunOn(pod, deleted.Spec.NodeName) {
		return framework.QueueSkip, nil
	}
	for i := range deleted.Spec.Volumes {
		vol := &deleted.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil || vol.CSI != nil || vol.Ephemeral != nil || csitrans.New().IsInlineMigratable(vol) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}
