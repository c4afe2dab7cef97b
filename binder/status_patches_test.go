package binder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// Status patches of many pods go out through a few workers, not a
// goroutine each; a pod that fails again before its patch went out gets
// only its newest message written.
func TestStatusPatchesAreBounded(t *testing.T) {
	const pods = 500
	client := fake.NewClientset()
	release := make(chan struct{})
	var inFlight, maxInFlight atomic.Int32
	var mu sync.Mutex
	written := map[string][]string{} // pod → messages, in order
	client.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		pa := action.(k8stesting.PatchAction)
		var patch struct {
			Status struct {
				Conditions []struct{ Message string } `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(pa.GetPatch(), &patch); err != nil {
			t.Error(err)
		}
		mu.Lock()
		written[pa.GetName()] = append(written[pa.GetName()], patch.Status.Conditions[0].Message)
		mu.Unlock()
		return true, &v1.Pod{}, nil
	})
	b := New(client, nil, nil)
	for i := range pods {
		pod := frameworktest.MakePod().Name(fmt.Sprintf("p%d", i)).Obj()
		b.RecordFailure(context.Background(), pod, v1.PodReasonUnschedulable, "first", true)
	}
	// p499 waits behind the others: its later failures replace its patch.
	last := frameworktest.MakePod().Name(fmt.Sprintf("p%d", pods-1)).Obj()
	b.RecordFailure(context.Background(), last, v1.PodReasonUnschedulable, "second", true)
	b.RecordFailure(context.Background(), last, v1.PodReasonUnschedulable, "third", true)
	deadline := time.Now().Add(10 * time.Second)
	for inFlight.Load() < statusWorkers && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// One patch per pod, those in flight aside.
	if got, want := b.StatusPatchesQueued(), pods-statusWorkers; got != want {
		t.Errorf("%d patches queued, want %d", got, want)
	}
	close(release)
	b.Wait()
	if got := maxInFlight.Load(); got > statusWorkers {
		t.Errorf("%d status patches in flight at once, want at most %d", got, statusWorkers)
	}
	if len(written) != pods {
		t.Errorf("%d pods patched, want %d", len(written), pods)
	}
	if got, want := written[last.Name], []string{"third"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages written on %s: %q, want %q", last.Name, got, want)
	}
}

// Wait, the end of a shutdown, returns within StatusDrainTimeout even
// when the API server never answers a status patch.
func TestWaitIsBounded(t *testing.T) {
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-hung:
		}
	}))
	defer srv.Close()
	defer close(hung)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer client.CoreV1().RESTClient().(*rest.RESTClient).Client.CloseIdleConnections()
	b := New(client, nil, nil)
	b.RecordFailure(context.Background(), frameworktest.MakePod().Name("p").Obj(), v1.PodReasonUnschedulable, "0/1 nodes are available", true)
	start := time.Now()
	b.Wait()
	if took := time.Since(start); took > StatusDrainTimeout+time.Second {
		t.Errorf("Wait took %v, want at most %v", took, StatusDrainTimeout)
	}
	// The cancelled patch ends, and with it the worker.
	deadline := time.Now().Add(5 * time.Second)
	for b.patches.queued() > 0 || workers(b) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the status patch worker did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func workers(b *Binder) int {
	b.patches.mu.Lock()
	defer b.patches.mu.Unlock()
	return b.patches.workers
}

// A pod's status patch is tried again after a failure that may pass or
// hide a patch applied (kube-scheduler's PatchPodStatus retries), and not
// after one that says no.
func TestStatusPatchRetried(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	lost := &url.Error{Op: "Patch", URL: "https://127.0.0.1/api/v1/namespaces/default/pods/p/status", Err: io.EOF}
	for _, tc := range []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   bool
	}{
		{name: "first try", wantCalls: 1},
		{name: "500, 503, then applied", errs: []error{apierrors.NewInternalError(errors.New("x")), apierrors.NewServiceUnavailable("x")}, wantCalls: 3},
		{name: "429, then the answer lost, then applied", errs: []error{apierrors.NewTooManyRequests("x", 0), lost}, wantCalls: 3},
		{name: "a conflict", errs: []error{apierrors.NewConflict(pods, "p", errors.New("x"))}, wantCalls: 2},
		// Final, and no error for Nominate: the pod is gone.
		{name: "not found", errs: []error{apierrors.NewNotFound(pods, "p")}, wantCalls: 1},
		{name: "forbidden", errs: []error{apierrors.NewForbidden(pods, "p", errors.New("x"))}, wantCalls: 1, wantErr: true},
		// retry.DefaultBackoff's four tries.
		{name: "503 every time", errs: []error{apierrors.NewServiceUnavailable("x"), apierrors.NewServiceUnavailable("x"), apierrors.NewServiceUnavailable("x"), apierrors.NewServiceUnavailable("x")}, wantCalls: 4, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := frameworktest.MakePod().Name("p").Obj()
			client := fake.NewClientset(pod)
			calls := 0
			client.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				if calls <= len(tc.errs) {
					return true, nil, tc.errs[calls-1]
				}
				return true, pod, nil
			})
			b := New(client, nil, nil)
			err := b.Nominate(context.Background(), pod, "n1")
			if calls != tc.wantCalls {
				t.Errorf("%d patches, want %d", calls, tc.wantCalls)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want an error: %v", err, tc.wantErr)
			}
		})
	}
}

// A queued clear of a pod's nomination that is in flight when the pod is
// nominated again is waited for and not tried again: it cannot land after
// the new nomination and undo it.
func TestNominateSupersedesClear(t *testing.T) {
	pod := frameworktest.MakePod().Name("p").Obj()
	client := fake.NewClientset(pod)
	clearSent := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	var written []string // the nominatedNodeName of each patch, "" for a clear
	client.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		var patch struct {
			Status struct {
				NominatedNodeName *string `json:"nominatedNodeName"`
			} `json:"status"`
		}
		if err := json.Unmarshal(action.(k8stesting.PatchAction).GetPatch(), &patch); err != nil {
			t.Error(err)
		}
		node := ""
		if patch.Status.NominatedNodeName != nil {
			node = *patch.Status.NominatedNodeName
		}
		mu.Lock()
		written = append(written, node)
		first := len(written) == 1
		mu.Unlock()
		if first {
			close(clearSent)
			<-release
			// The answer is lost: patchStatus would try it again.
			return true, nil, apierrors.NewServiceUnavailable("x")
		}
		return true, pod, nil
	})
	b := New(client, nil, nil)
	b.ClearNominationLater(pod)
	<-clearSent
	nominated := make(chan error)
	go func() { nominated <- b.Nominate(context.Background(), pod, "n2") }()
	select {
	case err := <-nominated:
		t.Fatalf("Nominate returned (%v) while the clear was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-nominated; err != nil {
		t.Fatal(err)
	}
	if !b.patches.wait(5 * time.Second) {
		t.Fatal("status patches did not finish")
	}
	// Past the clear's retry backoff (10 ms, then 50).
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"", "n2"}; fmt.Sprint(written) != fmt.Sprint(want) {
		t.Errorf("patches written %q, want %q", written, want)
	}
}

// A clear still waiting in the queue when the pod is nominated is not
// written at all.
func TestNominateDropsQueuedClear(t *testing.T) {
	pod := frameworktest.MakePod().Name("p").Obj()
	b := New(fake.NewClientset(pod), nil, nil)
	b.patches.mu.Lock()
	b.patches.workers = statusWorkers // no worker starts: the clear waits
	b.patches.mu.Unlock()
	b.ClearNominationLater(pod)
	if got := b.StatusPatchesQueued(); got != 1 {
		t.Fatalf("%d patches queued, want 1", got)
	}
	if err := b.Nominate(context.Background(), pod, "n2"); err != nil {
		t.Fatal(err)
	}
	if got := b.StatusPatchesQueued(); got != 0 {
		t.Errorf("%d patches queued after Nominate, want 0", got)
	}
}
