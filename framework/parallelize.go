package framework

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
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

// Until calls do(i) for every i in [0, pieces) and returns when all calls
// have returned or, once ctx is cancelled, when the calls already started
// have returned. Small inputs run on the calling goroutine.
//
// The work is CPU-bound (plugins read the snapshot, they never wait), so
// no more goroutines run than GOMAXPROCS: on a 2-core machine sixteen
// workers would only take turns on the two, at the cost of starting them.
func (p Parallelizer) Until(ctx context.Context, pieces int, do func(i int)) {
	if pieces <= 0 {
		return
	}
	maxWorkers := min(p.workers, runtime.GOMAXPROCS(0))
	chunk := chunkSize(pieces, maxWorkers)
	workers := min(maxWorkers, (pieces+chunk-1)/chunk)
	if workers == 1 {
		for i := 0; i < pieces && ctx.Err() == nil; i++ {
			do(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			start := int(next.Add(int64(chunk))) - chunk
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
}
