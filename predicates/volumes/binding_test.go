package volumes_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
)

// volumeZoneNodes are one node in zone a and one in zone b.
func volumeZoneNodes() []*v1.Node {
	return []*v1.Node{
		frameworktest.MakeNode().Name("n-a").Label(v1.LabelTopologyZone, "a").Obj(),
		frameworktest.MakeNode().Name("n-b").Label(v1.LabelTopologyZone, "b").Obj(),
	}
}

func inZone(zones ...string) v1.NodeSelectorTerm {
	return frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, zones...).Obj()
}

func TestVolumeBinding(t *testing.T) {
	unresolvable := func(reason string) frameworktest.StatusView {
		return frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, reason))
	}
	immediate := unresolvable("pod has unbound immediate PersistentVolumeClaims")
	affinity := unresolvable("node(s) didn't match PersistentVolume's node affinity")
	missingPV := unresolvable("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")
	wffc := frameworktest.MakeStorageClass("wffc", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer)
	imm := frameworktest.MakeStorageClass("fast", "csi.example.com", storagev1.VolumeBindingImmediate)
	pod := volumePod().PVC("data").Obj()
	claim := func() *frameworktest.PVCWrapper { return frameworktest.MakePVC("default", "data") }

	checkVolumeCases(t, newVolumeBinding, volumeZoneNodes, []volumeCase{
		{name: "no claims: skip", pod: volumePod().Obj(), wantPre: frameworktest.ViewOf(framework.NewStatus(framework.Skip))},
		{name: "missing claim", pod: pod, wantPre: unresolvable(`persistentvolumeclaim "data" not found`)},
		{name: "missing ephemeral claim", pod: volumePod().EphemeralVolume("scratch").Obj(),
			wantPre: unresolvable(`waiting for ephemeral volume controller to create the persistentvolumeclaim "new-scratch"`)},
		{name: "ephemeral claim of another pod", pod: volumePod().EphemeralVolume("scratch").Obj(),
			objects: []runtime.Object{frameworktest.MakePVC("default", "new-scratch").Bound("pv").Obj()},
			wantPre: unresolvable("PVC default/new-scratch was not created for pod default/new (pod is not owner)")},
		{name: "lost claim", pod: pod, objects: []runtime.Object{claim().Bound("pv").Phase(v1.ClaimLost).Obj()},
			wantPre: unresolvable(`persistentvolumeclaim "data" bound to non-existent persistentvolume "pv"`)},
		{name: "claim being deleted", pod: pod, objects: []runtime.Object{claim().Bound("pv").Terminating().Obj()},
			wantPre: unresolvable(`persistentvolumeclaim "data" is being deleted`)},
		{name: "unbound without a class", pod: pod, objects: []runtime.Object{claim().Obj()}, wantPre: immediate},
		{name: "unbound with an Immediate class", pod: pod, objects: []runtime.Object{claim().Class("fast").Obj(), imm}, wantPre: immediate},
		{name: "unbound with a class that does not exist", pod: pod, objects: []runtime.Object{claim().Class("gone").Obj()}, wantPre: immediate},
		{name: "pre-bound to a volume, not yet bound", pod: pod,
			objects: []runtime.Object{claim().Class("wffc").VolumeName("pv").Obj(), wffc}, wantPre: immediate},
		{name: "unbound WaitForFirstConsumer, provisioned anywhere", pod: pod, objects: []runtime.Object{claim().Class("wffc").Obj(), wffc}},
		{name: "immediate wins over WaitForFirstConsumer", pod: volumePod().PVC("data").PVC("later").Obj(),
			objects: []runtime.Object{claim().Class("wffc").Obj(), frameworktest.MakePVC("default", "later").Obj(), wffc},
			wantPre: immediate},
		{name: "class without a binding mode", pod: pod,
			objects: []runtime.Object{claim().Class("odd").Obj(), frameworktest.MakeStorageClass("odd", "csi.example.com", "")},
			wantPre: frameworktest.ViewOf(framework.AsStatus(errString(`VolumeBindingMode not set for StorageClass "odd"`)))},
		{name: "bound, volume without node affinity: skip", pod: pod,
			objects: []runtime.Object{claim().Bound("pv").Obj(), frameworktest.MakePV("pv").Obj()},
			wantPre: frameworktest.ViewOf(framework.NewStatus(framework.Skip))},
		{
			// Bound is spec.volumeName plus the annotation; the phase is
			// not read.
			name: "bound with phase still Pending",
			pod:  pod,
			objects: []runtime.Object{claim().Bound("pv").Phase(v1.ClaimPending).Obj(),
				frameworktest.MakePV("pv").NodeAffinity(inZone("a")).Obj()},
			want: map[string]frameworktest.StatusView{"n-b": affinity},
		},
		{name: "bound volume pinned to zone a", pod: pod,
			objects: []runtime.Object{claim().Bound("pv").Obj(), frameworktest.MakePV("pv").NodeAffinity(inZone("a")).Obj()},
			want:    map[string]frameworktest.StatusView{"n-b": affinity}},
		{name: "node affinity terms are ORed", pod: pod,
			objects: []runtime.Object{claim().Bound("pv").Obj(), frameworktest.MakePV("pv").NodeAffinity(inZone("c")).NodeAffinity(inZone("b")).Obj()},
			want:    map[string]frameworktest.StatusView{"n-a": affinity}},
		{
			// Only labels are matched, as kube-scheduler's CheckNodeAffinity
			// does: matchFields are ignored.
			name: "matchFields are ignored",
			pod:  pod,
			objects: []runtime.Object{claim().Bound("pv").Obj(), frameworktest.MakePV("pv").
				NodeAffinity(frameworktest.MakeNodeSelectorTerm().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "elsewhere").Obj()).Obj()},
		},
		{name: "invalid term matches no node", pod: pod,
			objects: []runtime.Object{claim().Bound("pv").Obj(), frameworktest.MakePV("pv").
				NodeAffinity(frameworktest.MakeNodeSelectorTerm().Gt("cores", "many").Obj()).Obj()},
			want: rejectedOn(affinity, "n-a", "n-b")},
		{name: "bound volume missing", pod: pod, objects: []runtime.Object{claim().Bound("pv").Obj()},
			want: rejectedOn(missingPV, "n-a", "n-b")},
		{
			// The first volume, in the pod's order, gives the reason: n-b
			// fails data's affinity before reaching the missing volume.
			name: "first failing volume gives the reason",
			pod:  volumePod().PVC("data").PVC("logs").Obj(),
			objects: []runtime.Object{
				claim().Bound("pv").Obj(), frameworktest.MakePV("pv").NodeAffinity(inZone("a")).Obj(),
				frameworktest.MakePVC("default", "logs").Bound("gone").Obj(),
			},
			want: map[string]frameworktest.StatusView{"n-a": missingPV, "n-b": affinity},
		},
		{
			// n-a's CSINode says the in-tree EBS plugin is migrated: the
			// volume's zone label reads there as the CSI driver's
			// topology (topology.ebs.csi.aws.com/zone), which n-a lacks.
			// n-b migrated GCE PD only: the volume has no affinity there.
			name: "bound in-tree volume on a node that migrated its plugin",
			pod:  pod,
			objects: []runtime.Object{claim().Bound("pv").Obj(), inTreeEBS("vol-1", "a"),
				migrating("n-a", "kubernetes.io/gce-pd,kubernetes.io/aws-ebs"), migrating("n-b", "kubernetes.io/gce-pd")},
			want: map[string]frameworktest.StatusView{"n-a": affinity},
		},
		{name: "bound in-tree volume, no node migrated its plugin: skip", pod: pod,
			objects: []runtime.Object{claim().Bound("pv").Obj(), inTreeEBS("vol-1", "a"), migrating("n-b", "kubernetes.io/gce-pd")},
			wantPre: frameworktest.ViewOf(framework.NewStatus(framework.Skip))},
		{name: "bound in-tree volume that does not translate", pod: pod,
			objects: []runtime.Object{claim().Bound("pv").Obj(), inTreeEBS("aws://a/bad", "a"), migrating("n-b", "kubernetes.io/aws-ebs")},
			want: map[string]frameworktest.StatusView{"n-b": frameworktest.ViewOf(framework.AsStatus(errString(
				"could not translate pv: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://a/bad)")))}},
		{name: "bound ephemeral claim owned by the pod", pod: volumePod().EphemeralVolume("scratch").Obj(),
			objects: []runtime.Object{
				frameworktest.MakePVC("default", "new-scratch").Bound("pv").ControlledBy(volumePod().Obj()).Obj(),
				frameworktest.MakePV("pv").NodeAffinity(inZone("b")).Obj(),
			},
			want: map[string]frameworktest.StatusView{"n-a": affinity}},
	})
}

// inTreeEBS is volume "pv", an in-tree AWS EBS volume labelled with its
// zone, as such volumes were.
func inTreeEBS(id, zone string) *v1.PersistentVolume {
	pv := frameworktest.MakePV("pv").Label(v1.LabelTopologyZone, zone).Obj()
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id}}
	return pv
}

// migrating is the CSINode of node, which says these in-tree plugins
// (comma-separated) are migrated to CSI there.
func migrating(node, plugins string) *storagev1.CSINode {
	cn := frameworktest.MakeCSINode(node, nil)
	cn.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: plugins}
	return cn
}

// newVolumeBinding builds VolumeBinding with the default arguments.
func newVolumeBinding(h framework.Handle) preFilterFilter {
	pl, err := volumes.NewBinding(volumes.DefaultBindingArgs(), h)
	if err != nil {
		panic(err)
	}
	return pl
}

// errString is an error with a fixed message.
type errString string

func (e errString) Error() string { return string(e) }
