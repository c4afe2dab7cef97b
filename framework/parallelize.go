package framework

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultParallelism is the number of goroutines that filter or score nodes
// when the configuration does not say (kube-scheduler's default).
const DefaultParallelism = 16

// Parallelizer runs a function over indexes with a bounded number of
// goroutines. It is the only place in yardmaster that fans out per node.
type Parallelizer struct {
	workers int
}

// NewParallelizer returns a Parallelizer that uses at most workers goroutines.
func NewParallelizer(workers int) Parallelizer {
	if workers < 1 {
		workers = 1
	}
	return Parallelizer{workers: workers}
}

// chunkSize hands out work in pieces of about √n, so that goroutines rarely
// contend on the shared index yet finish at about the same time.
func chunkSize(n, workers int) int {
	s := int(math.Sqrt(float64(n)))
	if r := n/workers + 1; s > r {
		s = r
	}
	return max(s, 1)
}

// shareAbove is how much work, as the pieces done so far project it, must
// be left before Until brings in more goroutines. Below it the calling
// goroutine does it all: waking another core and sharing the index, the
// found counter and the result slices between cores cost more than they
// save. On 2 cores a 5,000-node backlog of zone-spread or anti-affinity
// pods ran 10-30% faster on one goroutine than on two, for about a fifth
// less CPU (BenchmarkScheduleBacklog); work that takes milliseconds per
// call (the DRA allocator, volumes, a cold cache) is still shared.
const shareAbove = 500 * time.Microsecond

// Until calls do(i) for every i in [0, pieces) and returns when all calls
// have returned or, once ctx is cancelled, when the calls already started
// have returned.
//
// It starts on the calling goroutine, a chunk at a time, and brings in
// other workers only once the pieces done project more than shareAbove of
// work still to do (see there): most calls of a scheduling cycle, served
// from kept answers, never leave the caller. The work is CPU-bound
// (plugins read the snapshot, they never wait), so no more goroutines run
// than GOMAXPROCS: on a 2-core machine sixteen workers would only take
// turns on the two, at the cost of starting them.
//
// A panic in do, on any worker, stops the workers at their next chunk and
// is raised again on the calling goroutine once every worker has
// returned, as a *PanicError: a panic on a goroutine of its own would end
// the process, and the caller (the scheduling cycle) is where it can be
// turned into an error for the one pod whose plugins panicked. Catching it
// costs one deferred call per worker, not per piece.
func (p Parallelizer) Until(ctx context.Context, pieces int, do func(i int)) {
	if pieces <= 0 {
		return
	}
	maxWorkers := min(p.workers, runtime.GOMAXPROCS(0))
	chunk := chunkSize(pieces, maxWorkers)
	workers := min(maxWorkers, (pieces+chunk-1)/chunk)
	if workers == 1 {
		// On the caller's goroutine: a panic is already the caller's.
		for i := 0; i < pieces && ctx.Err() == nil; i++ {
			do(i)
		}
		return
	}
	i := alone(ctx, pieces, chunk, do)
	if i >= pieces || ctx.Err() != nil {
		return
	}
	// One allocation for what the workers share (the goroutines make
	// it escape): the next piece, and the first panic.
	shared := &struct {
		next     atomic.Int64
		panicked atomic.Pointer[PanicError]
	}{}
	shared.next.Store(int64(i))
	workers = min(workers, (pieces-i+chunk-1)/chunk)
	work := func() {
		defer func() {
			if r := recover(); r != nil {
				shared.panicked.CompareAndSwap(nil, NewPanicError(r))
			}
		}()
		for ctx.Err() == nil && shared.panicked.Load() == nil {
			start := int(shared.next.Add(int64(chunk))) - chunk
			if start >= pieces {
				return
			}
			end := min(start+chunk, pieces)
			for i := start; i < end; i++ {
				do(i)
			}
		}
	}
	// The calling goroutine is one of the workers: it would only wait
	// otherwise, and each goroutine started costs a wake-up.
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	if pe := shared.panicked.Load(); pe != nil {
		panic(pe)
	}
}

// alone is where Until starts: it calls do on the calling goroutine, a
// chunk at a time, until every piece is done, ctx is cancelled, or the
// pieces done project more than shareAbove of work left; it returns the
// first piece not done. A panic comes out as a *PanicError, as from the
// workers.
func alone(ctx context.Context, pieces, chunk int, do func(i int)) (i int) {
	defer func() {
		if r := recover(); r != nil {
			panic(NewPanicError(r))
		}
	}()
	start := time.Now()
	for i < pieces && ctx.Err() == nil {
		for end := min(i+chunk, pieces); i < end && ctx.Err() == nil; i++ {
			do(i)
		}
		// Projected work left: time so far × pieces left ÷ pieces done.
		if left := pieces - i; left > chunk && time.Since(start)*time.Duration(left) >= shareAbove*time.Duration(i) {
			break
		}
	}
	return i
}

// PanicError is a panic caught where it could not be left to run its
// course (a Parallelizer's worker), with where it happened.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Callers are the program counters of the panicking goroutine, from
	// the recovery up to its start (runtime.Callers), for callers that
	// name the code that panicked.
	Callers []uintptr
	// Stack is the goroutine's stack as debug.Stack prints it.
	Stack []byte
}

// NewPanicError returns v, recovered from a panic, with the stack of the
// panicking goroutine. Call it in the deferred function that recovered,
// where the frames that panicked are still on the stack. A v that is a
// *PanicError already is returned as it is.
func NewPanicError(v any) *PanicError {
	if pe, ok := v.(*PanicError); ok {
		return pe
	}
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	return &PanicError{Value: v, Callers: pcs[:n], Stack: debug.Stack()}
}

// Error implements error.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic's value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
