package binder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

var podsResource = schema.GroupResource{Resource: "pods"}

// bindReactor answers Binding creates with the given errors in turn, then
// success, and counts the calls.
func bindReactor(calls *int, errs ...error) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		*calls++
		if *calls <= len(errs) {
			return true, nil, errs[*calls-1]
		}
		return true, action.(k8stesting.CreateAction).GetObject(), nil
	}
}

func TestBindRetries(t *testing.T) {
	tests := []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   bool
	}{
		{name: "first try", wantCalls: 1},
		{name: "transient then success", errs: []error{
			apierrors.NewServerTimeout(podsResource, "create", 1),
			apierrors.NewTooManyRequests("slow down", 1),
		}, wantCalls: 3},
		{name: "pod gone: no retry", errs: []error{apierrors.NewNotFound(podsResource, "p")}, wantCalls: 1, wantErr: true},
		{name: "already bound: no retry", errs: []error{apierrors.NewConflict(podsResource, "p", errors.New("bound"))}, wantCalls: 1, wantErr: true},
		{name: "transient forever: bounded", errs: []error{
			apierrors.NewInternalError(errors.New("1")), apierrors.NewInternalError(errors.New("2")),
			apierrors.NewInternalError(errors.New("3")), apierrors.NewInternalError(errors.New("4")),
			apierrors.NewInternalError(errors.New("5")), apierrors.NewInternalError(errors.New("6")),
		}, wantCalls: DefaultMaxAttempts, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			calls := 0
			client.PrependReactor("create", "pods", bindReactor(&calls, tc.errs...))
			b := New(client, nil, nil)
			b.initialBackoff = time.Millisecond
			err := b.Bind(context.Background(), frameworktest.MakePod().Name("p").Obj(), "n1")
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
			if calls != tc.wantCalls {
				t.Errorf("%d Binding calls, want %d", calls, tc.wantCalls)
			}
		})
	}
}

func TestBindPostsTargetAndUID(t *testing.T) {
	client := fake.NewClientset()
	var got *v1.Binding
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		got = action.(k8stesting.CreateAction).GetObject().(*v1.Binding)
		return true, got, nil
	})
	pod := frameworktest.MakePod().Name("p").UID("uid-1").Obj()
	if err := New(client, nil, nil).Bind(context.Background(), pod, "n7"); err != nil {
		t.Fatal(err)
	}
	if got.Target.Name != "n7" || got.Target.Kind != "Node" || got.UID != "uid-1" || got.Name != "p" {
		t.Errorf("binding = %+v", got)
	}
}

func TestRecordFailurePatchesConditionOnce(t *testing.T) {
	pod := frameworktest.MakePod().Name("p").Obj()
	client := fake.NewClientset(pod)
	var patches []map[string]any
	client.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pa := action.(k8stesting.PatchAction)
		if pa.GetSubresource() != "status" {
			t.Errorf("patched subresource %q, want status", pa.GetSubresource())
		}
		var m map[string]any
		if err := json.Unmarshal(pa.GetPatch(), &m); err != nil {
			t.Fatal(err)
		}
		patches = append(patches, m)
		return true, pod, nil
	})
	b := New(client, nil, nil)
	msg := "0/3 nodes are available: 3 Insufficient cpu."
	b.RecordFailure(context.Background(), pod, v1.PodReasonUnschedulable, msg, true)
	b.Wait()
	b.RecordFailure(context.Background(), pod, v1.PodReasonUnschedulable, msg, true)
	b.Wait()
	if len(patches) != 1 {
		t.Fatalf("%d status patches for a repeated message, want 1", len(patches))
	}
	conds := patches[0]["status"].(map[string]any)["conditions"].([]any)
	c := conds[0].(map[string]any)
	if c["type"] != "PodScheduled" || c["status"] != "False" || c["reason"] != "Unschedulable" || c["message"] != msg {
		t.Errorf("condition = %v", c)
	}
	// A new reason is written again.
	b.RecordFailure(context.Background(), pod, v1.PodReasonUnschedulable, "0/3 nodes are available: 3 Insufficient memory.", true)
	b.Wait()
	if len(patches) != 2 {
		t.Errorf("%d patches after a new message, want 2", len(patches))
	}
}

func TestIsTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewServiceUnavailable("x"), true},
		{apierrors.NewTimeoutError("x", 1), true},
		{apierrors.NewBadRequest("x"), false},
		{apierrors.NewForbidden(podsResource, "p", errors.New("no")), false},
		{apierrors.NewNotFound(podsResource, "p"), false},
	} {
		if got := IsTransient(tc.err); got != tc.want {
			t.Errorf("IsTransient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestTruncateNote(t *testing.T) {
	fits := strings.Repeat("a", NoteLengthLimit)
	// A three-byte character across the limit must not be cut in half.
	wide := strings.Repeat("a", NoteLengthLimit-len(truncatedSuffix)-1) + strings.Repeat("€", 10)
	for _, tc := range []struct {
		name, note, want string
	}{
		{"short", "0/3 nodes are available: 3 Insufficient cpu.", "0/3 nodes are available: 3 Insufficient cpu."},
		{"exactly the limit", fits, fits},
		{"one byte over", fits + "b", fits[:NoteLengthLimit-4] + " ..."},
		{"at a character boundary", wide, wide[:NoteLengthLimit-len(truncatedSuffix)-1] + " ..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TruncateNote(tc.note)
			if got != tc.want {
				t.Errorf("got %q…, want %q…", got[:min(len(got), 40)], tc.want[:min(len(tc.want), 40)])
			}
			if len(got) > NoteLengthLimit || !utf8.ValidString(got) {
				t.Errorf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
			}
		})
	}
}

// Every event written through the binder's recorder fits the API's
// limit, whoever writes it; a note that is no format stays as it is.
func TestRecorderLimitsNotes(t *testing.T) {
	rec := events.NewFakeRecorder(3)
	b := New(fake.NewClientset(), rec, nil)
	pod := frameworktest.MakePod().Name("p").Obj()
	b.RecordFailure(context.Background(), pod, v1.PodReasonUnschedulable, strings.Repeat("x", 3000), false)
	b.Recorder().Eventf(pod, nil, v1.EventTypeNormal, "Plugin", "Doing", "%s", strings.Repeat("y", 3000))
	b.Recorder().Eventf(pod, nil, v1.EventTypeNormal, "Plugin", "Doing", "100% done")
	for _, want := range []string{
		"Warning FailedScheduling " + strings.Repeat("x", NoteLengthLimit-4) + " ...",
		"Normal Plugin " + strings.Repeat("y", NoteLengthLimit-4) + " ...",
		"Normal Plugin 100% done",
	} {
		if got := <-rec.Events; got != want {
			t.Errorf("event %q…, want %q…", got[:min(len(got), 60)], want[:min(len(want), 60)])
		}
	}
}

// Bind's error says whether the Binding may have been committed: only
// answers that prove the server did not act on any attempt clear it.
func TestBindSaysWhetherItMayHaveBound(t *testing.T) {
	reset := &url.Error{Op: "Post", URL: "https://apiserver/binding", Err: syscall.ECONNRESET}
	refused := &url.Error{Op: "Post", URL: "https://apiserver/binding", Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	tests := []struct {
		name string
		errs []error
		want bool
	}{
		{name: "connection reset", errs: []error{reset, reset, reset, reset, reset}, want: true},
		{name: "server timeout", errs: repeat(apierrors.NewServerTimeout(podsResource, "create", 1), DefaultMaxAttempts), want: true},
		{name: "503", errs: repeat(apierrors.NewServiceUnavailable("down"), DefaultMaxAttempts), want: true},
		{name: "404 may come from a proxy", errs: []error{apierrors.NewNotFound(podsResource, "p")}, want: true},
		{name: "409 after a timeout: the first may have committed", errs: []error{
			apierrors.NewTimeoutError("slow", 1), apierrors.NewConflict(podsResource, "p", errors.New("pod p is already assigned to node \"n1\"")),
		}, want: true},
		{name: "403", errs: []error{apierrors.NewForbidden(podsResource, "p", errors.New("no"))}},
		{name: "422", errs: []error{apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, "p", nil)}},
		{name: "429 every time", errs: repeat(apierrors.NewTooManyRequests("slow down", 1), DefaultMaxAttempts)},
		{name: "connection refused", errs: repeat(error(refused), DefaultMaxAttempts)},
		{name: "429 after a 500", errs: append([]error{apierrors.NewInternalError(errors.New("etcd"))},
			repeat(apierrors.NewTooManyRequests("slow down", 1), DefaultMaxAttempts-1)...), want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			calls := 0
			client.PrependReactor("create", "pods", bindReactor(&calls, tc.errs...))
			b := New(client, nil, nil)
			b.initialBackoff = time.Millisecond
			err := b.Bind(context.Background(), frameworktest.MakePod().Name("p").Obj(), "n1")
			if err == nil {
				t.Fatal("Bind succeeded")
			}
			if got := errors.Is(err, ErrMayHaveBound); got != tc.want {
				t.Errorf("errors.Is(%v, ErrMayHaveBound) = %v, want %v", err, got, tc.want)
			}
		})
	}
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// A Binding the API server committed, whose connection was cut before the
// answer: the retry finds the pod assigned (409), and Bind reports that
// the Binding may have been committed, not that it failed.
func TestBindConnectionLostAfterCommit(t *testing.T) {
	var mu sync.Mutex
	boundTo := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/pods/p/binding") {
			http.NotFound(w, r)
			return
		}
		var b v1.Binding
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		first := boundTo == ""
		if first {
			boundTo = b.Target.Name
		}
		mu.Unlock()
		if !first {
			// What the API server answers a second Binding.
			st := apierrors.NewConflict(podsResource, "p", fmt.Errorf("pod p is already assigned to node %q", boundTo)).ErrStatus
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(&st)
			return
		}
		// Committed; the answer is lost.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_ = conn.Close()
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	b := New(client, nil, nil)
	b.initialBackoff = time.Millisecond
	err = b.Bind(context.Background(), frameworktest.MakePod().Namespace("default").Name("p").Obj(), "n1")
	if !errors.Is(err, ErrMayHaveBound) {
		t.Errorf("err = %v, want it to say the Binding may have been committed", err)
	}
	if boundTo != "n1" {
		t.Errorf("bound to %q, want n1", boundTo)
	}
	client.CoreV1().RESTClient().(*rest.RESTClient).Client.CloseIdleConnections()
}
