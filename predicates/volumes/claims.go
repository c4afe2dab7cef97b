package volumes

// What the volume filters (VolumeBinding, VolumeRestrictions,
// NodeVolumeLimits, VolumeZone) share: the listers they read
// PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes
// through, and the PVC rules of kube-scheduler v1.37 (component-helpers'
// storage/volume and storage/ephemeral): which class a claim asks for,
// when it counts as bound, and how a generic ephemeral volume names its
// claim.
//
// The lookups happen in PreFilter, once per pod; Filter only reads what
// PreFilter left in the cycle state.

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Annotations the PV controller and kube-scheduler put on claims.
const (
	// annBindCompleted marks a claim whose binding to spec.volumeName the
	// PV controller finished; only then is the claim bound for scheduling.
	annBindCompleted = "pv.kubernetes.io/bind-completed"
)

// storageListers read the storage objects from the informer cache.
type storageListers struct {
	claims     corelisters.PersistentVolumeClaimLister
	volumes    corelisters.PersistentVolumeLister
	classes    storagelisters.StorageClassLister
	csiNodes   storagelisters.CSINodeLister
	csiDrivers storagelisters.CSIDriverLister
	capacities storagelisters.CSIStorageCapacityLister
}

// newStorageListers takes the listers from h's informer factory, which
// registers their informers (call it before the factory starts). Without a
// factory (unit tests of the scheduler loop) the listers read empty stores:
// the cluster then has no claims, so a pod that uses one is unschedulable
// rather than placed unchecked.
func newStorageListers(h framework.Handle) storageListers {
	if h != nil && h.SharedInformerFactory() != nil {
		f := h.SharedInformerFactory()
		return storageListers{
			claims:     f.Core().V1().PersistentVolumeClaims().Lister(),
			volumes:    f.Core().V1().PersistentVolumes().Lister(),
			classes:    f.Storage().V1().StorageClasses().Lister(),
			csiNodes:   f.Storage().V1().CSINodes().Lister(),
			csiDrivers: f.Storage().V1().CSIDrivers().Lister(),
			capacities: f.Storage().V1().CSIStorageCapacities().Lister(),
		}
	}
	namespaced := func() toolscache.Indexer {
		return toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	}
	cluster := func() toolscache.Indexer {
		return toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	}
	return storageListers{
		claims:     corelisters.NewPersistentVolumeClaimLister(namespaced()),
		volumes:    corelisters.NewPersistentVolumeLister(cluster()),
		classes:    storagelisters.NewStorageClassLister(cluster()),
		csiNodes:   storagelisters.NewCSINodeLister(cluster()),
		csiDrivers: storagelisters.NewCSIDriverLister(cluster()),
		capacities: storagelisters.NewCSIStorageCapacityLister(namespaced()),
	}
}

// podClaim is a pod volume backed by a PersistentVolumeClaim.
type podClaim struct {
	name string
	// ephemeral is set for a generic ephemeral volume, whose claim the
	// ephemeral volume controller creates for (and owned by) the pod.
	ephemeral bool
}

// claimOf returns the claim behind vol: spec.persistentVolumeClaim, or the
// claim a generic ephemeral volume gets ("<pod>-<volume>"). ok is false for
// volumes without a claim.
func claimOf(pod *v1.Pod, vol *v1.Volume) (c podClaim, ok bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return podClaim{name: vol.PersistentVolumeClaim.ClaimName}, true
	case vol.Ephemeral != nil:
		return podClaim{name: pod.Name + "-" + vol.Name, ephemeral: true}, true
	}
	return podClaim{}, false
}

// checkEphemeralOwner fails unless claim was created for pod, as
// component-helpers' VolumeIsForPod: a claim of that name that the pod does
// not control belongs to someone else.
func checkEphemeralOwner(pod *v1.Pod, claim *v1.PersistentVolumeClaim) error {
	if claim.Namespace != pod.Namespace || !metav1.IsControlledBy(claim, pod) {
		return fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", claim.Namespace, claim.Name, pod.Namespace, pod.Name)
	}
	return nil
}

// claimClass returns the StorageClass a claim asks for: the beta
// annotation first, then spec.storageClassName; "" for none.
func claimClass(claim *v1.PersistentVolumeClaim) string {
	if class, ok := claim.Annotations[v1.BetaStorageClassAnnotation]; ok {
		return class
	}
	if claim.Spec.StorageClassName != nil {
		return *claim.Spec.StorageClassName
	}
	return ""
}

// isClaimFullyBound reports whether the PV controller finished binding
// claim to its spec.volumeName. kube-scheduler looks at the annotation, not
// at status.phase.
func isClaimFullyBound(claim *v1.PersistentVolumeClaim) bool {
	return claim.Spec.VolumeName != "" && metav1.HasAnnotation(claim.ObjectMeta, annBindCompleted)
}

// statusOfLookup turns a lister error into a status: a missing object is
// UnschedulableAndUnresolvable with the lister's message
// (`persistentvolumeclaim "data" not found`) until an informer event brings
// it; anything else is an Error.
func statusOfLookup(err error) *framework.Status {
	if apierrors.IsNotFound(err) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	return framework.AsStatus(err)
}
