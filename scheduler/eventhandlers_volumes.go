package scheduler

import (
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/yardmaster-io/yardmaster/framework"
)

// addStorageEventHandlers wakes unschedulable pods on the storage events
// the volume plugins wait for: a PersistentVolume or claim created or
// changed (a claim bound, a volume's labels or node affinity fixed), a
// StorageClass created or its allowedTopologies changed, a CSINode
// created or changed (a driver's attach limit raised), a CSIDriver that
// stops publishing storage capacity, and a CSIStorageCapacity created or
// grown, and a VolumeAttachment deleted (a volume detached: a slot of
// its node's attach limit is free). Other deletions are not handled: no
// volume plugin passes a node it rejected before because one went away.
//
// Only the resources some profile's plugins registered events for get a
// handler (Scheduler.watches). Registering the handlers also registers the
// informers, so the factory must be started afterwards.
func (s *Scheduler) addStorageEventHandlers(f informers.SharedInformerFactory) error {
	handlers := []struct {
		name     string
		informer toolscache.SharedIndexInformer
		resource framework.EventResource
		// onAdd is false where an added object cannot help (a
		// CSIDriver, until it stops publishing capacity).
		onAdd   bool
		changed func(oldObj, newObj any) bool
	}{
		{"PersistentVolume", f.Core().V1().PersistentVolumes().Informer(),
			framework.PersistentVolume, true, storageObjectChanged},
		{"PersistentVolumeClaim", f.Core().V1().PersistentVolumeClaims().Informer(),
			framework.PersistentVolumeClaim, true, storageObjectChanged},
		{"StorageClass", f.Storage().V1().StorageClasses().Informer(),
			framework.StorageClass, true, storageClassChanged},
		{"CSINode", f.Storage().V1().CSINodes().Informer(),
			framework.CSINode, true, csiNodeChanged},
		{"CSIDriver", f.Storage().V1().CSIDrivers().Informer(),
			framework.CSIDriver, false, csiDriverChanged},
		{"CSIStorageCapacity", f.Storage().V1().CSIStorageCapacities().Informer(),
			framework.CSIStorageCapacity, true, capacityGrew},
	}
	for _, h := range handlers {
		if !s.watches(h.resource) {
			continue
		}
		add := framework.ClusterEvent{Resource: h.resource, ActionType: framework.Add}
		update := framework.ClusterEvent{Resource: h.resource, ActionType: framework.Update}
		reg, err := h.informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if h.onAdd {
					s.Queue.MoveAllToActiveOrBackoff(add, nil, obj)
				}
			},
			UpdateFunc: func(oldObj, newObj any) {
				if h.changed(oldObj, newObj) {
					s.Queue.MoveAllToActiveOrBackoff(update, oldObj, newObj)
				}
			},
		})
		if err != nil {
			return fmt.Errorf("add %s handler: %w", h.name, err)
		}
		s.handlers = append(s.handlers, reg)
	}
	if !s.watches(framework.VolumeAttachment) {
		return nil
	}
	detached := framework.ClusterEvent{Resource: framework.VolumeAttachment, ActionType: framework.Delete}
	reg, err := f.Storage().V1().VolumeAttachments().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if va, ok := obj.(*storagev1.VolumeAttachment); ok {
				s.Queue.MoveAllToActiveOrBackoff(detached, va, nil)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("add VolumeAttachment handler: %w", err)
	}
	s.handlers = append(s.handlers, reg)
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

// csiDriverChanged reports a CSIDriver that stopped publishing storage
// capacity: claims it provisions are no longer checked against capacity.
func csiDriverChanged(oldObj, newObj any) bool {
	o, ok1 := oldObj.(*storagev1.CSIDriver)
	n, ok2 := newObj.(*storagev1.CSIDriver)
	if !ok1 || !ok2 {
		return true
	}
	return ptr.Deref(o.Spec.StorageCapacity, false) && !ptr.Deref(n.Spec.StorageCapacity, false)
}

// capacityGrew reports a CSIStorageCapacity whose limit for one volume
// (maximumVolumeSize, else capacity) rose, or appeared.
func capacityGrew(oldObj, newObj any) bool {
	o, ok1 := oldObj.(*storagev1.CSIStorageCapacity)
	n, ok2 := newObj.(*storagev1.CSIStorageCapacity)
	if !ok1 || !ok2 {
		return true
	}
	limit := func(c *storagev1.CSIStorageCapacity) *resource.Quantity {
		if c.MaximumVolumeSize != nil {
			return c.MaximumVolumeSize
		}
		return c.Capacity
	}
	ol, nl := limit(o), limit(n)
	return nl != nil && (ol == nil || nl.Cmp(*ol) > 0)
}

// watches reports whether an event of resource can make a pod of some
// profile schedulable: a plugin that can reject pods registered it, or
// every event; or an extender may reject pods, which registers nothing.
func (s *Scheduler) watches(resource framework.EventResource) bool {
	if len(s.extenders) > 0 {
		return true
	}
	for _, prof := range s.profiles {
		if prof.watched[framework.WildCard] || prof.watched[resource] {
			return true
		}
	}
	return false
}
