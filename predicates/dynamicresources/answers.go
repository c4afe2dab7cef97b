package dynamicresources

// The allocator's answers kept per node. In a backlog the pods are mostly
// alike (the replicas of a workload, each with a claim from the same
// template), and every cycle asks the allocator about every node it
// filters, although between two cycles the devices of only one node (the
// one the last pod took) changed. An answer for a node is a function of
// the claims' specs, the node, the ResourceSlices and DeviceClasses, and
// the devices taken among those the node can reach; so it is kept, per
// node, under a signature of the claims' specs, and given again while
// none of the others changed:
//
//	the node      its NodeInfo's Generation, which the cache changes on
//	              every change of the node or its pods
//	slices and    an epoch, which every ResourceSlice and DeviceClass
//	classes       event of the informers moves on, voiding every answer
//	devices       the revision of the devices taken (allocatedDevices) the
//	taken         answer was computed at; each change of a device taken
//	              marks the node of its pool as touched at the revision it
//	              makes, or every node when the pool is not one node's
//
// kube-scheduler asks the allocator again for every pod and node; the
// answers given here are the ones it would compute, since the allocator is
// deterministic (pools sorted, slices by name) and reads nothing of a
// claim but its spec (its name only in errors, which are not kept). Kept
// are allocations and "cannot allocate"; errors, time-outs and
// allocations with a share ID (consumable capacity: each allocation gets
// a fresh one) are computed every time.

import (
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

// allocatorAnswers are the answers by node name. Filter workers read and
// write them concurrently, so everything is under mu; the critical
// sections are a map lookup.
type allocatorAnswers struct {
	mu    sync.Mutex
	epoch uint64
	nodes map[string]*nodeAnswer
	// touchedAll is the last revision that changed a device that is not
	// one node's (a network-attached pool, or one the index does not
	// know): every answer computed before it is void.
	touchedAll int64
	// pools maps a pool (driver/pool) to the node whose slices publish it
	// all, "" for a pool that is not one node's; built from the slices of
	// poolsEpoch.
	pools      map[string]string
	poolsEpoch uint64
	// sliceList are the slices listed in sliceEpoch.
	sliceList  []*resourceapi.ResourceSlice
	sliceEpoch uint64
}

// nodeAnswer is one node's answer and when it stops holding.
type nodeAnswer struct {
	// touched is the last revision of the devices taken that changed one
	// the node reaches.
	touched int64
	// The answer is valid for claims of signature sig, on the node with
	// Generation gen, in epoch, computed at revision rev.
	valid bool
	sig   string
	gen   int64
	epoch uint64
	rev   int64
	alloc *nodeAllocation // nil: cannot allocate
}

func newAllocatorAnswers() *allocatorAnswers {
	return &allocatorAnswers{nodes: map[string]*nodeAnswer{}}
}

// slices returns the ResourceSlices and the epoch they belong to: those
// list returned in this epoch, listed again only in a new one. The epoch
// is read before the list is made, so that an answer filed under it is
// computed from slices at least that new. The list is shared: never
// change it.
func (a *allocatorAnswers) slices(list func() ([]*resourceapi.ResourceSlice, error)) ([]*resourceapi.ResourceSlice, uint64, error) {
	a.mu.Lock()
	epoch, listed := a.epoch, a.sliceList
	if a.sliceEpoch != epoch {
		listed = nil
	}
	a.mu.Unlock()
	if listed != nil {
		return listed, epoch, nil
	}
	listed, err := list()
	if err != nil {
		return nil, 0, err
	}
	a.mu.Lock()
	if a.epoch == epoch {
		a.sliceList, a.sliceEpoch = listed, epoch
	}
	a.mu.Unlock()
	return listed, epoch, nil
}

// void voids every answer: a ResourceSlice or DeviceClass changed.
func (a *allocatorAnswers) void() {
	a.mu.Lock()
	a.epoch++
	a.pools, a.sliceList = nil, nil
	clear(a.nodes)
	a.mu.Unlock()
}

// touch records that changes, applied at revision rev, changed the
// devices taken: the nodes of their pools get answers anew, every node
// when a pool is not one node's. slices are those PreFilter listed after
// reading epoch.
func (a *allocatorAnswers) touch(changes []deviceChange, rev int64, slices []*resourceapi.ResourceSlice, epoch uint64) {
	if len(changes) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pools == nil || a.poolsEpoch != epoch {
		a.pools, a.poolsEpoch = poolNodes(slices), epoch
	}
	for _, ch := range changes {
		for i := range ch.allocation.Devices.Results {
			r := &ch.allocation.Devices.Results[i]
			node := a.pools[r.Driver+"/"+r.Pool]
			if node == "" {
				a.touchedAll = rev
				return
			}
			e := a.nodes[node]
			if e == nil {
				e = &nodeAnswer{}
				a.nodes[node] = e
			}
			e.touched = rev
		}
	}
}

// poolNodes maps each pool to the node all its slices are on, or "" when
// one of them is not a single node's.
func poolNodes(slices []*resourceapi.ResourceSlice) map[string]string {
	pools := make(map[string]string, len(slices))
	for _, s := range slices {
		key := s.Spec.Driver + "/" + s.Spec.Pool.Name
		node := ptr.Deref(s.Spec.NodeName, "")
		if s.Spec.NodeSelector != nil || ptr.Deref(s.Spec.AllNodes, false) || ptr.Deref(s.Spec.PerDeviceNodeSelection, false) {
			node = ""
		}
		if prev, seen := pools[key]; seen && prev != node {
			node = ""
		}
		pools[key] = node
	}
	return pools
}

// get returns the answer kept for claims of signature sig on node with
// generation gen, for a cycle in epoch whose allocator holds the devices
// taken as of revision rev: the allocation, or nil for "cannot allocate";
// and whether there was one. The allocation is shared: never change it.
func (a *allocatorAnswers) get(node string, gen int64, sig string, epoch uint64, rev int64) (*nodeAllocation, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.nodes[node]
	if e == nil || !e.valid || e.gen != gen || e.epoch != epoch || e.sig != sig ||
		e.rev < e.touched || e.rev < a.touchedAll || e.rev > rev {
		return nil, false
	}
	return e.alloc, true
}

// put keeps the answer computed for claims of signature sig on node with
// generation gen, in epoch, with the devices taken as of revision rev:
// alloc, nil for "cannot allocate". Answers computed before the node was
// last touched, or in an epoch gone, are not kept.
func (a *allocatorAnswers) put(node string, gen int64, sig string, epoch uint64, rev int64, alloc *nodeAllocation) {
	if alloc != nil && (alloc.extendedClaim != nil || hasShareID(alloc.results)) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if epoch != a.epoch || rev < a.touchedAll {
		return
	}
	e := a.nodes[node]
	if e == nil {
		e = &nodeAnswer{}
		a.nodes[node] = e
	}
	if rev < e.touched {
		return
	}
	e.valid, e.sig, e.gen, e.epoch, e.rev, e.alloc = true, sig, gen, epoch, rev, alloc
}

func hasShareID(results []resourceapi.AllocationResult) bool {
	for i := range results {
		for _, r := range results[i].Devices.Results {
			if r.ShareID != nil {
				return true
			}
		}
	}
	return false
}
