package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
)

// ServedAPIs are the resources the API server serves, of those yardmaster
// reads that a server may leave out: its storage and dynamic resource
// allocation kinds. What yardmaster watches and which features act are
// decided from it (Features), not assumed: an informer for a resource the
// server does not serve would retry its list forever and never sync.
//
// A nil ServedAPIs serves everything (tests over fake clients).
type ServedAPIs map[schema.GroupVersionResource]bool

// Serves reports whether the server serves gvr.
func (a ServedAPIs) Serves(gvr schema.GroupVersionResource) bool {
	return a == nil || a[gvr]
}

// The optional resources yardmaster reads. Core, apps and policy kinds
// (pods, nodes, volumes and claims, services, PodDisruptionBudgets) are
// served by every server it supports and are not looked up.
var (
	gvrResourceClaims       = resourceapi.SchemeGroupVersion.WithResource("resourceclaims")
	gvrResourceSlices       = resourceapi.SchemeGroupVersion.WithResource("resourceslices")
	gvrDeviceClasses        = resourceapi.SchemeGroupVersion.WithResource("deviceclasses")
	gvrDeviceTaintRules     = resourceapi.SchemeGroupVersion.WithResource("devicetaintrules")
	gvrStorageClasses       = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	gvrCSINodes             = storagev1.SchemeGroupVersion.WithResource("csinodes")
	gvrCSIDrivers           = storagev1.SchemeGroupVersion.WithResource("csidrivers")
	gvrCSIStorageCapacities = storagev1.SchemeGroupVersion.WithResource("csistoragecapacities")
	gvrVolumeAttachments    = storagev1.SchemeGroupVersion.WithResource("volumeattachments")
	gvrPodGroups            = schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups")
	// gvrCoschedulingPodGroups are scheduler-plugins' PodGroups, a CRD
	// read through the dynamic informer factory.
	gvrCoschedulingPodGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
)

// optionalResources maps each optional resource to an empty object and
// list of its kind: the informer factory's key, and what an informer of a
// resource not served lists.
var optionalResources = map[schema.GroupVersionResource]struct {
	obj  runtime.Object
	list func() runtime.Object
}{
	gvrResourceClaims:       {&resourceapi.ResourceClaim{}, func() runtime.Object { return &resourceapi.ResourceClaimList{} }},
	gvrResourceSlices:       {&resourceapi.ResourceSlice{}, func() runtime.Object { return &resourceapi.ResourceSliceList{} }},
	gvrDeviceClasses:        {&resourceapi.DeviceClass{}, func() runtime.Object { return &resourceapi.DeviceClassList{} }},
	gvrDeviceTaintRules:     {&resourceapi.DeviceTaintRule{}, func() runtime.Object { return &resourceapi.DeviceTaintRuleList{} }},
	gvrStorageClasses:       {&storagev1.StorageClass{}, func() runtime.Object { return &storagev1.StorageClassList{} }},
	gvrCSINodes:             {&storagev1.CSINode{}, func() runtime.Object { return &storagev1.CSINodeList{} }},
	gvrCSIDrivers:           {&storagev1.CSIDriver{}, func() runtime.Object { return &storagev1.CSIDriverList{} }},
	gvrCSIStorageCapacities: {&storagev1.CSIStorageCapacity{}, func() runtime.Object { return &storagev1.CSIStorageCapacityList{} }},
	gvrVolumeAttachments:    {&storagev1.VolumeAttachment{}, func() runtime.Object { return &storagev1.VolumeAttachmentList{} }},
	gvrPodGroups:            {&schedulingv1beta1.PodGroup{}, func() runtime.Object { return &schedulingv1beta1.PodGroupList{} }},
}

// DiscoverAPIs asks the server which of the optional resources it serves.
// A group whose discovery fails (an aggregated API down) counts as not
// served, named in the error that comes with the answer; only a server
// that answers no discovery at all gives nil and an error.
func DiscoverAPIs(ctx context.Context, d discovery.DiscoveryInterface) (ServedAPIs, error) {
	type result struct {
		lists []*metav1.APIResourceList
		err   error
	}
	done := make(chan result, 1)
	go func() {
		_, lists, err := d.ServerGroupsAndResources()
		done <- result{lists, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("discover the API server's resources: %w", ctx.Err())
	}
	var partial *discovery.ErrGroupDiscoveryFailed
	if r.err != nil && !errors.As(r.err, &partial) {
		return nil, fmt.Errorf("discover the API server's resources: %w", r.err)
	}
	if len(r.lists) == 0 {
		// Every API server serves at least the core group: a client that
		// discovers nothing (a fake) cannot say what is missing.
		return nil, errors.New("discover the API server's resources: the server listed none")
	}
	served := ServedAPIs{}
	for _, l := range r.lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			gvr := gv.WithResource(res.Name)
			if _, ok := optionalResources[gvr]; ok || gvr == gvrCoschedulingPodGroups {
				served[gvr] = true
			}
		}
	}
	return served, r.err
}

// Feature is a capability that needs resources a server may not serve.
type Feature struct {
	// Name is the feature's name in the log and in the
	// yardmaster_feature_enabled metric.
	Name string
	// Needs are the resources it reads.
	Needs []schema.GroupVersionResource
	// Without says what yardmaster does when they are not served.
	Without string
}

// The features the scheduler itself turns on or off.
var (
	draFeature = Feature{Name: "DynamicResources", Needs: []schema.GroupVersionResource{gvrResourceClaims, gvrResourceSlices, gvrDeviceClasses},
		Without: "pods with resource claims stay Pending with a reason; extended resources are only those of the nodes' allocatable"}
	podGroupsFeature = Feature{Name: "PodGroups", Needs: []schema.GroupVersionResource{gvrPodGroups},
		Without: "no pod can name a pod group (the API server drops spec.schedulingGroup), so none is scheduled as a gang"}
	coschedulingFeature = Feature{Name: "CoschedulingPodGroups", Needs: []schema.GroupVersionResource{gvrCoschedulingPodGroups},
		Without: "pods labelled scheduling.x-k8s.io/pod-group are scheduled one by one (install scheduler-plugins' PodGroup CRD, deploy/overlays/coscheduling, and restart)"}
	deviceTaintRulesFeature = Feature{Name: "DeviceTaintRules", Needs: []schema.GroupVersionResource{gvrDeviceTaintRules},
		Without: "devices are tainted only by the taints their ResourceSlices publish"}
)

// Features are the capabilities decided from discovery, in the order they
// are reported.
var Features = []Feature{
	draFeature,
	deviceTaintRulesFeature,
	podGroupsFeature,
	coschedulingFeature,
	{Name: "StorageClasses", Needs: []schema.GroupVersionResource{gvrStorageClasses},
		Without: "claims that name a StorageClass are not bound by the scheduler"},
	{Name: "CSINodes", Needs: []schema.GroupVersionResource{gvrCSINodes, gvrCSIDrivers},
		Without: "CSI volume limits and attach decisions read no CSINode or CSIDriver"},
	{Name: "StorageCapacity", Needs: []schema.GroupVersionResource{gvrCSIStorageCapacities},
		Without: "drivers that publish storage capacity are treated as having none"},
	{Name: "VolumeAttachments", Needs: []schema.GroupVersionResource{gvrVolumeAttachments},
		Without: "a detached volume does not wake pods waiting on a node's attach limit"},
}

// Enabled reports whether a serves every resource f needs.
func (f Feature) Enabled(a ServedAPIs) bool {
	for _, gvr := range f.Needs {
		if !a.Serves(gvr) {
			return false
		}
	}
	return true
}

// Missing names the resources f needs that a does not serve.
func (f Feature) Missing(a ServedAPIs) string {
	var missing []string
	for _, gvr := range f.Needs {
		if !a.Serves(gvr) {
			missing = append(missing, gvr.Resource+"."+gvr.GroupVersion().String())
		}
	}
	sort.Strings(missing)
	return strings.Join(missing, ", ")
}

// notServed lists and watches a resource the server does not serve:
// nothing, ever.
type notServed struct{ list func() runtime.Object }

func (n notServed) List(metav1.ListOptions) (runtime.Object, error) { return n.list(), nil }

// Watch's watcher sends nothing until the informer stops it.
func (n notServed) Watch(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }

// IsWatchListSemanticsUnSupported makes the reflector list, then watch:
// notServed has no initial-events bookmark to send.
func (notServed) IsWatchListSemanticsUnSupported() bool { return true }
