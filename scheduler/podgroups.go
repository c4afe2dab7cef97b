package scheduler

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
	lister  schedulinglisters.PodGroupLister // nil when not served
	crd     toolscache.GenericLister         // nil when not served
	assumed func(types.UID) bool

	mu      sync.RWMutex
	members map[framework.PodGroupKey]map[types.UID]*v1.Pod
}

func newPodGroups(lister schedulinglisters.PodGroupLister, crd toolscache.GenericLister, assumed func(types.UID) bool) *podGroups {
	return &podGroups{lister: lister, crd: crd, assumed: assumed,
		members: map[framework.PodGroupKey]map[types.UID]*v1.Pod{}}
}

// Served implements framework.PodGroupLister.
func (g *podGroups) Served(api framework.PodGroupAPI) bool {
	if g == nil {
		return false
	}
	if api == framework.CoschedulingPodGroups {
		return g.crd != nil
	}
	return g.lister != nil
}

// Get implements framework.PodGroupLister.
func (g *podGroups) Get(key framework.PodGroupKey) framework.PodGroupInfo {
	return g.get(key, true)
}

// Peek implements framework.PodGroupLister.
func (g *podGroups) Peek(key framework.PodGroupKey) framework.PodGroupInfo {
	return g.get(key, false)
}

func (g *podGroups) get(key framework.PodGroupKey, countScheduled bool) framework.PodGroupInfo {
	pg := framework.PodGroupInfo{Key: key}
	if g == nil {
		return pg
	}
	if key.API == framework.CoschedulingPodGroups {
		pg.Coscheduling = g.coscheduling(key)
	} else {
		pg.Object = g.object(key)
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	m := g.members[key]
	pg.Members = len(m)
	if !countScheduled {
		return pg
	}
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

// coscheduling returns the group's scheduler-plugins PodGroup from the
// dynamic informer, nil when there is none or it cannot be read.
func (g *podGroups) coscheduling(key framework.PodGroupKey) *framework.CoschedulingPodGroup {
	if g.crd == nil {
		return nil
	}
	obj, err := g.crd.ByNamespace(key.Namespace).Get(key.Name)
	if err != nil {
		return nil
	}
	pg, err := coschedulingOf(obj)
	if err != nil {
		return nil
	}
	return pg
}

// coschedulingPodGroup is the part of a scheduler-plugins PodGroup
// (scheduling.x-k8s.io/v1alpha1) the scheduler reads.
type coschedulingPodGroup struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		MinMember              int32           `json:"minMember,omitempty"`
		MinResources           v1.ResourceList `json:"minResources,omitempty"`
		ScheduleTimeoutSeconds *int32          `json:"scheduleTimeoutSeconds,omitempty"`
	} `json:"spec"`
}

// coschedulingOf reads a scheduler-plugins PodGroup from the dynamic
// informer's object.
func coschedulingOf(obj any) (*framework.CoschedulingPodGroup, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("not an unstructured object: %T", obj)
	}
	var pg coschedulingPodGroup
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pg); err != nil {
		return nil, fmt.Errorf("read PodGroup %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return &framework.CoschedulingPodGroup{UID: pg.UID, MinMember: pg.Spec.MinMember,
		MinResources: pg.Spec.MinResources, ScheduleTimeoutSeconds: pg.Spec.ScheduleTimeoutSeconds}, nil
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

// pendingMembers returns the group's known members that are neither
// bound nor assumed, nor being deleted: those a group cycle would try.
func (g *podGroups) pendingMembers(key framework.PodGroupKey) []*v1.Pod {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*v1.Pod
	for uid, pod := range g.members[key] {
		if pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil && !g.assumed(uid) {
			out = append(out, pod)
		}
	}
	return out
}

// census is what waits in the queue, for scheduler_pending_pods and
// scheduler_queued_entities: a pod is a group's member when its group's
// API is served (otherwise it is scheduled alone), and a member whose
// group's object is missing is "incomplete", as in kube-scheduler.
func (s *Scheduler) census() queue.Census {
	groupOf := func(pod *v1.Pod) (framework.PodGroupKey, bool) {
		key, ok := framework.PodGroupOf(pod)
		return key, ok && s.groups.Served(key.API)
	}
	missing := func(key framework.PodGroupKey) bool {
		g := s.groups.Peek(key)
		return !g.Exists()
	}
	return s.Queue.Census(groupOf, missing)
}

// known reports whether uid is a known member of the group.
func (g *podGroups) known(key framework.PodGroupKey, uid types.UID) bool {
	if g == nil {
		return false
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.members[key][uid]
	return ok
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
	if !s.groups.Served(key.API) {
		return
	}
	g := s.groups.Peek(key)
	if !g.Exists() || members != g.MinCount() {
		return
	}
	s.Queue.Activate(s.groups.memberUIDs(key), queue.EventOf(framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}))
}

// addPodGroupHandlers wakes the members of a PodGroup added, or whose
// gang's minCount was lowered; nothing when PodGroups are not served.
func (s *Scheduler) addPodGroupHandlers(f informers.SharedInformerFactory) error {
	if !s.groups.Served(framework.NativePodGroups) {
		return nil
	}
	wake := func(pg *schedulingv1beta1.PodGroup, action framework.ActionType) {
		key := framework.PodGroupKey{API: framework.NativePodGroups, Namespace: pg.Namespace, Name: pg.Name}
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
				s.groupStatus.forget(framework.PodGroupKey{API: framework.NativePodGroups, Namespace: pg.Namespace, Name: pg.Name})
			}
		},
	})
	if err != nil {
		return fmt.Errorf("add PodGroup handler: %w", err)
	}
	s.handlers = append(s.handlers, reg)
	return nil
}

// tellWaiting writes why a member of a pod group waits before any
// attempt (its PodGroup missing, too few members) in its PodScheduled
// condition, once per message, without an event. kube-scheduler writes
// nothing there; a pod whose group never completes would otherwise sit
// Pending without a word.
func (s *Scheduler) tellWaiting(pod *v1.Pod, st *framework.Status) {
	if s.binder == nil || st.Message() == "" {
		return
	}
	if _, ok := framework.PodGroupOf(pod); !ok {
		return
	}
	s.binder.RecordWaiting(pod, v1.PodReasonUnschedulable, st.Message())
}

// addCoschedulingHandlers wakes the members of a scheduler-plugins
// PodGroup added, or whose minMember was lowered; nothing when the CRD
// was not served at start.
func (s *Scheduler) addCoschedulingHandlers() error {
	if !s.groups.Served(framework.CoschedulingPodGroups) {
		return nil
	}
	event := func(action framework.ActionType) queue.Event {
		return queue.EventOf(framework.ClusterEvent{Resource: framework.PodGroup, ActionType: action})
	}
	wake := func(obj any, action framework.ActionType) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		key := framework.PodGroupKey{API: framework.CoschedulingPodGroups, Namespace: u.GetNamespace(), Name: u.GetName()}
		s.Queue.Activate(s.groups.memberUIDs(key), event(action))
	}
	_, err := s.dynamicFactory.ForResource(gvrCoschedulingPodGroups).Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { wake(obj, framework.Add) },
		UpdateFunc: func(oldObj, newObj any) {
			was, err1 := coschedulingOf(oldObj)
			now, err2 := coschedulingOf(newObj)
			if err1 == nil && err2 == nil && now.MinMember < was.MinMember {
				wake(newObj, framework.Update)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("add scheduler-plugins PodGroup handler: %w", err)
	}
	return nil
}

// scheduledNodes returns the nodes of the group's members that are bound,
// or assumed (assumed gives the cache's assumed pod).
func (g *podGroups) scheduledNodes(key framework.PodGroupKey, assumed func(types.UID) (*v1.Pod, bool)) []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var nodes []string
	for uid, pod := range g.members[key] {
		switch {
		case pod.Spec.NodeName != "":
			nodes = append(nodes, pod.Spec.NodeName)
		default:
			if p, ok := assumed(uid); ok {
				nodes = append(nodes, p.Spec.NodeName)
			}
		}
	}
	return nodes
}

// scheduledPods returns the group's members bound to a node.
func (g *podGroups) scheduledPods(key framework.PodGroupKey) []*v1.Pod {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*v1.Pod
	for _, pod := range g.members[key] {
		if pod.Spec.NodeName != "" {
			out = append(out, pod)
		}
	}
	return out
}
