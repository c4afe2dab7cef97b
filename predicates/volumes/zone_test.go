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

// zoneNodes: two zones of region r1, a node with the beta zone label only,
// and one without any topology label.
func zoneNodes() []*v1.Node {
	return []*v1.Node{
		frameworktest.MakeNode().Name("n-a").Label(v1.LabelTopologyZone, "a").Label(v1.LabelTopologyRegion, "r1").Obj(),
		frameworktest.MakeNode().Name("n-b").Label(v1.LabelTopologyZone, "b").Label(v1.LabelTopologyRegion, "r1").Obj(),
		frameworktest.MakeNode().Name("n-beta").Label(v1.LabelFailureDomainBetaZone, "a").Obj(),
		frameworktest.MakeNode().Name("n-none").Obj(),
	}
}

func TestVolumeZone(t *testing.T) {
	conflict := frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had no available volume zone"))
	unresolvable := func(reason string) frameworktest.StatusView {
		return frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, reason))
	}
	skip := frameworktest.ViewOf(framework.NewStatus(framework.Skip))
	pod := volumePod().PVC("data").Obj()
	bound := func(pv *frameworktest.PVWrapper) []runtime.Object {
		return []runtime.Object{frameworktest.MakePVC("default", "data").Bound("pv").Obj(), pv.Obj()}
	}
	pv := func() *frameworktest.PVWrapper { return frameworktest.MakePV("pv") }
	unbound := func(class string) *v1.PersistentVolumeClaim {
		c := frameworktest.MakePVC("default", "data")
		if class != "" {
			c.Class(class)
		}
		return c.Obj()
	}

	checkVolumeCases(t, func(h framework.Handle) preFilterFilter { return volumes.NewZone(h) }, zoneNodes, []volumeCase{
		{name: "no claims: skip", pod: volumePod().Obj(), wantPre: skip},
		{name: "volume without topology labels: skip", pod: pod, objects: bound(pv()), wantPre: skip},
		{
			// n-beta only has the beta key, which a GA key does not fall
			// back to; n-none has no topology label at all and passes.
			name: "volume in zone a", pod: pod, objects: bound(pv().Label(v1.LabelTopologyZone, "a")),
			want: map[string]frameworktest.StatusView{"n-b": conflict, "n-beta": conflict},
		},
		{
			// A beta key on the volume falls back to the GA key on nodes.
			name: "beta zone label on the volume", pod: pod, objects: bound(pv().Label(v1.LabelFailureDomainBetaZone, "a")),
			want: map[string]frameworktest.StatusView{"n-b": conflict},
		},
		{name: "multi-zone volume", pod: pod, objects: bound(pv().Label(v1.LabelTopologyZone, "a__b")),
			want: map[string]frameworktest.StatusView{"n-beta": conflict}},
		{name: "region label", pod: pod, objects: bound(pv().Label(v1.LabelTopologyRegion, "r1")),
			want: map[string]frameworktest.StatusView{"n-beta": conflict}},
		{name: "zone and region both hold", pod: pod,
			objects: bound(pv().Label(v1.LabelTopologyRegion, "r1").Label(v1.LabelTopologyZone, "b")),
			want:    map[string]frameworktest.StatusView{"n-a": conflict, "n-beta": conflict}},
		{name: "unparsable zone list is ignored: skip", pod: pod, objects: bound(pv().Label(v1.LabelTopologyZone, "a____b")), wantPre: skip},
		{
			// spec.volumeName is enough here, bind-completed or not.
			name: "claim with a volume name only", pod: pod,
			objects: []runtime.Object{frameworktest.MakePVC("default", "data").VolumeName("pv").Obj(), pv().Label(v1.LabelTopologyZone, "b").Obj()},
			want:    map[string]frameworktest.StatusView{"n-a": conflict, "n-beta": conflict},
		},
		{name: "missing claim", pod: pod, wantPre: unresolvable(`persistentvolumeclaim "data" not found`)},
		{name: "claim without a name", pod: volumePod().PVC("").Obj(), wantPre: unresolvable("PersistentVolumeClaim had no name")},
		{name: "missing volume", pod: pod, objects: []runtime.Object{frameworktest.MakePVC("default", "data").Bound("pv").Obj()},
			wantPre: unresolvable(`persistentvolume "pv" not found`)},
		{name: "unbound without a class", pod: pod, objects: []runtime.Object{unbound("")},
			wantPre: unresolvable("PersistentVolumeClaim had no pv name and storageClass name")},
		{name: "unbound with a missing class", pod: pod, objects: []runtime.Object{unbound("gold")},
			wantPre: unresolvable(`storageclass.storage.k8s.io "gold" not found`)},
		{name: "unbound with a class without binding mode", pod: pod,
			objects: []runtime.Object{unbound("odd"), frameworktest.MakeStorageClass("odd", "x", "")},
			wantPre: unresolvable(`VolumeBindingMode not set for StorageClass "odd"`)},
		{name: "unbound Immediate", pod: pod,
			objects: []runtime.Object{unbound("fast"), frameworktest.MakeStorageClass("fast", "x", storagev1.VolumeBindingImmediate)},
			wantPre: unresolvable("PersistentVolume had no name")},
		{name: "unbound WaitForFirstConsumer is skipped", pod: pod,
			objects: []runtime.Object{unbound("wffc"), frameworktest.MakeStorageClass("wffc", "x", storagev1.VolumeBindingWaitForFirstConsumer)},
			wantPre: skip},
	})
}
