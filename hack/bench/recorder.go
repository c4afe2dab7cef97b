package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// recorder watches the pods of one namespace and notes when each is first
// seen with spec.nodeName set. Those times, not anything the schedulers
// report, are the bind times of every contender: one clock, one watch. It
// also watches the namespace's events and notes when each pod's Scheduled
// event appears: a contender may write its events after its bindings, and
// the drain is not over for it until they are written.
type recorder struct {
	factory informers.SharedInformerFactory
	cancel  context.CancelFunc
	lister  cache.Indexer

	mu    sync.Mutex
	seen  int                  // measured pods seen at all
	bound map[string]time.Time // pod name → when seen bound
	first time.Time
	last  time.Time

	scheduled map[string]time.Time // pod name → when its Scheduled event was seen
	lastEvent time.Time

	// Pods that are not measured (named without measuredPrefix): how
	// many were seen, which of the pool were tried (PodScheduled False),
	// how many fill pods were deleted (preemption's victims), and which
	// completing pods succeeded, each passed once to onDone.
	others      int
	attempted   map[string]bool
	lastAttempt time.Time
	victims     int
	succeeded   map[string]bool
	onDone      func(name string)
}

// startRecorder starts a pod informer on ns and waits for its cache.
func startRecorder(ctx context.Context, c kubernetes.Interface, ns string) (*recorder, error) {
	return startRecorderWith(ctx, c, ns, nil)
}

// startRecorderWith is startRecorder with onDone called (from the
// informer's goroutine; it must not block) for every completing pod seen
// Succeeded.
func startRecorderWith(ctx context.Context, c kubernetes.Interface, ns string, onDone func(name string)) (*recorder, error) {
	r := &recorder{bound: map[string]time.Time{}, scheduled: map[string]time.Time{},
		attempted: map[string]bool{}, succeeded: map[string]bool{}, onDone: onDone}
	r.factory = informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	inf := r.factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.observe(obj, true) },
		UpdateFunc: func(_, obj any) { r.observe(obj, false) },
		DeleteFunc: r.observeDelete,
	}); err != nil {
		return nil, fmt.Errorf("adding pod handler: %w", err)
	}
	r.lister = inf.GetIndexer()
	if _, err := r.factory.Core().V1().Events().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: r.observeEvent,
	}); err != nil {
		return nil, fmt.Errorf("adding event handler: %w", err)
	}
	// The informer's own context: Shutdown waits for the informer to end,
	// which it does only when the channel given to Start closes.
	ctx, r.cancel = context.WithCancel(ctx)
	r.factory.Start(ctx.Done())
	for typ, ok := range r.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			r.stop()
			return nil, fmt.Errorf("pod informer on %q (%v) did not sync: %w", ns, typ, ctx.Err())
		}
	}
	return r, nil
}

func (r *recorder) observe(obj any, added bool) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !strings.HasPrefix(p.Name, measuredPrefix) {
		r.observeOther(p, added, now)
		return
	}
	if added {
		r.seen++
	}
	if p.Spec.NodeName == "" {
		return
	}
	if _, dup := r.bound[p.Name]; dup {
		return
	}
	r.bound[p.Name] = now
	if r.first.IsZero() {
		r.first = now
	}
	r.last = now
}

// observeOther notes what matters of a pod that is not measured; r.mu is
// held.
func (r *recorder) observeOther(p *v1.Pod, added bool, now time.Time) {
	if added {
		r.others++
	}
	switch {
	case strings.HasPrefix(p.Name, poolPrefix):
		if !r.attempted[p.Name] && triedAndFailed(p) {
			r.attempted[p.Name] = true
			r.lastAttempt = now
		}
	case strings.HasPrefix(p.Name, donePrefix):
		if p.Status.Phase == v1.PodSucceeded && !r.succeeded[p.Name] {
			r.succeeded[p.Name] = true
			if r.onDone != nil {
				r.onDone(p.Name)
			}
		}
	}
}

// triedAndFailed reports whether a scheduler has tried p and found no
// node: PodScheduled False, which both schedulers write after a failed
// attempt.
func triedAndFailed(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return true
		}
	}
	return false
}

func (r *recorder) observeDelete(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok || !strings.HasPrefix(p.Name, fillPrefix) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.victims++
}

// poolCounts returns how many unmeasured pods were seen and how many pool
// pods were tried, and when the last of them was.
func (r *recorder) poolCounts() (seen, attempted int, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.others, len(r.attempted), r.lastAttempt
}

// victimCount returns how many fill pods were deleted.
func (r *recorder) victimCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.victims
}

// completions returns how many completing pods were seen Succeeded.
func (r *recorder) completions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.succeeded)
}

func (r *recorder) observeEvent(obj any) {
	ev, ok := obj.(*v1.Event)
	if !ok || ev.Reason != "Scheduled" || ev.InvolvedObject.Kind != "Pod" {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.scheduled[ev.InvolvedObject.Name]; dup {
		return
	}
	r.scheduled[ev.InvolvedObject.Name] = now
	r.lastEvent = now
}

// events returns how many pods have their Scheduled event and when the
// last one was seen.
func (r *recorder) events() (n int, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.scheduled), r.lastEvent
}

// waitForEvents polls until want pods have their Scheduled event, no new
// one came for quiet, or ctx ends.
func (r *recorder) waitForEvents(ctx context.Context, want int, quiet time.Duration) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	last, lastProgress := -1, time.Now()
	for {
		n, _ := r.events()
		if n >= want {
			return
		}
		if n != last {
			last, lastProgress = n, time.Now()
		}
		if time.Since(lastProgress) > quiet {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// counts returns how many pods were seen and how many of them bound.
func (r *recorder) counts() (seen, bound int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen, len(r.bound)
}

// boundAt returns when pod name was seen bound.
func (r *recorder) boundAt(name string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.bound[name]
	return t, ok
}

// bindTimes returns every bind time, the first and the last.
func (r *recorder) bindTimes() (times []time.Time, first, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	times = make([]time.Time, 0, len(r.bound))
	for _, t := range r.bound {
		times = append(times, t)
	}
	return times, r.first, r.last
}

// pods returns the pods in the informer's cache.
func (r *recorder) pods() []*v1.Pod {
	objs := r.lister.List()
	pods := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok {
			pods = append(pods, p)
		}
	}
	return pods
}

func (r *recorder) stop() {
	r.cancel()
	r.factory.Shutdown()
}

// waitFor polls until done reports true, the process ends, no pod was bound
// for stall, or ctx ends. It returns whether done was reached.
func (r *recorder) waitFor(ctx context.Context, stall time.Duration, proc *process, done func(seen, bound int) bool) (bool, error) {
	return r.waitProgress(ctx, stall, proc, func() (int, bool) {
		seen, bound := r.counts()
		return bound, done(seen, bound)
	})
}

// waitPool waits until want pool pods were tried, as waitFor waits for
// bindings.
func (r *recorder) waitPool(ctx context.Context, stall time.Duration, proc *process, want int) (bool, error) {
	return r.waitProgress(ctx, stall, proc, func() (int, bool) {
		_, attempted, _ := r.poolCounts()
		return attempted, attempted >= want
	})
}

// waitProgress polls check until it reports done, the process ends, the
// progress it reports stayed the same for stall, or ctx ends. It returns
// whether done was reached.
func (r *recorder) waitProgress(ctx context.Context, stall time.Duration, proc *process, check func() (progress int, done bool)) (bool, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	lastProgress, lastChange := -1, time.Now()
	for {
		progress, done := check()
		if done {
			return true, nil
		}
		if progress != lastProgress {
			lastProgress, lastChange = progress, time.Now()
		}
		if time.Since(lastChange) > stall {
			return false, nil
		}
		if proc != nil {
			if exited, err := proc.Exited(); exited {
				return false, fmt.Errorf("%s exited while pods were pending (%v); tail of %q:\n%s", proc.Name(), err, proc.LogPath(), proc.LogTail(3000))
			}
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-t.C:
		}
	}
}
