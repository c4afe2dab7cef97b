// Package dynamicresources is the DynamicResources plugin: pods that ask
// for devices through ResourceClaims (dynamic resource allocation,
// resource.k8s.io/v1) are placed where their claims can be allocated, and
// the allocation is written to the claims before the pod is bound, as
// kube-scheduler v1.37 does it:
//
//	PreEnqueue  the pod waits until its claims exist
//	PreFilter   look up the claims; one allocator per pod over the devices
//	            the cluster's ResourceSlices publish, minus those taken
//	Filter      can the claims be allocated from this node's devices (and
//	            the network-attached ones)? (k8s.io/dynamic-resource-
//	            allocation's structured allocator: CEL selectors,
//	            constraints, prioritized lists, admin access, taints,
//	            partitionable devices, consumable capacity); the answer is
//	            kept for the next pod with alike claims until the node's
//	            devices change (answers.go)
//	PostFilter  deallocate a claim that is allocated but unusable and not
//	            in use, so the next attempt can allocate it anew
//	Score       prefer the nodes that give the earlier choices of a
//	            prioritized list
//	Reserve     the allocation is in flight: the next cycles see its
//	            devices taken
//	PreBind     write status.allocation and status.reservedFor, and wait
//	            for the devices' binding conditions
//
// Extended resources a DeviceClass serves (a container's example.com/gpu:
// 1) are allocated through a claim the plugin makes for the pod.
//
// The allocator and the CEL environment are the library's; the claim cache,
// the devices taken and the allocations in flight are the Manager's.
package dynamicresources

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Name is the plugin's name.
const Name = "DynamicResources"

// stateKey is where PreFilter leaves what the rest of the cycle needs.
const stateKey framework.StateKey = Name

// features are the allocator's features kube-scheduler v1.37 turns on by
// default: admin access and prioritized lists (GA), partitionable
// devices, device taints, binding conditions with device status, and
// consumable capacity (beta, on).
var features = structured.Features{
	AdminAccess:            true,
	PrioritizedList:        true,
	PartitionableDevices:   true,
	DeviceTaints:           true,
	DeviceBindingAndStatus: true,
	ConsumableCapacity:     true,
}

// ErrNotServed is why a pod with claims is not placed when the API server
// does not serve dynamic resource allocation.
var ErrNotServed = errors.New("the API server does not serve resource.k8s.io/v1 (dynamic resource allocation is off): the pod's resource claims cannot be allocated")

// The errors of waiting for binding conditions.
var (
	ErrDeviceBindingTimeout = errors.New("device binding timeout")
	ErrDeviceBindingFailed  = errors.New("device binding failed")
)

// DynamicResources is the plugin; see the package comment.
type DynamicResources struct {
	m        *Manager
	client   kubernetes.Interface
	handle   framework.Handle
	celCache *cel.Cache
	classes  deviceClassLister

	filterTimeout  time.Duration
	bindingTimeout time.Duration

	// background runs the API writes PostFilter decides on, off the
	// scheduling cycle.
	background chan func(context.Context)
	// backgroundRetry spaces the attempts of a background write.
	backgroundRetry wait.Backoff
	// stopped is closed when Run returns: a failed write is then not
	// tried again, nor written by a scheduler that stopped leading.
	stopped     chan struct{}
	stoppedOnce sync.Once
	// deallocating are the claims whose deallocation is under way.
	deallocMu    sync.Mutex
	deallocating sets.Set[string]
}

var (
	_ framework.PreEnqueuePlugin = &DynamicResources{}
	_ framework.PreFilterPlugin  = &DynamicResources{}
	_ framework.FilterPlugin     = &DynamicResources{}
	_ framework.PostFilterPlugin = &DynamicResources{}
	_ framework.ScorePlugin      = &DynamicResources{}
	_ framework.ScoreExtensions  = &DynamicResources{}
	_ framework.ReservePlugin    = &DynamicResources{}
	_ framework.PreBindPlugin    = &DynamicResources{}
	_ framework.BackgroundPlugin = &DynamicResources{}
)

// New builds the plugin over the scheduler's DRA manager (h's
// SharedDRAManager), which must be a *Manager.
func New(args *Args, h framework.Handle) (*DynamicResources, error) {
	if err := ValidateArgs(args); err != nil {
		return nil, err
	}
	var m *Manager
	if h != nil {
		m, _ = h.SharedDRAManager().(*Manager)
	}
	if m == nil {
		return nil, errors.New("the scheduler has no DRA manager (it runs without informers)")
	}
	return &DynamicResources{
		m:               m,
		client:          h.ClientSet(),
		handle:          h,
		celCache:        cel.NewCache(10, cel.Features{EnableConsumableCapacity: true}),
		classes:         deviceClassLister{m.classes},
		filterTimeout:   args.FilterTimeout.Duration,
		bindingTimeout:  args.BindingTimeout.Duration,
		background:      make(chan func(context.Context), 64),
		stopped:         make(chan struct{}),
		backgroundRetry: defaultBackgroundRetry,
		deallocating:    sets.New[string](),
	}, nil
}

// Name returns Name.
func (*DynamicResources) Name() string { return Name }

// stateData is what PreFilter found out, for the rest of the cycle. The
// claims are the cache's objects: never changed, only replaced.
type stateData struct {
	// claims are the pod's claims in pod.spec.resourceClaims order, then
	// the claim for its DRA-served extended resources, if it has any.
	claims []*resourceapi.ResourceClaim
	// numUser is the number of the pod's own claims.
	numUser int
	// extended is set when the pod asks for extended resources a
	// DeviceClass serves.
	extended *extendedRequest
	// info is parallel to claims.
	info []claimInfo
	// allocate is set when a claim needs an allocation.
	allocate bool
	// prioritized is set when a claim has a prioritized list, the only
	// requests Score tells nodes apart by.
	prioritized bool
	// sig signs the claims to allocate, for the allocator's answers kept
	// per node (answers.go); "" when they are not kept for this pod.
	// epoch and revision are those of the slices and devices taken the
	// allocator is built over.
	sig      string
	epoch    uint64
	revision int64
	// The allocator over slices and the devices taken (allocated), built
	// by the first Filter that finds no answer kept: in a backlog most
	// cycles find one for every node but the few that changed.
	slices        []*resourceapi.ResourceSlice
	allocated     structured.AllocatedState
	allocatorOnce sync.Once
	allocator     structured.Allocator
	allocatorErr  error

	mu sync.Mutex
	// unavailable are the indexes of allocated claims that a node could
	// not use (Filter), for PostFilter.
	unavailable sets.Set[int]
	// nodeAllocations are Filter's allocations, by node.
	nodeAllocations map[string]*nodeAllocation
}

// Clone returns d: preemption's what-if copies share it, as in
// kube-scheduler (Filter writes to it under mu).
func (d *stateData) Clone() framework.StateData { return d }

// claimInfo is what the cycle knows of one claim.
type claimInfo struct {
	// availableOnNodes is an allocated claim's node selector; nil when the
	// allocation is usable on every node.
	availableOnNodes *framework.NodeSelector
	// allocation is Reserve's allocation for an unallocated claim.
	allocation *resourceapi.AllocationResult
}

// nodeAllocation is what Filter allocated on one node.
type nodeAllocation struct {
	results []resourceapi.AllocationResult
	// extendedClaim is the claim for the pod's extended resources on this
	// node, with its requests; nil when the node serves none through DRA.
	extendedClaim *resourceapi.ResourceClaim
	mappings      []v1.ContainerExtendedResourceRequest
}

func (d *stateData) empty() bool { return len(d.claims) == 0 }

// extendedClaim returns the claim for extended resources, or nil.
func (d *stateData) extendedClaim() *resourceapi.ResourceClaim {
	if len(d.claims) > d.numUser {
		return d.claims[d.numUser]
	}
	return nil
}

func readState(cs *framework.CycleState) (*stateData, error) {
	return framework.ReadAs[*stateData](cs, stateKey)
}

// unresolvable is the status of every DRA rejection: kube-scheduler's
// plugin rejects only with UnschedulableAndUnresolvable, so preemption
// never evicts pods for devices.
func unresolvable(reason string) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, reason)
}

// PreEnqueue holds the pod back until every claim it names exists (and a
// claim made from a template for it is owned by it and recorded in its
// status), as kube-scheduler does.
//
// When the API server does not serve dynamic resource allocation, the
// claims can never appear: the pod goes on to PreFilter, which says why
// it cannot be placed.
func (pl *DynamicResources) PreEnqueue(_ context.Context, pod *v1.Pod) *framework.Status {
	if len(pod.Spec.ResourceClaims) == 0 || !pl.m.Served() {
		return nil
	}
	if err := pl.foreachPodClaim(pod, nil); err != nil {
		return unresolvable(err.Error())
	}
	return nil
}

// foreachPodClaim calls cb for each of the pod's claims, as the scheduler
// sees it, or fails with kube-scheduler's error for the first claim that
// is not there yet, is being deleted, or belongs to someone else.
func (pl *DynamicResources) foreachPodClaim(pod *v1.Pod, cb func(claim *resourceapi.ResourceClaim)) error {
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return err
		}
		if name == nil {
			// The template says the pod does not need this claim.
			continue
		}
		claim, err := pl.m.claims.get(pod.Namespace, *name)
		if err != nil {
			return err
		}
		if claim.DeletionTimestamp != nil {
			return fmt.Errorf("resourceclaim %q is being deleted", claim.Name)
		}
		if mustCheckOwner {
			if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
				return err
			}
		}
		if cb != nil {
			cb(claim)
		}
	}
	return nil
}

// PreFilter looks up the pod's claims, checks that the classes of those to
// allocate exist, and takes in the devices taken since the last cycle,
// over which, with the cluster's slices, Filter builds the allocator when
// it first needs it. It returns Skip for a pod without claims or
// DRA-served extended resources.
func (pl *DynamicResources) PreFilter(_ context.Context, cs *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	s := &stateData{}
	// Written first, as kube-scheduler does: PostFilter then always finds
	// a state, even for a pod PreFilter turned away.
	cs.Write(stateKey, s)
	if len(pod.Spec.ResourceClaims) > 0 && !pl.m.Served() {
		return nil, unresolvable(ErrNotServed.Error())
	}
	var claims []*resourceapi.ResourceClaim
	if len(pod.Spec.ResourceClaims) > 0 {
		if err := pl.foreachPodClaim(pod, func(c *resourceapi.ResourceClaim) { claims = append(claims, c) }); err != nil {
			return nil, unresolvable(err.Error())
		}
	}
	s.numUser = len(claims)
	if ext := pl.extendedRequestOf(pod); ext != nil {
		s.extended = ext
		claims = append(claims, ext.claim)
	}
	if len(claims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}

	s.info = make([]claimInfo, len(claims))
	toAllocate := 0
	for i, claim := range claims {
		if alloc := claim.Status.Allocation; alloc != nil {
			if alloc.NodeSelector != nil {
				sel := framework.NewNodeSelector(alloc.NodeSelector)
				if err := sel.Err(); err != nil {
					return nil, framework.AsStatus(err)
				}
				s.info[i].availableOnNodes = sel
			}
			continue
		}
		toAllocate++
		if pl.m.inFlight.pending(claim.UID) != nil {
			return nil, unresolvable(fmt.Sprintf("resource claim %s/%s is in the process of being allocated", claim.Namespace, claim.Name))
		}
		if i >= s.numUser {
			continue // the claim for extended resources names its classes itself
		}
		for _, req := range claim.Spec.Devices.Requests {
			switch {
			case req.Exactly != nil:
				if st := pl.checkClass(req.Exactly.DeviceClassName, req.Name); st != nil {
					return nil, st
				}
			case len(req.FirstAvailable) > 0:
				for _, sub := range req.FirstAvailable {
					if st := pl.checkClass(sub.DeviceClassName, req.Name+"/"+sub.Name); st != nil {
						return nil, st
					}
				}
			default:
				return nil, unresolvable(fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, req.Name))
			}
		}
	}
	if toAllocate > 0 {
		slices, epoch, err := pl.m.answers.slices(func() ([]*resourceapi.ResourceSlice, error) {
			return pl.m.listSlices()
		})
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		allocated, revision, changes := pl.m.devices.sync()
		pl.m.answers.touch(changes, revision, slices, epoch)
		s.allocate, s.slices, s.allocated, s.revision = true, slices, allocated, revision
		s.nodeAllocations = make(map[string]*nodeAllocation, len(nodes))
		if s.extended == nil {
			// A claim for extended resources differs from node to node:
			// its answers are not kept.
			s.sig, s.epoch = claimsSignature(claims), epoch
		}
	}
	for _, claim := range claims {
		for _, req := range claim.Spec.Devices.Requests {
			s.prioritized = s.prioritized || len(req.FirstAvailable) > 0
		}
	}
	s.claims = claims
	return nil, nil
}

// getAllocator returns the cycle's allocator, built on first use.
func (pl *DynamicResources) getAllocator(ctx context.Context, s *stateData) (structured.Allocator, error) {
	s.allocatorOnce.Do(func() {
		s.allocator, s.allocatorErr = structured.NewAllocator(ctx, features, s.allocated, pl.classes, s.slices, pl.celCache)
	})
	return s.allocator, s.allocatorErr
}

// claimsSignature encodes the specs of the claims to allocate, in order:
// all the allocator reads of them but for their names, which it uses only
// in errors.
func claimsSignature(claims []*resourceapi.ResourceClaim) string {
	var sig []byte
	for _, claim := range claims {
		if claim.Status.Allocation != nil {
			continue
		}
		spec, err := claim.Spec.Marshal()
		if err != nil {
			return ""
		}
		sig = binary.AppendUvarint(sig, uint64(len(spec)))
		sig = append(sig, spec...)
	}
	return string(sig)
}

// checkClass rejects a request whose DeviceClass does not exist, with
// kube-scheduler's reasons.
func (pl *DynamicResources) checkClass(className, request string) *framework.Status {
	if className == "" {
		return framework.AsStatus(fmt.Errorf("request %s: unsupported request type", request))
	}
	if _, err := pl.classes.Get(className); apierrors.IsNotFound(err) {
		return unresolvable(fmt.Sprintf("request %s: device class %s does not exist", request, className))
	}
	return nil
}

// Filter admits the node when every allocated claim's allocation is usable
// there (its node selector matches, its binding did not fail or time out)
// and the allocator allocates the others from the node's devices.
func (pl *DynamicResources) Filter(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := readState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.empty() {
		return nil
	}
	node := nodeInfo.Node()
	nodeClaim, mappings, st := pl.filterExtended(s, nodeInfo)
	if st != nil {
		return st
	}
	if nodeClaim == nil && s.numUser == 0 {
		// The node serves the pod's extended resources itself (a device
		// plugin): NodeResourcesFit decides.
		return nil
	}
	var unavailable []int
	for i, claim := range s.claims {
		if sel := s.info[i].availableOnNodes; sel != nil && !sel.Match(node) {
			unavailable = append(unavailable, i)
			continue
		}
		if claim.Status.Allocation == nil {
			continue
		}
		if ready, err := claimReadyForBinding(claim); err != nil || (!ready && pl.claimTimedOut(claim)) {
			unavailable = append(unavailable, i)
		}
	}

	var na *nodeAllocation
	if s.allocate {
		var st *framework.Status
		if na, st = pl.allocateOn(ctx, s, nodeInfo, nodeClaim, mappings); st != nil {
			return st
		}
	}
	if !s.allocate && len(unavailable) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(unavailable) > 0 {
		if s.unavailable == nil {
			s.unavailable = sets.New[int]()
		}
		s.unavailable.Insert(unavailable...)
		return statusNotAvailable
	}
	s.nodeAllocations[node.Name] = na
	return nil
}

// allocateOn allocates the claims that need it from the devices the node
// reaches (the claim for extended resources as nodeClaim), or gives the
// answer kept for the node (answers.go).
func (pl *DynamicResources) allocateOn(ctx context.Context, s *stateData, nodeInfo *framework.NodeInfo, nodeClaim *resourceapi.ResourceClaim, mappings []v1.ContainerExtendedResourceRequest) (*nodeAllocation, *framework.Status) {
	node := nodeInfo.Node()
	keep := s.sig != "" && nodeInfo.Generation != 0
	if keep {
		if na, ok := pl.m.answers.get(node.Name, nodeInfo.Generation, s.sig, s.epoch, s.revision); ok {
			switch {
			case ctx.Err() != nil:
				// What the allocator would have said.
				return nil, unresolvable(fmt.Sprintf("asked by caller to stop allocating devices: %v", context.Cause(ctx)))
			case na == nil:
				return nil, statusCannotAllocate
			}
			return na, nil
		}
	}
	allocator, err := pl.getAllocator(ctx, s)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	allocCtx := ctx
	if pl.filterTimeout > 0 {
		c, cancel := context.WithTimeout(ctx, pl.filterTimeout)
		defer cancel()
		allocCtx = c
	}
	toAllocate := make([]*resourceapi.ResourceClaim, 0, len(s.claims))
	ext := s.extendedClaim()
	for _, claim := range s.claims {
		if claim.Status.Allocation != nil {
			continue
		}
		if claim == ext && nodeClaim != nil {
			claim = nodeClaim
		}
		toAllocate = append(toAllocate, claim)
	}
	results, err := allocator.Allocate(allocCtx, node, toAllocate)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil, framework.AsStatus(fmt.Errorf("node %s: timed out trying to allocate devices", node.Name))
	case errors.Is(err, structured.ErrFailedAllocationOnNode):
		return nil, unresolvable(err.Error())
	case ctx.Err() != nil:
		return nil, unresolvable(fmt.Sprintf("asked by caller to stop allocating devices: %v", context.Cause(ctx)))
	case err != nil:
		return nil, framework.AsStatus(err)
	}
	var na *nodeAllocation
	if len(results) == len(toAllocate) {
		na = &nodeAllocation{results: results, extendedClaim: nodeClaim, mappings: mappings}
	}
	if keep && allocCtx.Err() == nil {
		pl.m.answers.put(node.Name, nodeInfo.Generation, s.sig, s.epoch, s.revision, na)
	}
	if na == nil {
		return nil, statusCannotAllocate
	}
	return na, nil
}

// The shared statuses of the common rejections.
var (
	statusCannotAllocate = unresolvable("cannot allocate all claims")
	statusNotAvailable   = unresolvable("resourceclaim not available on the node")
)

// Score prefers the nodes where the claims get the earlier subrequests of
// their prioritized lists: the first of a list scores 8, the next 7, and
// so on, summed over the requests and claims (kube-scheduler's score).
func (pl *DynamicResources) Score(_ context.Context, cs *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := readState(cs)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	if s.empty() || !s.prioritized {
		return 0, nil
	}
	s.mu.Lock()
	alloc, ok := s.nodeAllocations[nodeInfo.NodeName()]
	s.mu.Unlock()
	if !ok {
		return 0, nil
	}
	score, err := prioritizedScore(s.claims, alloc.results)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	return score, nil
}

func prioritizedScore(claims []*resourceapi.ResourceClaim, results []resourceapi.AllocationResult) (int64, error) {
	var score int64
	next := 0
	for _, claim := range claims {
		alloc := claim.Status.Allocation
		if alloc == nil {
			if next >= len(results) {
				return 0, fmt.Errorf("number of allocations %d is smaller than number of claims needing allocation", len(results))
			}
			alloc = &results[next]
			next++
		}
		var picked []string
		for _, r := range alloc.Devices.Results {
			if resourceclaim.IsSubRequestRef(r.Request) {
				picked = append(picked, r.Request)
			}
		}
		for _, req := range claim.Spec.Devices.Requests {
			if req.Exactly != nil {
				continue
			}
			for i, sub := range req.FirstAvailable {
				ref := resourceclaim.CreateSubRequestRef(req.Name, sub.Name)
				for _, p := range picked {
					if p == ref {
						score += int64(resourceapi.FirstAvailableDeviceRequestMaxSize - i)
						break
					}
				}
			}
		}
	}
	return score, nil
}

// ScoreExtensions returns the plugin: scores are normalized.
func (pl *DynamicResources) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales the scores to 0..100 by the highest, as
// kube-scheduler's default normalization does; all zero stay zero.
func (pl *DynamicResources) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	var highest int64
	for i := range scores {
		highest = max(highest, scores[i].Score)
	}
	if highest == 0 {
		return nil
	}
	for i := range scores {
		scores[i].Score = framework.MaxNodeScore * scores[i].Score / highest
	}
	return nil
}

// claimReadyForBinding reports whether every allocated device that has
// binding conditions has them all true in the claim's status, and fails
// when one of its binding failure conditions is true.
func claimReadyForBinding(claim *resourceapi.ResourceClaim) (bool, error) {
	if claim.Status.Allocation == nil {
		return false, nil
	}
	for i := range claim.Status.Allocation.Devices.Results {
		r := &claim.Status.Allocation.Devices.Results[i]
		if len(r.BindingConditions) == 0 {
			continue
		}
		status := deviceStatus(claim, r)
		if status == nil {
			return false, nil
		}
		for _, cond := range r.BindingFailureConditions {
			if c := apimeta.FindStatusCondition(status.Conditions, cond); c != nil && c.Status == metav1.ConditionTrue {
				return false, fmt.Errorf("%w: claim=%s, reason=%s, message=%q", ErrDeviceBindingFailed, claim.Name, c.Reason, c.Message)
			}
		}
		for _, cond := range r.BindingConditions {
			if !apimeta.IsStatusConditionTrue(status.Conditions, cond) {
				return false, nil
			}
		}
	}
	return true, nil
}

// claimTimedOut reports whether a device of the claim with binding
// conditions was allocated longer than the binding timeout ago.
func (pl *DynamicResources) claimTimedOut(claim *resourceapi.ResourceClaim) bool {
	alloc := claim.Status.Allocation
	if alloc == nil || alloc.AllocationTimestamp == nil {
		return false
	}
	for _, r := range alloc.Devices.Results {
		if r.BindingConditions != nil && alloc.AllocationTimestamp.Add(pl.bindingTimeout).Before(time.Now()) {
			return true
		}
	}
	return false
}

// deviceStatus returns the claim's status entry of the result's device
// (by driver, pool and device, as kube-scheduler finds it).
func deviceStatus(claim *resourceapi.ResourceClaim, r *resourceapi.DeviceRequestAllocationResult) *resourceapi.AllocatedDeviceStatus {
	for i := range claim.Status.Devices {
		d := &claim.Status.Devices[i]
		if d.Driver == r.Driver && d.Pool == r.Pool && d.Device == r.Device {
			return d
		}
	}
	return nil
}

// isExtendedResourceClaim reports whether the scheduler made claim for a
// pod's extended resources.
func isExtendedResourceClaim(claim *resourceapi.ResourceClaim) bool {
	return claim.Annotations[resourceapi.ExtendedResourceClaimAnnotation] == "true"
}
