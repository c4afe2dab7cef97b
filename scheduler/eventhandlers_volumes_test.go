package scheduler

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// queuedEvents records why pods entered a queue.
type queuedEvents struct {
	mu     sync.Mutex
	events []queue.Event
}

func (r *queuedEvents) PodQueued(_ queue.Location, e queue.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *queuedEvents) has(e queue.Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.events, e)
}

// Each storage event moves an unschedulable pod back, under its own name.
func TestStorageEventsWakeUnschedulablePods(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &queuedEvents{}
	// Backoffs of a millisecond, run by the queue itself, so that a moved
	// pod is soon poppable again.
	s := &Scheduler{
		Queue: queue.New(queue.Options{Metrics: rec, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}),
		// A profile whose plugins registered every event.
		profiles: map[string]*profile{"p": {watched: map[framework.EventResource]bool{framework.WildCard: true}}},
	}
	queueDone := make(chan struct{})
	go func() { defer close(queueDone); s.Queue.Run(ctx) }()
	defer func() { s.Queue.Close(); <-queueDone }()
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	if err := s.addStorageEventHandlers(f); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	defer func() { cancel(); f.Shutdown() }() // informers stop with ctx
	f.WaitForCacheSync(ctx.Done())

	pod := frameworktest.MakePod().Name("p").Obj()
	s.Queue.Add(pod)
	// park pops the pod and fails its attempt, so that it waits for an event.
	park := func(t *testing.T) {
		t.Helper()
		qpi, err := s.Queue.Pop(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Queue.AddUnschedulable(qpi, s.Queue.SchedulingCycle(), true); err != nil {
			t.Fatal(err)
		}
		if _, _, unschedulable, _ := s.Queue.PendingPods(); unschedulable != 1 {
			t.Fatalf("%d unschedulable pods, want 1", unschedulable)
		}
	}
	waitFor := func(t *testing.T, e queue.Event) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			return rec.has(e), nil
		}); err != nil {
			t.Fatalf("no pod queued on %v", e)
		}
	}

	core, storage := client.CoreV1(), client.StorageV1()
	pv := frameworktest.MakePV("pv").Obj()
	pvc := frameworktest.MakePVC("default", "data").Obj()
	sc := frameworktest.MakeStorageClass("sc", "csi.example.com", storagev1.VolumeBindingImmediate)
	cn := frameworktest.MakeCSINode("n1", map[string]int32{"csi.example.com": 1})
	capacity := frameworktest.MakeCSIStorageCapacity("cap", "sc", v1.LabelTopologyZone, "a", "10Gi", "")
	driver := frameworktest.MakeCSIDriver("csi.example.com", true)
	steps := []struct {
		name string
		do   func() error
		want queue.Event
	}{
		{"PersistentVolume added", func() error { _, err := core.PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); return err }, queue.PersistentVolumeAdd},
		{"PersistentVolume updated", func() error {
			pv.Labels = map[string]string{v1.LabelTopologyZone: "a"}
			pv.ResourceVersion = "2"
			_, err := core.PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
			return err
		}, queue.PersistentVolumeUpdate},
		{"PersistentVolumeClaim added", func() error {
			_, err := core.PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{})
			return err
		}, queue.PersistentVolumeClaimAdd},
		{"PersistentVolumeClaim updated", func() error {
			pvc.Spec.VolumeName = "pv"
			pvc.ResourceVersion = "2"
			_, err := core.PersistentVolumeClaims("default").Update(ctx, pvc, metav1.UpdateOptions{})
			return err
		}, queue.PersistentVolumeClaimUpdate},
		{"StorageClass added", func() error { _, err := storage.StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); return err }, queue.StorageClassAdd},
		{"CSINode added", func() error { _, err := storage.CSINodes().Create(ctx, cn, metav1.CreateOptions{}); return err }, queue.CSINodeAdd},
		{"StorageClass topologies changed", func() error {
			frameworktest.AllowedTopologies(sc, v1.LabelTopologyZone, "a")
			sc.ResourceVersion = "2"
			_, err := storage.StorageClasses().Update(ctx, sc, metav1.UpdateOptions{})
			return err
		}, queue.StorageClassUpdate},
		{"CSIStorageCapacity added", func() error {
			_, err := storage.CSIStorageCapacities("kube-system").Create(ctx, capacity, metav1.CreateOptions{})
			return err
		}, queue.CSIStorageCapacityAdd},
		{"CSIStorageCapacity grew", func() error {
			more := resource.MustParse("20Gi")
			capacity.Capacity = &more
			capacity.ResourceVersion = "2"
			_, err := storage.CSIStorageCapacities("kube-system").Update(ctx, capacity, metav1.UpdateOptions{})
			return err
		}, queue.CSIStorageCapacityUpdate},
		{"CSIDriver stopped publishing capacity", func() error {
			if _, err := storage.CSIDrivers().Create(ctx, driver, metav1.CreateOptions{}); err != nil {
				return err
			}
			off := false
			driver.Spec.StorageCapacity = &off
			driver.ResourceVersion = "2"
			_, err := storage.CSIDrivers().Update(ctx, driver, metav1.UpdateOptions{})
			return err
		}, queue.CSIDriverUpdate},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			park(t)
			rec.mu.Lock()
			rec.events = nil
			rec.mu.Unlock()
			if err := st.do(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, st.want)
		})
	}
}

func TestStorageUpdatesThatCouldHelp(t *testing.T) {
	count := func(n int32) *storagev1.VolumeNodeResources { return &storagev1.VolumeNodeResources{Count: &n} }
	csiNode := func(c *storagev1.VolumeNodeResources, migrated string) *storagev1.CSINode {
		cn := &storagev1.CSINode{Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "d", Allocatable: c}}}}
		if migrated != "" {
			cn.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: migrated}
		}
		return cn
	}
	class := func(zones ...string) *storagev1.StorageClass {
		sc := &storagev1.StorageClass{}
		if len(zones) > 0 {
			sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
				{Key: v1.LabelTopologyZone, Values: zones},
			}}}
		}
		return sc
	}
	withRV := func(rv string) *v1.PersistentVolume {
		return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	tests := []struct {
		name     string
		changed  func(o, n any) bool
		old, new any
		want     bool
	}{
		{"resync", storageObjectChanged, withRV("1"), withRV("1"), false},
		{"new version", storageObjectChanged, withRV("1"), withRV("2"), true},
		{"class labels only", storageClassChanged, class(), class(), false},
		{"class topologies", storageClassChanged, class("a"), class("a", "b"), true},
		{"CSINode unchanged", csiNodeChanged, csiNode(count(1), ""), csiNode(count(1), ""), false},
		{"CSINode limit raised", csiNodeChanged, csiNode(count(1), ""), csiNode(count(2), ""), true},
		{"CSINode migrated plugins", csiNodeChanged, csiNode(nil, ""), csiNode(nil, "kubernetes.io/gce-pd"), true},
		{"CSIDriver stops publishing capacity", csiDriverChanged, frameworktest.MakeCSIDriver("d", true), frameworktest.MakeCSIDriver("d", false), true},
		{"CSIDriver starts publishing capacity", csiDriverChanged, frameworktest.MakeCSIDriver("d", false), frameworktest.MakeCSIDriver("d", true), false},
		{"capacity grew", capacityGrew, frameworktest.MakeCSIStorageCapacity("c", "sc", "k", "v", "1Gi", ""), frameworktest.MakeCSIStorageCapacity("c", "sc", "k", "v", "2Gi", ""), true},
		{"capacity shrank", capacityGrew, frameworktest.MakeCSIStorageCapacity("c", "sc", "k", "v", "2Gi", ""), frameworktest.MakeCSIStorageCapacity("c", "sc", "k", "v", "1Gi", ""), false},
		{"maximum volume size grew", capacityGrew, frameworktest.MakeCSIStorageCapacity("c", "sc", "k", "v", "9Gi", "1Gi"), frameworktest.MakeCSIStorageCapacity("c", "sc", "k", "v", "1Gi", "2Gi"), true},
	}
	for _, tc := range tests {
		if got := tc.changed(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: changed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The storage informers get handlers only when a plugin that can reject
// pods registered their events: a profile without the volume plugins
// watches none of them, the default profile all of them.
func TestStorageHandlersFollowRegisteredEvents(t *testing.T) {
	count := func(prof framework.Profile) int {
		t.Helper()
		client := fake.NewClientset()
		s, err := New(Options{
			Client:          client,
			InformerFactory: informers.NewSharedInformerFactory(client, 0),
			Registry:        registry.NewInTree(),
			Profiles:        []framework.Profile{prof},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		n := 0
		for _, r := range []framework.EventResource{framework.PersistentVolume, framework.PersistentVolumeClaim, framework.StorageClass,
			framework.CSINode, framework.CSIDriver, framework.CSIStorageCapacity, framework.VolumeAttachment} {
			if s.watches(r) {
				n++
			}
		}
		return n
	}
	if got := count(registry.DefaultProfile("yardmaster")); got != 7 {
		t.Errorf("the default profile watches %d storage resources, want 7", got)
	}
	nodeOnly := registry.ExpandMultiPoint(registry.NewInTree(), "yardmaster", []framework.WeightedPlugin{
		{Name: registry.PrioritySortName}, {Name: "NodeName"}, {Name: "NodeUnschedulable"}, {Name: registry.DefaultBinderName},
	})
	if got := count(nodeOnly); got != 0 {
		t.Errorf("a profile of node filters watches %d storage resources, want none", got)
	}
}
