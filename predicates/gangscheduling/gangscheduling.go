package gangscheduling

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

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
// waits in the queue (kube-scheduler's words, "pods's" included).
func MsgWaitingForPodGroup(name string) string {
	return fmt.Sprintf("waiting for pods's pod group %q to appear in scheduling queue", name)
}

// GangScheduling holds gang members back until their gang can be
// scheduled, and judges a group cycle's progress against minCount.
type GangScheduling struct {
	groups framework.PodGroupLister
}

var (
	_ framework.PreEnqueuePlugin       = &GangScheduling{}
	_ framework.PermitPlugin           = &GangScheduling{}
	_ framework.PodGroupFeasiblePlugin = &GangScheduling{}
	_ framework.EnqueueExtensions      = &GangScheduling{}
)

// New returns the plugin over groups.
func New(groups framework.PodGroupLister) *GangScheduling {
	return &GangScheduling{groups: groups}
}

// Name returns Name.
func (*GangScheduling) Name() string { return Name }

// PreEnqueue lets a pod of no group through; a member waits until its
// PodGroup exists and, for a gang, until minCount members exist (pending
// or bound).
func (pl *GangScheduling) PreEnqueue(_ context.Context, pod *v1.Pod) *framework.Status {
	key, ok := framework.PodGroupOf(pod)
	if !ok {
		return nil
	}
	g := pl.groups.Get(key)
	if g.Object == nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgWaitingForPodGroup(key.Name))
	}
	if !g.IsGang() {
		return nil
	}
	if g.Members < g.MinCount() {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgWaitingForMinCount)
	}
	return nil
}

// PodGroupFeasible is kube-scheduler's PlacementFeasible: the group can
// no longer reach minCount (Unschedulable), has not yet (Wait), or has.
func (pl *GangScheduling) PodGroupFeasible(_ context.Context, g *framework.PodGroupInfo, scheduled, remaining int) *framework.Status {
	minCount := g.MinCount()
	if remaining+scheduled < minCount {
		return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("minCount (%d) cannot be satisfied: %d scheduled, %d remaining", minCount, scheduled, remaining))
	}
	if scheduled < minCount {
		return framework.NewStatus(framework.Wait, fmt.Sprintf("minCount (%d) is not yet satisfied: %d scheduled, %d remaining", minCount, scheduled, remaining))
	}
	return nil
}

// Permit lets a gang member through once minCount members of its gang
// are scheduled (bound, or assumed by this cycle or an earlier one), and
// makes it wait otherwise.
func (pl *GangScheduling) Permit(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) (*framework.Status, time.Duration) {
	key, ok := framework.PodGroupOf(pod)
	if !ok {
		return nil, 0
	}
	g := pl.groups.Get(key)
	if !g.IsGang() || g.Scheduled >= g.MinCount() {
		return nil, 0
	}
	return framework.NewStatus(framework.Wait, msgWaitingForQuorum), permitTimeout
}

// EventsToRegister: a member added, pending or bound (it may complete
// the gang), and its PodGroup added or its minCount lowered.
func (pl *GangScheduling) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}, QueueingHintFn: sameGroupPod},
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}, QueueingHintFn: sameGroupPod},
		{Event: framework.ClusterEvent{Resource: framework.PodGroup, ActionType: framework.Add}, QueueingHintFn: ownGroupAdded},
		{Event: framework.ClusterEvent{Resource: framework.PodGroup, ActionType: framework.Update}, QueueingHintFn: ownMinCountLowered},
	}, nil
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
