package volumes

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// RestrictionsName is the name of the VolumeRestrictions plugin.
const RestrictionsName = "VolumeRestrictions"

// The reasons VolumeRestrictions rejects with (kube-scheduler v1.37's).
const (
	// ReasonDiskConflict is given for a node where a pod already mounts
	// the same GCE PD, AWS EBS volume, iSCSI target or Ceph RBD image in a
	// way the new pod's mount conflicts with.
	ReasonDiskConflict = "node(s) had no available disk"
	// ReasonReadWriteOncePodConflict is given, on every node, when a claim
	// with the ReadWriteOncePod access mode is already used by a pod
	// anywhere in the cluster.
	ReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

// The statuses of those reasons, shared by every rejection: the scheduler
// never changes a status a filter returns.
var (
	statusDiskConflict             = framework.NewStatus(framework.Unschedulable, ReasonDiskConflict)
	statusReadWriteOncePodConflict = framework.NewStatus(framework.Unschedulable, ReasonReadWriteOncePodConflict)
)

// volumeRestrictionsStateKey is where PreFilter leaves its verdict.
const volumeRestrictionsStateKey framework.StateKey = "PreFilter" + RestrictionsName

// volumeRestrictionsState says what Filter checks.
type volumeRestrictionsState struct {
	// checkDisks is set when the pod has inline volumes that conflict with
	// other pods' on the same node.
	checkDisks bool
	// rwopClaims are the pod's ReadWriteOncePod claims
	// ("namespace/name"); conflicts counts their uses by scheduled (or
	// assumed) pods, one per volume that names one.
	rwopClaims []string
	conflicts  int
}

// Clone returns a copy whose conflicts AddPod and RemovePod may change.
func (s *volumeRestrictionsState) Clone() framework.StateData {
	c := *s
	return &c
}

// uses counts the volumes of pod that name one of the claims.
func (s *volumeRestrictionsState) uses(pod *v1.Pod) int {
	n := 0
	for i := range pod.Spec.Volumes {
		if c := pod.Spec.Volumes[i].PersistentVolumeClaim; c != nil && slices.Contains(s.rwopClaims, pod.Namespace+"/"+c.ClaimName) {
			n++
		}
	}
	return n
}

// Restrictions is VolumeRestrictions, the filter for volumes that only
// one pod may use: a ReadWriteOncePod claim that another pod uses rejects every node, and an
// inline GCE PD, AWS EBS, iSCSI or RBD volume rejects the nodes where
// another pod mounts it in a conflicting way.
type Restrictions struct {
	listers storageListers
}

var (
	_ framework.PreFilterPlugin     = &Restrictions{}
	_ framework.PreFilterExtensions = &Restrictions{}
	_ framework.FilterPlugin        = &Restrictions{}
)

// NewRestrictions returns the filter, reading claims through h's
// informers.
func NewRestrictions(h framework.Handle) *Restrictions {
	return &Restrictions{listers: newStorageListers(h)}
}

// Name returns RestrictionsName.
func (*Restrictions) Name() string { return RestrictionsName }

// PreFilter looks up the pod's claims (spec.volumes[].persistentVolumeClaim;
// a missing one rejects the pod, UnschedulableAndUnresolvable) and checks
// whether any ReadWriteOncePod claim among them is in use, cluster-wide,
// from the snapshot's per-node claim reference counts. It returns Skip when
// the pod has neither an inline disk nor a ReadWriteOncePod claim.
func (pl *Restrictions) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	s := &volumeRestrictionsState{}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if needsDiskConflictCheck(vol) {
			s.checkDisks = true
		}
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		claim, err := pl.listers.claims.PersistentVolumeClaims(pod.Namespace).Get(vol.PersistentVolumeClaim.ClaimName)
		if err != nil {
			return nil, statusOfLookup(err)
		}
		// A claim the pod mounts twice is one claim: its uses are counted
		// once, as RemovePod takes a victim's off once.
		if key := pod.Namespace + "/" + claim.Name; slices.Contains(claim.Spec.AccessModes, v1.ReadWriteOncePod) && !slices.Contains(s.rwopClaims, key) {
			s.rwopClaims = append(s.rwopClaims, key)
		}
	}
	for _, key := range s.rwopClaims {
		s.conflicts += claimUses(nodes, key)
	}
	// A ReadWriteOncePod claim nobody uses yet is not skipped: a pod
	// nominated to a node may use it (AddPod). kube-scheduler v1.37 skips
	// it, and then never counts a nominated pod's use (its framework runs
	// no AddPod for a skipped plugin): a pod of the claim would take it
	// beside the preemptor and be preempted for it. Kept out.
	if !s.checkDisks && len(s.rwopClaims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(volumeRestrictionsStateKey, s)
	return nil, nil
}

// claimUses counts the pods' volumes, on every node, that name the claim
// "namespace/name".
func claimUses(nodes []*framework.NodeInfo, key string) int {
	n := 0
	for _, ni := range nodes {
		n += ni.PVCRefCounts[key]
	}
	return n
}

// AddPod counts the uses of the pod's ReadWriteOncePod claims by
// podInfoToAdd in, in a state cloned for a what-if (preemption): evicting
// the pod that holds such a claim frees it.
func (pl *Restrictions) AddPod(_ context.Context, state *framework.CycleState, _ *v1.Pod, podInfoToAdd *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	return pl.update(state, podInfoToAdd, 1)
}

// RemovePod counts podInfoToRemove's uses out, as AddPod counts them in.
func (pl *Restrictions) RemovePod(_ context.Context, state *framework.CycleState, _ *v1.Pod, podInfoToRemove *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	return pl.update(state, podInfoToRemove, -1)
}

func (pl *Restrictions) update(state *framework.CycleState, pi *framework.PodInfo, sign int) *framework.Status {
	s, err := framework.ReadAs[*volumeRestrictionsState](state, volumeRestrictionsStateKey)
	if err != nil {
		return nil // PreFilter skipped: no claim of the pod is in use
	}
	s.conflicts += sign * s.uses(pi.Pod)
	return nil
}

// Filter rejects a node where another pod mounts one of the pod's inline
// disks in a conflicting way, then every node when a ReadWriteOncePod
// claim is taken. Both are Unschedulable: the other pod may go away.
func (pl *Restrictions) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*volumeRestrictionsState](state, volumeRestrictionsStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.checkDisks && hasDiskConflict(pod, nodeInfo) {
		return statusDiskConflict
	}
	if s.conflicts > 0 {
		return statusReadWriteOncePodConflict
	}
	return nil
}

// needsDiskConflictCheck reports whether vol is an inline volume that only
// one pod per node may mount read-write.
func needsDiskConflictCheck(vol *v1.Volume) bool {
	return vol.GCEPersistentDisk != nil || vol.AWSElasticBlockStore != nil || vol.RBD != nil || vol.ISCSI != nil
}

// hasDiskConflict reports whether a pod on the node mounts one of pod's
// inline disks in a conflicting way.
func hasDiskConflict(pod *v1.Pod, nodeInfo *framework.NodeInfo) bool {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if !needsDiskConflictCheck(vol) {
			continue
		}
		for _, pi := range nodeInfo.Pods {
			for j := range pi.Pod.Spec.Volumes {
				if disksConflict(vol, &pi.Pod.Spec.Volumes[j]) {
					return true
				}
			}
		}
	}
	return false
}

// disksConflict is kube-scheduler's rule per volume type:
//   - GCE PD: the same disk, unless both mount it read-only;
//   - AWS EBS: the same volume ID, always;
//   - iSCSI: the same IQN, unless both mount it read-only;
//   - Ceph RBD: a shared monitor, the same pool and image, unless both
//     mount it read-only.
func disksConflict(a, b *v1.Volume) bool {
	switch {
	case a.GCEPersistentDisk != nil && b.GCEPersistentDisk != nil:
		x, y := a.GCEPersistentDisk, b.GCEPersistentDisk
		return x.PDName == y.PDName && !(x.ReadOnly && y.ReadOnly)
	case a.AWSElasticBlockStore != nil && b.AWSElasticBlockStore != nil:
		return a.AWSElasticBlockStore.VolumeID == b.AWSElasticBlockStore.VolumeID
	case a.ISCSI != nil && b.ISCSI != nil:
		x, y := a.ISCSI, b.ISCSI
		return x.IQN == y.IQN && !(x.ReadOnly && y.ReadOnly)
	case a.RBD != nil && b.RBD != nil:
		x, y := a.RBD, b.RBD
		return x.RBDPool == y.RBDPool && x.RBDImage == y.RBDImage && !(x.ReadOnly && y.ReadOnly) &&
			slices.ContainsFunc(x.CephMonitors, func(m string) bool { return slices.Contains(y.CephMonitors, m) })
	}
	return false
}
