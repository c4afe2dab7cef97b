package scheduler

import (
	"context"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
)

// A 1.36 server: resource.k8s.io/v1 without DeviceTaintRules (served in
// v1beta2 there), storage.k8s.io/v1 without CSIStorageCapacity.
func TestDiscoverAPIs(t *testing.T) {
	client := fake.NewClientset()
	d := client.Discovery().(*fakediscovery.FakeDiscovery)
	d.Resources = []*metav1.APIResourceList{
		{GroupVersion: "resource.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "resourceclaims"}, {Name: "resourceclaims/status"}, {Name: "resourceslices"}, {Name: "deviceclasses"},
		}},
		{GroupVersion: "resource.k8s.io/v1beta2", APIResources: []metav1.APIResource{{Name: "devicetaintrules"}}},
		{GroupVersion: "storage.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "storageclasses"}, {Name: "csinodes"}, {Name: "csidrivers"}, {Name: "volumeattachments"},
		}},
	}
	apis, err := DiscoverAPIs(context.Background(), client.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"DynamicResources": true, "DeviceTaintRules": false, "StorageClasses": true,
		"CSINodes": true, "StorageCapacity": false, "VolumeAttachments": true,
	}
	for _, f := range Features {
		if got := f.Enabled(apis); got != want[f.Name] {
			t.Errorf("%s enabled: %v, want %v", f.Name, got, want[f.Name])
		}
	}
	if got, want := deviceTaintRulesFeature.Missing(apis), "devicetaintrules.resource.k8s.io/v1"; got != want {
		t.Errorf("DeviceTaintRules missing %q, want %q", got, want)
	}
	// nil serves everything.
	for _, f := range Features {
		if !f.Enabled(nil) {
			t.Errorf("%s off with nil APIs", f.Name)
		}
	}
}

// An informer of a resource not served syncs empty without asking the
// server; one that is served lists from it.
func TestInformerFactoryLeavesOutWhatIsNotServed(t *testing.T) {
	rule := &resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r"}}
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	client := fake.NewClientset(rule, class)
	apis := ServedAPIs{gvrDeviceClasses: true}
	f := NewInformerFactory(client, apis)
	rules := f.Resource().V1().DeviceTaintRules()
	classes := f.Resource().V1().DeviceClasses()
	rules.Informer()
	classes.Informer()
	stop := make(chan struct{})
	defer f.Shutdown()
	defer close(stop)
	f.Start(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !toolscache.WaitForCacheSync(ctx.Done(), rules.Informer().HasSynced, classes.Informer().HasSynced) {
		t.Fatal("informers did not sync")
	}
	if got, _ := rules.Lister().List(labels.Everything()); len(got) != 0 {
		t.Errorf("DeviceTaintRules not served, listed %d", len(got))
	}
	if got, _ := classes.Lister().List(labels.Everything()); len(got) != 1 {
		t.Errorf("DeviceClasses served, listed %d, want 1", len(got))
	}
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "devicetaintrules" {
			t.Errorf("asked the server for devicetaintrules: %v", a)
		}
	}
}
