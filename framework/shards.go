package framework

import "context"

// shardsPerWorker oversplits the work so that a worker that drew a shard of
// heavily loaded nodes does not leave the others waiting.
const shardsPerWorker = 4

// Shards returns into how many contiguous shards UntilShards should split n
// items so that each shard holds at least minPerShard of them: one for small
// inputs, which then run on the calling goroutine, at most four per worker.
//
// Sharding is for pre-steps that aggregate over every node (InterPodAffinity
// counts matching pods per topology domain): each shard aggregates into its
// own result, and the caller merges the few results afterwards, so workers
// share no map and take no lock.
func (p Parallelizer) Shards(n, minPerShard int) int {
	if n <= 0 {
		return 0
	}
	return max(1, min(shardsPerWorker*p.workers, n/max(minPerShard, 1)))
}

// UntilShards splits [0, n) into shards contiguous ranges of nearly equal
// size and calls do(shard, lo, hi) for each, in parallel. It returns when
// every call has returned or, once ctx is cancelled, when the calls already
// started have returned.
func (p Parallelizer) UntilShards(ctx context.Context, n, shards int, do func(shard, lo, hi int)) {
	if n <= 0 || shards <= 0 {
		return
	}
	shards = min(shards, n)
	size, rest := n/shards, n%shards
	bound := func(i int) int { return i*size + min(i, rest) }
	if shards == 1 {
		do(0, 0, n)
		return
	}
	p.Until(ctx, shards, func(i int) { do(i, bound(i), bound(i+1)) })
}
