package defaultbinder_test

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/yardmaster-io/yardmaster/binder/defaultbinder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// Under a handle without the scheduler's Binding, DefaultBinder posts one
// Binding, the pod's UID its precondition, through the clientset.
func TestBindThroughClientset(t *testing.T) {
	h := frameworktest.NewHandle(nil)
	var got *v1.Binding
	h.Clientset.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if ca, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "binding" {
			got = ca.GetObject().(*v1.Binding)
			return true, got, nil
		}
		return false, nil, nil
	})
	pod := frameworktest.MakePod().Name("web").Obj()
	pod.UID = "uid-1"
	if st := defaultbinder.New(h).Bind(context.Background(), framework.NewCycleState(), pod, "n1"); !st.IsSuccess() {
		t.Fatalf("Bind: %v", st.Message())
	}
	want := metav1.ObjectMeta{Namespace: pod.Namespace, Name: "web", UID: "uid-1"}
	if got == nil || got.ObjectMeta.Name != want.Name || got.Namespace != want.Namespace || got.UID != want.UID || got.Target.Name != "n1" || got.Target.Kind != "Node" {
		t.Errorf("posted %+v, want a Binding of %s/%s (UID %s) to node n1", got, want.Namespace, want.Name, want.UID)
	}
}

// bindingHandle is a handle with the scheduler's Binding.
type bindingHandle struct {
	*frameworktest.Handle
	post func(ctx context.Context, pod *v1.Pod, node string) error
}

func (h bindingHandle) PostBinding(ctx context.Context, pod *v1.Pod, node string) error {
	return h.post(ctx, pod, node)
}

// Under the scheduler, DefaultBinder posts the scheduler's Binding and
// returns its error as it is, so that the scheduler can tell a Binding
// that may have been committed.
func TestBindThroughTheScheduler(t *testing.T) {
	mayHaveBound := errors.New("the Binding may have been committed")
	var posted string
	h := bindingHandle{Handle: frameworktest.NewHandle(nil), post: func(_ context.Context, pod *v1.Pod, node string) error {
		posted = pod.Name + "->" + node
		return mayHaveBound
	}}
	pod := frameworktest.MakePod().Name("web").Obj()
	st := defaultbinder.New(h).Bind(context.Background(), framework.NewCycleState(), pod, "n2")
	if posted != "web->n2" {
		t.Errorf("posted %q, want web->n2", posted)
	}
	if st.Code() != framework.Error || !errors.Is(st.Err(), mayHaveBound) {
		t.Errorf("Bind = %v %v, want an Error wrapping the scheduler's", st.Code(), st.Err())
	}
	if len(h.Clientset.Actions()) != 0 {
		t.Errorf("the clientset was called: %v", h.Clientset.Actions())
	}
}
