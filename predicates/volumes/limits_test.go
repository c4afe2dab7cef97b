package volumes_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
)

const testDriver = "csi.example.com"

func limitNodes() []*v1.Node {
	return []*v1.Node{
		frameworktest.MakeNode().Name("n1").Obj(),
		frameworktest.MakeNode().Name("n2").Obj(),
		frameworktest.MakeNode().Name("n3").Obj(),
	}
}

// boundCSI returns a claim bound to a CSI volume of testDriver with the
// given handle, and the volume.
func boundCSI(claim, handle string) []runtime.Object {
	return []runtime.Object{
		frameworktest.MakePVC("default", claim).Bound("pv-" + claim).Obj(),
		frameworktest.MakePV("pv-"+claim).CSI(testDriver, handle).Obj(),
	}
}

func objs(groups ...[]runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func TestNodeVolumeLimits(t *testing.T) {
	exceeded := frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable, "node(s) exceed max volume count"))
	skip := frameworktest.ViewOf(framework.NewStatus(framework.Skip))
	// n1 attaches 2 volumes of testDriver, n2 1, n3 has no CSINode.
	limits := []runtime.Object{
		frameworktest.MakeCSINode("n1", map[string]int32{testDriver: 2, "other.example.com": 0}),
		frameworktest.MakeCSINode("n2", map[string]int32{testDriver: 1}),
	}
	// c1 is attached to n1, c2 to n2.
	existing := []*v1.Pod{
		frameworktest.MakePod().Name("p1").Node("n1").PVC("c1").Obj(),
		frameworktest.MakePod().Name("p2").Node("n2").PVC("c2").Obj(),
	}
	cluster := objs(limits, boundCSI("c1", "h1"), boundCSI("c2", "h2"))
	wffc := frameworktest.MakeStorageClass("wffc", testDriver, storagev1.VolumeBindingWaitForFirstConsumer)

	checkVolumeCases(t, func(h framework.Handle) preFilterFilter { return volumes.NewNodeLimits(h) }, limitNodes, []volumeCase{
		{name: "no volumes: skip", pod: volumePod().Obj(), wantPre: skip},
		// A claim the pod cannot have rejects every node in Filter, as
		// kube-scheduler's CSILimits does, not in PreFilter, which would
		// run before VolumeBinding's and replace its message.
		{name: "missing claim", pod: volumePod().PVC("nope").Obj(), objects: cluster,
			want: rejectedOn(frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, `looking up PVC default/nope: persistentvolumeclaim "nope" not found`)), "n1", "n2", "n3")},
		{name: "ephemeral volume's claim not made yet", pod: volumePod().EphemeralVolume("scratch").Obj(), objects: cluster,
			want: rejectedOn(frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, `looking up PVC default/new-scratch: persistentvolumeclaim "new-scratch" not found`)), "n1", "n2", "n3")},
		{
			name: "ephemeral volume's claim made for another pod", pod: volumePod().EphemeralVolume("scratch").Obj(),
			objects: objs(cluster, []runtime.Object{
				frameworktest.MakePVC("default", "new-scratch").Bound("pv-s").ControlledBy(frameworktest.MakePod().Name("new").UID("other-uid").Obj()).Obj(),
				frameworktest.MakePV("pv-s").CSI(testDriver, "hs").Obj(),
			}),
			want: rejectedOn(frameworktest.ViewOf(framework.NewStatus(framework.Error, "PVC default/new-scratch was not created for pod default/new (pod is not owner)")), "n1", "n2", "n3"),
		},
		{
			// n1: 1 attached + 1 new = 2 ≤ 2; n2: 1 + 1 = 2 > 1; n3: no limit.
			name: "one new volume", pod: volumePod().PVC("new").Obj(), pods: existing,
			objects: objs(cluster, boundCSI("new", "hnew")),
			want:    map[string]frameworktest.StatusView{"n2": exceeded},
		},
		{
			// n1: 1 + 2 = 3 > 2; n2: 1 + 2 = 3 > 1.
			name: "two new volumes", pod: volumePod().PVC("new").PVC("new2").Obj(), pods: existing,
			objects: objs(cluster, boundCSI("new", "hnew"), boundCSI("new2", "hnew2")),
			want:    rejectedOn(exceeded, "n1", "n2"),
		},
		{
			// The same claim twice is one volume: n1 1 + 1 = 2.
			name: "one volume used twice by the pod", pod: volumePod().PVC("new").Volume(v1.Volume{Name: "again", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "new"}}}).Obj(),
			pods: existing, objects: objs(cluster, boundCSI("new", "hnew")),
			want: map[string]frameworktest.StatusView{"n2": exceeded},
		},
		{
			// c2 is already attached to n2: 1 + 0 = 1 ≤ 1; n1 1 + 1 = 2:
			// no node is over. (Not skipped: a nominated pod or a victim
			// of preemption may change that.)
			name: "a volume already attached to the node counts once", pod: volumePod().PVC("c2").Obj(), pods: existing,
			objects: cluster,
		},
		{
			// Both limits are 0 with a volume attached: n2 is over its
			// limit already, but the pod adds no volume there (c2 is
			// attached), so it passes, as in kube-scheduler, which checks
			// only the drivers the pod adds volumes of. n1: 1 + 1 > 0.
			name: "a node already over a limit, the pod adding nothing there", pod: volumePod().PVC("c2").Obj(), pods: existing,
			objects: objs([]runtime.Object{
				frameworktest.MakeCSINode("n1", map[string]int32{testDriver: 0}),
				frameworktest.MakeCSINode("n2", map[string]int32{testDriver: 0}),
			}, boundCSI("c1", "h1"), boundCSI("c2", "h2")),
			want: map[string]frameworktest.StatusView{"n1": exceeded},
		},
		{
			// A VolumeAttachment holds h3 on n1: 1 + 1 + 1 = 3 > 2.
			name: "VolumeAttachments count", pod: volumePod().PVC("new").Obj(), pods: existing,
			objects: objs(cluster, boundCSI("new", "hnew"), boundCSI("c3", "h3"),
				[]runtime.Object{frameworktest.MakeVolumeAttachment("va3", testDriver, "pv-c3", "n1")}),
			want: rejectedOn(exceeded, "n1", "n2"),
		},
		{
			// The attachment of c1, used by p1, is not counted twice.
			name: "a VolumeAttachment of a pod's volume counts once", pod: volumePod().PVC("new").Obj(), pods: existing,
			objects: objs(cluster, boundCSI("new", "hnew"),
				[]runtime.Object{frameworktest.MakeVolumeAttachment("va1", testDriver, "pv-c1", "n1")}),
			want: map[string]frameworktest.StatusView{"n2": exceeded},
		},
		{
			// An unbound claim counts as a volume its provisioner creates.
			name: "unbound claim counted by its class's provisioner", pod: volumePod().PVC("new").Obj(), pods: existing,
			objects: objs(cluster, []runtime.Object{frameworktest.MakePVC("default", "new").Class("wffc").Obj(), wffc}),
			want:    map[string]frameworktest.StatusView{"n2": exceeded},
		},
		{name: "unbound claim without a class: skip", pod: volumePod().PVC("new").Obj(), pods: existing,
			objects: objs(cluster, []runtime.Object{frameworktest.MakePVC("default", "new").Obj()}), wantPre: skip},
		{name: "volume without a CSI driver: skip", pod: volumePod().PVC("new").Obj(), pods: existing,
			objects: objs(cluster, []runtime.Object{frameworktest.MakePVC("default", "new").Bound("pv-new").Obj(), frameworktest.MakePV("pv-new").HostPath("/x").Obj()}),
			wantPre: skip},
		{
			// n1 limits other.example.com to 0, but the pod uses testDriver.
			name: "another driver's limit does not apply", pod: volumePod().PVC("new").Obj(),
			objects: objs(limits, []runtime.Object{
				frameworktest.MakePVC("default", "new").Bound("pv-new").Obj(),
				frameworktest.MakePV("pv-new").CSI("third.example.com", "h").Obj(),
			}),
			wantPre: skip,
		},
		{
			// A zero limit: 0 + 1 > 0 on n1.
			name: "zero limit", pod: volumePod().PVC("new").Obj(),
			objects: objs(limits, []runtime.Object{
				frameworktest.MakePVC("default", "new").Bound("pv-new").Obj(),
				frameworktest.MakePV("pv-new").CSI("other.example.com", "h").Obj(),
			}),
			want: map[string]frameworktest.StatusView{"n1": exceeded},
		},
		{
			// An in-tree EBS volume counts against ebs.csi.aws.com; the
			// inline one of p1 ("aws://zone/vol-1") is the same volume as
			// the new pod's PV ("vol-1"): 1 + 0 ≤ 1 on n1. n2 holds a
			// different one: 1 + 1 > 1.
			name: "in-tree EBS volumes migrated to CSI", pod: volumePod().PVC("new").Obj(),
			pods: []*v1.Pod{
				frameworktest.MakePod().Name("p1").Node("n1").Volume(ebs("aws://us-east-1a/vol-1", false)).Obj(),
				frameworktest.MakePod().Name("p2").Node("n2").Volume(ebs("vol-2", false)).Obj(),
			},
			objects: []runtime.Object{
				frameworktest.MakeCSINode("n1", map[string]int32{"ebs.csi.aws.com": 1}),
				frameworktest.MakeCSINode("n2", map[string]int32{"ebs.csi.aws.com": 1}),
				frameworktest.MakePVC("default", "new").Bound("pv-new").Obj(),
				&v1.PersistentVolume{ObjectMeta: metaName("pv-new"), Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
					AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}}},
			},
			want: map[string]frameworktest.StatusView{"n2": exceeded},
		},
		{
			// A GCE PD's handle carries the zone of its volume's labels, as
			// csi-translation-lib writes it: disks named alike in two zones
			// are two volumes, 1 + 1 > 1 on n1.
			name: "in-tree GCE PDs of one name in two zones", pod: volumePod().PVC("new").Obj(),
			pods: []*v1.Pod{frameworktest.MakePod().Name("p1").Node("n1").PVC("old").Obj()},
			objects: []runtime.Object{
				frameworktest.MakeCSINode("n1", map[string]int32{"pd.csi.storage.gke.io": 1}),
				frameworktest.MakePVC("default", "old").Bound("pv-old").Obj(),
				frameworktest.MakePVC("default", "new").Bound("pv-new").Obj(),
				gcePDVolume("pv-old", "disk", "zone-a"), gcePDVolume("pv-new", "disk", "zone-b"),
			},
			want: map[string]frameworktest.StatusView{"n1": exceeded},
		},
		{
			// An inline EBS volume whose ID is not one does not translate:
			// kube-scheduler's CSILimits fails with an Error on each node
			// that has a CSINode, and passes the others.
			name: "inline EBS volume ID that does not translate", pod: volumePod().Volume(ebs("aws://zone/not-a-volume", false)).Obj(),
			objects: []runtime.Object{frameworktest.MakeCSINode("n1", nil)},
			want: map[string]frameworktest.StatusView{"n1": frameworktest.ViewOf(framework.NewStatus(framework.Error,
				"converting volume(ebs) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://zone/not-a-volume)"))},
		},
		{
			// The ephemeral volume's claim is "new-scratch", owned by the pod.
			name: "generic ephemeral volume", pod: volumePod().EphemeralVolume("scratch").Obj(), pods: existing,
			objects: objs(cluster, []runtime.Object{
				frameworktest.MakePVC("default", "new-scratch").Bound("pv-s").ControlledBy(volumePod().Obj()).Obj(),
				frameworktest.MakePV("pv-s").CSI(testDriver, "hs").Obj(),
			}),
			want: map[string]frameworktest.StatusView{"n2": exceeded},
		},
		{
			// n1 holds p1 (c1) and p3 (c3): 2 + 1 > 2. Missing claims of
			// pods already there (p4's) count nothing.
			name: "every pod on the node counts", pod: volumePod().PVC("new").Obj(),
			pods: append(existing,
				frameworktest.MakePod().Name("p3").Node("n1").PVC("c3").Obj(),
				frameworktest.MakePod().Name("p4").Node("n1").PVC("gone").Obj()),
			objects: objs(cluster, boundCSI("c3", "h3"), boundCSI("new", "hnew")),
			want:    rejectedOn(exceeded, "n1", "n2"),
		},
	})
}

// requiringDriver is the CSIDriver of driver, asking that pods with its
// volumes go only to nodes whose CSINode lists it.
func requiringDriver(driver string, require bool) *storagev1.CSIDriver {
	d := frameworktest.MakeCSIDriver(driver, false)
	d.Spec.PreventPodSchedulingIfMissing = &require
	return d
}

// kube-scheduler v1.37 turns VolumeLimitScaling (beta) on: a CSI driver
// whose CSIDriver sets preventPodSchedulingIfMissing keeps the pod's new
// volumes of it off the nodes whose CSINode does not list it.
func TestNodeVolumeLimitsDriverMissing(t *testing.T) {
	const other = "other.example.com"
	notInstalled := func(driver string) frameworktest.StatusView {
		return frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable, driver+" CSI driver is not installed on the node"))
	}
	exceeded := frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable, "node(s) exceed max volume count"))
	skip := frameworktest.ViewOf(framework.NewStatus(framework.Skip))
	// n1 runs testDriver (no limit), n2 runs only another driver, n3 has
	// no CSINode.
	csiNodes := []runtime.Object{
		frameworktest.MakeCSINode("n1", map[string]int32{testDriver: -1}),
		frameworktest.MakeCSINode("n2", map[string]int32{other: -1}),
	}
	wffc := frameworktest.MakeStorageClass("wffc", testDriver, storagev1.VolumeBindingWaitForFirstConsumer)
	ebsPV := &v1.PersistentVolume{ObjectMeta: metaName("pv-ebs"), Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
		AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}}}

	checkVolumeCases(t, func(h framework.Handle) preFilterFilter { return volumes.NewNodeLimits(h) }, limitNodes, []volumeCase{
		{
			name: "a driver that must be installed: only where its CSINode lists it", pod: volumePod().PVC("new").Obj(),
			objects: objs(csiNodes, boundCSI("new", "hnew"), []runtime.Object{requiringDriver(testDriver, true)}),
			want:    map[string]frameworktest.StatusView{"n2": notInstalled(testDriver), "n3": notInstalled(testDriver)},
		},
		{
			name: "preventPodSchedulingIfMissing false: not checked", pod: volumePod().PVC("new").Obj(),
			objects: objs(csiNodes, boundCSI("new", "hnew"), []runtime.Object{requiringDriver(testDriver, false)}),
			wantPre: skip,
		},
		{
			name: "preventPodSchedulingIfMissing unset: not checked", pod: volumePod().PVC("new").Obj(),
			objects: objs(csiNodes, boundCSI("new", "hnew"), []runtime.Object{frameworktest.MakeCSIDriver(testDriver, false)}),
			wantPre: skip,
		},
		{
			name: "no CSIDriver object: not checked", pod: volumePod().PVC("new").Obj(),
			objects: objs(csiNodes, boundCSI("new", "hnew")),
			wantPre: skip,
		},
		{
			// An unbound claim needs its class's provisioner.
			name: "an unbound claim needs its provisioner", pod: volumePod().PVC("new").Obj(),
			objects: objs(csiNodes, []runtime.Object{frameworktest.MakePVC("default", "new").Class("wffc").Obj(), wffc, requiringDriver(testDriver, true)}),
			want:    map[string]frameworktest.StatusView{"n2": notInstalled(testDriver), "n3": notInstalled(testDriver)},
		},
		{
			// kube-scheduler checks every new volume of the pod, attached
			// there already or not: p2 uses the same volume on n2.
			name: "a volume already used on the node is checked too", pod: volumePod().PVC("new").Obj(),
			pods:    []*v1.Pod{frameworktest.MakePod().Name("p2").Node("n2").PVC("new").Obj()},
			objects: objs(csiNodes, boundCSI("new", "hnew"), []runtime.Object{requiringDriver(testDriver, true)}),
			want:    map[string]frameworktest.StatusView{"n2": notInstalled(testDriver), "n3": notInstalled(testDriver)},
		},
		{
			// The missing driver comes before the limit, as in
			// kube-scheduler: n2 limits other.example.com to 0 and lacks
			// testDriver; n1 runs testDriver and limits other to 0.
			name: "a missing driver before an exceeded limit", pod: volumePod().PVC("new").PVC("more").Obj(),
			objects: objs([]runtime.Object{
				frameworktest.MakeCSINode("n1", map[string]int32{testDriver: -1, other: 0}),
				frameworktest.MakeCSINode("n2", map[string]int32{other: 0}),
				frameworktest.MakePVC("default", "more").Bound("pv-more").Obj(), frameworktest.MakePV("pv-more").CSI(other, "hmore").Obj(),
				requiringDriver(testDriver, true),
			}, boundCSI("new", "hnew")),
			want: map[string]frameworktest.StatusView{"n1": exceeded, "n2": notInstalled(testDriver), "n3": notInstalled(testDriver)},
		},
		{
			// Two drivers missing on n3: the first volume's, in the pod's
			// order (kube-scheduler names either).
			name: "two drivers missing: the first volume's", pod: volumePod().PVC("more").PVC("new").Obj(),
			objects: objs(csiNodes, boundCSI("new", "hnew"), []runtime.Object{
				frameworktest.MakePVC("default", "more").Bound("pv-more").Obj(), frameworktest.MakePV("pv-more").CSI(other, "hmore").Obj(),
				requiringDriver(testDriver, true), requiringDriver(other, true),
			}),
			want: map[string]frameworktest.StatusView{"n1": notInstalled(other), "n2": notInstalled(testDriver), "n3": notInstalled(other)},
		},
		{
			// An in-tree EBS volume is ebs.csi.aws.com's where a CSINode
			// exists (n2 lacks it there); on n3, without a CSINode,
			// kube-scheduler does not read it as a CSI volume at all.
			name: "an in-tree volume needs its CSI driver only where a CSINode is", pod: volumePod().PVC("new").Obj(),
			objects: []runtime.Object{
				frameworktest.MakeCSINode("n1", map[string]int32{"ebs.csi.aws.com": -1}),
				frameworktest.MakeCSINode("n2", map[string]int32{other: -1}),
				frameworktest.MakePVC("default", "new").Bound("pv-ebs").Obj(), ebsPV,
				requiringDriver("ebs.csi.aws.com", true),
			},
			want: map[string]frameworktest.StatusView{"n2": notInstalled("ebs.csi.aws.com")},
		},
		{
			name: "an inline in-tree volume likewise", pod: volumePod().Volume(ebs("vol-1", false)).Obj(),
			objects: []runtime.Object{
				frameworktest.MakeCSINode("n1", map[string]int32{"ebs.csi.aws.com": -1}),
				frameworktest.MakeCSINode("n2", map[string]int32{other: -1}),
				requiringDriver("ebs.csi.aws.com", true),
			},
			want: map[string]frameworktest.StatusView{"n2": notInstalled("ebs.csi.aws.com")},
		},
	})
}

func metaName(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// gcePDVolume returns an in-tree GCE PersistentDisk volume in zone.
func gcePDVolume(name, disk, zone string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelTopologyZone: zone}},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
			GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: disk}}},
	}
}

// Preemption (and a nominated pod) asks NodeVolumeLimits what a node would
// say without a pod (RemovePod) or with it again (AddPod): the answer its
// PreFilter gives on a cluster that really lacks (or has) the pod, as
// kube-scheduler's CSILimits counts the pods of the NodeInfo it is given.
func TestNodeVolumeLimitsWhatIf(t *testing.T) {
	// n1 attaches 2 volumes of testDriver, n2 1; p1 holds c1 on n1, p2
	// c2 on n2. The pod's c3 fits on n1 (1 + 1 ≤ 2), on n2 only without
	// p2 (1 + 1 > 1, 0 + 1 ≤ 1).
	objects := objs([]runtime.Object{
		frameworktest.MakeCSINode("n1", map[string]int32{testDriver: 2}),
		frameworktest.MakeCSINode("n2", map[string]int32{testDriver: 1}),
	}, boundCSI("c1", "h1"), boundCSI("c2", "h2"), boundCSI("c3", "h3"))
	existing := []*v1.Pod{
		frameworktest.MakePod().Name("p1").UID("p1").Node("n1").PVC("c1").Obj(),
		frameworktest.MakePod().Name("p2").UID("p2").Node("n2").PVC("c2").Obj(),
	}
	pod := volumePod().PVC("c3").Obj()
	build := func(pods []*v1.Pod) (frameworktest.WhatIfFilter, []*framework.NodeInfo) {
		h := frameworktest.NewHandle(frameworktest.NewSnapshot(limitNodes(), pods)).AddObjects(objects...)
		return volumes.NewNodeLimits(h), h.Lister.List()
	}
	withPl, withNodes := build(existing)
	withoutPl, withoutNodes := build(existing[:1])

	removed := frameworktest.WhatIf(t, withPl, pod, withNodes, existing[1], false)
	if want := frameworktest.DecideOn(withoutPl, pod, withoutNodes); removed != want {
		t.Errorf("without p2:\nRemovePod: %s\nPreFilter: %s", removed, want)
	}
	added := frameworktest.WhatIf(t, withPl, pod, withNodes, existing[1], true)
	if want := frameworktest.DecideOn(withPl, pod, withNodes); added != want {
		t.Errorf("p2 taken off n2 and back:\n   AddPod: %s\nPreFilter: %s", added, want)
	}
	if removed == added {
		t.Errorf("p2 changed no decision (%s): the case does not test the what-if", added)
	}
	// A what-if runs on a clone: the cycle's state is unchanged.
	ctx, state := context.Background(), framework.NewCycleState()
	if _, st := withPl.PreFilter(ctx, state, pod, withNodes); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Message())
	}
	n2 := withNodes[1].Clone()
	if err := n2.RemovePod(existing[1]); err != nil {
		t.Fatal(err)
	}
	if st := withPl.RemovePod(ctx, state.Clone(), pod, framework.NewPodInfo(existing[1]), n2); !st.IsSuccess() {
		t.Fatalf("RemovePod: %v", st.Message())
	}
	if st := withPl.Filter(ctx, state, pod, withNodes[1]); st.IsSuccess() {
		t.Error("a what-if on a clone let the pod onto n2 in the cycle's state")
	}
}
