package frameworktest

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// AddObjects puts objects in the informer caches, where the plugins'
// listers read them: claims, volumes, classes, CSINodes,
// VolumeAttachments, Services, ReplicationControllers, ReplicaSets and
// StatefulSets. Any other type panics, as a mistake in the test. It
// returns h, for chaining after NewHandle.
func (h *Handle) AddObjects(objects ...runtime.Object) *Handle {
	for _, o := range objects {
		if err := h.indexerFor(o).Add(o); err != nil {
			panic(err)
		}
	}
	return h
}

func (h *Handle) indexerFor(o runtime.Object) toolscache.Indexer {
	f := h.Factory
	var inf toolscache.SharedIndexInformer
	switch o.(type) {
	case *v1.PersistentVolumeClaim:
		inf = f.Core().V1().PersistentVolumeClaims().Informer()
	case *v1.PersistentVolume:
		inf = f.Core().V1().PersistentVolumes().Informer()
	case *v1.Service:
		inf = f.Core().V1().Services().Informer()
	case *v1.ReplicationController:
		inf = f.Core().V1().ReplicationControllers().Informer()
	case *appsv1.ReplicaSet:
		inf = f.Apps().V1().ReplicaSets().Informer()
	case *appsv1.StatefulSet:
		inf = f.Apps().V1().StatefulSets().Informer()
	case *storagev1.StorageClass:
		inf = f.Storage().V1().StorageClasses().Informer()
	case *storagev1.CSINode:
		inf = f.Storage().V1().CSINodes().Informer()
	case *storagev1.VolumeAttachment:
		inf = f.Storage().V1().VolumeAttachments().Informer()
	case *storagev1.CSIDriver:
		inf = f.Storage().V1().CSIDrivers().Informer()
	case *storagev1.CSIStorageCapacity:
		inf = f.Storage().V1().CSIStorageCapacities().Informer()
	case *v1.Node:
		inf = f.Core().V1().Nodes().Informer()
	case *policyv1.PodDisruptionBudget:
		inf = f.Policy().V1().PodDisruptionBudgets().Informer()
	default:
		panic(fmt.Sprintf("frameworktest: no informer for %T", o))
	}
	return inf.GetIndexer()
}
