// Package defaultbinder is DefaultBinder, kube-scheduler's Bind plugin: it
// binds a pod to its node through the pods/binding subresource. Under the
// scheduler it posts the scheduler's own Binding (framework.BindingHandle:
// the pod's UID as a precondition, retries of what the API server did not
// commit, and a look at the pod when an answer was lost); under a handle
// without one (a plugin test) it posts one Binding through the handle's
// clientset, as kube-scheduler's does.
//
// A Bind plugin of an outside module may wrap it: build it with New and
// call its Bind for the pods the module does not bind itself.
package defaultbinder

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Name is the plugin's name in configuration files.
const Name = "DefaultBinder"

// Binder is DefaultBinder.
type Binder struct {
	h framework.Handle
	// post is the scheduler's Binding, nil under a handle without one.
	post func(ctx context.Context, pod *v1.Pod, node string) error
}

var _ framework.BindPlugin = &Binder{}

// New returns DefaultBinder over h.
func New(h framework.Handle) *Binder {
	b := &Binder{h: h}
	if bh, ok := h.(framework.BindingHandle); ok {
		b.post = bh.PostBinding
	}
	return b
}

// Name returns Name.
func (*Binder) Name() string { return Name }

// Bind binds pod to nodeName. It never Skips.
func (b *Binder) Bind(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	if b.post != nil {
		return framework.AsStatus(b.post(ctx, pod, nodeName))
	}
	cs := b.h.ClientSet()
	if cs == nil {
		return framework.AsStatus(errors.New("DefaultBinder: the handle has no API client"))
	}
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	return framework.AsStatus(cs.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}))
}

// Registration is DefaultBinder's, for a framework.Registry.
func Registration() framework.Registration {
	return framework.Registration{
		Name:   Name,
		Points: []string{framework.PointBind},
		New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{New(h)}, nil
		},
	}
}
