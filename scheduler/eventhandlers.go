package scheduler

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
)

// addEventHandlers wires the informers to the cache and the queue:
//
//   - assigned pods (any scheduler) → cache, so their usage counts;
//   - unassigned pods of our profiles → queue;
//   - nodes → cache.
//
// Every change that may matter to a pending pod is handed to the queue as
// a framework.ClusterEvent with the old and new object; the queue asks the
// hints of the plugins that rejected each unschedulable pod whether it can
// help (queue/hints.go). The handlers name no plugin: they only say
// precisely what changed.
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
			node := obj.(*v1.Node)
			s.Cache.AddNode(node)
			s.Queue.MoveAllToActiveOrBackoff(nodeAdd, nil, node)
		},
		UpdateFunc: s.updateNode,
		DeleteFunc: s.deleteNode,
	})
	if err != nil {
		return fmt.Errorf("add node handler: %w", err)
	}
	s.handlers = append(s.handlers, reg)
	if err := s.addPodGroupHandlers(f); err != nil {
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

// The cluster events the handlers raise with a single action.
var (
	nodeAdd           = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	nodeDelete        = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Delete}
	assignedPodAdd    = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}
	assignedPodDelete = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}
	// forceActivate retries a pod whatever rejected it.
	forceActivate = framework.ClusterEvent{Resource: framework.WildCard, ActionType: framework.All}
)

// ours reports whether a pending pod is for one of our profiles.
func (s *Scheduler) ours(pod *v1.Pod) bool {
	return pod.Spec.NodeName == "" && s.profiles[pod.Spec.SchedulerName] != nil
}

func (s *Scheduler) addPod(obj any) {
	pod := obj.(*v1.Pod)
	// Before the queue's PreEnqueue counts the pod's group.
	key, members, inGroup := s.groups.set(pod)
	if inGroup {
		defer s.memberAdded(key, members)
	}
	switch {
	case pod.Spec.NodeName != "":
		s.Cache.AddPod(pod)
		s.outcomes.tell(pod.UID, bindingOutcome{node: pod.Spec.NodeName})
		// A new pod on a node can satisfy a pending pod's affinity.
		s.Queue.MoveAllToActiveOrBackoff(assignedPodAdd, nil, pod)
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
	s.groups.set(newPod)
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
		// A pod just bound is new on its node (kube-scheduler sees it
		// as an AssignedPod Add too); a bound pod that changed may have
		// new labels or smaller requests.
		if oldPod.Spec.NodeName == "" {
			s.Queue.MoveAllToActiveOrBackoff(assignedPodAdd, nil, newPod)
		} else if a := framework.PodUpdateActions(oldPod, newPod); a != framework.Update {
			s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: a}, oldPod, newPod)
		}
	case s.ours(newPod):
		if s.ours(oldPod) {
			s.Queue.Update(oldPod, newPod)
		} else {
			s.Queue.Add(newPod)
		}
		before := s.nominations.nodeOf(newPod.UID)
		s.syncNomination(newPod)
		if before != "" && s.nominations.nodeOf(newPod.UID) != before {
			s.nominationReleased(oldPod, before)
		}
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
	s.groups.remove(pod)
	if pod.Spec.NodeName != "" {
		s.Cache.RemovePod(pod)
		// A pod the informer saw only bound (a relist) may still be
		// remembered as pending.
		s.forgetPod(pod.UID)
		s.Queue.MoveAllToActiveOrBackoff(assignedPodDelete, pod, nil)
		return
	}
	// A pending pod was deleted. If we had assumed it, its binding has not
	// succeeded (the API would show the node), so the capacity goes back;
	// a binding cycle still waiting on Permit or in PreBind ends.
	s.abandonBinding(pod.UID)
	s.Queue.Delete(pod)
	nominated := s.nominations.nodeOf(pod.UID)
	s.forgetPod(pod.UID)
	if assumed, ok := s.Cache.AssumedPod(pod.UID); ok && s.Cache.ForgetPod(pod) {
		// The room it held on its node is free again: for the hints,
		// an assigned pod left that node.
		s.Queue.MoveAllToActiveOrBackoff(assignedPodDelete, assumed, nil)
	} else if nominated != "" {
		s.nominationReleased(pod, nominated)
	}
}

// forgetPod drops what the scheduler and the binder remember of a pod
// that is no longer pending for us (bound, by us or anyone; deleted; or
// handed to another scheduler): its preemption and nomination, and the
// last message written on it. Without this, those maps would grow with
// every pod bound or deleted behind the scheduler's back.
func (s *Scheduler) forgetPod(uid types.UID) {
	s.nominations.forget(uid)
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
	// One event with every change the update makes (labels and taints,
	// say); none for a heartbeat, which only moves condition times.
	if a := framework.NodeUpdateActions(oldNode, newNode); a != framework.None {
		s.Queue.MoveAllToActiveOrBackoff(framework.ClusterEvent{Resource: framework.Node, ActionType: a}, oldNode, newNode)
	}
}

// deleteNode removes the node and raises Node Delete, as kube-scheduler
// does: a node that goes away can undo a rejection elsewhere
// (PodTopologySpread: its domain may go with it, and the skew with it).
// The node leaves the cache first, so that no pod woken here is placed on
// it.
func (s *Scheduler) deleteNode(obj any) {
	node := nodeOf(obj)
	if node == nil {
		return
	}
	s.Cache.RemoveNode(node)
	s.Queue.MoveAllToActiveOrBackoff(nodeDelete, node, nil)
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
