package scheduler

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1beta1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
)

// podGroups is the scheduler's view of the pod groups
// (framework.PodGroupLister): the PodGroups from their informer, and the
// members of each group, pending and bound, from the pod informer's
// events. A member counts as scheduled when bound, or assumed in the
// cache (its binding under way).
//
// Lock order: mu is taken with the queue's lock held (PreEnqueue reads
// it) and takes the cache's, both leaves; nothing is called with it held
// but the cache.
type podGroups struct {
	served  bool
	lister  schedulinglisters.PodGroupLister // nil when not served
	assumed func(types.UID) bool

	mu      sync.RWMutex
	members map[framework.PodGroupKey]map[types.UID]*v1.Pod
}

func newPodGroups(lister schedulinglisters.PodGroupLister, assumed func(types.UID) bool) *podGroups {
	return &podGroups{served: lister != nil, lister: lister, assumed: assumed,
		members: map[framework.PodGroupKey]map[types.UID]*v1.Pod{}}
}

// Served implements framework.PodGroupLister.
func (g *podGroups) Served() bool { return g != nil && g.served }

// Get implements framework.PodGroupLister.
func (g *podGroups) Get(key framework.PodGroupKey) framework.PodGroupInfo {
	pg := framework.PodGroupInfo{Key: key}
	if g == nil {
		return pg
	}
	pg.Object = g.object(key)
	g.mu.RLock()
	defer g.mu.RUnlock()
	m := g.members[key]
	pg.Members = len(m)
	for uid, pod := range m {
		if pod.Spec.NodeName != "" || g.assumed(uid) {
			pg.Scheduled++
		}
	}
	return pg
}

// object returns the group's PodGroup from the informer, nil when there
// is none. A PodGroup being deleted still counts (its protection
// finalizer keeps it while members run), as in kube-scheduler.
func (g *podGroups) object(key framework.PodGroupKey) *schedulingv1beta1.PodGroup {
	if g.lister == nil {
		return nil
	}
	obj, err := g.lister.PodGroups(key.Namespace).Get(key.Name)
	if err != nil {
		return nil // not found: a lister has no other error
	}
	return obj
}

// memberUIDs returns the UIDs of the group's known members.
func (g *podGroups) memberUIDs(key framework.PodGroupKey) []types.UID {
	g.mu.RLock()
	defer g.mu.RUnlock()
	uids := make([]types.UID, 0, len(g.members[key]))
	for uid := range g.members[key] {
		uids = append(uids, uid)
	}
	return uids
}

// set records pod, a member of its group, and returns the group and how
// many members it has now; ok is false for a pod of no group.
func (g *podGroups) set(pod *v1.Pod) (key framework.PodGroupKey, n int, ok bool) {
	key, ok = framework.PodGroupOf(pod)
	if !ok {
		return key, 0, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.members[key]
	if m == nil {
		m = map[types.UID]*v1.Pod{}
		g.members[key] = m
	}
	m[pod.UID] = pod
	return key, len(m), true
}

// remove forgets pod, deleted or finished.
func (g *podGroups) remove(pod *v1.Pod) {
	key, ok := framework.PodGroupOf(pod)
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if m := g.members[key]; m != nil {
		delete(m, pod.UID)
		if len(m) == 0 {
			delete(g.members, key)
		}
	}
}

// memberAdded wakes a group's waiting members when its new member is the
// one that makes minCount: until then PreEnqueue holds them back, and
// afterwards each new member's own PreEnqueue lets it through.
func (s *Scheduler) memberAdded(key framework.PodGroupKey, members int) {
	if !s.groups.Served() {
		return
	}
	g := s.groups.Get(key)
	if g.Object == nil || members != g.MinCount() {
		return
	}
	s.Queue.Activate(s.groups.memberUIDs(key), queue.EventOf(framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}))
}

// addPodGroupHandlers wakes the members of a PodGroup added, or whose
// gang's minCount was lowered; nothing when PodGroups are not served.
func (s *Scheduler) addPodGroupHandlers(f informers.SharedInformerFactory) error {
	if !s.groups.Served() {
		return nil
	}
	wake := func(pg *schedulingv1beta1.PodGroup, action framework.ActionType) {
		key := framework.PodGroupKey{Namespace: pg.Namespace, Name: pg.Name}
		s.Queue.Activate(s.groups.memberUIDs(key), queue.EventOf(framework.ClusterEvent{Resource: framework.PodGroup, ActionType: action}))
	}
	reg, err := f.Scheduling().V1beta1().PodGroups().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
				wake(pg, framework.Add)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			was, ok1 := oldObj.(*schedulingv1beta1.PodGroup)
			now, ok2 := newObj.(*schedulingv1beta1.PodGroup)
			if !ok1 || !ok2 {
				return
			}
			if g0, g1 := was.Spec.SchedulingPolicy.Gang, now.Spec.SchedulingPolicy.Gang; g0 != nil && g1 != nil && g1.MinCount < g0.MinCount {
				wake(now, framework.Update)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
				s.groupStatus.forget(framework.PodGroupKey{Namespace: pg.Namespace, Name: pg.Name})
			}
		},
	})
	if err != nil {
		return fmt.Errorf("add PodGroup handler: %w", err)
	}
	s.handlers = append(s.handlers, reg)
	return nil
}
