package framework

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A panic on a worker goroutine comes back on the caller's, as a
// *PanicError with the panicking goroutine's stack, once every worker has
// returned: nothing runs on after Until.
func TestUntilRaisesAWorkersPanicOnTheCaller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	boom := errors.New("boom")
	for _, at := range []int{0, 500, 999} {
		var running, calls atomic.Int32
		func() {
			defer func() {
				r := recover()
				pe, ok := r.(*PanicError)
				if !ok {
					t.Fatalf("recovered %T %v, want a *PanicError", r, r)
				}
				if !errors.Is(pe, boom) {
					t.Errorf("PanicError %v does not wrap the panic's value", pe)
				}
				if !strings.Contains(string(pe.Stack), "parallelize_test.go") || len(pe.Callers) == 0 {
					t.Errorf("PanicError lacks the panicking goroutine's stack:\n%s", pe.Stack)
				}
				if n := running.Load(); n != 0 {
					t.Errorf("%d calls still running after Until", n)
				}
			}()
			NewParallelizer(4).Until(context.Background(), 1000, func(i int) {
				running.Add(1)
				defer running.Add(-1)
				calls.Add(1)
				if i == at {
					panic(boom)
				}
			})
			t.Fatal("Until returned without the panic")
		}()
		if n := calls.Load(); n == 1000 && at < 100 {
			t.Logf("panic at %d: all %d pieces ran; the others may stop at their next chunk", at, n)
		}
	}
}

// Work that takes long is shared: once the pieces done on the caller
// project more than shareAbove left, other workers join in.
func TestUntilSharesLongWork(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var running, most, calls atomic.Int32
	NewParallelizer(2).Until(context.Background(), 100, func(int) {
		n := running.Add(1)
		defer running.Add(-1)
		calls.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond) // 100 ms in all, far above shareAbove
	})
	if n := calls.Load(); n != 100 {
		t.Errorf("%d calls, want 100", n)
	}
	if most.Load() < 2 {
		t.Error("100 ms of work ran on one goroutine")
	}
}
