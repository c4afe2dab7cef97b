package volumes_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
)

// Events as the informer handlers raise them.
var (
	evAssignedDelete  = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}
	evPVCAdd          = framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}
	evPVCUpdate       = framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Update}
	evCSINodeUpdate   = framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Update}
	evStorageClassAdd = framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add}
)

func pod(name string) *frameworktest.PodWrapper { return frameworktest.MakePod().Name(name) }

func TestVolumeHints(t *testing.T) {
	p := pod("p").PVC("data").Obj()
	eph := pod("e").EphemeralVolume("scratch").Obj()
	mine := frameworktest.MakePVC("default", "data").Obj()
	other := frameworktest.MakePVC("default", "logs").Obj()
	elsewhere := frameworktest.MakePVC("other", "data").Obj()
	generated := frameworktest.MakePVC("default", "e-scratch").Obj()
	sharer := pod("sharer").PVC("data").Node("n1").Obj()
	unrelated := pod("u").PVC("logs").Node("n1").Obj()
	inlineEBS := pod("inline").Obj()
	inlineEBS.Spec.Volumes = []v1.Volume{{Name: "disk", VolumeSource: v1.VolumeSource{
		AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}}}
	inlineOnNode := inlineEBS.DeepCopy()
	inlineOnNode.Name, inlineOnNode.Spec.NodeName = "holder", "n1"
	emptyDirOnNode := pod("scratch").Node("n1").Obj()
	emptyDirOnNode.Spec.Volumes = []v1.Volume{{Name: "tmp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	attachment := func(attacher string) *storagev1.VolumeAttachment {
		return &storagev1.VolumeAttachment{Spec: storagev1.VolumeAttachmentSpec{Attacher: attacher, NodeName: "n1"}}
	}
	ebsAttachment, pdAttachment := attachment("ebs.csi.aws.com"), attachment("pd.csi.storage.gke.io")
	evDetached := framework.ClusterEvent{Resource: framework.VolumeAttachment, ActionType: framework.Delete}
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nil, nil))
	vb, err := volumes.NewBinding(volumes.DefaultBindingArgs(), h)
	if err != nil {
		t.Fatal(err)
	}
	claimCases := []frameworktest.HintCase{
		{Name: "own claim added", Pod: p, Event: evPVCAdd, New: mine, Want: framework.Queue},
		{Name: "other claim added", Pod: p, Event: evPVCAdd, New: other, Want: framework.QueueSkip},
		{Name: "same name in another namespace", Pod: p, Event: evPVCAdd, New: elsewhere, Want: framework.QueueSkip},
		{Name: "generated ephemeral claim added", Pod: eph, Event: evPVCAdd, New: generated, Want: framework.Queue},
	}
	t.Run("VolumeBinding", func(t *testing.T) {
		frameworktest.CheckHints(t, vb, append(claimCases,
			frameworktest.HintCase{Name: "own claim bound", Pod: p, Event: evPVCUpdate, Old: mine, New: mine, Want: framework.Queue},
			frameworktest.HintCase{Name: "CSINode changed", Pod: p, Event: evCSINodeUpdate, Old: &struct{}{}, New: &struct{}{}, Want: framework.Queue},
			frameworktest.HintCase{Name: "assigned pod deleted: not registered", Pod: p, Event: evAssignedDelete, Old: sharer, Want: framework.QueueSkip},
		))
	})
	t.Run("VolumeZone", func(t *testing.T) {
		frameworktest.CheckHints(t, volumes.NewZone(h), append(claimCases,
			frameworktest.HintCase{Name: "StorageClass added", Pod: p, Event: evStorageClassAdd, New: &struct{}{}, Want: framework.Queue},
		))
	})
	t.Run("VolumeRestrictions", func(t *testing.T) {
		frameworktest.CheckHints(t, volumes.NewRestrictions(h), append(claimCases,
			frameworktest.HintCase{Name: "pod sharing the claim deleted", Pod: p, Event: evAssignedDelete, Old: sharer, Want: framework.Queue},
			frameworktest.HintCase{Name: "pod with another claim deleted", Pod: p, Event: evAssignedDelete, Old: unrelated, Want: framework.QueueSkip},
			frameworktest.HintCase{Name: "claim updated: not registered", Pod: p, Event: evPVCUpdate, Old: mine, New: mine, Want: framework.QueueSkip},
		))
	})
	t.Run("NodeVolumeLimits", func(t *testing.T) {
		frameworktest.CheckHints(t, volumes.NewNodeLimits(h), append(claimCases,
			frameworktest.HintCase{Name: "pod with a claim deleted", Pod: p, Event: evAssignedDelete, Old: unrelated, Want: framework.Queue},
			frameworktest.HintCase{Name: "pod without volumes deleted", Pod: p, Event: evAssignedDelete, Old: pod("x").Node("n1").Obj(), Want: framework.QueueSkip},
			// An in-tree volume written inline (EBS here) counts against
			// its CSI driver's limit: the pod that held it frees a slot.
			frameworktest.HintCase{Name: "pod with an inline in-tree volume deleted", Pod: inlineEBS, Event: evAssignedDelete, Old: inlineOnNode, Want: framework.Queue},
			frameworktest.HintCase{Name: "pod with an inline emptyDir deleted", Pod: inlineEBS, Event: evAssignedDelete, Old: emptyDirOnNode, Want: framework.QueueSkip},
			frameworktest.HintCase{Name: "pod on a node the pod cannot use deleted", Pod: pod("pinned").PVC("data").Node("n2").Obj(), Event: evAssignedDelete, Old: unrelated, Want: framework.QueueSkip},
			frameworktest.HintCase{Name: "CSINode changed", Pod: p, Event: evCSINodeUpdate, Old: &struct{}{}, New: &struct{}{}, Want: framework.Queue},
			frameworktest.HintCase{Name: "volume detached, pod with a claim", Pod: p, Event: evDetached, Old: ebsAttachment, Want: framework.Queue},
			frameworktest.HintCase{Name: "volume detached, pod with an ephemeral volume", Pod: eph, Event: evDetached, Old: ebsAttachment, Want: framework.Queue},
			frameworktest.HintCase{Name: "volume detached, inline volume of its driver", Pod: inlineEBS, Event: evDetached, Old: ebsAttachment, Want: framework.Queue},
			frameworktest.HintCase{Name: "volume detached, inline volume of another driver", Pod: inlineEBS, Event: evDetached, Old: pdAttachment, Want: framework.QueueSkip},
			frameworktest.HintCase{Name: "volume detached, pod without volumes", Pod: pod("x").Obj(), Event: evDetached, Old: ebsAttachment, Want: framework.QueueSkip},
		))
	})
}
