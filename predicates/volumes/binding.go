package volumes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"

	"github.com/yardmaster-io/yardmaster/framework"
)

// BindingName is the name of the VolumeBinding plugin.
const BindingName = "VolumeBinding"

// The reasons VolumeBinding rejects with, kube-scheduler v1.37's.
const (
	// ReasonUnboundImmediateClaims is given by PreFilter when a claim that
	// binds immediately (no StorageClass, an Immediate one, or a claim
	// pre-bound to a volume) is not bound yet: the PV controller has to
	// bind it first.
	ReasonUnboundImmediateClaims = "pod has unbound immediate PersistentVolumeClaims"
	// ReasonVolumeNodeAffinityConflict is given for a node that a bound
	// PersistentVolume's spec.nodeAffinity excludes.
	ReasonVolumeNodeAffinityConflict = "node(s) didn't match PersistentVolume's node affinity"
	// ReasonVolumeBindConflict is given for a node where an unbound
	// WaitForFirstConsumer claim finds no available volume and cannot be
	// provisioned either.
	ReasonVolumeBindConflict = "node(s) didn't find available persistent volumes to bind"
	// ReasonNotEnoughStorage is given for a node where a claim would be
	// provisioned but no CSIStorageCapacity the node can reach has room.
	ReasonNotEnoughStorage = "node(s) did not have enough free storage"
	// ReasonBoundVolumeMissing is given when a bound claim's volume does
	// not exist.
	ReasonBoundVolumeMissing = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

// volumeBindingStateKey is where PreFilter leaves the pod's claims.
const volumeBindingStateKey framework.StateKey = "PreFilter" + BindingName

// Binding is the VolumeBinding plugin: it places pods with
// PersistentVolumeClaims and binds their volumes, as kube-scheduler's
// plugin does:
//
//   - PreFilter reads the pod's claims: each must exist (and a generic
//     ephemeral volume's be the pod's), and an unbound one must be of a
//     WaitForFirstConsumer class; an unbound Immediate claim leaves the pod
//     pending until the PV controller binds it.
//   - Filter admits a node when every bound claim's volume allows it by
//     its node affinity, and every unbound claim either finds an available
//     volume there (the smallest that fits; no volume twice for one pod)
//     or can be provisioned there (the class's allowedTopologies and, when
//     its CSI driver publishes it, CSIStorageCapacity).
//   - Reserve assumes the chosen volumes bound to their claims, and the
//     claims to provision annotated with the node, in the volume cache:
//     later cycles see them taken. Unreserve takes that back.
//   - PreBind writes them (the volume's claimRef; the claim's
//     volume.kubernetes.io/selected-node annotation, which the
//     provisioner acts on) and waits until the PV controller reports every
//     claim bound, or BindTimeoutSeconds runs out.
//   - Score rates each node by how full the pod's claims would leave the
//     volumes it gets there (the chosen volumes, or the CSIStorageCapacity
//     it would be provisioned from), through BindingArgs.Shape: by
//     default the emptier the better, as kube-scheduler v1.37 scores with
//     its StorageCapacityScoring gate (beta, on by default).
type Binding struct {
	listers storageListers
	cache   *volumeCache
	nodes   corelisters.NodeLister
	client  kubernetes.Interface
	handle  framework.Handle
	// bindTimeout bounds PreBind's wait.
	bindTimeout time.Duration
	// shape scores nodes.
	shape framework.Shape
	// translator reads in-tree volumes as CSI ones, on the nodes that
	// migrated their plugin.
	translator csitrans.CSITranslator
}

var (
	_ framework.PreFilterPlugin = &Binding{}
	_ framework.FilterPlugin    = &Binding{}
	_ framework.PreScorePlugin  = &Binding{}
	_ framework.ScorePlugin     = &Binding{}
	_ framework.ReservePlugin   = &Binding{}
	_ framework.PreBindPlugin   = &Binding{}
)

// NewBinding returns the plugin, reading claims, volumes, classes,
// CSI drivers and capacities through h's informers (it registers its
// handlers on the PV and PVC informers, so call it before the factory
// starts) and writing through h's client.
func NewBinding(args *BindingArgs, h framework.Handle) (*Binding, error) {
	if err := ValidateBindingArgs(args); err != nil {
		return nil, err
	}
	timeout := int64(600)
	if args.BindTimeoutSeconds != nil {
		timeout = *args.BindTimeoutSeconds
	}
	pl := &Binding{
		listers:     newStorageListers(h),
		handle:      h,
		bindTimeout: time.Duration(timeout) * time.Second,
		translator:  csitrans.New(),
	}
	shape := args.Shape
	if shape == nil {
		// Unset stands for the default, as a nil timeout does.
		shape = DefaultBindingShape()
	}
	pl.shape = framework.NewShape(shape)
	pl.cache = newVolumeCache(pl.listers)
	if h != nil {
		pl.client = h.ClientSet()
		if f := h.SharedInformerFactory(); f != nil {
			pl.nodes = f.Core().V1().Nodes().Lister()
			if _, err := f.Core().V1().PersistentVolumes().Informer().AddEventHandler(pl.cache.handlers(pl.cache.volumeChanged)); err != nil {
				return nil, fmt.Errorf("watch persistentvolumes: %w", err)
			}
			if _, err := f.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(pl.cache.handlers(pl.cache.claimChanged)); err != nil {
				return nil, fmt.Errorf("watch persistentvolumeclaims: %w", err)
			}
		}
	}
	return pl, nil
}

// Name returns BindingName.
func (*Binding) Name() string { return BindingName }

// volumeBindingState is what PreFilter found out about the pod's claims,
// for Filter, Score and the binding cycle. Filter's workers only read it;
// Reserve fills in what it assumed, which the binding cycle reads after.
type volumeBindingState struct {
	// bound are the fully bound claims, in volume order.
	bound []boundClaim
	// delayed are the unbound claims of WaitForFirstConsumer classes, in
	// volume order.
	delayed []*delayedClaim
	// toMatch are the delayed claims without a selected node, smallest
	// request first (keeping volume order among equals): kube-scheduler
	// looks for volumes for the smaller claims first.
	toMatch []*delayedClaim

	// Set by Reserve: the node and what was assumed for it. allBound
	// means nothing had to be bound.
	node     string
	reserved *podVolumes
	allBound bool
}

// Clone returns s: Filter never changes it, and preemption's what-if
// copies only run Filter.
func (s *volumeBindingState) Clone() framework.StateData { return s }

// boundClaim is a fully bound claim and its volume.
type boundClaim struct {
	claim *v1.PersistentVolumeClaim
	// pv is nil when the volume does not exist.
	pv *pvEntry
	// On the nodes in migratedOn, whose CSINode says the volume's in-tree
	// plugin is migrated to CSI, the volume is read as its CSI driver
	// sees it: csi, the translated volume (its zone labels become the
	// driver's topology), or csiErr when it does not translate.
	migratedOn map[string]struct{}
	csi        *pvEntry
	csiErr     error
}

// PreFilter looks up the pod's claims and their volumes, and for the
// unbound ones the volumes and the provisioning they may get. It returns
// Skip for a pod without claims, and rejects the pod on every node,
// UnschedulableAndUnresolvable, when a claim is missing, lost, being
// deleted, not owned by the pod (an ephemeral volume's), or an unbound
// Immediate one: the PVC and PV informer events requeue it.
func (pl *Binding) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	claims, st := pl.podClaims(pod)
	if st != nil {
		return nil, st
	}
	if len(claims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}

	s := &volumeBindingState{}
	immediate := false
	for _, claim := range claims {
		if isClaimFullyBound(claim) {
			bc := boundClaim{claim: claim}
			if pv, err := pl.cache.getPV(claim.Spec.VolumeName); err == nil {
				bc.pv = newBoundEntry(pv)
				if err := pl.migrate(&bc); err != nil {
					return nil, framework.AsStatus(err)
				}
			} else if !isNotFound(err) {
				return nil, framework.AsStatus(err)
			}
			s.bound = append(s.bound, bc)
			continue
		}
		delay, err := storagehelpers.IsDelayBindingMode(claim, pl.listers.classes)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		// A claim pre-bound to a volume (spec.volumeName set by its author)
		// waits for the PV controller whatever its class.
		if !delay || claim.Spec.VolumeName != "" {
			immediate = true
			continue
		}
		dc, err := pl.newDelayedClaim(claim)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		s.delayed = append(s.delayed, dc)
	}
	if immediate {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonUnboundImmediateClaims)
	}
	if len(s.delayed) == 0 && !s.constrained() {
		// Every volume exists and fits every node: nothing to filter, and
		// nothing to reserve or bind.
		return nil, framework.NewStatus(framework.Skip)
	}
	for _, dc := range s.delayed {
		if !dc.hasSelectedNode {
			s.toMatch = append(s.toMatch, dc)
		}
	}
	slices.SortStableFunc(s.toMatch, func(a, b *delayedClaim) int { return a.request.Cmp(b.request) })
	state.Write(volumeBindingStateKey, s)
	return nil, nil
}

// constrained reports whether a bound claim's volume is missing or has
// node affinity, as it is or as some node reads it.
func (s *volumeBindingState) constrained() bool {
	for _, b := range s.bound {
		if b.pv == nil || b.pv.affinity != nil || b.migratedOn != nil {
			return true
		}
	}
	return false
}

// migrate prepares a bound in-tree volume for the nodes that migrated its
// plugin to CSI, as kube-scheduler's checkBoundClaims reads it there
// (tryTranslatePVToCSI): translated by csi-translation-lib, the library
// kube-scheduler uses, once per pod rather than per node. Only the
// plugins kube-scheduler translates are (those whose volumes also count
// against a CSI driver's attach limit).
func (pl *Binding) migrate(bc *boundClaim) error {
	pv := bc.pv.pv
	plugin, err := pl.migratablePlugin(pv)
	if plugin == "" || err != nil {
		return err
	}
	nodes, err := pl.migratingNodes(plugin)
	if err != nil || len(nodes) == 0 {
		return err
	}
	bc.migratedOn = nodes
	csiPV, err := pl.translator.TranslateInTreePVToCSI(klog.Background(), pv)
	if err != nil {
		bc.csiErr = fmt.Errorf("could not translate pv: %v", err)
		return nil
	}
	bc.csi = newBoundEntry(csiPV)
	return nil
}

// migratablePlugin returns the in-tree plugin of pv when kube-scheduler
// translates its volumes to CSI on the nodes that migrated it; "" for
// other volumes.
func (pl *Binding) migratablePlugin(pv *v1.PersistentVolume) (string, error) {
	if !pl.translator.IsPVMigratable(pv) {
		return "", nil
	}
	plugin, err := pl.translator.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return "", fmt.Errorf("could not get plugin name from pv: %v", err)
	}
	if _, ok := inTreeCSIDrivers[plugin]; !ok {
		return "", nil
	}
	return plugin, nil
}

// onNode returns pv as kube-scheduler reads it on the node of csiNode
// (nil when it has none): translated to CSI when the node migrated its
// in-tree plugin.
func (pl *Binding) onNode(pv *v1.PersistentVolume, csiNode *storagev1.CSINode) (*v1.PersistentVolume, error) {
	plugin, err := pl.migratablePlugin(pv)
	if plugin == "" || err != nil || !migratesPlugin(csiNode, plugin) {
		return pv, err
	}
	csiPV, err := pl.translator.TranslateInTreePVToCSI(klog.Background(), pv)
	if err != nil {
		return nil, fmt.Errorf("could not translate pv: %v", err)
	}
	return csiPV, nil
}

// migratingNodes returns the nodes whose CSINode lists plugin in its
// migrated-plugins annotation.
func (pl *Binding) migratingNodes(plugin string) (map[string]struct{}, error) {
	csiNodes, err := pl.listers.csiNodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out map[string]struct{}
	for _, cn := range csiNodes {
		if migratesPlugin(cn, plugin) {
			if out == nil {
				out = map[string]struct{}{}
			}
			out[cn.Name] = struct{}{}
		}
	}
	return out, nil
}

// migratesPlugin reports whether the CSINode's migrated-plugins
// annotation (a comma-separated list) names plugin.
func migratesPlugin(cn *storagev1.CSINode, plugin string) bool {
	return cn != nil && slices.Contains(strings.Split(cn.Annotations[v1.MigratedPluginsAnnotationKey], ","), plugin)
}

// newBoundEntry describes a bound claim's volume for Filter, whatever its
// phase or claimRef.
func newBoundEntry(pv *v1.PersistentVolume) *pvEntry {
	e := &pvEntry{pv: pv, class: storagehelpers.GetPersistentVolumeClass(pv), size: pv.Spec.Capacity[v1.ResourceStorage]}
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		e.affinity = framework.NewNodeSelector(na.Required)
	}
	return e
}

// podClaims returns the pod's claims in volume order, as the scheduler
// sees them, or the status that rejects the pod: kube-scheduler's checks,
// with its messages.
func (pl *Binding) podClaims(pod *v1.Pod) ([]*v1.PersistentVolumeClaim, *framework.Status) {
	var claims []*v1.PersistentVolumeClaim
	for i := range pod.Spec.Volumes {
		pc, ok := claimOf(pod, &pod.Spec.Volumes[i])
		if !ok {
			continue
		}
		claim, err := pl.cache.getPVC(pod.Namespace, pc.name)
		if err != nil {
			if pc.ephemeral && isNotFound(err) {
				// Normal right after the pod was created.
				err = fmt.Errorf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", pc.name)
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		if claim.Status.Phase == v1.ClaimLost {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", claim.Name, claim.Spec.VolumeName))
		}
		if claim.DeletionTimestamp != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("persistentvolumeclaim %q is being deleted", claim.Name))
		}
		if pc.ephemeral {
			if err := checkEphemeralOwner(pod, claim); err != nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
			}
		}
		claims = append(claims, claim)
	}
	return claims, nil
}

// Filter admits the node when the pod's claims can all be had there; see
// findPodVolumes.
func (pl *Binding) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*volumeBindingState](state, volumeBindingStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	_, conflicts, err := s.findPodVolumes(node, false)
	if err != nil {
		return framework.AsStatus(err)
	}
	return volumeConflictStatuses[conflicts]
}

// volumeConflicts are the reasons a node fails, as a bit set in
// kube-scheduler's order of reporting them.
type volumeConflicts uint8

const (
	conflictNodeAffinity volumeConflicts = 1 << iota
	conflictBind
	conflictStorage
	conflictMissingVolume
	numVolumeConflictSets = 1 << iota
)

// volumeConflictStatuses holds one shared status per set of reasons; the
// empty set is nil (Success).
var volumeConflictStatuses = func() [numVolumeConflictSets]*framework.Status {
	var out [numVolumeConflictSets]*framework.Status
	reasons := []string{ReasonVolumeNodeAffinityConflict, ReasonVolumeBindConflict, ReasonNotEnoughStorage, ReasonBoundVolumeMissing}
	for set := 1; set < numVolumeConflictSets; set++ {
		var rs []string
		for i, r := range reasons {
			if set&(1<<i) != 0 {
				rs = append(rs, r)
			}
		}
		out[set] = framework.NewStatus(framework.UnschedulableAndUnresolvable, rs...)
	}
	return out
}()

// podVolumes is what a node gives the pod's unbound claims: volumes to
// bind them to, and claims to provision there.
type podVolumes struct {
	static  []staticBinding
	dynamic []dynamicProvision
}

// staticBinding is an available volume chosen for a claim.
type staticBinding struct {
	pv    *v1.PersistentVolume
	claim *v1.PersistentVolumeClaim
}

// dynamicProvision is a claim to provision on the node, with the
// CSIStorageCapacity that has room for it (nil when none was checked).
type dynamicProvision struct {
	claim    *v1.PersistentVolumeClaim
	capacity *storageCapacity
}

// findPodVolumes decides a node as kube-scheduler's FindPodVolumes does,
// and returns the volumes the pod would get there when keep is set (Filter
// only needs the verdict). The reasons, in its order: a bound volume's
// node affinity excludes the node; an unbound claim finds neither a volume
// nor provisioning there (or is already being provisioned for another
// node); the provisioner's storage has no room there; a bound claim's
// volume is gone.
func (s *volumeBindingState) findPodVolumes(node *v1.Node, keep bool) (*podVolumes, volumeConflicts, error) {
	if !keep {
		conflicts, err := s.visitPodVolumes(node, volumeVisitor{})
		return nil, conflicts, err
	}
	pvs := &podVolumes{}
	conflicts, err := s.visitPodVolumes(node, volumeVisitor{
		static:  func(b staticBinding) { pvs.static = append(pvs.static, b) },
		dynamic: func(d dynamicProvision) { pvs.dynamic = append(pvs.dynamic, d) },
	})
	if err != nil || len(s.delayed) == 0 {
		return nil, conflicts, err
	}
	return pvs, conflicts, nil
}

// volumeVisitor is told of each volume the pod would get on a node; a nil
// func is not called.
type volumeVisitor struct {
	static  func(staticBinding)
	dynamic func(dynamicProvision)
}

// visitPodVolumes decides a node as findPodVolumes does and tells v of the
// volumes the pod would get there, without keeping them: Score, which
// runs on every feasible node, sums them up as they come, allocating
// nothing.
func (s *volumeBindingState) visitPodVolumes(node *v1.Node, v volumeVisitor) (volumeConflicts, error) {
	var conflicts volumeConflicts
	for i := range s.bound {
		b := &s.bound[i]
		pv := b.pv
		if pv == nil {
			conflicts |= conflictMissingVolume
			break
		}
		if _, ok := b.migratedOn[node.Name]; ok {
			if b.csiErr != nil {
				return 0, b.csiErr
			}
			pv = b.csi
		}
		if !pv.fitsNode(node.Labels) {
			conflicts |= conflictNodeAffinity
			break
		}
	}
	if len(s.delayed) == 0 {
		return conflicts, nil
	}
	// Claims a provisioner already works on for a node go there or
	// nowhere; the others look for a volume first, smallest claim first.
	// The buffers keep a pod with a few claims from allocating per node.
	var provisionBuf [4]*delayedClaim
	var chosenBuf [4]*v1.PersistentVolume
	toProvision := provisionBuf[:0]
	for _, dc := range s.delayed {
		if dc.hasSelectedNode {
			if dc.selectedNode != node.Name {
				return conflicts | conflictBind, nil
			}
			toProvision = append(toProvision, dc)
		}
	}
	chosen := chosenBuf[:0]
	for _, dc := range s.toMatch {
		e, err := dc.matchVolume(node.Labels, chosen)
		if err != nil {
			return 0, err
		}
		if e == nil {
			toProvision = append(toProvision, dc)
			continue
		}
		chosen = append(chosen, e.pv)
		if v.static != nil {
			v.static(staticBinding{pv: e.pv, claim: dc.claim})
		}
	}
	for _, dc := range toProvision {
		ok, capacity, err := dc.provisioning.check(node)
		switch {
		case err != nil:
			return 0, err
		case ok == provisionImpossible:
			return conflicts | conflictBind, nil
		case ok == provisionNoRoom:
			return conflicts | conflictStorage, nil
		}
		if v.dynamic != nil {
			v.dynamic(dynamicProvision{claim: dc.claim, capacity: capacity})
		}
	}
	return conflicts, nil
}

// requestOf is a claim's storage request; zero when it has none.
func requestOf(claim *v1.PersistentVolumeClaim) resource.Quantity {
	return claim.Spec.Resources.Requests[v1.ResourceStorage]
}
