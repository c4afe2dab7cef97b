package volumes_test

import (
	"context"

	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
)

func restrictionNodes() []*v1.Node {
	return []*v1.Node{frameworktest.MakeNode().Name("n1").Obj(), frameworktest.MakeNode().Name("n2").Obj()}
}

func gcePD(name string, readOnly bool) v1.Volume {
	return v1.Volume{Name: "pd", VolumeSource: v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: readOnly}}}
}

func ebs(id string, readOnly bool) v1.Volume {
	return v1.Volume{Name: "ebs", VolumeSource: v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id, ReadOnly: readOnly}}}
}

func rbd(monitors []string, pool, image string, readOnly bool) v1.Volume {
	return v1.Volume{Name: "rbd", VolumeSource: v1.VolumeSource{RBD: &v1.RBDVolumeSource{CephMonitors: monitors, RBDPool: pool, RBDImage: image, ReadOnly: readOnly}}}
}

func iscsi(iqn string, readOnly bool) v1.Volume {
	return v1.Volume{Name: "iscsi", VolumeSource: v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{IQN: iqn, ReadOnly: readOnly}}}
}

func TestVolumeRestrictions(t *testing.T) {
	rwop := frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable,
		"node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"))
	disk := frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable, "node(s) had no available disk"))
	skip := frameworktest.ViewOf(framework.NewStatus(framework.Skip))
	rwopClaim := frameworktest.MakePVC("default", "data").AccessModes(v1.ReadWriteOncePod).Bound("pv").Obj()
	rwoClaim := frameworktest.MakePVC("default", "data").Bound("pv").Obj()
	onN1 := func(vols ...v1.Volume) []*v1.Pod {
		p := frameworktest.MakePod().Name("old").Node("n1")
		for _, v := range vols {
			p.Volume(v)
		}
		return []*v1.Pod{p.Obj()}
	}

	checkVolumeCases(t, func(h framework.Handle) preFilterFilter { return volumes.NewRestrictions(h) }, restrictionNodes, []volumeCase{
		{name: "no volumes: skip", pod: volumePod().Obj(), wantPre: skip},
		{name: "missing claim", pod: volumePod().PVC("data").Obj(),
			wantPre: frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "data" not found`))},
		// Not skipped: a pod nominated to a node may use the claim
		// (AddPod). kube-scheduler skips here, and so never counts a
		// nominated pod's use of the claim; see PreFilter.
		{name: "ReadWriteOncePod claim nobody uses", pod: volumePod().PVC("data").Obj(),
			objects: []runtime.Object{rwopClaim}},
		{
			// Used on n2 only, yet every node is rejected: the claim is
			// taken cluster-wide.
			name:    "ReadWriteOncePod claim in use",
			pod:     volumePod().PVC("data").Obj(),
			pods:    []*v1.Pod{frameworktest.MakePod().Name("old").Node("n2").PVC("data").Obj()},
			objects: []runtime.Object{rwopClaim},
			want:    rejectedOn(rwop, "n1", "n2"),
		},
		{name: "ReadWriteOnce claim in use: skip", pod: volumePod().PVC("data").Obj(),
			pods:    []*v1.Pod{frameworktest.MakePod().Name("old").Node("n2").PVC("data").Obj()},
			objects: []runtime.Object{rwoClaim}, wantPre: skip},
		{name: "same claim name in another namespace", pod: volumePod().PVC("data").Obj(),
			pods:    []*v1.Pod{frameworktest.MakePod().Namespace("other").Name("old").Node("n2").PVC("data").Obj()},
			objects: []runtime.Object{rwopClaim}},
		{name: "GCE PD mounted read-write elsewhere on the node", pod: volumePod().Volume(gcePD("disk", true)).Obj(),
			pods: onN1(gcePD("disk", false)), want: map[string]frameworktest.StatusView{"n1": disk}},
		{name: "GCE PD read-only twice", pod: volumePod().Volume(gcePD("disk", true)).Obj(),
			pods: onN1(gcePD("disk", true))},
		{name: "another GCE PD", pod: volumePod().Volume(gcePD("disk", false)).Obj(),
			pods: onN1(gcePD("other", false))},
		{name: "EBS volume conflicts even read-only", pod: volumePod().Volume(ebs("vol-1", true)).Obj(),
			pods: onN1(ebs("vol-1", true)), want: map[string]frameworktest.StatusView{"n1": disk}},
		{name: "RBD image with a shared monitor", pod: volumePod().Volume(rbd([]string{"m1", "m2"}, "p", "img", false)).Obj(),
			pods: onN1(rbd([]string{"m2", "m3"}, "p", "img", false)), want: map[string]frameworktest.StatusView{"n1": disk}},
		{name: "RBD image without a shared monitor", pod: volumePod().Volume(rbd([]string{"m1"}, "p", "img", false)).Obj(),
			pods: onN1(rbd([]string{"m3"}, "p", "img", false))},
		{name: "iSCSI target read-write", pod: volumePod().Volume(iscsi("iqn.x", false)).Obj(),
			pods: onN1(iscsi("iqn.x", true)), want: map[string]frameworktest.StatusView{"n1": disk}},
		{
			// The disk check comes first on the node that has both.
			name:    "disk conflict and ReadWriteOncePod",
			pod:     volumePod().PVC("data").Volume(ebs("vol-1", false)).Obj(),
			pods:    append(onN1(ebs("vol-1", false)), frameworktest.MakePod().Name("user").Node("n2").PVC("data").Obj()),
			objects: []runtime.Object{rwopClaim},
			want:    map[string]frameworktest.StatusView{"n1": disk, "n2": rwop},
		},
	})
}

// Preemption's what-if: with the pod that holds a ReadWriteOncePod claim
// taken away, the claim is free on every node; with it back, taken again.
func TestVolumeRestrictionsExtensions(t *testing.T) {
	claim := frameworktest.MakePVC("default", "data").AccessModes(v1.ReadWriteOncePod).Bound("pv").Obj()
	holder := frameworktest.MakePod().Name("holder").Node("n2").PVC("data").Obj()
	other := frameworktest.MakePod().Name("other").Node("n1").Obj()
	snap := frameworktest.NewSnapshot(restrictionNodes(), []*v1.Pod{holder, other})
	pl := volumes.NewRestrictions(frameworktest.NewHandle(snap).AddObjects(claim))
	pod := volumePod().PVC("data").Obj()

	rejected, free := "n1:Unschedulable n2:Unschedulable ", "n1:Success n2:Success "
	for _, tc := range []struct {
		name  string
		p     *v1.Pod
		readd bool
		want  string
	}{
		{"the holder evicted", holder, false, free},
		{"the holder put back", holder, true, rejected},
		{"another pod evicted", other, false, rejected},
	} {
		if got := frameworktest.WhatIf(t, pl, pod, snap.List(), tc.p, tc.readd); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := frameworktest.DecideOn(pl, pod, snap.List()); got != rejected {
		t.Errorf("the cycle's own state changed: %s", got)
	}
}

// A pod nominated to a node (a preemptor waiting for its victims) that
// uses a ReadWriteOncePod claim nobody else uses takes it: another pod of
// the claim is rejected beside it. (kube-scheduler v1.37 places it: its
// PreFilter skips a claim nobody uses, and then no AddPod runs.)
func TestVolumeRestrictionsNominatedPodTakesTheClaim(t *testing.T) {
	claim := frameworktest.MakePVC("default", "data").AccessModes(v1.ReadWriteOncePod).Bound("pv").Obj()
	snap := frameworktest.NewSnapshot(restrictionNodes(), nil)
	pl := volumes.NewRestrictions(frameworktest.NewHandle(snap).AddObjects(claim))
	pod := volumePod().PVC("data").Obj()
	nominated := framework.NewPodInfo(frameworktest.MakePod().Name("preemptor").UID("preemptor").PVC("data").Obj())

	ctx, state := context.Background(), framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, snap.List()); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v %q, want Success", st.Code(), st.Message())
	}
	n1 := snap.List()[0].Clone()
	n1.AddPodInfo(nominated)
	what := state.Clone()
	if st := pl.AddPod(ctx, what, pod, nominated, n1); !st.IsSuccess() {
		t.Fatalf("AddPod: %v", st.Message())
	}
	if st := pl.Filter(ctx, what, pod, n1); st.Code() != framework.Unschedulable {
		t.Errorf("beside the nominated pod: %v %q, want Unschedulable", st.Code(), st.Message())
	}
	if st := pl.Filter(ctx, state, pod, snap.List()[0]); !st.IsSuccess() {
		t.Errorf("without it: %v %q, want Success", st.Code(), st.Message())
	}
}

// A ReadWriteOncePod claim two pods hold (one started before the access
// mode was enforced, say) is still taken with one of them evicted: every
// use is counted. kube-scheduler v1.37 counts the claim once and takes
// the victim's use off, so it would evict one holder for nothing.
func TestVolumeRestrictionsClaimHeldTwice(t *testing.T) {
	claim := frameworktest.MakePVC("default", "data").AccessModes(v1.ReadWriteOncePod).Bound("pv").Obj()
	holder1 := frameworktest.MakePod().Name("holder1").Node("n1").PVC("data").Obj()
	holder2 := frameworktest.MakePod().Name("holder2").Node("n2").PVC("data").Obj()
	snap := frameworktest.NewSnapshot(restrictionNodes(), []*v1.Pod{holder1, holder2})
	pl := volumes.NewRestrictions(frameworktest.NewHandle(snap).AddObjects(claim))
	pod := volumePod().PVC("data").Obj()

	rejected := "n1:Unschedulable n2:Unschedulable "
	if got := frameworktest.WhatIf(t, pl, pod, snap.List(), holder1, false); got != rejected {
		t.Errorf("one holder evicted: %s, want %s", got, rejected)
	}
}

// A pod that mounts its ReadWriteOncePod claim twice (two volumes of one
// claim) counts the claim's uses once: evicting the one pod that holds it
// frees it, as in kube-scheduler.
func TestVolumeRestrictionsClaimMountedTwice(t *testing.T) {
	claim := frameworktest.MakePVC("default", "data").AccessModes(v1.ReadWriteOncePod).Bound("pv").Obj()
	holder := frameworktest.MakePod().Name("holder").Node("n2").PVC("data").Obj()
	snap := frameworktest.NewSnapshot(restrictionNodes(), []*v1.Pod{holder})
	pl := volumes.NewRestrictions(frameworktest.NewHandle(snap).AddObjects(claim))
	pod := volumePod().PVC("data").Volume(v1.Volume{Name: "again", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}).Obj()

	if got, want := frameworktest.WhatIf(t, pl, pod, snap.List(), holder, false), "n1:Success n2:Success "; got != want {
		t.Errorf("the holder evicted: %s, want %s", got, want)
	}
	if got, want := frameworktest.DecideOn(pl, pod, snap.List()), "n1:Unschedulable n2:Unschedulable "; got != want {
		t.Errorf("with the holder: %s, want %s", got, want)
	}
}
