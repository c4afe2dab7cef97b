package volumes

import (
	"context"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	csitrans "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"

	"github.com/yardmaster-io/yardmaster/framework"
)

// NodeLimitsName is the name of the NodeVolumeLimits plugin.
const NodeLimitsName = "NodeVolumeLimits"

// ReasonMaxVolumeCountExceeded is given for a node where the pod's new
// volumes would take a CSI driver past the number of volumes the node can
// attach (CSINode spec.drivers[].allocatable.count).
const ReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

// statusMaxVolumeCountExceeded is shared by every rejection for it: the
// scheduler never changes a status a filter returns.
var statusMaxVolumeCountExceeded = framework.NewStatus(framework.Unschedulable, ReasonMaxVolumeCountExceeded)

// volumeLimitsStateKey is where PreFilter leaves the nodes over a limit.
const volumeLimitsStateKey framework.StateKey = "PreFilter" + NodeLimitsName

// inTreeCSIDrivers maps the in-tree volume plugins whose volumes
// kube-scheduler counts against a CSI driver's limit (CSI migration) to that
// driver. Azure File and vSphere volumes migrate too but are not counted,
// as in kube-scheduler.
var inTreeCSIDrivers = map[string]string{
	"kubernetes.io/aws-ebs":         "ebs.csi.aws.com",
	"kubernetes.io/gce-pd":          "pd.csi.storage.gke.io",
	"kubernetes.io/azure-disk":      "disk.csi.azure.com",
	"kubernetes.io/cinder":          "cinder.csi.openstack.org",
	"kubernetes.io/portworx-volume": "pxd.portworx.com",
}

// uncountedInTreePlugins are migratable provisioners whose claims are not
// counted at all (rather than counted under the provisioner's name).
var uncountedInTreePlugins = map[string]bool{
	"kubernetes.io/azure-file":     true,
	"kubernetes.io/vsphere-volume": true,
}

// attachableVolume is a volume a CSI driver attaches to the node.
type attachableVolume struct {
	driver string
	// id is "driver/volumeHandle", unique per volume: two pods using one
	// volume on a node attach it once.
	id string
	// inTree is set for a volume of an in-tree plugin migrated to CSI (as
	// a PersistentVolume, inline, or to be provisioned by an in-tree
	// provisioner): kube-scheduler reads it as its CSI driver's only on a
	// node that has a CSINode, and not at all on the others.
	inTree bool
}

// volumeLimitsState names the nodes the pod's volumes would take over a
// driver's limit, and keeps what recounting one node takes: AddPod and
// RemovePod recount the node of a what-if (a nominated pod added, a victim
// removed), as kube-scheduler's CSILimits counts the pods of the NodeInfo
// it is given.
type volumeLimitsState struct {
	// exceeded is never changed in place once PreFilter wrote it: states
	// cloned for what-ifs share it until one replaces its own.
	exceeded map[string]struct{}
	// rejectAll, when set, is Filter's answer on every node: a claim of
	// the pod could not be had.
	rejectAll *framework.Status
	// inlineErr, when set, is Filter's answer on every node that has a
	// CSINode: an in-tree volume written inline in the pod does not
	// translate to CSI.
	inlineErr *framework.Status
	// driverMissing is Filter's answer on the nodes that lack the CSI
	// driver of one of the pod's new volumes, when the driver's CSIDriver
	// asks for it (preventPodSchedulingIfMissing). Never changed once
	// PreFilter wrote it: no pod added or removed changes it.
	driverMissing map[string]*framework.Status

	newVolumes  []attachableVolume
	drivers     []string
	limits      map[string][]int32
	attachments map[string][]attachableVolume
}

// Clone returns a copy that shares exceeded until AddPod or RemovePod
// replaces it.
func (s *volumeLimitsState) Clone() framework.StateData {
	c := *s
	return &c
}

// setExceeded records whether node is over a limit, in a new map: the old
// one may be shared with the states cloned from this one, or it from.
func (s *volumeLimitsState) setExceeded(node string, over bool) {
	if _, was := s.exceeded[node]; was == over {
		return
	}
	m := make(map[string]struct{}, len(s.exceeded)+1)
	maps.Copy(m, s.exceeded)
	if over {
		m[node] = struct{}{}
	} else {
		delete(m, node)
	}
	s.exceeded = m
}

// NodeLimits is NodeVolumeLimits, the filter for per-node CSI attach
// limits: for each CSI driver of the pod's volumes, the distinct volumes
// of that driver already attached to the node (used by its pods, or held
// by a VolumeAttachment) plus the pod's new ones must not exceed the count
// in the node's CSINode. A node without a CSINode, or a driver without a
// count, has no limit.
//
// Volumes are identified as kube-scheduler does: a bound claim by its CSI
// volume's driver and handle, an unbound claim by its StorageClass's
// provisioner (it will be provisioned there), and in-tree volumes of the
// plugins migrated to CSI by the CSI driver that serves them.
//
// A CSI driver whose CSIDriver sets preventPodSchedulingIfMissing keeps
// the pod's new volumes of it off the nodes whose CSINode does not list
// it (none, without a CSINode), Unschedulable, as kube-scheduler v1.37 does
// with its VolumeLimitScaling gate (beta, on by default; CSILimits.Filter
// and checkCSIDriverOnNode). A driver without a CSIDriver object, or that
// does not set it, is not checked.
type NodeLimits struct {
	listers     storageListers
	attachments storagelisters.VolumeAttachmentLister
}

var (
	_ framework.PreFilterPlugin     = &NodeLimits{}
	_ framework.FilterPlugin        = &NodeLimits{}
	_ framework.PreFilterExtensions = &NodeLimits{}
)

// NewNodeLimits returns the filter, reading claims, volumes, classes,
// CSINodes and VolumeAttachments through h's informers.
func NewNodeLimits(h framework.Handle) *NodeLimits {
	pl := &NodeLimits{listers: newStorageListers(h)}
	if h != nil && h.SharedInformerFactory() != nil {
		pl.attachments = h.SharedInformerFactory().Storage().V1().VolumeAttachments().Lister()
	} else {
		pl.attachments = storagelisters.NewVolumeAttachmentLister(toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}))
	}
	return pl
}

// Name returns NodeLimitsName.
func (*NodeLimits) Name() string { return NodeLimitsName }

// PreFilter works out which nodes the pod's volumes would take over a
// limit, and which lack a driver of them that must be installed. It
// returns Skip when the pod has no attachable volume, or when no node
// limits one of its drivers and none lacks one. A claim of the pod that does not exist, or an ephemeral
// volume's claim the pod does not own, rejects every node in Filter, not
// here: kube-scheduler's CSILimits finds out in Filter, so the pod waits
// with VolumeRestrictions' or VolumeBinding's PreFilter message (which
// run, and reject, before any Filter), e.g. "waiting for ephemeral volume
// controller to create the persistentvolumeclaim", not this plugin's.
//
// The count is done here, once, rather than per node in Filter, because it
// needs lister lookups for the claims of the pods already on each node;
// only nodes whose CSINode limits one of the pod's drivers are counted.
// A node of a what-if (a nominated pod added to it, a victim removed) is
// counted again by AddPod and RemovePod.
func (pl *NodeLimits) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	newVolumes, inlineErr, st := pl.newPodVolumes(pod)
	if st != nil {
		state.Write(volumeLimitsStateKey, &volumeLimitsState{rejectAll: st})
		return nil, nil
	}
	if inlineErr != nil {
		// kube-scheduler's CSILimits fails on such a volume on every node
		// that has a CSINode, before it counts anything.
		state.Write(volumeLimitsStateKey, &volumeLimitsState{inlineErr: inlineErr})
		return nil, nil
	}
	if len(newVolumes) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	var drivers []string
	for _, v := range newVolumes {
		if indexOf(drivers, v.driver) < 0 {
			drivers = append(drivers, v.driver)
		}
	}
	limits, err := pl.nodeLimits(drivers)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	missing, err := pl.driversMissing(newVolumes, drivers, nodes)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(limits) == 0 && len(missing) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	attachments, err := pl.nodeAttachments(drivers, limits)
	if err != nil {
		return nil, framework.AsStatus(err)
	}

	s := &volumeLimitsState{exceeded: map[string]struct{}{}, driverMissing: missing,
		newVolumes: newVolumes, drivers: drivers, limits: limits, attachments: attachments}
	c := newAttachCounter(len(drivers))
	for _, ni := range nodes {
		node := ni.Node()
		if node == nil {
			continue
		}
		if limit, ok := limits[node.Name]; ok && pl.exceeds(s, c, ni, limit) {
			s.exceeded[node.Name] = struct{}{}
		}
	}
	// Not skipped when no node is over a limit now: a nominated pod, or
	// a what-if of preemption, may change that (AddPod, RemovePod).
	state.Write(volumeLimitsStateKey, s)
	return nil, nil
}

// attachCounter holds the buffers of one count, reused from node to node.
type attachCounter struct {
	// resolved caches claim lookups for the rest of the count.
	resolved   map[string]resolvedClaim
	usedByPods map[string]struct{}
	attached   []int
	adding     []int
}

func newAttachCounter(drivers int) *attachCounter {
	return &attachCounter{resolved: map[string]resolvedClaim{}, usedByPods: map[string]struct{}{},
		attached: make([]int, drivers), adding: make([]int, drivers)}
}

// exceeds counts the volumes of the pod's drivers attached to the node
// of ni and reports whether the pod's new ones would take one driver past
// its limit there.
func (pl *NodeLimits) exceeds(s *volumeLimitsState, c *attachCounter, ni *framework.NodeInfo, limit []int32) bool {
	clear(c.usedByPods)
	clear(c.attached)
	clear(c.adding)
	for _, pi := range ni.Pods {
		pl.existingPodVolumes(pi.Pod, c.resolved, func(v attachableVolume) {
			if _, dup := c.usedByPods[v.id]; dup {
				return
			}
			c.usedByPods[v.id] = struct{}{}
			if d := indexOf(s.drivers, v.driver); d >= 0 {
				c.attached[d]++
			}
		})
	}
	for _, v := range s.attachments[ni.Node().Name] {
		if _, ok := c.usedByPods[v.id]; !ok {
			c.attached[indexOf(s.drivers, v.driver)]++
		}
	}
	// A volume already used by a pod on the node is attached once.
	// (One only held by a VolumeAttachment is counted again, as
	// kube-scheduler counts it.)
	for _, v := range s.newVolumes {
		if _, ok := c.usedByPods[v.id]; !ok {
			c.adding[indexOf(s.drivers, v.driver)]++
		}
	}
	// Only the drivers the pod adds a volume of are checked: a node
	// already over a driver's limit (lowered since) still takes a pod
	// whose volumes of it are all attached there, as in kube-scheduler.
	for d := range s.drivers {
		if c.adding[d] > 0 && limit[d] >= 0 && c.attached[d]+c.adding[d] > int(limit[d]) {
			return true
		}
	}
	return false
}

// AddPod recounts the node of ni, to which podInfoToAdd was added.
func (pl *NodeLimits) AddPod(_ context.Context, state *framework.CycleState, _ *v1.Pod, _ *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return pl.recount(state, ni)
}

// RemovePod recounts the node of ni, from which podInfoToRemove was
// removed.
func (pl *NodeLimits) RemovePod(_ context.Context, state *framework.CycleState, _ *v1.Pod, _ *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return pl.recount(state, ni)
}

// recount counts the node of ni again, with fresh buffers: what-ifs of
// several nodes run at once.
func (pl *NodeLimits) recount(state *framework.CycleState, ni *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*volumeLimitsState](state, volumeLimitsStateKey)
	if err != nil || s.rejectAll != nil || s.inlineErr != nil || ni.Node() == nil {
		return nil // skipped, or every node rejected anyway
	}
	limit, ok := s.limits[ni.Node().Name]
	if !ok {
		return nil
	}
	s.setExceeded(ni.Node().Name, pl.exceeds(s, newAttachCounter(len(s.drivers)), ni, limit))
	return nil
}

// Filter rejects a node PreFilter found lacking a driver the pod's volumes
// need, or over a limit, Unschedulable (a pod leaving the node detaches
// its volumes), in kube-scheduler's order; or every node, when a claim of
// the pod could not be had.
func (pl *NodeLimits) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*volumeLimitsState](state, volumeLimitsStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.rejectAll != nil {
		return s.rejectAll
	}
	if s.inlineErr != nil {
		if _, err := pl.listers.csiNodes.Get(node.Name); err == nil {
			return s.inlineErr
		}
		return nil
	}
	if st, ok := s.driverMissing[node.Name]; ok {
		return st
	}
	if _, over := s.exceeded[node.Name]; over {
		return statusMaxVolumeCountExceeded
	}
	return nil
}

// driversMissing returns, per node of nodes, the rejection for the first
// of the pod's new volumes (in the pod's order) whose CSI driver asks, by
// its CSIDriver's preventPodSchedulingIfMissing, to be installed on the
// node, and is not listed by the node's CSINode; nil when no driver asks.
// kube-scheduler v1.37 checks the drivers in map order, so which one a
// node lacking two is rejected for varies there.
//
// An in-tree volume is only its CSI driver's on a node with a CSINode, as
// in kube-scheduler: on a node without one it needs nothing.
func (pl *NodeLimits) driversMissing(newVolumes []attachableVolume, drivers []string, nodes []*framework.NodeInfo) (map[string]*framework.Status, error) {
	// One status per driver, shared by the nodes it rejects.
	var required map[string]*framework.Status
	for _, d := range drivers {
		cd, err := pl.listers.csiDrivers.Get(d)
		if apierrors.IsNotFound(err) {
			// Not a CSI driver kube-scheduler knows: not checked.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("error getting CSIDriver for provider %s: %w", d, err)
		}
		if p := cd.Spec.PreventPodSchedulingIfMissing; p == nil || !*p {
			continue
		}
		if required == nil {
			required = map[string]*framework.Status{}
		}
		required[d] = framework.NewStatus(framework.Unschedulable, d+" CSI driver is not installed on the node")
	}
	if len(required) == 0 {
		return nil, nil
	}
	csiNodes, err := pl.listers.csiNodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	installed := make(map[string][]storagev1.CSINodeDriver, len(csiNodes))
	for _, cn := range csiNodes {
		installed[cn.Name] = cn.Spec.Drivers
	}
	missing := map[string]*framework.Status{}
	for _, ni := range nodes {
		node := ni.Node()
		if node == nil {
			continue
		}
		nodeDrivers, hasCSINode := installed[node.Name]
		for _, v := range newVolumes {
			st, ok := required[v.driver]
			if !ok || (v.inTree && !hasCSINode) {
				continue
			}
			if !slices.ContainsFunc(nodeDrivers, func(d storagev1.CSINodeDriver) bool { return d.Name == v.driver }) {
				missing[node.Name] = st
				break
			}
		}
	}
	return missing, nil
}

// newPodVolumes returns the distinct attachable volumes of the incoming
// pod. A missing claim is UnschedulableAndUnresolvable, an ephemeral
// volume's claim that the pod does not own an Error, as in kube-scheduler.
// inlineErr is the Error of the first inline in-tree volume that does not
// translate to CSI.
func (pl *NodeLimits) newPodVolumes(pod *v1.Pod) (out []attachableVolume, inlineErr, st *framework.Status) {
	add := func(v attachableVolume) {
		for _, o := range out {
			if o.id == v.id {
				return
			}
		}
		out = append(out, v)
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		pc, ok := claimOf(pod, vol)
		if !ok {
			v, ok, err := inlineAttachableVolume(vol, pod.Namespace)
			if err != nil && inlineErr == nil {
				inlineErr = framework.AsStatus(err)
			}
			if ok {
				add(v)
			}
			continue
		}
		claim, err := pl.listers.claims.PersistentVolumeClaims(pod.Namespace).Get(pc.name)
		if err != nil {
			st := statusOfLookup(err)
			if apierrors.IsNotFound(err) {
				st = framework.NewStatus(framework.UnschedulableAndUnresolvable, "looking up PVC "+pod.Namespace+"/"+pc.name+": "+err.Error())
			}
			return nil, nil, st
		}
		if pc.ephemeral {
			if err := checkEphemeralOwner(pod, claim); err != nil {
				return nil, nil, framework.AsStatus(err)
			}
		}
		if v, ok := pl.claimVolume(claim); ok {
			add(v)
		}
	}
	return out, inlineErr, nil
}

// resolvedClaim caches one claim lookup for the rest of the cycle.
type resolvedClaim struct {
	claim  *v1.PersistentVolumeClaim // nil when the claim does not exist
	volume attachableVolume
	ok     bool
}

// existingPodVolumes calls use for each attachable volume of a pod already
// on a node. Claims are looked up once per cycle (resolved caches them by
// "namespace/name"); a claim that is missing, or an ephemeral volume's
// claim the pod does not own, is not counted.
func (pl *NodeLimits) existingPodVolumes(pod *v1.Pod, resolved map[string]resolvedClaim, use func(attachableVolume)) {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		pc, ok := claimOf(pod, vol)
		if !ok {
			// One that does not translate is not counted. (kube-scheduler
			// fails the incoming pod on the nodes holding it.)
			if v, ok, _ := inlineAttachableVolume(vol, pod.Namespace); ok {
				use(v)
			}
			continue
		}
		key := pod.Namespace + "/" + pc.name
		rc, seen := resolved[key]
		if !seen {
			if claim, err := pl.listers.claims.PersistentVolumeClaims(pod.Namespace).Get(pc.name); err == nil {
				rc.claim = claim
				rc.volume, rc.ok = pl.claimVolume(claim)
			}
			resolved[key] = rc
		}
		// An ephemeral volume's claim the pod does not own is not counted
		// either. (kube-scheduler fails the incoming pod with an error.)
		if !rc.ok || (pc.ephemeral && checkEphemeralOwner(pod, rc.claim) != nil) {
			continue
		}
		use(rc.volume)
	}
}

// claimVolume identifies the volume behind claim: its CSI volume (or
// in-tree volume served by a CSI driver) when bound, else the volume its
// StorageClass's provisioner will create, identified by the claim. ok is
// false for volumes no CSI driver attaches.
func (pl *NodeLimits) claimVolume(claim *v1.PersistentVolumeClaim) (attachableVolume, bool) {
	if claim.Spec.VolumeName != "" {
		if pv, err := pl.listers.volumes.Get(claim.Spec.VolumeName); err == nil {
			return persistentAttachableVolume(pv)
		}
		// The volume is gone, or the claim is pre-bound to one not created
		// yet: count it by its class, as kube-scheduler does.
	}
	className := claimClass(claim)
	if className == "" {
		// Immediate binding: it must be bound before the pod can run.
		return attachableVolume{}, false
	}
	class, err := pl.listers.classes.Get(className)
	if err != nil {
		return attachableVolume{}, false
	}
	driver := class.Provisioner
	if uncountedInTreePlugins[driver] {
		return attachableVolume{}, false
	}
	csi, inTree := inTreeCSIDrivers[driver]
	if inTree {
		driver = csi
	}
	// The NUL keeps the stand-in handle apart from every real handle.
	return attachableVolume{driver: driver, id: driver + "/\x00" + claim.Namespace + "/" + claim.Name, inTree: inTree}, true
}

// limitsTranslator reads in-tree volumes as the CSI driver that serves
// them sees them, as kube-scheduler's CSILimits does: the handle counted is
// the translated one (a GCE PD's carries the zone of the volume's labels,
// so same-named disks in two zones are two volumes).
var limitsTranslator = csitrans.New()

// persistentAttachableVolume identifies a PersistentVolume's CSI volume. An
// in-tree volume that does not translate is not counted, as in
// kube-scheduler.
func persistentAttachableVolume(pv *v1.PersistentVolume) (attachableVolume, bool) {
	if csi := pv.Spec.CSI; csi != nil {
		return attachableVolume{driver: csi.Driver, id: csi.Driver + "/" + csi.VolumeHandle}, true
	}
	if !limitsTranslator.IsPVMigratable(pv) {
		return attachableVolume{}, false
	}
	plugin, err := limitsTranslator.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return attachableVolume{}, false
	}
	if _, ok := inTreeCSIDrivers[plugin]; !ok {
		return attachableVolume{}, false
	}
	csiPV, err := limitsTranslator.TranslateInTreePVToCSI(klog.Background(), pv)
	if err != nil || csiPV.Spec.CSI == nil {
		return attachableVolume{}, false
	}
	csi := csiPV.Spec.CSI
	return attachableVolume{driver: csi.Driver, id: csi.Driver + "/" + csi.VolumeHandle, inTree: true}, true
}

// inlineAttachableVolume identifies an in-tree volume written inline in a
// pod spec, for the plugins migrated to CSI, by its translated handle. err
// is set when the volume names such a plugin but does not translate (an
// EBS volume ID that is not one): kube-scheduler's CSILimits fails on it.
func inlineAttachableVolume(vol *v1.Volume, namespace string) (attachableVolume, bool, error) {
	if !limitsTranslator.IsInlineMigratable(vol) {
		return attachableVolume{}, false, nil
	}
	plugin, err := limitsTranslator.GetInTreePluginNameFromSpec(nil, vol)
	if err != nil {
		return attachableVolume{}, false, fmt.Errorf("looking up provisioner name for volume %s: %w", vol.Name, err)
	}
	driver, ok := inTreeCSIDrivers[plugin]
	if !ok {
		return attachableVolume{}, false, nil
	}
	pv, err := limitsTranslator.TranslateInTreeInlineVolumeToCSI(klog.Background(), vol, namespace)
	if err != nil || pv == nil {
		return attachableVolume{}, false, fmt.Errorf("converting volume(%s) from inline to csi: %w", vol.Name, err)
	}
	if pv.Spec.CSI == nil {
		return attachableVolume{}, false, nil
	}
	return attachableVolume{driver: driver, id: driver + "/" + pv.Spec.CSI.VolumeHandle, inTree: true}, true, nil
}

// nodeLimits returns, per node whose CSINode limits one of drivers, the
// limit of each driver (by index; -1 for none).
func (pl *NodeLimits) nodeLimits(drivers []string) (map[string][]int32, error) {
	csiNodes, err := pl.listers.csiNodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	limits := map[string][]int32{}
	for _, cn := range csiNodes {
		var l []int32
		for _, d := range cn.Spec.Drivers {
			i := indexOf(drivers, d.Name)
			if i < 0 || d.Allocatable == nil || d.Allocatable.Count == nil {
				continue
			}
			if l == nil {
				l = make([]int32, len(drivers))
				for j := range l {
					l[j] = -1
				}
			}
			l[i] = *d.Allocatable.Count
		}
		if l != nil {
			limits[cn.Name] = l
		}
	}
	return limits, nil
}

// nodeAttachments returns, per limited node, the volumes of drivers that
// VolumeAttachments hold there: attachments of CSI volumes, identified as
// their pods' volumes are.
func (pl *NodeLimits) nodeAttachments(drivers []string, limits map[string][]int32) (map[string][]attachableVolume, error) {
	vas, err := pl.attachments.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := map[string][]attachableVolume{}
	for _, va := range vas {
		if _, limited := limits[va.Spec.NodeName]; !limited || indexOf(drivers, va.Spec.Attacher) < 0 {
			continue
		}
		if va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		pv, err := pl.listers.volumes.Get(*va.Spec.Source.PersistentVolumeName)
		if err != nil || pv.Spec.CSI == nil {
			continue
		}
		v := attachableVolume{driver: va.Spec.Attacher, id: va.Spec.Attacher + "/" + pv.Spec.CSI.VolumeHandle}
		dup := false
		for _, o := range out[va.Spec.NodeName] {
			dup = dup || o.id == v.id
		}
		if !dup {
			out[va.Spec.NodeName] = append(out[va.Spec.NodeName], v)
		}
	}
	return out, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
