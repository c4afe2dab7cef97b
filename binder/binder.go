// Package binder writes scheduling decisions to the API server: the Binding
// (pods/binding subresource), the events users read with `kubectl describe
// pod`, and the PodScheduled condition of pods that found no node.
//
// Bind retries transient failures (timeouts, throttling, 5xx, a dropped
// connection) a bounded number of times; others return at once. Its error
// says whether the Binding may have been committed all the same
// (ErrMayHaveBound): then only the pod, not the error, tells the caller
// whether to forget its assumption. Events and status patches never block
// the scheduling loop: the Scheduled and FailedScheduling events go through
// writers of their own (ScheduledEvents, FailureEvents), other events
// through the recorder (every note cut to what the API accepts), status
// patches through a few workers.
package binder

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
	"unique"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
)

// Event reasons, as kube-scheduler writes them.
const (
	ReasonScheduled        = "Scheduled"
	ReasonFailedScheduling = "FailedScheduling"
)

// Defaults for retrying a Binding.
const (
	DefaultMaxAttempts    = 5
	DefaultInitialBackoff = 100 * time.Millisecond
	statusPatchTimeout    = 30 * time.Second
)

// Binder binds pods and reports outcomes. It is safe for concurrent use.
type Binder struct {
	client         kubernetes.Interface
	recorder       events.EventRecorder
	logger         *zap.Logger
	maxAttempts    int
	initialBackoff time.Duration

	// ScheduledEvents, when set, writes the Scheduled events instead of
	// the recorder (see ScheduledEvents for why). Set it before use.
	ScheduledEvents *ScheduledEvents
	// FailureEvents, when set, writes the FailedScheduling events instead
	// of the recorder (see FailureEvents for why). Set it before use.
	FailureEvents *FailureEvents

	// BeforeBind, when set, runs before each Binding is posted. Tests use it
	// to widen the window between assume and bind; it is nil in production.
	BeforeBind func(pod *v1.Pod, node string)

	// patches writes the status patches (status_patches.go).
	patches *statusPatches
	// lastMessage remembers the PodScheduled message last written per pod,
	// so a pod that keeps failing for the same reason is patched once.
	mu          sync.Mutex
	lastMessage map[types.UID]string
}

// New returns a Binder. recorder may be nil (no events are written).
func New(client kubernetes.Interface, recorder events.EventRecorder, logger *zap.Logger) *Binder {
	if logger == nil {
		logger = zap.NewNop()
	}
	if recorder != nil {
		recorder = noteLimiter{recorder}
	}
	b := &Binder{
		client:         client,
		recorder:       recorder,
		logger:         logger,
		maxAttempts:    DefaultMaxAttempts,
		initialBackoff: DefaultInitialBackoff,
		lastMessage:    map[types.UID]string{},
	}
	b.patches = newStatusPatches(b.patchStatusUnless, logger)
	return b
}

// ErrMayHaveBound is wrapped by Bind's error when the Binding may have
// been committed although Bind got no success: an attempt timed out, lost
// its connection or got an answer that does not prove it was refused (a
// 5xx, a 404 that a proxy may have made, a 409 "already assigned" after an
// earlier attempt that may have committed). Only the pod itself can tell:
// the caller must not free what the Binding would hold before it has seen
// the pod bound, bound elsewhere, or gone.
var ErrMayHaveBound = errors.New("the Binding may have been committed")

// Bind posts a Binding of pod to node, retrying transient errors. The pod's
// UID is a precondition, so a pod deleted and re-created under the same
// name is never bound by mistake. An error wraps ErrMayHaveBound unless
// every attempt was refused before the server acted on it (Refused).
func (b *Binder) Bind(ctx context.Context, pod *v1.Pod, node string) error {
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	if b.BeforeBind != nil {
		b.BeforeBind(pod, node)
	}
	// A PodScheduled=False of an earlier attempt still queued, or in
	// flight, must not land after the Binding (which sets it True) and
	// leave a bound pod marked unschedulable: a group's members are
	// retried within milliseconds of each other.
	b.patches.supersede(ctx, pod.UID, patchCondition)
	b.forgetMessage(pod.UID)
	backoff := b.initialBackoff
	var err error
	// uncertain is set once an attempt may have been committed.
	uncertain := false
	fail := func(err error) error {
		err = fmt.Errorf("bind %s/%s to %q: %w", pod.Namespace, pod.Name, node, err)
		if uncertain {
			return fmt.Errorf("%w (%w)", err, ErrMayHaveBound)
		}
		return err
	}
	for attempt := 1; ; attempt++ {
		// A cancelled context (the caller lost its lease) must not post
		// the Binding, even when the client would not notice in time.
		if cerr := ctx.Err(); cerr != nil {
			if err != nil {
				return fail(fmt.Errorf("%w (last error: %v)", cerr, err))
			}
			return fail(cerr)
		}
		err = b.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
		if err == nil {
			b.forgetMessage(pod.UID)
			return nil
		}
		if !Refused(err) {
			uncertain = true
		}
		if !IsTransient(err) || attempt >= b.maxAttempts {
			return fail(err)
		}
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("%w (last error: %v)", ctx.Err(), err))
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// Refused reports whether a request's error proves that the server did not
// act on it: the API server turned it down as malformed, unauthenticated,
// forbidden or invalid, or throttled it (API Priority and Fairness answers
// 429 before the request is handled), or the connection was never made.
// Anything else (a timeout, a dropped connection, a 5xx, a 404 or 409 that
// the pod's state, not the request, explains) may hide a success.
func Refused(err error) bool {
	switch {
	case apierrors.IsBadRequest(err), apierrors.IsUnauthorized(err), apierrors.IsForbidden(err),
		apierrors.IsInvalid(err), apierrors.IsMethodNotSupported(err), apierrors.IsNotAcceptable(err),
		apierrors.IsUnsupportedMediaType(err), apierrors.IsRequestEntityTooLargeError(err),
		apierrors.IsTooManyRequests(err):
		return true
	}
	// Nothing was sent on a connection that was never opened.
	return errors.Is(err, syscall.ECONNREFUSED)
}

// Pod reads pod as the API server has it now (not from a cache), for a
// caller that must know whether a Binding was committed.
func (b *Binder) Pod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return b.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
}

// IsTransient reports whether an API error is worth retrying.
func IsTransient(err error) bool {
	if apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code >= 500
	}
	return false
}

// RecordScheduled writes the Normal "Scheduled" event.
func (b *Binder) RecordScheduled(pod *v1.Pod, node string) {
	if b.ScheduledEvents != nil {
		b.ScheduledEvents.Record(pod, node)
		return
	}
	if b.recorder == nil {
		return
	}
	b.recorder.Eventf(pod, nil, v1.EventTypeNormal, ReasonScheduled, "Binding",
		"Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, node)
}

// RecordFailure writes the Warning "FailedScheduling" event and, when
// setCondition is true, sets the pod's PodScheduled condition to False with
// reason and message. Both happen in the background; repeats of the same
// message for the same pod are not patched again, and the event recorder
// folds repeated events into a series. A message longer than an event
// note may be is cut (TruncateNote), for the condition too, so that both
// say the same.
func (b *Binder) RecordFailure(_ context.Context, pod *v1.Pod, reason, message string, setCondition bool) {
	// Interned: the pods of a pool turned away for the same reasons share
	// one message, remembered until each is placed.
	message = unique.Make(TruncateNote(message)).Value()
	switch {
	case b.FailureEvents != nil:
		b.FailureEvents.Record(pod, message)
	case b.recorder != nil:
		b.recorder.Eventf(pod, nil, v1.EventTypeWarning, ReasonFailedScheduling, "Scheduling", "%s", message)
	}
	if !setCondition || !b.rememberMessage(pod, message) {
		return
	}
	b.patches.add(patchCondition, pod, func() map[string]any { return conditionPatch(pod, reason, message) }, func() { b.forgetMessage(pod.UID) })
}

// RecordWaiting sets the pod's PodScheduled condition to False with
// reason and message, in the background and without an event: for a pod
// that waits before any scheduling attempt (a member of a pod group whose
// group is incomplete), told again only when the message changes.
func (b *Binder) RecordWaiting(pod *v1.Pod, reason, message string) {
	message = unique.Make(TruncateNote(message)).Value()
	if !b.rememberMessage(pod, message) {
		return
	}
	b.patches.add(patchCondition, pod, func() map[string]any { return conditionPatch(pod, reason, message) }, func() { b.forgetMessage(pod.UID) })
}

// rememberMessage records message for the pod and reports whether it is new
// (neither remembered nor already on the pod's condition).
func (b *Binder) rememberMessage(pod *v1.Pod, message string) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Message == message {
			return false
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lastMessage[pod.UID] == message {
		return false
	}
	b.lastMessage[pod.UID] = message
	return true
}

func (b *Binder) forgetMessage(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.lastMessage, uid)
}

// Forget drops what the binder remembers of a pod (call when it is deleted).
func (b *Binder) Forget(uid types.UID) {
	b.forgetMessage(uid)
	if b.FailureEvents != nil {
		b.FailureEvents.Forget(uid)
	}
}

// conditionPatch sets PodScheduled=False through a strategic merge patch
// of pods/status; conditions merge by type, so other conditions are
// untouched.
func conditionPatch(pod *v1.Pod, reason, message string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status": map[string]any{
			"conditions": []any{map[string]any{
				"type":               v1.PodScheduled,
				"status":             v1.ConditionFalse,
				"reason":             reason,
				"message":            message,
				"lastTransitionTime": metav1.Now(),
			}},
		},
	}
}

// Recorder returns the event recorder; nil when events are not written.
func (b *Binder) Recorder() events.EventRecorder {
	if b == nil {
		return nil
	}
	return b.recorder
}

// Wait blocks until the status patches queued or in flight have been
// written, or for StatusDrainTimeout at most: then it cancels them, and
// later ones fail at once. It is the last step of a shutdown, bounded so
// that the process exits within its termination grace period.
func (b *Binder) Wait() {
	if !b.patches.wait(StatusDrainTimeout) {
		b.logger.Warn("status patches did not finish in time; cancelled them", zap.Duration("timeout", StatusDrainTimeout))
	}
}

// StatusPatchesQueued returns the status patches waiting to be written.
func (b *Binder) StatusPatchesQueued() int { return b.patches.queued() }

// StatusPatchesDropped returns the status patches never written because
// too many were waiting.
func (b *Binder) StatusPatchesDropped() int64 { return b.patches.dropped.Load() }

// Tracked returns how many pods the binder remembers something of (the
// last PodScheduled message written), for tests: a pod bound or deleted
// must leave nothing behind.
func (b *Binder) Tracked() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.lastMessage)
}
