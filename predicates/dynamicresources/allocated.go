package dynamicresources

import (
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// allocatedDevices is the set of devices taken, which the allocator must
// not hand out again: those of every allocated claim as the scheduler sees
// it (claimCache), and those of the allocations Reserve made and PreBind
// has not written yet (in flight). kube-scheduler rebuilds it for every
// pod; here it is kept up to date by counting: each source adds its
// devices once and takes them out once, and a device is taken while its
// count is positive, so a claim that is both in flight and, once written,
// allocated in the cache holds its devices once.
//
// The sets the allocator reads belong to the scheduling goroutine: changes
// from elsewhere (informer events, PreBind and Unreserve on bind workers)
// are logged under a mutex and applied by sync, which PreFilter calls, so
// that Filter's workers read sets nobody changes.
type allocatedDevices struct {
	mu      sync.Mutex
	pending []deviceChange

	// Owned by the scheduling goroutine.
	counts      map[structured.DeviceID]int
	sharedCount map[structured.SharedDeviceID]int
	state       structured.AllocatedState
	revision    int64
}

// deviceChange is an allocation's devices coming (+1) or going (-1).
type deviceChange struct {
	allocation *resourceapi.AllocationResult
	sign       int
}

func newAllocatedDevices() *allocatedDevices {
	return &allocatedDevices{
		counts:      map[structured.DeviceID]int{},
		sharedCount: map[structured.SharedDeviceID]int{},
		state: structured.AllocatedState{
			AllocatedDevices:         sets.New[structured.DeviceID](),
			AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
			AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
		},
	}
}

// claimChanged is the claim cache's handler: the old allocation's devices
// go, the new one's come. An allocation never changes once made, so
// mostly only its appearing and disappearing count; but an update seen
// after a relist may carry another claim under the same name (deleted and
// made again) or another allocation (deallocated and allocated anew while
// the watch was down), whose devices replace the old ones.
func (a *allocatedDevices) claimChanged(oldClaim, newClaim *resourceapi.ResourceClaim) {
	var before, after *resourceapi.AllocationResult
	if oldClaim != nil {
		before = oldClaim.Status.Allocation
	}
	if newClaim != nil {
		after = newClaim.Status.Allocation
	}
	if before == nil && after == nil || before != nil && after != nil && oldClaim.UID == newClaim.UID && (before == after || sameAllocation(before, after)) {
		return
	}
	a.mu.Lock()
	if before != nil {
		a.pending = append(a.pending, deviceChange{before, -1})
	}
	if after != nil {
		a.pending = append(a.pending, deviceChange{after, +1})
	}
	a.mu.Unlock()
}

// inFlight records an allocation Reserve made (+1) or that is no longer in
// flight (-1).
func (a *allocatedDevices) inFlight(allocation *resourceapi.AllocationResult, sign int) {
	a.mu.Lock()
	a.pending = append(a.pending, deviceChange{allocation, sign})
	a.mu.Unlock()
}

// sync applies the logged changes and returns the allocated state, its
// revision, which changes whenever the state does, and the changes it
// applied. Only the scheduling goroutine calls it; the state is read-only
// until its next call.
func (a *allocatedDevices) sync() (structured.AllocatedState, int64, []deviceChange) {
	a.mu.Lock()
	changes := a.pending
	a.pending = nil
	a.mu.Unlock()
	for _, ch := range changes {
		a.apply(ch)
	}
	if len(changes) > 0 {
		a.revision++
	}
	return a.state, a.revision, changes
}

func (a *allocatedDevices) apply(ch deviceChange) {
	for i := range ch.allocation.Devices.Results {
		r := &ch.allocation.Devices.Results[i]
		// Devices given with admin access stay free for others, as in
		// kube-scheduler.
		if ptr.Deref(r.AdminAccess, false) {
			continue
		}
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if r.ShareID != nil {
			sid := structured.MakeSharedDeviceID(id, r.ShareID)
			if bump(a.sharedCount, sid, ch.sign) {
				if ch.sign > 0 {
					a.state.AllocatedSharedDeviceIDs.Insert(sid)
				} else {
					a.state.AllocatedSharedDeviceIDs.Delete(sid)
				}
			}
			if r.ConsumedCapacity != nil {
				c := structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity)
				if ch.sign > 0 {
					a.state.AggregatedCapacity.Insert(c)
				} else {
					a.state.AggregatedCapacity.Remove(c)
				}
			}
			continue
		}
		if bump(a.counts, id, ch.sign) {
			if ch.sign > 0 {
				a.state.AllocatedDevices.Insert(id)
			} else {
				a.state.AllocatedDevices.Delete(id)
			}
		}
	}
}

// bump adds sign to m[k] and reports whether k became taken or free.
func bump[K comparable](m map[K]int, k K, sign int) bool {
	before := m[k]
	after := before + sign
	if after <= 0 {
		delete(m, k)
	} else {
		m[k] = after
	}
	return (before > 0) != (after > 0)
}

// inFlightAllocations are the allocations Reserve made and PreBind has not
// written yet, by claim UID, with how many pods (sharing the claim) wait
// on each.
type inFlightAllocations struct {
	mu     sync.Mutex
	claims map[types.UID]*inFlightClaim
	// devices learns of each allocation's first sharer and last.
	devices *allocatedDevices
}

type inFlightClaim struct {
	claim   *resourceapi.ResourceClaim
	sharers int
}

// signal records claim (with its new allocation) as in flight, or one
// more pod waiting on it.
func (f *inFlightAllocations) signal(claim *resourceapi.ResourceClaim) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.claims[claim.UID]; ok {
		c.sharers++
		return
	}
	f.claims[claim.UID] = &inFlightClaim{claim: claim, sharers: 1}
	f.devices.inFlight(claim.Status.Allocation, +1)
}

// pending returns the allocation in flight for the claim, or nil.
func (f *inFlightAllocations) pending(uid types.UID) *resourceapi.AllocationResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.claims[uid]; ok {
		return c.claim.Status.Allocation
	}
	return nil
}

// maybeRemove drops one pod's interest in the claim's allocation in
// flight, or all of it with force, and reports whether the allocation is
// no longer in flight.
func (f *inFlightAllocations) maybeRemove(uid types.UID, force bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.claims[uid]
	if !ok {
		return false
	}
	if !force && c.sharers > 1 {
		c.sharers--
		return false
	}
	delete(f.claims, uid)
	f.devices.inFlight(c.claim.Status.Allocation, -1)
	return true
}
