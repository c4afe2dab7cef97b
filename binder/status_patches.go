package binder

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// Sizing of the status patch writer.
const (
	// statusWorkers is how many status patches may be in flight: they
	// share the client's requests in flight with the Bindings, which
	// come first.
	statusWorkers = 8
	// maxPendingPatches bounds the patches waiting to be written (one per
	// pod and kind at most); beyond it new ones are dropped and counted. A
	// queued patch is a pod pointer and the words of its message (the
	// patch is built when written), a few hundred bytes: a pool of 20,000
	// pods that fit nowhere, tried in seconds, must all get their
	// condition (at 16,384, some 2,000 of them waited for the 5-minute
	// retry to be marked).
	maxPendingPatches = 1 << 17
	// StatusDrainTimeout is how long Wait lets the status patches still
	// queued or in flight finish before it cancels them: part of the
	// bound on a shutdown (scheduler.ShutdownBudget).
	StatusDrainTimeout = 2 * time.Second
)

// patchKind is what a status patch sets.
type patchKind uint8

const (
	patchCondition  patchKind = iota // PodScheduled=False
	patchNomination                  // status.nominatedNodeName cleared
)

type patchKey struct {
	uid  types.UID
	kind patchKind
}

type statusPatch struct {
	pod *v1.Pod
	// patch builds the patch, when it is written.
	patch func() map[string]any
	// failed runs when the patch was dropped or failed.
	failed func()
	// superseded is set when a newer write of the same field was made
	// while this one was in flight: it is not tried again.
	superseded atomic.Bool
	// done is closed when a worker is through with the patch.
	done chan struct{}
}

// statusPatches writes pods' status patches (the PodScheduled condition,
// the nominated node) with at most statusWorkers requests in flight,
// instead of a goroutine per patch: a backlog of pods that fit nowhere
// would otherwise start a goroutine, and a request, per pod and attempt.
// It keeps the newest patch per pod and kind (a pod that failed again
// before its condition was written needs only the last message), in the
// order they came, at most maxPendingPatches; workers start when there is
// work and end when there is none, so an idle binder runs no goroutine.
type statusPatches struct {
	// write applies patch to pod's status, tried again on failures that
	// may pass until stale reports true.
	write  func(ctx context.Context, pod *v1.Pod, patch map[string]any, stale func() bool) error
	logger *zap.Logger

	// ctx is the parent of every patch's context; cancel ends them all
	// when a drain runs out of time.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	pending map[patchKey]*statusPatch
	order   []patchKey
	// inFlight are the patches a worker is writing.
	inFlight map[patchKey]*statusPatch
	workers  int
	// idle is closed when the last worker ends; nil while nobody waits.
	idle    chan struct{}
	dropped atomic.Int64
}

func newStatusPatches(write func(context.Context, *v1.Pod, map[string]any, func() bool) error, logger *zap.Logger) *statusPatches {
	ctx, cancel := context.WithCancel(context.Background())
	return &statusPatches{write: write, logger: logger, ctx: ctx, cancel: cancel,
		pending: map[patchKey]*statusPatch{}, inFlight: map[patchKey]*statusPatch{}}
}

// add queues a patch of pod's status, replacing one of the same kind for
// the pod that is still waiting.
func (p *statusPatches) add(kind patchKind, pod *v1.Pod, patch func() map[string]any, failed func()) {
	key := patchKey{pod.UID, kind}
	job := &statusPatch{pod: pod, patch: patch, failed: failed}
	p.mu.Lock()
	if _, ok := p.pending[key]; !ok {
		if len(p.pending) >= maxPendingPatches {
			p.mu.Unlock()
			p.dropped.Add(1)
			if failed != nil {
				failed()
			}
			return
		}
		p.order = append(p.order, key)
	}
	p.pending[key] = job
	start := p.workers < statusWorkers
	if start {
		p.workers++
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
}

// work writes queued patches until none is left.
func (p *statusPatches) work() {
	for {
		p.mu.Lock()
		if len(p.order) == 0 {
			p.order = nil // let a burst's array go
			p.workers--
			if p.workers == 0 && p.idle != nil {
				close(p.idle)
				p.idle = nil
			}
			p.mu.Unlock()
			return
		}
		key := p.order[0]
		p.order = p.order[1:]
		job, ok := p.pending[key]
		if !ok {
			p.mu.Unlock()
			continue // superseded while it waited
		}
		delete(p.pending, key)
		job.done = make(chan struct{})
		p.inFlight[key] = job
		p.mu.Unlock()

		ctx, cancel := context.WithTimeout(p.ctx, statusPatchTimeout)
		err := p.write(ctx, job.pod, job.patch(), job.superseded.Load)
		cancel()
		p.mu.Lock()
		delete(p.inFlight, key)
		p.mu.Unlock()
		close(job.done)
		if err != nil && !apierrors.IsNotFound(err) && !job.superseded.Load() {
			p.logger.Warn("could not patch a pod's status",
				zap.String("pod", job.pod.Namespace+"/"+job.pod.Name), zap.Error(err))
			if job.failed != nil {
				job.failed()
			}
		}
	}
}

// supersede is called before a write of the field a patch of kind sets,
// made outside this queue (Nominate after a queued clear of the
// nomination): the queued patch of the pod is dropped, and one in flight
// is not tried again and is waited for (until ctx is done), so that it
// cannot land after the newer write and undo it.
func (p *statusPatches) supersede(ctx context.Context, uid types.UID, kind patchKind) {
	key := patchKey{uid, kind}
	p.mu.Lock()
	// Its key stays in order: the worker that meets it skips it.
	delete(p.pending, key)
	job := p.inFlight[key]
	p.mu.Unlock()
	if job == nil {
		return
	}
	job.superseded.Store(true)
	select {
	case <-job.done:
	case <-ctx.Done():
	}
}

// wait blocks until no patch is queued or in flight, or until timeout;
// then it cancels those in flight and reports false.
func (p *statusPatches) wait(timeout time.Duration) bool {
	p.mu.Lock()
	if p.workers == 0 {
		p.mu.Unlock()
		return true
	}
	if p.idle == nil {
		p.idle = make(chan struct{})
	}
	idle := p.idle
	p.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		// The rest fail at once and the workers end, unseen: a
		// request that ignored its context must not hold up the exit.
		p.cancel()
		return false
	}
}

// queued returns the number of patches waiting to be written.
func (p *statusPatches) queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}
