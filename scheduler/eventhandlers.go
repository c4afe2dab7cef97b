package scheduler

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/predicates"
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
	// One handler for every pod event: a listener runs on its own goroutine,
	// so two handlers (assigned, pending) could see a binding out of order,
	// and the pending side's "pod left" would forget an assumed pod the
	// cache was about to confirm, freeing capacity that is really taken.
	reg, err := f.Core().V1().Pods().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    s.addPod,
		UpdateFunc: s.updatePod,
		DeleteFunc: s.deletePod,
	})
	if err != nil {
		return fmt.Errorf("add pod handler: %w", err)
	}
	s.handlers = append(s.handlers, reg)
	reg, err = f.Core().V1().Nodes().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
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
	})
	if err != nil {
		return fmt.Errorf("add node handler: %w", err)
	}
	s.handlers = append(s.handlers, reg)
	if err := s.addDRAEventHandlers(f); err != nil {
		return err
	}
	return s.addStorageEventHandlers(f)
}

// WaitForHandlersSync waits until every event handler has been handed its
// informer's initial list, and reports false if ctx ends first. An
// informer's cache is synced as soon as it holds the list, before its
// handlers have put the nodes and pods into the scheduler's cache; a cycle
// run in between sees too few nodes, or nodes emptier than they are.
func (s *Scheduler) WaitForHandlersSync(ctx context.Context) bool {
	synced := make([]toolscache.InformerSynced, len(s.handlers))
	for i, h := range s.handlers {
		synced[i] = h.HasSynced
	}
	return toolscache.WaitForCacheSync(ctx.Done(), synced...)
}

// rejectedByPodPlacement accepts the unschedulable pods that a pod
// arriving on a node (or relabelled there) could help: those rejected by
// inter-pod affinity or topology spread, whose counts it changes, and those
// whose rejecting plugins are unknown. Every bind raises this event, so
// without the filter a backlog on a full cluster would retry every
// unschedulable pod once per bind.
func rejectedByPodPlacement(qpi *queue.QueuedPodInfo) bool {
	return len(qpi.UnschedulablePlugins) == 0 ||
		qpi.UnschedulablePlugins.Has(predicates.InterPodAffinityName) ||
		qpi.UnschedulablePlugins.Has(predicates.PodTopologySpreadName)
}

// ours reports whether a pending pod is for one of our profiles.
func (s *Scheduler) ours(pod *v1.Pod) bool {
	return pod.Spec.NodeName == "" && s.profiles[pod.Spec.SchedulerName] != nil
}

func (s *Scheduler) addPod(obj any) {
	pod := obj.(*v1.Pod)
	switch {
	case pod.Spec.NodeName != "":
		s.Cache.AddPod(pod)
		s.outcomes.tell(pod.UID, bindingOutcome{node: pod.Spec.NodeName})
		// A new pod on a node can satisfy a pending pod's affinity.
		s.Queue.MoveToActiveOrBackoff(queue.AssignedPodAdd, rejectedByPodPlacement)
	case s.ours(pod):
		s.Queue.Add(pod)
		s.syncNomination(pod)
	}
}

func (s *Scheduler) updatePod(oldObj, newObj any) {
	oldPod, newPod := oldObj.(*v1.Pod), newObj.(*v1.Pod)
	if oldPod.UID != newPod.UID {
		// Deleted and recreated under the same name, and seen as one
		// update because the informer relisted in between: two pods.
		// Everything the scheduler keeps is by UID, so the old one
		// leaves the cache (its capacity and labels), the queue, its
		// assumption and nomination, and the new one comes in as new.
		s.deletePod(oldPod)
		s.addPod(newPod)
		return
	}
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return // periodic resync: nothing changed
	}
	switch {
	case newPod.Spec.NodeName != "":
		// Bound (by us or anyone) or changed while bound: the cache
		// confirms or refreshes it; a pod we were queueing leaves the queue.
		if s.ours(oldPod) {
			s.Queue.Delete(oldPod)
			s.forgetPod(oldPod.UID)
		}
		s.Cache.UpdatePod(oldPod, newPod)
		s.outcomes.tell(newPod.UID, bindingOutcome{node: newPod.Spec.NodeName})
		// A pod just bound, or relabelled, can satisfy a pending pod's
		// inter-pod affinity or change topology spread counts.
		switch {
		case oldPod.Spec.NodeName == "":
			s.Queue.MoveToActiveOrBackoff(queue.AssignedPodAdd, rejectedByPodPlacement)
		case !reflect.DeepEqual(oldPod.Labels, newPod.Labels):
			s.Queue.MoveToActiveOrBackoff(queue.AssignedPodUpdate, rejectedByPodPlacement)
		}
	case s.ours(newPod):
		if s.ours(oldPod) {
			s.Queue.Update(oldPod, newPod)
		} else {
			s.Queue.Add(newPod)
		}
		s.syncNomination(newPod)
	case s.ours(oldPod):
		// Its schedulerName changed away from us.
		s.Queue.Delete(oldPod)
		s.forgetPod(oldPod.UID)
	}
}

func (s *Scheduler) deletePod(obj any) {
	pod := podOf(obj)
	if pod == nil {
		return
	}
	s.outcomes.tell(pod.UID, bindingOutcome{gone: true})
	if pod.Spec.NodeName != "" {
		s.Cache.RemovePod(pod)
		// A pod the informer saw only bound (a relist) may still be
		// remembered as pending.
		s.forgetPod(pod.UID)
		s.Queue.MoveAllToActiveOrBackoff(queue.AssignedPodDelete)
		return
	}
	// A pending pod was deleted. If we had assumed it, its binding has not
	// succeeded (the API would show the node), so the capacity goes back;
	// a binding cycle still waiting on Permit or in PreBind ends.
	s.abandonBinding(pod.UID)
	s.Queue.Delete(pod)
	s.forgetPod(pod.UID)
	if s.Cache.ForgetPod(pod) {
		s.Queue.MoveAllToActiveOrBackoff(queue.AssignedPodDelete)
	}
}

// forgetPod drops what the scheduler and the binder remember of a pod
// that is no longer pending for us (bound, by us or anyone; deleted; or
// handed to another scheduler): its preemption and nomination, and the
// last message written on it. Without this, those maps would grow with
// every pod bound or deleted behind the scheduler's back.
func (s *Scheduler) forgetPod(uid types.UID) {
	s.forgetPreemption(uid)
	if s.binder != nil {
		s.binder.Forget(uid)
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
// fit: more allocatable, new labels, fewer taints, schedulable again, new
// images or other declared features (NodeDeclaredFeatures; kube-scheduler's
// UpdateNodeDeclaredFeature event). Heartbeat-only status updates do not
// qualify, which keeps the unschedulable pool from churning every 10
// seconds.
func nodeChangeCouldHelp(o, n *v1.Node) bool {
	return o.Spec.Unschedulable != n.Spec.Unschedulable ||
		!slices.Equal(o.Status.DeclaredFeatures, n.Status.DeclaredFeatures) ||
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
