package dynamicresources

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Manager is the scheduler's state of dynamic resource allocation, shared
// by every profile's DynamicResources plugin (kube-scheduler's
// DefaultDRAManager): the claims as the scheduler sees them, the devices
// they and the allocations in flight take, the ResourceSlices and
// DeviceClasses, and which class serves which extended resource.
type Manager struct {
	claims   *claimCache
	devices  *allocatedDevices
	inFlight *inFlightAllocations
	// slices are the ResourceSlices with the taints of the
	// DeviceTaintRules that select their devices added (the library's
	// tracker), as the allocator must see them.
	slices    *tracker.Tracker
	classes   resourcelisters.DeviceClassLister
	extended  *extendedresourcecache.ExtendedResourceCache
	generated *generatedClaims
	// answers are the allocator's answers kept per node (answers.go).
	answers *allocatorAnswers
	// served is false when the API server does not serve
	// resource.k8s.io/v1: the stores stay empty, and pods that need
	// devices are told so.
	served bool

	registrations []toolscache.ResourceEventHandlerRegistration
}

var _ framework.SharedDRAManager = &Manager{}

// ManagerOptions say what the API server serves of dynamic resource
// allocation.
type ManagerOptions struct {
	// NotServed is set when the server does not serve the ResourceClaims,
	// ResourceSlices and DeviceClasses of resource.k8s.io/v1.
	NotServed bool
	// DeviceTaintRules is set when the server serves resource.k8s.io/v1
	// DeviceTaintRules (Kubernetes 1.37 and later): their taints are
	// then added to the devices they select.
	DeviceTaintRules bool
}

// NewManager builds the manager over f's informers, registering its
// handlers on the ResourceClaim, DeviceClass and ResourceSlice informers:
// call it before the factory starts. onClaim is told of every claim change
// the scheduler sees (its own writes and assumptions too); onClass of
// every DeviceClass change, after the class is known to GetDeviceClass;
// onSlice of every ResourceSlice change, after the allocator's answers
// kept are void.
//
// onSlice is also told when a DeviceTaintRule taints or untaints the
// devices of a slice (the slice as patched by the rules changed).
//
// onClass and onSlice wake pods, so they must run after the manager has
// taken the change in, and they do because they share its registration:
// the handlers of separate registrations run each in its own goroutine, in
// no order, and a pod woken by a slice before the answers were void would
// be filtered against the slices listed before the change, fail, and wait
// for the next event (or the 5-minute flush).
//
// With opts.DeviceTaintRules the manager runs the tracker's work until
// Stop.
func NewManager(f informers.SharedInformerFactory, opts ManagerOptions, onClaim func(oldClaim, newClaim *resourceapi.ResourceClaim), onClass, onSlice toolscache.ResourceEventHandler) (*Manager, error) {
	topts := tracker.Options{
		EnableDeviceTaintRules:   opts.DeviceTaintRules && !opts.NotServed,
		EnableConsumableCapacity: true,
		SliceInformer:            f.Resource().V1().ResourceSlices(),
	}
	if topts.EnableDeviceTaintRules {
		topts.TaintInformer = f.Resource().V1().DeviceTaintRules()
	}
	// The context is the tracker's own: Stop ends it.
	slices, err := tracker.StartTracker(context.Background(), topts)
	if err != nil {
		return nil, fmt.Errorf("track resourceslices: %w", err)
	}
	devices := newAllocatedDevices()
	m := &Manager{
		claims:    newClaimCache(),
		devices:   devices,
		inFlight:  &inFlightAllocations{claims: map[types.UID]*inFlightClaim{}, devices: devices},
		slices:    slices,
		classes:   f.Resource().V1().DeviceClasses().Lister(),
		generated: &generatedClaims{byPod: map[types.UID]string{}},
		answers:   newAllocatorAnswers(),
		served:    !opts.NotServed,
	}
	m.claims.addHandler(devices.claimChanged)
	m.claims.addHandler(m.generated.claimChanged)
	if onClaim != nil {
		m.claims.addHandler(onClaim)
	}
	reg, err := f.Resource().V1().ResourceClaims().Informer().AddEventHandler(m.claims.informerHandlers())
	if err != nil {
		slices.Stop()
		return nil, fmt.Errorf("watch resourceclaims: %w", err)
	}
	m.registrations = append(m.registrations, reg)

	// A class or slice changed voids the allocator's answers; the handler
	// runs after the informer's store has the change, so a cycle that
	// listed the old objects files none under the new epoch.
	void := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { m.answers.void() },
		UpdateFunc: func(any, any) { m.answers.void() },
		DeleteFunc: func(any) { m.answers.void() },
	}
	handlers := []toolscache.ResourceEventHandler{void}
	if onClass != nil {
		handlers = append(handlers, onClass)
	}
	m.extended = extendedresourcecache.NewExtendedResourceCache(klog.Background(), handlers...)
	reg, err = f.Resource().V1().DeviceClasses().Informer().AddEventHandler(m.extended)
	if err != nil {
		slices.Stop()
		return nil, fmt.Errorf("watch deviceclasses: %w", err)
	}
	m.registrations = append(m.registrations, reg)
	var onSlices toolscache.ResourceEventHandler = void
	if onSlice != nil {
		onSlices = toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				void.OnAdd(obj, false)
				onSlice.OnAdd(obj, false)
			},
			UpdateFunc: func(oldObj, newObj any) {
				void.OnUpdate(oldObj, newObj)
				onSlice.OnUpdate(oldObj, newObj)
			},
			DeleteFunc: func(obj any) {
				void.OnDelete(obj)
				onSlice.OnDelete(obj)
			},
		}
	}
	reg, err = slices.AddEventHandler(onSlices)
	if err != nil {
		slices.Stop()
		return nil, fmt.Errorf("watch resourceslices: %w", err)
	}
	m.registrations = append(m.registrations, reg)
	return m, nil
}

// Stop ends the work the manager runs of its own (the tracker's).
func (m *Manager) Stop() { m.slices.Stop() }

// Served reports whether the API server serves dynamic resource
// allocation.
func (m *Manager) Served() bool { return m.served }

// listSlices lists the ResourceSlices as the allocator sees them, taints
// of DeviceTaintRules included.
func (m *Manager) listSlices() ([]*resourceapi.ResourceSlice, error) {
	return m.slices.ListPatchedResourceSlices()
}

// Registrations are the manager's informer handlers, for the scheduler to
// wait until they have seen the initial lists.
func (m *Manager) Registrations() []toolscache.ResourceEventHandlerRegistration {
	return m.registrations
}

// GetDeviceClass returns the DeviceClass that serves resourceName as an
// extended resource, or nil.
func (m *Manager) GetDeviceClass(resourceName v1.ResourceName) *resourceapi.DeviceClass {
	return m.extended.GetDeviceClass(resourceName)
}

// Claim returns the claim as the scheduler sees it.
func (m *Manager) Claim(namespace, name string) (*resourceapi.ResourceClaim, error) {
	return m.claims.get(namespace, name)
}

// deviceClassLister adapts the informer's lister to the allocator's.
type deviceClassLister struct {
	l resourcelisters.DeviceClassLister
}

func (d deviceClassLister) Get(name string) (*resourceapi.DeviceClass, error) { return d.l.Get(name) }

func (d deviceClassLister) List() ([]*resourceapi.DeviceClass, error) {
	return d.l.List(labels.Everything())
}

// generatedClaims indexes the claims the scheduler made for extended
// resources by the pod that owns them, so PreFilter finds a pod's
// leftover claim without listing every claim (kube-scheduler lists them).
type generatedClaims struct {
	mu    sync.Mutex
	byPod map[types.UID]string
}

func (g *generatedClaims) claimChanged(oldClaim, newClaim *resourceapi.ResourceClaim) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if oldClaim != nil && isExtendedResourceClaim(oldClaim) {
		if owner := podOwner(oldClaim); owner != "" && g.byPod[owner] == oldClaim.Name {
			delete(g.byPod, owner)
		}
	}
	if newClaim != nil && isExtendedResourceClaim(newClaim) {
		if owner := podOwner(newClaim); owner != "" {
			g.byPod[owner] = newClaim.Name
		}
	}
}

// forPod returns the name of the extended-resource claim owned by the
// pod with uid, if any.
func (g *generatedClaims) forPod(uid types.UID) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	name, ok := g.byPod[uid]
	return name, ok
}
