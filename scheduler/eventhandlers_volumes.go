package scheduler

import (
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/queue"
)

// addStorageEventHandlers wakes unschedulable pods on the storage events
// the volume filters wait for: a PersistentVolume or claim created or
// changed (a claim bound, a volume's labels or node affinity fixed), a
// StorageClass created or changed, and a CSINode created or changed (a
// driver's attach limit raised). Deletions are not handled: no volume
// filter passes a node it rejected before because an object went away.
//
// Registering the handlers also registers the informers, so the factory
// must be started afterwards.
func (s *Scheduler) addStorageEventHandlers(f informers.SharedInformerFactory) error {
	handlers := []struct {
		name     string
		informer toolscache.SharedIndexInformer
		add      queue.Event
		update   queue.Event
		changed  func(oldObj, newObj any) bool
	}{
		{"PersistentVolume", f.Core().V1().PersistentVolumes().Informer(),
			queue.PersistentVolumeAdd, queue.PersistentVolumeUpdate, storageObjectChanged},
		{"PersistentVolumeClaim", f.Core().V1().PersistentVolumeClaims().Informer(),
			queue.PersistentVolumeClaimAdd, queue.PersistentVolumeClaimUpdate, storageObjectChanged},
		// The queue has no StorageClassUpdate or CSINode events yet:
		// StorageClassAdd and NodeUpdate are the nearest (a CSINode is the
		// volume side of a node).
		{"StorageClass", f.Storage().V1().StorageClasses().Informer(),
			queue.StorageClassAdd, queue.StorageClassAdd, storageClassChanged},
		{"CSINode", f.Storage().V1().CSINodes().Informer(),
			queue.NodeUpdate, queue.NodeUpdate, csiNodeChanged},
	}
	for _, h := range handlers {
		reg, err := h.informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { s.Queue.MoveAllToActiveOrBackoff(h.add) },
			UpdateFunc: func(oldObj, newObj any) {
				if h.changed(oldObj, newObj) {
					s.Queue.MoveAllToActiveOrBackoff(h.update)
				}
			},
		})
		if err != nil {
			return fmt.Errorf("add %s handler: %w", h.name, err)
		}
		s.handlers = append(s.handlers, reg)
	}
	return nil
}

// storageObjectChanged skips resync updates, which change nothing.
func storageObjectChanged(oldObj, newObj any) bool {
	o, ok1 := oldObj.(interface{ GetResourceVersion() string })
	n, ok2 := newObj.(interface{ GetResourceVersion() string })
	return !ok1 || !ok2 || o.GetResourceVersion() != n.GetResourceVersion()
}

// storageClassChanged reports a change that can make a pod fit: only
// allowedTopologies may change on a StorageClass (its binding mode and
// provisioner are immutable).
func storageClassChanged(oldObj, newObj any) bool {
	o, ok1 := oldObj.(*storagev1.StorageClass)
	n, ok2 := newObj.(*storagev1.StorageClass)
	return !ok1 || !ok2 || !reflect.DeepEqual(o.AllowedTopologies, n.AllowedTopologies)
}

// csiNodeChanged reports a change of the drivers (their attach limits) or
// of the migrated-plugins annotation.
func csiNodeChanged(oldObj, newObj any) bool {
	o, ok1 := oldObj.(*storagev1.CSINode)
	n, ok2 := newObj.(*storagev1.CSINode)
	return !ok1 || !ok2 || !reflect.DeepEqual(o.Spec.Drivers, n.Spec.Drivers) ||
		o.Annotations[v1.MigratedPluginsAnnotationKey] != n.Annotations[v1.MigratedPluginsAnnotationKey]
}
