package volumes_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// hostNodes are two nodes with hostnames h1 and h2, in zones a and b.
func hostNodes() []*v1.Node {
	return []*v1.Node{
		frameworktest.MakeNode().Name("n1").Label(v1.LabelHostname, "h1").Label(v1.LabelTopologyZone, "a").Obj(),
		frameworktest.MakeNode().Name("n2").Label(v1.LabelHostname, "h2").Label(v1.LabelTopologyZone, "b").Obj(),
	}
}

// Unbound claims of a WaitForFirstConsumer class: each node is checked for
// an available volume, else for provisioning, with kube-scheduler's
// reasons.
func TestVolumeBindingWaitForFirstConsumer(t *testing.T) {
	unresolvable := func(reasons ...string) frameworktest.StatusView {
		return frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...))
	}
	bindConflict := unresolvable("node(s) didn't find available persistent volumes to bind")
	noRoom := unresolvable("node(s) did not have enough free storage")
	local := frameworktest.MakeStorageClass("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)
	csi := func() *storagev1.StorageClass {
		return frameworktest.MakeStorageClass("csi", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer)
	}
	pod := volumePod().PVC("data").Obj()
	claim := func() *frameworktest.PVCWrapper {
		return frameworktest.MakePVC("default", "data").UID("data-uid").Class("local").Request("8Gi")
	}
	pv := func(name, host, size string) *frameworktest.PVWrapper {
		return frameworktest.MakePV(name).Class("local").Capacity(size).OnNode(host)
	}

	checkVolumeCases(t, newVolumeBinding, hostNodes, []volumeCase{{
		name:    "a local volume large enough on one node",
		pod:     pod,
		objects: []runtime.Object{local, claim().Obj(), pv("small", "h1", "5Gi").Obj(), pv("big", "h2", "10Gi").Obj()},
		want:    map[string]frameworktest.StatusView{"n1": bindConflict},
	}, {
		name:    "no volume large enough, and no provisioner",
		pod:     pod,
		objects: []runtime.Object{local, claim().Obj(), pv("small", "h1", "5Gi").Obj(), pv("small2", "h2", "2Gi").Obj()},
		want:    rejectedOn(bindConflict, "n1", "n2"),
	}, {
		name: "volumes of another class, bound, released, being deleted or pinned elsewhere do not count",
		pod:  pod,
		objects: []runtime.Object{local, claim().Obj(),
			pv("other-class", "h1", "10Gi").Class("gold").Obj(),
			pv("bound", "h1", "10Gi").ClaimRef("default", "someone").Obj(),
			pv("released", "h1", "10Gi").Phase(v1.VolumeReleased).Obj(),
			pv("deleting", "h1", "10Gi").Terminating().Obj(),
			pv("elsewhere", "h3", "10Gi").Obj(),
		},
		want: rejectedOn(bindConflict, "n1", "n2"),
	}, {
		name: "access modes, volume mode and selector must match",
		pod:  pod,
		objects: []runtime.Object{local, claim().Selector(map[string]string{"tier": "gold"}).Obj(),
			pv("rwx-only", "h1", "10Gi").AccessModes(v1.ReadWriteMany).Label("tier", "gold").Obj(),
			pv("block", "h1", "10Gi").Block().Label("tier", "gold").Obj(),
			pv("silver", "h1", "10Gi").Label("tier", "silver").Obj(),
			pv("gold", "h2", "10Gi").Label("tier", "gold").Obj(),
		},
		want: map[string]frameworktest.StatusView{"n1": bindConflict},
	}, {
		name: "a volume pre-bound to the claim is its only choice",
		pod:  pod,
		objects: []runtime.Object{local, claim().Obj(),
			pv("free", "h1", "10Gi").Obj(),
			pv("mine", "h2", "10Gi").ClaimRef("default", "data").Phase(v1.VolumeAvailable).Obj(),
		},
		want: map[string]frameworktest.StatusView{"n1": bindConflict},
	}, {
		name:    "two claims of one pod never get one volume",
		pod:     volumePod().PVC("data").PVC("logs").Obj(),
		objects: []runtime.Object{local, claim().Obj(), frameworktest.MakePVC("default", "logs").Class("local").Request("1Gi").Obj(), pv("one", "h1", "10Gi").Obj(), pv("a", "h2", "10Gi").Obj(), pv("b", "h2", "10Gi").Obj()},
		want:    map[string]frameworktest.StatusView{"n1": bindConflict},
	}, {
		name:    "provisioned where the class's allowedTopologies allow",
		pod:     pod,
		objects: []runtime.Object{frameworktest.AllowedTopologies(csi(), v1.LabelTopologyZone, "b"), claim().Class("csi").Obj()},
		want:    map[string]frameworktest.StatusView{"n1": bindConflict},
	}, {
		name: "provisioned where a CSIStorageCapacity has room",
		pod:  pod,
		objects: []runtime.Object{csi(), claim().Class("csi").Obj(), frameworktest.MakeCSIDriver("csi.example.com", true),
			frameworktest.MakeCSIStorageCapacity("a", "csi", v1.LabelTopologyZone, "a", "100Gi", "5Gi"),
			frameworktest.MakeCSIStorageCapacity("b", "csi", v1.LabelTopologyZone, "b", "10Gi", ""),
		},
		want: map[string]frameworktest.StatusView{"n1": noRoom},
	}, {
		name:    "capacity is not checked when the driver does not publish it",
		pod:     pod,
		objects: []runtime.Object{csi(), claim().Class("csi").Obj(), frameworktest.MakeCSIDriver("csi.example.com", false)},
	}, {
		name:    "a claim a provisioner works on for n2 goes there or nowhere",
		pod:     pod,
		objects: []runtime.Object{csi(), claim().Class("csi").Annotation("volume.kubernetes.io/selected-node", "n2").Obj()},
		want:    map[string]frameworktest.StatusView{"n1": bindConflict},
	}, {
		name: "a bound volume's affinity and an unbound claim both fail",
		pod:  volumePod().PVC("data").PVC("old").Obj(),
		objects: []runtime.Object{local, claim().Obj(), pv("big", "h2", "10Gi").Obj(),
			frameworktest.MakePVC("default", "old").Bound("old-pv").Obj(), frameworktest.MakePV("old-pv").OnNode("h2").Obj()},
		want: map[string]frameworktest.StatusView{"n1": unresolvable(
			"node(s) didn't match PersistentVolume's node affinity", "node(s) didn't find available persistent volumes to bind")},
	}, {
		name:    "a claim selector that does not parse is an error",
		pod:     pod,
		objects: []runtime.Object{local, claim().Selector(map[string]string{"bad key!": "x"}).Obj(), pv("v", "h1", "10Gi").Obj()},
		want: rejectedOn(frameworktest.ViewOf(framework.AsStatus(errString(
			`error creating internal label selector for claim: default/data: key: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`))), "n1", "n2"),
	}})
}
