package gangscheduling

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Messages, kube-scheduler v1.37.2's.
const (
	// MsgWaitingForMinCount is why a member of a gang with fewer than
	// minCount members waits in the queue.
	MsgWaitingForMinCount = "waiting for minCount pods from a gang to appear in scheduling queue"
	// msgWaitingForQuorum is the Permit wait of a member whose gang has
	// fewer than minCount members scheduled.
	msgWaitingForQuorum = "waiting for minCount pods from a gang to be scheduled"
)

// permitTimeout bounds the Permit wait, kube-scheduler's. In a group
// cycle every member is assumed before the first one's Permit, so the
// wait never starts; it serves a member assumed alone (a gang whose
// other members were bound by an earlier cycle).
const permitTimeout = 5 * time.Minute

// MsgWaitingForPodGroup is why a member whose PodGroup does not exist
// waits in the queue: kube-scheduler's words ("pods's" included) for a
// native group.
func MsgWaitingForPodGroup(key framework.PodGroupKey) string {
	if key.API == framework.CoschedulingPodGroups {
		return fmt.Sprintf("waiting for PodGroup %q (scheduling.x-k8s.io/v1alpha1) to exist", key.Name)
	}
	return fmt.Sprintf("waiting for pods's pod group %q to appear in scheduling queue", key.Name)
}

// GangScheduling holds gang members back until their gang can be
// scheduled, and judges a group cycle's progress against minCount (a
// native gang's) or minMember and minResources (a scheduler-plugins
// PodGroup's).
type GangScheduling struct {
	groups framework.PodGroupLister
	nodes  framework.NodeInfoLister
}

var (
	_ framework.PreEnqueuePlugin       = &GangScheduling{}
	_ framework.PermitPlugin           = &GangScheduling{}
	_ framework.PodGroupFeasiblePlugin = &GangScheduling{}
	_ framework.EnqueueExtensions      = &GangScheduling{}
)

// New returns the plugin over groups; nodes, the scheduler's snapshot,
// is what minResources is checked against (nil: not checked).
func New(groups framework.PodGroupLister, nodes framework.NodeInfoLister) *GangScheduling {
	return &GangScheduling{groups: groups, nodes: nodes}
}

// Name returns Name.
func (*GangScheduling) Name() string { return Name }

// PreEnqueue lets a pod of no group through, and a pod whose group's API
// the server did not serve (scheduled on its own, as before); a member
// waits until its PodGroup exists and, for a gang, until minCount
// members exist (pending or bound).
func (pl *GangScheduling) PreEnqueue(_ context.Context, pod *v1.Pod) *framework.Status {
	key, ok := framework.PodGroupOf(pod)
	if !ok || !pl.groups.Served(key.API) {
		return nil
	}
	g := pl.groups.Peek(key)
	if !g.Exists() {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgWaitingForPodGroup(key))
	}
	if !g.IsGang() || g.Members >= g.MinCount() {
		return nil
	}
	if key.API == framework.CoschedulingPodGroups {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("cannot find enough sibling pods, current pods number: %d, minMember of group: %d", g.Members, g.MinCount()))
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgWaitingForMinCount)
}

// PodGroupFeasible is kube-scheduler's PlacementFeasible: the group can
// no longer reach minCount (Unschedulable), has not yet (Wait), or has.
// Before the first member of a scheduler-plugins PodGroup with
// minResources is tried, the cluster must have that much free in all
// (Coscheduling's check; its own members' room counts as free).
func (pl *GangScheduling) PodGroupFeasible(_ context.Context, g *framework.PodGroupInfo, p framework.PodGroupProgress) *framework.Status {
	if p.Tried == 0 && g.Coscheduling != nil && len(g.Coscheduling.MinResources) > 0 && pl.nodes != nil {
		if gap := resourceGap(pl.nodes.List(), g); gap != "" {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, "resource gap: "+gap)
		}
	}
	minCount := g.MinCount()
	if p.Remaining+p.Scheduled < minCount {
		return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("minCount (%d) cannot be satisfied: %d scheduled, %d remaining", minCount, p.Scheduled, p.Remaining))
	}
	if p.Scheduled < minCount {
		return framework.NewStatus(framework.Wait, fmt.Sprintf("minCount (%d) is not yet satisfied: %d scheduled, %d remaining", minCount, p.Scheduled, p.Remaining))
	}
	return nil
}

// resourceGap returns what the cluster lacks of g's minResources (and of
// room for its minMember pods), "" when nothing: free allocatable summed
// over the nodes, the group's own pods' requests counted as free.
func resourceGap(nodes []*framework.NodeInfo, g *framework.PodGroupInfo) string {
	want := framework.NewResource(g.Coscheduling.MinResources)
	want.AllowedPodNumber = int64(g.MinCount())
	var free framework.Resource
	for _, ni := range nodes {
		if ni.Node() == nil {
			continue
		}
		left := ni.Allocatable.Clone()
		left.AddResource(&ni.Requested, -1)
		pods := int64(len(ni.Pods))
		for _, pi := range ni.Pods {
			if key, ok := framework.PodGroupOf(pi.Pod); ok && key == g.Key {
				left.AddResource(&pi.Requests, 1)
				pods--
			}
		}
		left.AllowedPodNumber = ni.Allocatable.AllowedPodNumber - pods
		free.AddResource(left, 1)
	}
	names := []v1.ResourceName{v1.ResourcePods}
	for name := range g.Coscheduling.MinResources {
		if name != v1.ResourcePods {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var gaps []string
	for _, name := range names {
		if short := want.Get(name) - free.Get(name); short > 0 {
			gaps = append(gaps, fmt.Sprintf("%s short by %s", name, quantity(name, short)))
		}
	}
	return strings.Join(gaps, ", ")
}

// quantity formats v, in the scheduler's units of name, as a quantity.
func quantity(name v1.ResourceName, v int64) string {
	switch name {
	case v1.ResourceCPU:
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case v1.ResourceMemory, v1.ResourceEphemeralStorage:
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return resource.NewQuantity(v, resource.DecimalSI).String()
}

// Permit lets a gang member through once minCount members of its gang
// are scheduled (bound, or assumed by this cycle or an earlier one), and
// makes it wait otherwise.
func (pl *GangScheduling) Permit(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) (*framework.Status, time.Duration) {
	key, ok := framework.PodGroupOf(pod)
	if !ok {
		return nil, 0
	}
	if !pl.groups.Served(key.API) {
		return nil, 0
	}
	g := pl.groups.Get(key)
	if !g.IsGang() || g.Scheduled >= g.MinCount() {
		return nil, 0
	}
	timeout := permitTimeout
	if g.Coscheduling != nil {
		// Coscheduling's: the group's scheduleTimeoutSeconds, else 60s.
		timeout = 60 * time.Second
		if t := g.Coscheduling.ScheduleTimeoutSeconds; t != nil && *t > 0 {
			timeout = time.Duration(*t) * time.Second
		}
	}
	return framework.NewStatus(framework.Wait, msgWaitingForQuorum), timeout
}

// EventsToRegister: a member added, pending or bound (it may complete
// the gang), and its PodGroup added or its minCount lowered; for a
// member of a scheduler-plugins PodGroup with minResources, room made in
// the cluster (a node added or grown, a bound pod gone).
func (pl *GangScheduling) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}, QueueingHintFn: sameGroupPod},
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}, QueueingHintFn: sameGroupPod},
		{Event: framework.ClusterEvent{Resource: framework.PodGroup, ActionType: framework.Add}, QueueingHintFn: ownGroupAdded},
		{Event: framework.ClusterEvent{Resource: framework.PodGroup, ActionType: framework.Update}, QueueingHintFn: ownMinCountLowered},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable}, QueueingHintFn: pl.needsMinResources},
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}, QueueingHintFn: pl.needsMinResources},
	}, nil
}

// needsMinResources queues a member of a scheduler-plugins PodGroup
// with minResources, which more room may let in; others skip.
func (pl *GangScheduling) needsMinResources(_ *zap.Logger, pod *v1.Pod, _, _ any) (framework.QueueingHint, error) {
	key, ok := framework.PodGroupOf(pod)
	if !ok || key.API != framework.CoschedulingPodGroups {
		return framework.QueueSkip, nil
	}
	if g := pl.groups.Peek(key); g.Coscheduling != nil && len(g.Coscheduling.MinResources) > 0 {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func sameGroupPod(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, added, err := framework.AsObjects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	want, ok := framework.PodGroupOf(pod)
	if !ok || added == nil {
		return framework.QueueSkip, nil
	}
	if got, ok := framework.PodGroupOf(added); ok && got == want {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func isOwnGroup(pod *v1.Pod, pg *schedulingv1beta1.PodGroup) bool {
	key, ok := framework.PodGroupOf(pod)
	return ok && pg != nil && key.Namespace == pg.Namespace && key.Name == pg.Name
}

func ownGroupAdded(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	_, pg, err := framework.AsObjects[*schedulingv1beta1.PodGroup](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if isOwnGroup(pod, pg) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func ownMinCountLowered(_ *zap.Logger, pod *v1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldPG, newPG, err := framework.AsObjects[*schedulingv1beta1.PodGroup](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if !isOwnGroup(pod, newPG) || oldPG == nil {
		return framework.QueueSkip, nil
	}
	was, now := oldPG.Spec.SchedulingPolicy.Gang, newPG.Spec.SchedulingPolicy.Gang
	if was == nil || now == nil || now.MinCount >= was.MinCount {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}
