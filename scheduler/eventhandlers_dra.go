package scheduler

import (
	"context"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
)

// claimChanged wakes the pods waiting on a ResourceClaim: every change the
// scheduler sees, its own writes included, as kube-scheduler's queue gets
// them from its claim cache. A claim created or changed may be the one a
// gated pod waits for, or free devices another pod needs; a claim deleted
// may be one PostFilter deleted for its pod, or free devices (a claim the
// scheduler made for extended resources is deleted allocated).
func (s *Scheduler) claimChanged(oldClaim, newClaim *resourceapi.ResourceClaim) {
	switch {
	case newClaim == nil:
		s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Delete}, oldClaim, nil)
	case oldClaim == nil:
		s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Add}, nil, newClaim)
	default:
		s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Update}, oldClaim, newClaim)
	}
}

// deviceClassHandler wakes the pods on a DeviceClass created or changed;
// the DRA manager calls it after it has taken the class in.
func (s *Scheduler) deviceClassHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.DeviceClass, ActionType: framework.Add}, nil, obj)
		},
		UpdateFunc: func(oldObj, newObj any) {
			if storageObjectChanged(oldObj, newObj) {
				s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.DeviceClass, ActionType: framework.Update}, oldObj, newObj)
			}
		},
	}
}

// resourceSliceHandler wakes the pods on a ResourceSlice created,
// changed or deleted: devices published, freed of a taint, or grown; a
// pool gone (see DynamicResources.EventsToRegister). The DRA manager calls
// it after it has taken the change in.
func (s *Scheduler) resourceSliceHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.ResourceSlice, ActionType: framework.Add}, nil, obj)
		},
		UpdateFunc: func(oldObj, newObj any) {
			if sliceChanged(oldObj, newObj) {
				s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.ResourceSlice, ActionType: framework.Update}, oldObj, newObj)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.ResourceSlice, ActionType: framework.Delete}, obj, nil)
		},
	}
}

// sliceChanged reports a slice written anew, or one whose devices a
// DeviceTaintRule tainted or untainted: the tracker's patched copy of a
// slice keeps the slice's resourceVersion.
func sliceChanged(oldObj, newObj any) bool {
	if storageObjectChanged(oldObj, newObj) {
		return true
	}
	o, ok1 := oldObj.(*resourceapi.ResourceSlice)
	n, ok2 := newObj.(*resourceapi.ResourceSlice)
	return !ok1 || !ok2 || !apiequality.Semantic.DeepEqual(o.Spec.Devices, n.Spec.Devices)
}

// preEnqueue asks the PreEnqueue plugins of the pod's profile whether the
// pod may be scheduled; it is the queue's Options.PreEnqueue.
func (s *Scheduler) preEnqueue(pod *v1.Pod) (ok bool) {
	prof := s.profiles[pod.Spec.SchedulerName]
	if prof == nil || len(prof.preEnqueue) == 0 {
		return true
	}
	defer func() {
		// A plugin that panics lets the pod through: its scheduling
		// cycle then fails with an error the user sees, and backs off.
		if r := recover(); r != nil {
			pe := framework.NewPanicError(r)
			_, err := s.panicFailure(pe)
			s.logger.Error("panic in PreEnqueue: the pod is queued", zap.String("pod", pod.Namespace+"/"+pod.Name),
				zap.Error(err), zap.ByteString("stack", pe.Stack))
			ok = true
		}
	}()
	for _, pl := range prof.preEnqueue {
		if st := pl.PreEnqueue(context.Background(), pod); !st.IsSuccess() {
			s.tellWaiting(pod, st)
			return false
		}
	}
	return true
}
