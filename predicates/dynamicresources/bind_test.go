package dynamicresources

import (
	"context"
	"errors"
	"io"
	"net/url"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
)

// PreBind's writes of a claim go through failures that may pass, and
// through lost answers of writes that were committed: the claim ends
// allocated once, with the devices Reserve chose, and reserved once for
// the pod.
func TestPreBindThroughLostAnswers(t *testing.T) {
	claims := schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
	lost := func(verb string) error {
		return &url.Error{Op: verb, URL: "https://127.0.0.1/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c", Err: io.EOF}
	}
	for _, tc := range []struct {
		name string
		// finalizer and status are the answers of the first writes of
		// the claim's finalizer and status, in order; "commit" writes
		// the object and loses the answer; the next write succeeds.
		finalizer, status []string
		wantErr           bool
	}{
		{name: "no failure"},
		{name: "the finalizer's answer lost", finalizer: []string{"commit"}},
		{name: "the status's answer lost", status: []string{"commit"}},
		{name: "500, 429, then the status's answer lost", status: []string{"500", "429", "commit"}},
		{name: "both answers lost", finalizer: []string{"commit"}, status: []string{"commit"}},
		{name: "a 404 fails it", status: []string{"404"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newDRAWorld(t, 1, deviceClass("gpu"), slice("n1", "gpu-0", "gpu-1"), claim("c", 1, ""))
			pod := podWith("p", "c")
			tracker := w.h.Clientset.Tracker()
			answers := map[string][]string{"": tc.finalizer, "status": tc.status}
			w.h.Clientset.PrependReactor("update", "resourceclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
				u := a.(k8stesting.UpdateAction)
				next := answers[u.GetSubresource()]
				if len(next) == 0 {
					return false, nil, nil
				}
				answers[u.GetSubresource()] = next[1:]
				switch next[0] {
				case "commit":
					obj := u.GetObject().(*resourceapi.ResourceClaim).DeepCopy()
					// The API server's new resourceVersion.
					obj.ResourceVersion += "1"
					if err := tracker.Update(claims, obj, obj.Namespace); err != nil {
						t.Fatal(err)
					}
					return true, nil, lost("Put")
				case "500":
					return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
				case "429":
					return true, nil, apierrors.NewTooManyRequests("too many requests in flight", 0)
				case "404":
					return true, nil, apierrors.NewNotFound(claims.GroupResource(), "c")
				}
				t.Fatalf("answer %q", next[0])
				return false, nil, nil
			})
			state, _, got := w.cycle(pod)
			if len(got) != 0 {
				t.Fatalf("rejected on %v", got)
			}
			ctx := context.Background()
			if st := w.pl.Reserve(ctx, state, pod, "n1"); !st.IsSuccess() {
				t.Fatalf("Reserve: %v", st.Message())
			}
			s, _ := readState(state)
			want := s.info[0].allocation.DeepCopy()
			st := w.pl.PreBind(ctx, state, pod, "n1")
			if tc.wantErr {
				if st.IsSuccess() {
					t.Fatal("PreBind succeeded, want an error")
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("PreBind: %v", st.Message())
			}
			c, err := w.h.Clientset.ResourceV1().ResourceClaims("default").Get(ctx, "c", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Status.Allocation == nil || !sameAllocation(c.Status.Allocation, want) {
				t.Errorf("allocation %+v, want %+v", c.Status.Allocation, want)
			}
			if len(c.Status.ReservedFor) != 1 || !resourceclaim.IsReservedForPod(pod, c, false) {
				t.Errorf("reserved for %v, want the pod once", c.Status.ReservedFor)
			}
			if len(c.Finalizers) != 1 || c.Finalizers[0] != resourceapi.Finalizer {
				t.Errorf("finalizers %v, want %s once", c.Finalizers, resourceapi.Finalizer)
			}
		})
	}
}
