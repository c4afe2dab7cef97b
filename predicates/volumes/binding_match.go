package volumes

// How VolumeBinding decides, for one node, what an unbound claim of a
// WaitForFirstConsumer class gets there: an available volume
// (component-helpers' FindMatchingVolume, on the volume index), or
// provisioning (kube-scheduler's checkVolumeProvisions). Everything that
// does not depend on the node is worked out once per pod, in PreFilter.

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// delayedClaim is an unbound claim of a WaitForFirstConsumer class, with
// what matching it to a node needs.
type delayedClaim struct {
	claim *v1.PersistentVolumeClaim
	key   string
	// selectedNode is the node a provisioner was asked to provision on
	// (the volume.kubernetes.io/selected-node annotation).
	selectedNode    string
	hasSelectedNode bool

	request     resource.Quantity
	mode        v1.PersistentVolumeMode
	vac         string
	accessModes []v1.PersistentVolumeAccessMode
	// selector is the claim's volume selector; nil for none. selectorErr
	// is kube-scheduler's error for one that does not parse, reported
	// when a volume is looked for.
	selector    labels.Selector
	selectorErr error
	// index holds the volumes of the claim's class.
	index *classIndex
	// prebound are the index's volumes whose claimRef names the claim,
	// looked up once per pod (the index does not change until the next
	// PreFilter).
	prebound []*pvEntry

	provisioning provisioning
}

// newDelayedClaim prepares claim for findPodVolumes.
func (pl *Binding) newDelayedClaim(claim *v1.PersistentVolumeClaim) (*delayedClaim, error) {
	dc := &delayedClaim{
		claim:       claim,
		key:         claim.Namespace + "/" + claim.Name,
		request:     requestOf(claim),
		mode:        ptr.Deref(claim.Spec.VolumeMode, v1.PersistentVolumeFilesystem),
		vac:         ptr.Deref(claim.Spec.VolumeAttributesClassName, ""),
		accessModes: claim.Spec.AccessModes,
	}
	dc.selectedNode, dc.hasSelectedNode = claim.Annotations[storagehelpers.AnnSelectedNode]
	if claim.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector)
		if err != nil {
			dc.selectorErr = fmt.Errorf("error creating internal label selector for claim: %s: %v", dc.key, err)
		} else {
			dc.selector = sel
		}
	}
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	ix, err := pl.cache.classIndex(class)
	if err != nil {
		return nil, err
	}
	dc.index = ix
	dc.prebound = ix.claimed[dc.key]
	dc.provisioning = pl.newProvisioning(claim, class)
	return dc, nil
}

// matchVolume returns the volume FindMatchingVolume would choose for the
// claim on a node with these labels, leaving out the volumes chosen for
// the pod's other claims; nil when there is none (the claim then needs
// provisioning). A volume pre-bound to the claim (its claimRef names the
// claim) is the only choice when one passes the node-independent checks;
// otherwise the smallest available volume that fits, ties broken by name.
func (dc *delayedClaim) matchVolume(nodeLabels map[string]string, chosen []*v1.PersistentVolume) (*pvEntry, error) {
	if dc.selectorErr != nil {
		return nil, dc.selectorErr
	}
	for _, e := range dc.prebound {
		if slices.Contains(chosen, e.pv) || !storagehelpers.IsVolumeBoundToClaim(e.pv, dc.claim) || !dc.fitsSpec(e) {
			continue
		}
		if e.fitsNode(nodeLabels) {
			return e, nil
		}
		return nil, nil
	}
	var best *pvEntry
	consider := func(list []*pvEntry) {
		for _, e := range list {
			if best != nil && bySizeAndName(e, best) >= 0 {
				return // sorted: nothing further along beats best
			}
			if !slices.Contains(chosen, e.pv) && dc.fitsSpec(e) && dc.fitsAvailable(e) && e.fitsNode(nodeLabels) {
				best = e
				return
			}
		}
	}
	consider(dc.index.unpinned)
	for key, byValue := range dc.index.pinned {
		if v, ok := nodeLabels[key]; ok {
			consider(byValue[v])
		}
	}
	return best, nil
}

// fitsSpec is FindMatchingVolume's first checks, which pre-bound volumes
// pass too: large enough, the same volume mode and VolumeAttributesClass.
func (dc *delayedClaim) fitsSpec(e *pvEntry) bool {
	return e.size.Cmp(dc.request) >= 0 &&
		ptr.Deref(e.pv.Spec.VolumeMode, v1.PersistentVolumeFilesystem) == dc.mode &&
		ptr.Deref(e.pv.Spec.VolumeAttributesClassName, "") == dc.vac
}

// fitsAvailable is the rest, for an available volume (the index files
// only Available volumes without a claimRef of the claim's class there):
// the claim's selector, and every access mode the claim asks for.
func (dc *delayedClaim) fitsAvailable(e *pvEntry) bool {
	if dc.selector != nil && !dc.selector.Matches(labels.Set(e.pv.Labels)) {
		return false
	}
	for _, m := range dc.accessModes {
		if !slices.Contains(e.pv.Spec.AccessModes, m) {
			return false
		}
	}
	return true
}

// provisionVerdict is whether a claim can be provisioned on a node.
type provisionVerdict int

const (
	provisionOK provisionVerdict = iota
	// provisionImpossible: the class has no provisioner, or its
	// allowedTopologies exclude the node.
	provisionImpossible
	// provisionNoRoom: no CSIStorageCapacity the node can reach has room.
	provisionNoRoom
)

// provisioning is what provisioning a claim on a node depends on, worked
// out once per pod.
type provisioning struct {
	// err is kube-scheduler's error for a claim it cannot look at (no
	// class, a class that is gone), given when provisioning is needed.
	err error
	// unsupported: the class names no provisioner, or the one that
	// provisions nothing.
	unsupported bool
	// topology is the class's compiled allowedTopologies: nil for none
	// (every node), else terms of which one must match.
	topology [][]labels.Requirement
	// checkCapacity says that the claim's size must be checked against
	// capacities; only those of the claim's class with room for it are
	// kept, each with the nodes that can reach it.
	checkCapacity bool
	capacities    []storageCapacity
}

// storageCapacity is a CSIStorageCapacity with room for a claim.
type storageCapacity struct {
	obj *storagev1.CSIStorageCapacity
	// nodes selects the nodes with access; nil matches none.
	nodes labels.Selector
}

// newProvisioning works out what provisioning claim of class needs.
func (pl *Binding) newProvisioning(claim *v1.PersistentVolumeClaim, className string) provisioning {
	if className == "" {
		return provisioning{err: fmt.Errorf("no class for claim %q", claim.Namespace+"/"+claim.Name)}
	}
	class, err := pl.listers.classes.Get(className)
	if err != nil {
		return provisioning{err: fmt.Errorf("failed to find storage class %q", className)}
	}
	if class.Provisioner == "" || class.Provisioner == storagehelpers.NotSupportedProvisioner {
		return provisioning{unsupported: true}
	}
	p := provisioning{topology: compileTopology(class.AllowedTopologies)}
	p.checkCapacity, p.capacities, p.err = pl.capacitiesFor(claim, class)
	return p
}

// compileTopology compiles a class's allowedTopologies as
// MatchTopologySelectorTerms reads them: an empty list admits every node;
// a term without expressions, or with one that is not a valid In
// requirement, admits none.
func compileTopology(terms []v1.TopologySelectorTerm) [][]labels.Requirement {
	if len(terms) == 0 {
		return nil
	}
	out := make([][]labels.Requirement, 0, len(terms))
	for _, t := range terms {
		if len(t.MatchLabelExpressions) == 0 {
			continue
		}
		var reqs []labels.Requirement
		for _, e := range t.MatchLabelExpressions {
			r, err := labels.NewRequirement(e.Key, selection.In, e.Values)
			if err != nil {
				reqs = nil
				break
			}
			reqs = append(reqs, *r)
		}
		if reqs != nil {
			out = append(out, reqs)
		}
	}
	// Terms given but none usable: no node qualifies. A non-nil empty
	// slice says so.
	return out
}

// capacitiesFor returns whether the claim's size must be checked against
// CSIStorageCapacity, and the capacities with room for it: only when the
// claim asks for a size and the class's CSI driver says it publishes
// capacity (CSIDriver.spec.storageCapacity), as in kube-scheduler.
func (pl *Binding) capacitiesFor(claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) (bool, []storageCapacity, error) {
	size, ok := claim.Spec.Resources.Requests[v1.ResourceStorage]
	if !ok || pl.listers.csiDrivers == nil {
		return false, nil, nil
	}
	driver, err := pl.listers.csiDrivers.Get(class.Provisioner)
	if err != nil {
		if isNotFound(err) {
			return false, nil, nil
		}
		return false, nil, err
	}
	if driver.Spec.StorageCapacity == nil || !*driver.Spec.StorageCapacity {
		return false, nil, nil
	}
	all, err := pl.listers.capacities.List(labels.Everything())
	if err != nil {
		return false, nil, err
	}
	bytes := size.Value()
	var out []storageCapacity
	for _, c := range all {
		if c.StorageClassName != class.Name {
			continue
		}
		limit := c.MaximumVolumeSize
		if limit == nil {
			limit = c.Capacity
		}
		if limit == nil || limit.Value() < bytes {
			continue
		}
		sc := storageCapacity{obj: c}
		if c.NodeTopology != nil {
			if sel, err := metav1.LabelSelectorAsSelector(c.NodeTopology); err == nil {
				sc.nodes = sel
			}
		}
		out = append(out, sc)
	}
	// The informer's order is a map's; a stable one makes the capacity
	// scoring reads stable.
	slices.SortFunc(out, func(a, b storageCapacity) int {
		return cmpStrings(a.obj.Namespace+"/"+a.obj.Name, b.obj.Namespace+"/"+b.obj.Name)
	})
	return true, out, nil
}

// check decides whether the claim can be provisioned on node, and returns
// the capacity with room for it there, when capacity is checked.
func (p *provisioning) check(node *v1.Node) (provisionVerdict, *storageCapacity, error) {
	if p.err != nil {
		return 0, nil, p.err
	}
	if p.unsupported || !matchTopology(p.topology, node.Labels) {
		return provisionImpossible, nil, nil
	}
	if !p.checkCapacity {
		return provisionOK, nil, nil
	}
	set := labels.Set(node.Labels)
	for i := range p.capacities {
		if c := &p.capacities[i]; c.nodes != nil && c.nodes.Matches(set) {
			return provisionOK, c, nil
		}
	}
	return provisionNoRoom, nil, nil
}

// matchTopology reports whether node labels satisfy one of the terms (nil
// terms: any node).
func matchTopology(terms [][]labels.Requirement, nodeLabels map[string]string) bool {
	if terms == nil {
		return true
	}
	set := labels.Set(nodeLabels)
	for _, t := range terms {
		ok := true
		for i := range t {
			if !t[i].Matches(set) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
