package scheduler

import (
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/queue"
)

// addEventHandlers wires the informers to the cache and the queue:
//
//   - assigned pods (any scheduler) → cache, so their usage counts;
//   - unassigned pods of our profiles → queue;
//   - nodes → cache, and node events that could make pending pods fit
//     wake the unschedulable pool;
//   - an assigned pod leaving frees capacity → wake the unschedulable pool.
func (s *Scheduler) addEventHandlers(f informers.SharedInformerFactory) error {
	podInformer := f.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(toolscache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := podOf(obj)
			return pod != nil && pod.Spec.NodeName != ""
		},
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { s.Cache.AddPod(obj.(*v1.Pod)) },
			UpdateFunc: s.updateAssignedPod,
			DeleteFunc: s.deleteAssignedPod,
		},
	}); err != nil {
		return fmt.Errorf("add assigned pod handler: %w", err)
	}
	if _, err := podInformer.AddEventHandler(toolscache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := podOf(obj)
			return pod != nil && pod.Spec.NodeName == "" && s.profiles[pod.Spec.SchedulerName] != nil
		},
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { s.Queue.Add(obj.(*v1.Pod)) },
			UpdateFunc: func(oldObj, newObj any) {
				oldPod, newPod := oldObj.(*v1.Pod), newObj.(*v1.Pod)
				if oldPod.ResourceVersion == newPod.ResourceVersion {
					return // periodic resync: nothing changed
				}
				s.Queue.Update(oldPod, newPod)
			},
			DeleteFunc: s.deleteUnassignedPod,
		},
	}); err != nil {
		return fmt.Errorf("add pending pod handler: %w", err)
	}
	if _, err := f.Core().V1().Nodes().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			s.Cache.AddNode(obj.(*v1.Node))
			s.Queue.MoveAllToActiveOrBackoff(queue.NodeAdd)
		},
		UpdateFunc: s.updateNode,
		DeleteFunc: func(obj any) {
			if node := nodeOf(obj); node != nil {
				s.Cache.RemoveNode(node)
			}
		},
	}); err != nil {
		return fmt.Errorf("add node handler: %w", err)
	}
	return nil
}

func (s *Scheduler) updateAssignedPod(oldObj, newObj any) {
	oldPod, newPod := oldObj.(*v1.Pod), newObj.(*v1.Pod)
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return
	}
	s.Cache.UpdatePod(oldPod, newPod)
}

func (s *Scheduler) deleteAssignedPod(obj any) {
	pod := podOf(obj)
	if pod == nil {
		return
	}
	s.Cache.RemovePod(pod)
	s.Queue.MoveAllToActiveOrBackoff(queue.AssignedPodDelete)
}

// deleteUnassignedPod handles a pending pod that was deleted, or that left
// our filter (bound by someone, or its schedulerName changed). If we had
// assumed it, the capacity goes back at once.
func (s *Scheduler) deleteUnassignedPod(obj any) {
	pod := podOf(obj)
	if pod == nil {
		return
	}
	s.Queue.Delete(pod)
	if s.Cache.ForgetPod(pod) {
		s.Queue.MoveAllToActiveOrBackoff(queue.AssignedPodDelete)
	}
}

func (s *Scheduler) updateNode(oldObj, newObj any) {
	oldNode, newNode := oldObj.(*v1.Node), newObj.(*v1.Node)
	if oldNode.ResourceVersion == newNode.ResourceVersion {
		return
	}
	s.Cache.UpdateNode(oldNode, newNode)
	if nodeChangeCouldHelp(oldNode, newNode) {
		s.Queue.MoveAllToActiveOrBackoff(queue.NodeUpdate)
	}
}

// nodeChangeCouldHelp reports whether a node update can make a pending pod
// fit: more allocatable, new labels, fewer taints, schedulable again, or a
// changed condition. Heartbeat-only status updates do not qualify, which
// keeps the unschedulable pool from churning every 10 seconds.
func nodeChangeCouldHelp(o, n *v1.Node) bool {
	return o.Spec.Unschedulable != n.Spec.Unschedulable ||
		!reflect.DeepEqual(o.Labels, n.Labels) ||
		!equality.Semantic.DeepEqual(o.Status.Allocatable, n.Status.Allocatable) ||
		!reflect.DeepEqual(o.Spec.Taints, n.Spec.Taints) ||
		!reflect.DeepEqual(o.Status.Images, n.Status.Images)
}

// podOf unwraps a pod from an informer object or a delete tombstone.
func podOf(obj any) *v1.Pod {
	switch t := obj.(type) {
	case *v1.Pod:
		return t
	case toolscache.DeletedFinalStateUnknown:
		p, _ := t.Obj.(*v1.Pod)
		return p
	}
	return nil
}

// nodeOf unwraps a node from an informer object or a delete tombstone.
func nodeOf(obj any) *v1.Node {
	switch t := obj.(type) {
	case *v1.Node:
		return t
	case toolscache.DeletedFinalStateUnknown:
		n, _ := t.Obj.(*v1.Node)
		return n
	}
	return nil
}
