package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/yardmaster-io/yardmaster/framework"
)

// scheduler-plugins' PodGroups (scheduling.x-k8s.io/v1alpha1), the CRD
// deploy/overlays/coscheduling installs; pods name their group with a
// label.

var (
	coschedulingGVR = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
	crdGVR          = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// coschedulingCRD reads the CRD deploy/overlays/coscheduling ships.
func coschedulingCRD(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "overlays", "coscheduling", "podgroups-crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatalf("parse the CRD: %v", err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// installCoscheduling creates the CRD unless it exists and waits until
// its PodGroups are served; yardmaster must start after, as it reads
// scheduler-plugins' PodGroups only when discovery lists them.
func (e *env) installCoscheduling() dynamic.Interface {
	e.t.Helper()
	dc := dynamic.NewForConfigOrDie(e.plane.RESTConfig(e.plane.AdminToken))
	if _, err := dc.Resource(crdGVR).Create(e.ctx, coschedulingCRD(e.t), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatalf("create the PodGroup CRD: %v", err)
	}
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dc.Resource(coschedulingGVR).Namespace(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		lists, err := e.client.Discovery().ServerResourcesForGroupVersion(coschedulingGVR.GroupVersion().String())
		return err == nil && len(lists.APIResources) > 0, nil
	})
	if err != nil {
		e.t.Fatalf("scheduler-plugins' PodGroups are not served: %v", err)
	}
	return dc
}

// createCoschedulingGroup creates a scheduler-plugins PodGroup.
func (e *env) createCoschedulingGroup(dc dynamic.Interface, name string, spec map[string]any) {
	e.t.Helper()
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{"name": name, "namespace": e.ns},
		"spec":     spec,
	}}
	if _, err := dc.Resource(coschedulingGVR).Namespace(e.ns).Create(e.ctx, pg, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create PodGroup %s: %v", name, err)
	}
}

// createLabelled creates n pods labelled into group, each requesting cpu.
func (e *env) createLabelled(group string, n int, cpu string) []string {
	e.t.Helper()
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("%s-%d", group, i)
		e.createPod(e.pod(names[i]).Label(framework.CoschedulingPodGroupLabel, group).Req(cpu, "100Mi"))
	}
	return names
}

// A scheduler-plugins PodGroup is placed all or nothing too: minMember
// members or none, with the group's reason on each; room made later
// places it whole.
func TestCoschedulingGang(t *testing.T) {
	e := newEnv(t)
	dc := e.installCoscheduling()
	e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	e.startScheduler()
	e.createCoschedulingGroup(dc, "spark", map[string]any{"minMember": int64(3)})
	names := e.createLabelled("spark", 3, "1")
	e.waitFailedScheduling(names[0], "minCount (3) cannot be satisfied")
	e.expectNoneBound(names, 2*time.Second)
	e.addNode(e.node("b").Capacity("2", "4Gi", 110))
	e.waitBound(30*time.Second, names...)
	e.assertNoOvercommit()
}

// minResources means what it means to Coscheduling: the group is not
// tried until the cluster has that much free.
func TestCoschedulingMinResources(t *testing.T) {
	e := newEnv(t)
	dc := e.installCoscheduling()
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.startScheduler()
	e.createCoschedulingGroup(dc, "big", map[string]any{"minMember": int64(2), "minResources": map[string]any{"cpu": "6"}})
	names := e.createLabelled("big", 2, "100m")
	e.waitFailedScheduling(names[0], "resource gap: cpu short by 2")
	e.expectNoneBound(names, time.Second)
	e.addNode(e.node("b").Capacity("4", "8Gi", 110))
	e.waitBound(60*time.Second, names...)
}

// A member whose PodGroup does not exist waits and says so; other pods
// are scheduled meanwhile; the group created, it is placed.
func TestCoschedulingWaitsForItsGroup(t *testing.T) {
	e := newEnv(t)
	dc := e.installCoscheduling()
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.startScheduler()
	names := e.createLabelled("later", 2, "100m")
	if msg := e.waitUnschedulableCondition(names[0]); msg != `waiting for PodGroup "later" (scheduling.x-k8s.io/v1alpha1) to exist` {
		t.Errorf("PodScheduled message %q", msg)
	}
	e.createPod(e.pod("solo").Req("100m", "100Mi"))
	e.waitBound(30*time.Second, "solo")
	e.expectNoneBound(names, time.Second)
	e.createCoschedulingGroup(dc, "later", map[string]any{"minMember": int64(2)})
	e.waitBound(30*time.Second, names...)
}
