package dynamicresources

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	k8stesting "k8s.io/client-go/testing"
)

// A background write is tried again after any failure but a conflict:
// the pod waits for its event, and nothing else brings it back.
func TestBackgroundWriteRetried(t *testing.T) {
	claims := schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}
	internal := apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	lost := errors.New(`Put "https://127.0.0.1/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c": EOF`)
	notFound := apierrors.NewNotFound(claims, "c") // a misrouting proxy's
	unavailable := apierrors.NewServiceUnavailable("no healthy upstream")
	conflict := apierrors.NewConflict(claims, "c", errors.New("the object has been modified"))
	for _, tc := range []struct {
		name string
		// errs are the answers of the first attempts; the next succeeds.
		errs         []error
		wantAttempts int64
		wantWritten  bool
	}{
		{name: "written at once", wantAttempts: 1, wantWritten: true},
		{name: "500, answer lost, 404, then written", errs: []error{internal, lost, notFound}, wantAttempts: 4, wantWritten: true},
		{name: "a conflict ends it", errs: []error{internal, conflict}, wantAttempts: 2},
		// Five attempts, the backoff's steps.
		{name: "503 every time", errs: []error{unavailable, unavailable, unavailable, unavailable, unavailable, unavailable}, wantAttempts: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newDRAWorld(t, 1)
			w.pl.backgroundRetry = wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 5}
			var attempts atomic.Int64
			written := make(chan struct{})
			w.pl.inBackground("default/c", func(context.Context) error {
				n := attempts.Add(1)
				if int(n) <= len(tc.errs) {
					return tc.errs[n-1]
				}
				close(written)
				return nil
			})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { w.pl.Run(ctx); close(done) }()
			// The job is done when the claim is no longer being written.
			if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
				w.pl.deallocMu.Lock()
				defer w.pl.deallocMu.Unlock()
				return !w.pl.deallocating.Has("default/c"), nil
			}); err != nil {
				t.Fatal(err)
			}
			cancel()
			<-done
			if got := attempts.Load(); got != tc.wantAttempts {
				t.Errorf("%d attempts, want %d", got, tc.wantAttempts)
			}
			select {
			case <-written:
				if !tc.wantWritten {
					t.Error("written, want not")
				}
			default:
				if tc.wantWritten {
					t.Error("not written")
				}
			}
		})
	}
}

// A write that fails after the scheduler stopped (Run returned, its lease
// lost) is not tried again, and its claim is let go.
func TestBackgroundWriteNotRetriedAfterStop(t *testing.T) {
	w := newDRAWorld(t, 1)
	w.pl.backgroundRetry = wait.Backoff{Duration: 50 * time.Millisecond, Factor: 1, Steps: 5}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.pl.Run(ctx); close(done) }()
	var attempts atomic.Int64
	first := make(chan struct{})
	w.pl.inBackground("default/c", func(context.Context) error {
		if attempts.Add(1) == 1 {
			close(first)
		}
		return apierrors.NewServiceUnavailable("no healthy upstream")
	})
	<-first
	cancel()
	<-done
	time.Sleep(300 * time.Millisecond) // six backoff steps
	if got := attempts.Load(); got != 1 {
		t.Errorf("%d attempts, want 1: tried again after Run returned", got)
	}
	w.pl.deallocMu.Lock()
	defer w.pl.deallocMu.Unlock()
	if w.pl.deallocating.Has("default/c") {
		t.Error("default/c still marked as being written")
	}
}

// A claim made for extended resources whose deletion answer was lost is
// found gone when it is read again, and its deletion is done.
func TestDeleteClaimAlreadyGone(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
	for _, tc := range []struct {
		name string
		// answer is what the API server answers the finalizer's removal.
		answer func(c *resourceapi.ResourceClaim) error
	}{
		// An update of a claim that is gone: the tracker's own 404.
		{"update answered 404", nil},
		// A stale resourceVersion, then the read again finds it gone.
		{"update answered a conflict", func(c *resourceapi.ResourceClaim) error {
			return apierrors.NewConflict(gvr.GroupResource(), c.Name, errors.New("modified"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := claim("p-extended-resources-x", 1, "")
			c.Finalizers = []string{resourceapi.Finalizer}
			w := newDRAWorld(t, 1, c)
			// The claim as PreBind saw it, before a deletion whose
			// answer was lost: the API server has it no more.
			stale := c.DeepCopy()
			if err := w.h.Clientset.Tracker().Delete(gvr, c.Namespace, c.Name); err != nil {
				t.Fatal(err)
			}
			if tc.answer != nil {
				w.h.Clientset.PrependReactor("update", "resourceclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.answer(c)
				})
			}
			if err := w.pl.deleteClaim(context.Background(), stale); err != nil {
				t.Errorf("deleteClaim: %v, want nil", err)
			}
			for _, a := range w.h.Clientset.Actions() {
				if a.GetVerb() == "delete" {
					t.Errorf("deleted a claim that was gone: %v", a)
				}
			}
		})
	}
}

// A claim already terminating is deleted by the finalizer's removal; the
// deletion after it meets a 404, which is done, not a failure.
func TestDeleteClaimDeletedByItsFinalizer(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
	c := claim("p-extended-resources-x", 1, "")
	c.Finalizers = []string{resourceapi.Finalizer}
	w := newDRAWorld(t, 1, c)
	w.h.Clientset.PrependReactor("update", "resourceclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		// The last finalizer gone, the API server deletes the claim.
		return true, c, w.h.Clientset.Tracker().Delete(gvr, c.Namespace, c.Name)
	})
	if err := w.pl.deleteClaim(context.Background(), c); err != nil {
		t.Errorf("deleteClaim: %v, want nil", err)
	}
}
