package scheduler

import (
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// loopProgress is what LoopHealthy reads of the scheduling loop: whether it
// runs, whether a cycle is under way, and when it last took a pod or
// finished a cycle. The scheduling goroutine writes it; health probes read
// it from other goroutines.
type loopProgress struct {
	running, inCycle atomic.Bool
	// last is in Unix nanoseconds.
	last atomic.Int64
}

// started marks the loop running, as of now.
func (p *loopProgress) started(now time.Time) {
	p.last.Store(now.UnixNano())
	p.running.Store(true)
}

// stopped marks the loop stopped: a stopped loop is not stuck.
func (p *loopProgress) stopped() { p.running.Store(false) }

// popped marks a cycle under way, taken from the queue now.
func (p *loopProgress) popped(now time.Time) {
	p.last.Store(now.UnixNano())
	p.inCycle.Store(true)
}

// finished marks the cycle done, as of c's now.
func (p *loopProgress) finished(c clock.PassiveClock) {
	p.last.Store(c.Now().UnixNano())
	p.inCycle.Store(false)
}

// LoopHealthy returns an error when the scheduling loop has been stuck for
// longer than bound while pods wait: a cycle has run for longer than that,
// or pods wait in the active queue and the loop has taken none for that
// long. A loop that does not run (a standby replica, before Run or after
// it) and an idle loop are healthy. It is safe to call from any goroutine.
func (s *Scheduler) LoopHealthy(now time.Time, bound time.Duration) error {
	p := &s.loop
	if !p.running.Load() {
		return nil
	}
	since := now.Sub(time.Unix(0, p.last.Load()))
	if since <= bound {
		return nil
	}
	if p.inCycle.Load() {
		return fmt.Errorf("a scheduling cycle has run for %s, longer than %s", since.Round(time.Second), bound)
	}
	if active, _, _, _ := s.Queue.PendingPods(); active > 0 {
		return fmt.Errorf("%d pods wait in the active queue and the scheduling loop has taken none for %s, longer than %s", active, since.Round(time.Second), bound)
	}
	return nil
}
