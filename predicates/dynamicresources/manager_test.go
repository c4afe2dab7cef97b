package dynamicresources

import (
	"context"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// A pod woken by a ResourceSlice change must find the allocator's answers
// kept before it void: the slice handler runs after the manager's, for
// every change. Were they separate registrations, each would run in its
// own goroutine, and a woken pod could be filtered against the slices of
// before the change, fail, and wait for the 5-minute flush.
func TestSliceHandlerRunsAfterAnswersAreVoid(t *testing.T) {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	type seen struct {
		what  string
		epoch uint64
	}
	events := make(chan seen, 16)
	var m *Manager
	epoch := func() uint64 {
		m.answers.mu.Lock()
		defer m.answers.mu.Unlock()
		return m.answers.epoch
	}
	onSlice := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { events <- seen{"add", epoch()} },
		UpdateFunc: func(any, any) { events <- seen{"update", epoch()} },
		DeleteFunc: func(any) { events <- seen{"delete", epoch()} },
	}
	m, err := NewManager(f, ManagerOptions{}, nil, nil, onSlice)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.WaitForCacheSync(ctx.Done())

	slices := client.ResourceV1().ResourceSlices()
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "n1-gpus"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: ptr.To("n1"),
			Pool:    resourceapi.ResourcePool{Name: "n1", Generation: 1, ResourceSliceCount: 1},
			Devices: []resourceapi.Device{{Name: "gpu-0"}},
		},
	}
	// Each change moves the epoch on once: 1 after the add, 2 after the
	// update, 3 after the delete.
	steps := []struct {
		what string
		do   func() error
	}{
		{"add", func() error { _, err := slices.Create(ctx, s, metav1.CreateOptions{}); return err }},
		{"update", func() error {
			s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: "gpu-1"})
			s.ResourceVersion = "2"
			_, err := slices.Update(ctx, s, metav1.UpdateOptions{})
			return err
		}},
		{"delete", func() error { return slices.Delete(ctx, s.Name, metav1.DeleteOptions{}) }},
	}
	for i, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		select {
		case got := <-events:
			if want := (seen{step.what, uint64(i + 1)}); got != want {
				t.Errorf("slice handler saw %+v, want %+v", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event", step.what)
		}
	}
}
