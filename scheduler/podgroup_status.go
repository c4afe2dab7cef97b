package scheduler

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework"
)

// podGroupStatusWriter writes a PodGroup's PodGroupInitiallyScheduled
// condition after each group cycle, as kube-scheduler v1.37 does: True
// with reason Scheduled once the group is placed, else False with reason
// Unschedulable or SchedulerError and the group's message. A condition
// that is True is never set back to False. Writes go out in the
// background, a few at a time; a write that would change nothing (the
// informer's object, or the last write, says so already) is skipped.
type podGroupStatusWriter struct {
	client kubernetes.Interface
	logger *zap.Logger
	slots  chan struct{}
	wg     sync.WaitGroup

	mu   sync.Mutex
	last map[conditionKey]metav1.Condition
}

// conditionKey is one condition of one PodGroup.
type conditionKey struct {
	group framework.PodGroupKey
	typ   string
}

// maxPodGroupStatusWrites bounds the writes in flight.
const maxPodGroupStatusWrites = 8

func newPodGroupStatusWriter(client kubernetes.Interface, logger *zap.Logger) *podGroupStatusWriter {
	return &podGroupStatusWriter{client: client, logger: logger, slots: make(chan struct{}, maxPodGroupStatusWrites),
		last: map[conditionKey]metav1.Condition{}}
}

// record writes the condition on pg (the informer's object) unless it is
// there already.
func (w *podGroupStatusWriter) record(pg *schedulingv1beta1.PodGroup, status metav1.ConditionStatus, reason, message string) {
	w.recordCondition(pg, metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: status, Reason: reason, Message: message})
}

// recordCondition writes cond on pg unless it is there already.
func (w *podGroupStatusWriter) recordCondition(pg *schedulingv1beta1.PodGroup, cond metav1.Condition) {
	if w.client == nil || pg == nil {
		return
	}
	cond.ObservedGeneration = pg.Generation
	if !needsCondition(pg, cond) {
		return
	}
	key := framework.PodGroupKey{Namespace: pg.Namespace, Name: pg.Name}
	ck := conditionKey{group: key, typ: cond.Type}
	w.mu.Lock()
	if prev, ok := w.last[ck]; ok && sameCondition(prev, cond) {
		w.mu.Unlock()
		return
	}
	w.last[ck] = cond
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.slots <- struct{}{}
		defer func() { <-w.slots }()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := w.write(ctx, key, cond); err != nil {
			w.logger.Warn("PodGroup status not written", zap.String("podGroup", key.String()), zap.Error(err))
			w.mu.Lock()
			delete(w.last, ck)
			w.mu.Unlock()
		}
	}()
}

func (w *podGroupStatusWriter) write(ctx context.Context, key framework.PodGroupKey, cond metav1.Condition) error {
	pgs := w.client.SchedulingV1beta1().PodGroups(key.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pg, err := pgs.Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !needsCondition(pg, cond) {
			return nil
		}
		pg = pg.DeepCopy()
		cond.ObservedGeneration = pg.Generation
		meta.SetStatusCondition(&pg.Status.Conditions, cond)
		_, err = pgs.UpdateStatus(ctx, pg, metav1.UpdateOptions{})
		return err
	})
}

// recordDisruption marks pg, whose members a group preemption evicts all
// together (disruptionMode all), with the DisruptionTarget condition,
// reason PreemptionByScheduler. kube-scheduler v1.37.2 marks only the
// pods.
func (w *podGroupStatusWriter) recordDisruption(pg *schedulingv1beta1.PodGroup, schedulerName string) {
	w.recordCondition(pg, metav1.Condition{Type: schedulingv1beta1.DisruptionTarget, Status: metav1.ConditionTrue,
		Reason: schedulingv1beta1.PodGroupReasonPreemptionByScheduler, Message: schedulerName + ": preempting to accommodate a higher priority podgroup"})
}

// wait waits for the writes in flight.
func (w *podGroupStatusWriter) wait() { w.wg.Wait() }

// forget drops what was last written for a group that is gone.
func (w *podGroupStatusWriter) forget(key framework.PodGroupKey) {
	w.mu.Lock()
	for ck := range w.last {
		if ck.group == key {
			delete(w.last, ck)
		}
	}
	w.mu.Unlock()
}

// needsCondition reports whether writing cond would change pg: never
// from True back to False.
func needsCondition(pg *schedulingv1beta1.PodGroup, cond metav1.Condition) bool {
	cur := meta.FindStatusCondition(pg.Status.Conditions, cond.Type)
	if cur == nil {
		return true
	}
	if cur.Status == metav1.ConditionTrue && cond.Status != metav1.ConditionTrue {
		return false
	}
	return !sameCondition(*cur, cond)
}

func sameCondition(a, b metav1.Condition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}
