package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// allowanceGVR is the custom resource of TestCustomResourceEvents: a
// namespace may run pods once it holds an Allowance.
var allowanceGVR = schema.GroupVersionResource{Group: "e2e.yardmaster.io", Version: "v1", Resource: "allowances"}

// allowancePlugin rejects every node for a pod whose namespace holds no
// Allowance, reading them through the scheduler's dynamic informer
// factory, as an out-of-tree plugin on its own custom resource would.
type allowancePlugin struct{ lister toolscache.GenericLister }

const allowanceReason = "no Allowance in the pod's namespace"

func (*allowancePlugin) Name() string { return "Allowance" }

func (p *allowancePlugin) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ *framework.NodeInfo) *framework.Status {
	objs, err := p.lister.ByNamespace(pod.Namespace).List(labels.Everything())
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(objs) == 0 {
		return framework.NewStatus(framework.Unschedulable, allowanceReason)
	}
	return nil
}

// EventsToRegister names the custom resource: its Add is the one event
// that can undo the rejection.
func (*allowancePlugin) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{
		Event: framework.ClusterEvent{Resource: framework.ResourceOf(allowanceGVR), ActionType: framework.Add},
		QueueingHintFn: func(_ *zap.Logger, pod *v1.Pod, _, newObj any) (framework.QueueingHint, error) {
			if u, ok := newObj.(*unstructured.Unstructured); ok && u.GetNamespace() == pod.Namespace {
				return framework.Queue, nil
			}
			return framework.QueueSkip, nil
		},
	}}, nil
}

func allowanceRegistration() framework.Registration {
	return framework.Registration{
		Name:   "Allowance",
		Points: []string{framework.PointFilter},
		New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
			f := h.DynamicInformerFactory()
			if f == nil {
				return nil, fmt.Errorf("Allowance needs the dynamic informer factory")
			}
			return []framework.Plugin{&allowancePlugin{lister: f.ForResource(allowanceGVR).Lister()}}, nil
		},
	}
}

// TestCustomResourceEvents runs a plugin that registers events of a
// custom resource (framework.ResourceOf): the scheduler watches it, and a
// pod the plugin rejected is scheduled as soon as the object that allows
// it is created, not at the unschedulable pool's 5-minute flush.
func TestCustomResourceEvents(t *testing.T) {
	e := newEnv(t)
	dc, err := dynamic.NewForConfig(e.plane.RESTConfig(e.plane.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	installAllowanceCRD(t, e, dc)

	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	file := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: %s
  plugins:
    filter:
      enabled:
      - name: Allowance
`, e.scheduler)
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.startScheduler(func(o *app.Options) {
		o.ConfigFile = path
		o.Overrides.SchedulerName = nil
		o.Registry = registry.NewInTree()
		if err := o.Registry.Register(allowanceRegistration()); err != nil {
			t.Fatal(err)
		}
	})
	e.createPod(e.pod("waits").Req("100m", "64Mi"))
	if msg := e.waitFailedScheduling("waits", allowanceReason); !strings.Contains(msg, "0/") {
		t.Fatalf("FailedScheduling %q", msg)
	}

	allowance := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": allowanceGVR.GroupVersion().String(),
		"kind":       "Allowance",
		"metadata":   map[string]any{"name": "run", "namespace": e.ns},
	}}
	if _, err := dc.Resource(allowanceGVR).Namespace(e.ns).Create(e.ctx, allowance, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Allowance: %v", err)
	}
	// Well before the 5-minute flush: only the Allowance's event wakes
	// the pod (backoff is at most 10 s).
	if got := e.waitBound(45*time.Second, "waits"); got["waits"] != e.ns+"-a" {
		t.Errorf("placed %v, want waits on a", got)
	}
}

// installAllowanceCRD creates the Allowance CRD, once per control plane,
// and waits until it is served.
func installAllowanceCRD(t *testing.T, e *env, dc dynamic.Interface) {
	t.Helper()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	name := allowanceGVR.Resource + "." + allowanceGVR.Group
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"group": allowanceGVR.Group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "allowances", "singular": "allowance", "kind": "Allowance", "listKind": "AllowanceList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if _, err := dc.Resource(crds).Create(e.ctx, crd, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("create CRD: %v", err)
	}
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dc.Resource(allowanceGVR).Namespace(e.ns).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the Allowance CRD is not served: %v", err)
	}
}
