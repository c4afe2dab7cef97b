package volumes

// VolumeBinding's binding cycle: Reserve assumes what Filter found on the
// chosen node, PreBind writes it and waits for the PV controller, and the
// capacity score.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/yardmaster-io/yardmaster/framework"
)

// bindingRecheck is how often PreBind looks at its claims even when no
// informer event woke it: a backstop, since a node's labels, which the
// check reads too, are not watched here.
const bindingRecheck = 2 * time.Second

// Reserve assumes, in the volume cache, the volumes chosen on nodeName
// bound to their claims and the claims to provision there annotated with
// it, so that the next cycles see them taken.
func (pl *Binding) Reserve(_ context.Context, cs *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	s, err := framework.ReadAs[*volumeBindingState](cs, volumeBindingStateKey)
	if err != nil {
		return nil // no claims: nothing to reserve
	}
	s.node = nodeName
	if pl.delayedClaimsBound(s) {
		s.allBound = true
		return nil
	}
	var node *v1.Node
	if h := pl.handle; h != nil && h.SnapshotSharedLister() != nil {
		if ni, err := h.SnapshotSharedLister().Get(nodeName); err == nil {
			node = ni.Node()
		}
	}
	if node == nil {
		return framework.AsStatus(fmt.Errorf("node %q is not in the snapshot", nodeName))
	}
	found, conflicts, err := s.findPodVolumes(node, true)
	if err != nil {
		return framework.AsStatus(err)
	}
	if conflicts != 0 {
		// Filter admitted the node against the same cache, in this cycle.
		return framework.AsStatus(fmt.Errorf("the volumes for node %q changed since Filter", nodeName))
	}
	reserved := &podVolumes{}
	undo := func() {
		for _, b := range reserved.static {
			pl.cache.restorePV(b.pv)
		}
		for _, d := range reserved.dynamic {
			pl.cache.restorePVC(d.claim)
		}
	}
	for _, b := range found.static {
		pv, dirty, err := storagehelpers.GetBindVolumeToClaim(b.pv, b.claim)
		if err != nil {
			undo()
			return framework.AsStatus(err)
		}
		if dirty {
			if err := pl.cache.assumePV(pv); err != nil {
				undo()
				return framework.AsStatus(err)
			}
		}
		reserved.static = append(reserved.static, staticBinding{pv: pv, claim: b.claim})
	}
	for _, d := range found.dynamic {
		claim := d.claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, storagehelpers.AnnSelectedNode, nodeName)
		if err := pl.cache.assumePVC(claim); err != nil {
			undo()
			return framework.AsStatus(err)
		}
		reserved.dynamic = append(reserved.dynamic, dynamicProvision{claim: claim, capacity: d.capacity})
	}
	s.reserved = reserved
	return nil
}

// delayedClaimsBound reports whether every claim PreFilter found unbound
// is bound by now (kube-scheduler's arePodVolumesBound, at Reserve).
func (pl *Binding) delayedClaimsBound(s *volumeBindingState) bool {
	for _, dc := range s.delayed {
		claim, err := pl.cache.getPVC(dc.claim.Namespace, dc.claim.Name)
		if err != nil || !isClaimFullyBound(claim) {
			return false
		}
	}
	return true
}

// Unreserve takes back what Reserve assumed. A volume or claim whose write
// PreBind already made is the informer's to refresh.
func (pl *Binding) Unreserve(_ context.Context, cs *framework.CycleState, _ *v1.Pod, _ string) {
	s, err := framework.ReadAs[*volumeBindingState](cs, volumeBindingStateKey)
	if err != nil || s.reserved == nil {
		return
	}
	for _, b := range s.reserved.static {
		pl.cache.restorePV(b.pv)
	}
	for _, d := range s.reserved.dynamic {
		pl.cache.restorePVC(d.claim)
	}
}

// PreBindPreFlight says whether PreBind has claims to bind.
func (pl *Binding) PreBindPreFlight(_ context.Context, cs *framework.CycleState, _ *v1.Pod, nodeName string) *framework.Status {
	s, err := framework.ReadAs[*volumeBindingState](cs, volumeBindingStateKey)
	if err != nil || s.allBound {
		return framework.NewStatus(framework.Skip)
	}
	if s.reserved == nil || s.node != nodeName {
		return framework.AsStatus(fmt.Errorf("no pod volume found for node %q", nodeName))
	}
	return nil
}

// PreBind writes what Reserve assumed (each volume's claimRef, each claim
// to provision's selected node) and waits until the PV controller reports
// every claim bound to a volume on the node.
func (pl *Binding) PreBind(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	s, err := framework.ReadAs[*volumeBindingState](cs, volumeBindingStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.allBound {
		return nil
	}
	if s.reserved == nil || s.node != nodeName {
		return framework.AsStatus(fmt.Errorf("no pod volume found for node %q", nodeName))
	}
	if pl.client == nil {
		return framework.AsStatus(errors.New("no API client to bind volumes with"))
	}
	if err := pl.writeBindings(ctx, s.reserved); err != nil {
		return framework.AsStatus(err)
	}
	if err := pl.waitForBindings(ctx, nodeName, s.reserved); err != nil {
		return framework.AsStatus(fmt.Errorf("binding volumes: %w", err))
	}
	return nil
}

// writeBindings updates each chosen volume with its claimRef and each
// claim to provision with its selected node, and keeps the objects the
// API server returned. A conflict (someone changed the object since the
// informer saw it) fails the attempt, which is then retried.
//
// A failed write's error is returned as the API server gave it, not
// wrapped: it names the object already, and kube-scheduler's
// FailedScheduling event carries it so ("running PreBind plugin
// "VolumeBinding": Operation cannot be fulfilled on persistentvolumes
// ..."), which yardmaster's must match.
func (pl *Binding) writeBindings(ctx context.Context, pvs *podVolumes) error {
	for i := range pvs.static {
		b := &pvs.static[i]
		pv, err := pl.client.CoreV1().PersistentVolumes().Update(ctx, b.pv, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		b.pv = pv
	}
	for i := range pvs.dynamic {
		d := &pvs.dynamic[i]
		claim, err := pl.client.CoreV1().PersistentVolumeClaims(d.claim.Namespace).Update(ctx, d.claim, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		d.claim = claim
	}
	return nil
}

// waitForBindings waits, woken by the informers' events on the claims and
// volumes concerned (and every bindingRecheck), until checkBindings says
// every claim is bound, or it fails, or bindTimeout runs out.
func (pl *Binding) waitForBindings(ctx context.Context, nodeName string, pvs *podVolumes) error {
	ctx, cancel := context.WithTimeout(ctx, pl.bindTimeout)
	defer cancel()
	var keys []string
	for {
		w, stop := pl.cache.watch(keys)
		done, pending, watched, err := pl.checkBindings(nodeName, pvs)
		if err != nil || done {
			stop()
			return err
		}
		if !slices.Equal(watched, keys) {
			// A claim named its volume: watch that too, and look again.
			stop()
			keys = watched
			continue
		}
		t := time.NewTimer(bindingRecheck)
		select {
		case <-w.ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			stop()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("timed out after %v waiting for %s", pl.bindTimeout, pending)
			}
			return context.Cause(ctx)
		}
		t.Stop()
		stop()
	}
}

// checkBindings is kube-scheduler's checkBindings on the informers'
// objects: done when every claim is fully bound to a volume whose node
// affinity admits the node (the volume it is bound to, which kube-
// scheduler does not check for a volume it chose). It fails when a volume's claimRef or a
// claim's selected node was reset (the PV controller or the provisioner
// gave up) or a volume is gone. pending says what is still awaited, and
// watched lists the keys of the objects to wait on.
func (pl *Binding) checkBindings(nodeName string, pvs *podVolumes) (done bool, pending string, watched []string, err error) {
	if pl.nodes == nil {
		return false, "", nil, errors.New("no node lister")
	}
	node, err := pl.nodes.Get(nodeName)
	if err != nil {
		return false, "", nil, fmt.Errorf("failed to get node %q: %w", nodeName, err)
	}
	// Volumes of in-tree plugins the node migrated to CSI are checked as
	// their CSI driver sees them, as in Filter.
	csiNode, _ := pl.listers.csiNodes.Get(nodeName)
	done = true
	wait := func(what string) {
		if done {
			pending = what
		}
		done = false
	}
	for _, b := range pvs.static {
		watched = append(watched, pvKey(b.pv.Name), pvcKey(b.claim.Namespace, b.claim.Name))
		pv, err := pl.cache.informerPV(b.pv.Name)
		if err != nil {
			return false, "", nil, fmt.Errorf("failed to check binding: %w", err)
		}
		claim, err := pl.cache.informerPVC(b.claim.Namespace, b.claim.Name)
		if err != nil {
			return false, "", nil, fmt.Errorf("failed to check binding: %w", err)
		}
		if compareVersions(b.pv.ResourceVersion, pv.ResourceVersion) > 0 {
			wait(fmt.Sprintf("the informer to see persistentvolume %q bound to claim %s/%s", pv.Name, claim.Namespace, claim.Name))
			continue
		}
		if pv, err = pl.onNode(pv, csiNode); err != nil {
			return false, "", nil, fmt.Errorf("failed to translate pv to csi: %w", err)
		}
		if err := storagehelpers.CheckNodeAffinity(pv, node.Labels); err != nil {
			return false, "", nil, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, nodeName, err)
		}
		if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "" {
			return false, "", nil, fmt.Errorf("ClaimRef got reset for pv %q", pv.Name)
		}
		if !isClaimFullyBound(claim) {
			wait(fmt.Sprintf("the PV controller to bind claim %s/%s to persistentvolume %q", claim.Namespace, claim.Name, pv.Name))
			continue
		}
		if claim.Spec.VolumeName == pv.Name {
			continue
		}
		// The claim got another volume: one an earlier attempt gave it,
		// its claimRef written but the answer lost, and the PV
		// controller bound it to that one first. kube-scheduler takes
		// any bound claim as done, and may bind the pod where that
		// volume cannot follow; here the pod goes only where it can.
		watched = append(watched, pvKey(claim.Spec.VolumeName))
		other, err := pl.claimedVolume(claim)
		if err != nil {
			return false, "", nil, err
		}
		if other == nil {
			wait(fmt.Sprintf("persistentvolume %q, bound to claim %s/%s", claim.Spec.VolumeName, claim.Namespace, claim.Name))
			continue
		}
		if other, err = pl.onNode(other, csiNode); err != nil {
			return false, "", nil, fmt.Errorf("failed to translate pv to csi: %w", err)
		}
		if err := storagehelpers.CheckNodeAffinity(other, node.Labels); err != nil {
			return false, "", nil, fmt.Errorf("claim %s/%s got bound to pv %q, not %q, whose node affinity doesn't match node %q: %w",
				claim.Namespace, claim.Name, other.Name, pv.Name, nodeName, err)
		}
	}
	for _, d := range pvs.dynamic {
		watched = append(watched, pvcKey(d.claim.Namespace, d.claim.Name))
		claim, err := pl.cache.informerPVC(d.claim.Namespace, d.claim.Name)
		if err != nil {
			return false, "", nil, fmt.Errorf("failed to check provisioning pvc: %w", err)
		}
		if compareVersions(d.claim.ResourceVersion, claim.ResourceVersion) > 0 {
			wait(fmt.Sprintf("the informer to see claim %s/%s's selected node", claim.Namespace, claim.Name))
			continue
		}
		// Only a claim without any annotation was "reset": the external
		// provisioner that gives up on a node removes just this one
		// (the PV controller's storage-provisioner annotations stay),
		// and that reads "provisioning failed", as in kube-scheduler.
		if claim.Annotations == nil {
			return false, "", nil, fmt.Errorf("selectedNode annotation reset for PVC %q", claim.Name)
		}
		if claim.Annotations[storagehelpers.AnnSelectedNode] != nodeName {
			return false, "", nil, fmt.Errorf("provisioning failed for PVC %q", claim.Name)
		}
		if claim.Spec.VolumeName == "" {
			wait(fmt.Sprintf("a volume to be provisioned for claim %s/%s", claim.Namespace, claim.Name))
			continue
		}
		watched = append(watched, pvKey(claim.Spec.VolumeName))
		pv, err := pl.claimedVolume(claim)
		if err != nil {
			return false, "", nil, err
		}
		if pv == nil {
			wait(fmt.Sprintf("persistentvolume %q provisioned for claim %s/%s", claim.Spec.VolumeName, claim.Namespace, claim.Name))
			continue
		}
		if pv, err = pl.onNode(pv, csiNode); err != nil {
			return false, "", nil, err
		}
		if err := storagehelpers.CheckNodeAffinity(pv, node.Labels); err != nil {
			return false, "", nil, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, nodeName, err)
		}
		if !isClaimFullyBound(claim) {
			wait(fmt.Sprintf("the PV controller to bind claim %s/%s to persistentvolume %q", claim.Namespace, claim.Name, pv.Name))
		}
	}
	return done, pending, watched, nil
}

// claimedVolume is the volume claim is bound to, as the informer shows
// it; nil when the informer has not shown it yet.
func (pl *Binding) claimedVolume(claim *v1.PersistentVolumeClaim) (*v1.PersistentVolume, error) {
	pv, err := pl.cache.informerPV(claim.Spec.VolumeName)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get pv %q from cache: %w", claim.Spec.VolumeName, err)
	}
	return pv, nil
}

// PreScore skips scoring unless the pod has claims to bind: a pod whose
// claims are all bound scores 0 everywhere (kube-scheduler v1.37 scores
// it 0 on every node, which adds the same nothing).
func (pl *Binding) PreScore(_ context.Context, cs *framework.CycleState, _ *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	if pl.shape == nil {
		return framework.NewStatus(framework.Skip)
	}
	if s, err := framework.ReadAs[*volumeBindingState](cs, volumeBindingStateKey); err != nil || len(s.delayed) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Score rates how full the volumes the pod would get on the node are, per
// storage class, through the shape, averaged over the classes and rounded
// (kube-scheduler v1.37's StorageCapacityScoring, volumebinding's
// Score and buildScorerFunction): the volumes chosen when there are any
// (requested over their capacity), else the claims to provision (their
// requests over the capacity of the CSIStorageCapacity each would come
// from, counted once per class; claims whose driver publishes no capacity
// are left out). A class whose requests exceed its capacity, or with no
// capacity, counts as full.
func (pl *Binding) Score(_ context.Context, cs *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*volumeBindingState](cs, volumeBindingStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	if node == nil || pl.shape == nil {
		return 0, nil
	}
	var static, dynamic classUsages
	_, err = s.visitPodVolumes(node, volumeVisitor{
		static: func(b staticBinding) {
			u := static.of(b.pv.Spec.StorageClassName)
			req := requestOf(b.claim)
			u.requested += req.Value()
			capacity := b.pv.Spec.Capacity[v1.ResourceStorage]
			u.capacity += capacity.Value()
		},
		dynamic: func(d dynamicProvision) {
			if d.capacity == nil {
				return
			}
			u := dynamic.of(storagehelpers.GetPersistentVolumeClaimClass(d.claim))
			// The capacity is the class's on the node, not a sum: two
			// claims provisioned from it share it.
			u.capacity = 0
			if c := d.capacity.obj.Capacity; c != nil {
				u.capacity = c.Value()
			}
			req := requestOf(d.claim)
			u.requested += req.Value()
		},
	})
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	// The volumes chosen when there are any, as kube-scheduler scores.
	usages := &dynamic
	if static.n > 0 {
		usages = &static
	}
	if usages.n == 0 {
		return 0, nil
	}
	var sum int64
	for i := range usages.n {
		u := usages.at(i)
		utilization := int64(framework.MaxShapeUtilization)
		if u.capacity != 0 && u.requested <= u.capacity {
			utilization = u.requested * framework.MaxShapeUtilization / u.capacity
		}
		sum += pl.shape.At(utilization)
	}
	return int64(math.Round(float64(sum) / float64(usages.n))), nil
}

// classUsage is what a pod's claims of one storage class would request of
// the capacity they get on a node.
type classUsage struct {
	class               string
	requested, capacity int64
}

// classUsages are a node's classUsage by class, in the order first seen.
// A pod's claims name a class or two: the first four live in the value
// (on Score's stack), found by a linear search, so the per-node score
// allocates nothing; more classes than that go to a slice.
type classUsages struct {
	n     int
	first [4]classUsage
	more  []classUsage
}

// of returns class's entry, adding one when there is none.
func (c *classUsages) of(class string) *classUsage {
	for i := range c.n {
		if u := c.at(i); u.class == class {
			return u
		}
	}
	if c.n < len(c.first) {
		c.first[c.n] = classUsage{class: class}
	} else {
		c.more = append(c.more, classUsage{class: class})
	}
	c.n++
	return c.at(c.n - 1)
}

// at returns the i-th entry.
func (c *classUsages) at(i int) *classUsage {
	if i < len(c.first) {
		return &c.first[i]
	}
	return &c.more[i-len(c.first)]
}

// ScoreExtensions returns nil: scores are already in [0, 100].
func (*Binding) ScoreExtensions() framework.ScoreExtensions { return nil }
