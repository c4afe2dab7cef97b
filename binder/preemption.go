package binder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// ReasonPreempted is the reason of the event a preempted pod gets.
const ReasonPreempted = "Preempted"

// Preempt carries out a preemption decision as kube-scheduler does: it
// clears the nomination of the pods in clearNominated (lower-priority pods
// nominated to the same node, which may no longer fit there), nominates
// node for the preemptor (status.nominatedNodeName), then, for each victim
// at once, sets its DisruptionTarget condition (reason
// PreemptionByScheduler), deletes it with its own grace period and writes a
// Normal "Preempted" event. It blocks until every request has returned and
// returns the first error; a victim already gone is not one.
func (b *Binder) Preempt(ctx context.Context, preemptor *v1.Pod, node string, victims, clearNominated []*v1.Pod) error {
	for _, p := range clearNominated {
		if err := b.ClearNomination(ctx, p); err != nil {
			b.logger.Warn("could not clear a nomination", zap.String("pod", p.Namespace+"/"+p.Name), zap.Error(err))
		}
	}
	b.patches.supersede(ctx, preemptor.UID, patchNomination)
	if err := b.patchNominatedNode(ctx, preemptor, node); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("nominate %s for %s/%s: %w", node, preemptor.Namespace, preemptor.Name, err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, victim := range victims {
		wg.Go(func() {
			if err := b.evict(ctx, preemptor, victim, node); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// Nominate sets the pod's status.nominatedNodeName to node; a pod gone is
// no error. The scheduler nominates a pod's node before a binding cycle
// that waits (on Permit, or in PreBind), as kube-scheduler does, so that
// others (a cluster autoscaler, a new leader) know where it is going.
func (b *Binder) Nominate(ctx context.Context, pod *v1.Pod, node string) error {
	b.patches.supersede(ctx, pod.UID, patchNomination)
	if err := b.patchNominatedNode(ctx, pod, node); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// ClearNomination clears the pod's status.nominatedNodeName; a pod gone
// is no error.
func (b *Binder) ClearNomination(ctx context.Context, pod *v1.Pod) error {
	b.patches.supersede(ctx, pod.UID, patchNomination)
	if err := b.patchNominatedNode(ctx, pod, ""); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// ClearNominationLater clears the pod's status.nominatedNodeName in the
// background, with the other status patches (a pod gone is no error). A
// later Nominate, Preempt or ClearNomination of the pod supersedes it: it
// is not written, or not tried again, after them.
func (b *Binder) ClearNominationLater(pod *v1.Pod) {
	b.patches.add(patchNomination, pod, func() map[string]any { return nominationPatch(pod, "") }, nil)
}

// evict marks victim as disrupted by the scheduler and deletes it. A
// victim already terminating is left to finish.
func (b *Binder) evict(ctx context.Context, preemptor, victim *v1.Pod, node string) error {
	if victim.DeletionTimestamp != nil {
		return nil
	}
	name := victim.Namespace + "/" + victim.Name
	patch := map[string]any{
		"metadata": map[string]any{"uid": victim.UID},
		"status": map[string]any{
			"conditions": []any{map[string]any{
				"type":               v1.DisruptionTarget,
				"status":             v1.ConditionTrue,
				"reason":             v1.PodReasonPreemptionByScheduler,
				"message":            preemptor.Spec.SchedulerName + ": preempting to accommodate a higher priority pod",
				"lastTransitionTime": metav1.Now(),
			}},
		},
	}
	if err := b.patchStatus(ctx, victim, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("mark %s disrupted: %w", name, err)
	}
	// The UID precondition keeps a pod re-created under the name alive.
	uid := victim.UID
	err := b.client.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("delete %s: %w", name, err)
	}
	b.logger.Info("pod preempted", zap.String("pod", name), zap.String("node", node),
		zap.String("preemptor", preemptor.Namespace+"/"+preemptor.Name))
	switch {
	case b.ScheduledEvents != nil:
		b.ScheduledEvents.RecordPreempted(victim, preemptor, node)
	case b.recorder != nil:
		b.recorder.Eventf(victim, preemptor, v1.EventTypeNormal, ReasonPreempted, "Preempting",
			"Preempted by pod %v on node %v", preemptor.UID, node)
	}
	return nil
}

// patchNominatedNode sets (or, with node "", clears) the pod's
// status.nominatedNodeName.
func (b *Binder) patchNominatedNode(ctx context.Context, pod *v1.Pod, node string) error {
	return b.patchStatus(ctx, pod, nominationPatch(pod, node))
}

// nominationPatch sets (or, with node "", clears) status.nominatedNodeName.
func nominationPatch(pod *v1.Pod, node string) map[string]any {
	var value any = node
	if node == "" {
		value = nil // a strategic merge patch deletes a field set to null
	}
	return map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status":   map[string]any{"nominatedNodeName": value},
	}
}

// patchStatus applies a strategic merge patch to the pod's status, tried
// again (10, 50 and 250 ms later) as kube-scheduler's PatchPodStatus
// tries it: on a 500, a 503, a conflict or the connection refused; and
// here also on what else may pass (429, the API server's timeouts) or
// hide a patch that was applied (the connection lost on the way): the
// patch sets fields to values, and applying it twice is applying it once.
func (b *Binder) patchStatus(ctx context.Context, pod *v1.Pod, patch map[string]any) error {
	return b.patchStatusUnless(ctx, pod, patch, nil)
}

// errSuperseded ends the tries of a patch a newer write made stale.
var errSuperseded = errors.New("superseded by a newer write of the field")

// patchStatusUnless is patchStatus for a queued patch: no try is made
// once stale (nil: never) reports true.
func (b *Binder) patchStatusUnless(ctx context.Context, pod *v1.Pod, patch map[string]any, stale func() bool) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return ctx.Err() == nil && (IsTransient(err) || apierrors.IsConflict(err))
	}, func() error {
		if stale != nil && stale() {
			return errSuperseded
		}
		_, err := b.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status")
		return err
	})
}
