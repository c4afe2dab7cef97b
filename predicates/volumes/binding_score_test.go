package volumes_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
)

// threeHostNodes are n1, n2 and n3 with hostnames h1, h2 and h3.
func threeHostNodes() []*v1.Node {
	var nodes []*v1.Node
	for _, n := range []string{"1", "2", "3"} {
		nodes = append(nodes, frameworktest.MakeNode().Name("n"+n).Label(v1.LabelHostname, "h"+n).Obj())
	}
	return nodes
}

// scoreVolumes runs VolumeBinding's PreFilter, Filter, PreScore and Score
// over nodes, and returns PreScore's status and the score of each node
// Filter admitted.
func scoreVolumes(t *testing.T, args *volumes.BindingArgs, nodes []*v1.Node, pod *v1.Pod, objects []runtime.Object) (frameworktest.StatusView, map[string]int64) {
	t.Helper()
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, nil)).AddObjects(objects...)
	pl, err := volumes.NewBinding(args, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, state := context.Background(), framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, h.Lister.List()); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Message())
	}
	var feasible []*framework.NodeInfo
	for _, ni := range h.Lister.List() {
		if st := pl.Filter(ctx, state, pod, ni); st.IsSuccess() {
			feasible = append(feasible, ni)
		}
	}
	if st := pl.PreScore(ctx, state, pod, feasible); !st.IsSuccess() {
		return frameworktest.ViewOf(st), nil
	}
	scores := map[string]int64{}
	for _, ni := range feasible {
		s, st := pl.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score on %s: %v", ni.Node().Name, st.Message())
		}
		scores[ni.Node().Name] = s
	}
	return frameworktest.ViewOf(nil), scores
}

// VolumeBinding scores by storage capacity by default, as kube-scheduler
// v1.37 does with StorageCapacityScoring (beta, on by default): the shape
// {0: 10, 100: 0}, scaled to 0..100, of requested over capacity per
// storage class, averaged over the classes and rounded. The cases are
// kube-scheduler's (volumebinding's TestVolumeBinding) where they exist.
func TestVolumeBindingScore(t *testing.T) {
	local := frameworktest.MakeStorageClass("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)
	hdd := frameworktest.MakeStorageClass("hdd", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)
	csi := frameworktest.MakeStorageClass("csi", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer)
	pv := func(name, class, host, size string) *v1.PersistentVolume {
		return frameworktest.MakePV(name).Class(class).Capacity(size).OnNode(host).Obj()
	}
	claim := func(name, class, size string) *v1.PersistentVolumeClaim {
		return frameworktest.MakePVC("default", name).UID(name + "-uid").Class(class).Request(size).Obj()
	}
	capacity := func(host, size string) *storagev1.CSIStorageCapacity {
		return frameworktest.MakeCSIStorageCapacity("cap-"+host, "csi", v1.LabelHostname, host, size, "")
	}
	packing := []framework.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}
	oneClaim := volumePod().PVC("data").Obj()
	localVolumes := []runtime.Object{local, claim("data", "local", "50Gi"),
		pv("a0", "local", "h1", "200Gi"), pv("a1", "local", "h1", "200Gi"),
		pv("b0", "local", "h2", "100Gi"), pv("b1", "local", "h2", "100Gi")}

	tests := []struct {
		name    string
		args    *volumes.BindingArgs
		pod     *v1.Pod
		objects []runtime.Object
		wantPre frameworktest.StatusView
		want    map[string]int64
	}{
		{
			// 50Gi of a 200Gi volume is 25% full: 100 − 25 = 75; of a
			// 100Gi one 50%: 50. n3 has no volume and is filtered out.
			name:    "default: the node whose volume stays emptiest",
			args:    volumes.DefaultBindingArgs(),
			pod:     oneClaim,
			objects: localVolumes,
			want:    map[string]int64{"n1": 75, "n2": 50},
		},
		{
			// Args built without defaults score with the default shape
			// too, as a nil timeout means 600.
			name:    "no shape given is the default",
			args:    &volumes.BindingArgs{},
			pod:     oneClaim,
			objects: localVolumes,
			want:    map[string]int64{"n1": 75, "n2": 50},
		},
		{
			// The reverse shape packs: 25% full scores 25, 50% 50.
			name:    "a shape that packs",
			args:    &volumes.BindingArgs{Shape: packing},
			pod:     oneClaim,
			objects: localVolumes,
			want:    map[string]int64{"n1": 25, "n2": 50},
		},
		{
			// n1: local 50/200 → 75, hdd 100/200 → 50, (75 + 50) / 2 =
			// 62.5, rounded to 63; n2: local 50/100 → 50, hdd 100/100 → 0,
			// 25.
			name: "two classes are averaged",
			args: volumes.DefaultBindingArgs(),
			pod:  volumePod().PVC("data").PVC("logs").Obj(),
			objects: []runtime.Object{local, hdd, claim("data", "local", "50Gi"), claim("logs", "hdd", "100Gi"),
				pv("a0", "local", "h1", "200Gi"), pv("a1", "hdd", "h1", "200Gi"),
				pv("b0", "local", "h2", "100Gi"), pv("b1", "hdd", "h2", "100Gi")},
			want: map[string]int64{"n1": 63, "n2": 25},
		},
		{
			// Two claims of one class add up: 60Gi of 200Gi (30% → 70)
			// on n1, 60Gi of 100Gi (60% → 40) on n2.
			name: "claims of one class add up",
			args: volumes.DefaultBindingArgs(),
			pod:  volumePod().PVC("data").PVC("more").Obj(),
			objects: []runtime.Object{local, claim("data", "local", "30Gi"), claim("more", "local", "30Gi"),
				pv("a0", "local", "h1", "100Gi"), pv("a1", "local", "h1", "100Gi"),
				pv("b0", "local", "h2", "50Gi"), pv("b1", "local", "h2", "50Gi")},
			want: map[string]int64{"n1": 70, "n2": 40},
		},
		{
			// A claim to provision is scored against the capacity it
			// would come from: 10Gi of 100Gi → 90, of 50Gi → 80, of 10Gi
			// → 0.
			name: "provisioning: the capacity with the most room",
			args: volumes.DefaultBindingArgs(),
			pod:  oneClaim,
			objects: []runtime.Object{csi, claim("data", "csi", "10Gi"), frameworktest.MakeCSIDriver("csi.example.com", true),
				capacity("h1", "100Gi"), capacity("h2", "50Gi"), capacity("h3", "10Gi")},
			want: map[string]int64{"n1": 90, "n2": 80, "n3": 0},
		},
		{
			// With a volume chosen on the node, only the chosen volumes
			// count: 50Gi of 100Gi everywhere, whatever the capacities.
			name: "chosen volumes outweigh capacities",
			args: volumes.DefaultBindingArgs(),
			pod:  volumePod().PVC("data").PVC("fresh").Obj(),
			objects: []runtime.Object{local, csi, claim("data", "local", "50Gi"), claim("fresh", "csi", "10Gi"),
				frameworktest.MakeCSIDriver("csi.example.com", true),
				pv("a0", "local", "h1", "100Gi"), pv("b0", "local", "h2", "100Gi"), pv("c0", "local", "h3", "100Gi"),
				capacity("h1", "100Gi"), capacity("h2", "50Gi"), capacity("h3", "10Gi")},
			want: map[string]int64{"n1": 50, "n2": 50, "n3": 50},
		},
		{
			// A driver that publishes no capacity gives nothing to score
			// by: 0 everywhere.
			name: "provisioning without capacities",
			args: volumes.DefaultBindingArgs(),
			pod:  oneClaim,
			objects: []runtime.Object{csi, claim("data", "csi", "10Gi"), frameworktest.MakeCSIDriver("csi.example.com", false),
				capacity("h1", "100Gi")},
			want: map[string]int64{"n1": 0, "n2": 0, "n3": 0},
		},
		{
			// Nothing to bind: nothing to score (kube-scheduler scores 0
			// everywhere, the same total).
			name: "bound claims only",
			args: volumes.DefaultBindingArgs(),
			pod:  oneClaim,
			objects: []runtime.Object{frameworktest.MakePVC("default", "data").Bound("pv").Obj(),
				frameworktest.MakePV("pv").Class("local").Capacity("100Gi").OnNode("h1").Obj()},
			wantPre: frameworktest.ViewOf(framework.NewStatus(framework.Skip)),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pre, got := scoreVolumes(t, tc.args, threeHostNodes(), tc.pod, tc.objects)
			wantPre := tc.wantPre
			if wantPre.Code == "" {
				wantPre = frameworktest.ViewOf(nil)
			}
			if diff := cmp.Diff(wantPre, pre); diff != "" {
				t.Fatalf("PreScore (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// Score runs on every feasible node of every volume pod's cycle: it sums
// the volumes up as the match finds them, allocating nothing.
func TestVolumeBindingScoreDoesNotAllocate(t *testing.T) {
	local := frameworktest.MakeStorageClass("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)
	csi := frameworktest.MakeStorageClass("csi", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer)
	objects := []runtime.Object{local, csi, frameworktest.MakeCSIDriver("csi.example.com", true),
		frameworktest.MakePVC("default", "data").UID("data-uid").Class("local").Request("10Gi").Obj(),
		frameworktest.MakePVC("default", "fresh").UID("fresh-uid").Class("csi").Request("10Gi").Obj(),
		frameworktest.MakePV("a0").Class("local").Capacity("30Gi").OnNode("h1").Obj(),
		frameworktest.MakeCSIStorageCapacity("cap-h1", "csi", v1.LabelHostname, "h1", "100Gi", "")}
	pod := volumePod().PVC("data").PVC("fresh").Obj()
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(threeHostNodes(), nil)).AddObjects(objects...)
	pl, err := volumes.NewBinding(volumes.DefaultBindingArgs(), h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, state := context.Background(), framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, h.Lister.List()); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Message())
	}
	n1 := h.Lister.List()[0]
	if st := pl.Filter(ctx, state, pod, n1); !st.IsSuccess() {
		t.Fatalf("Filter(n1) = %q, want success", st.Message())
	}
	// The chosen volume: 10Gi of 30Gi, 100 − 33 = 67.
	if s, st := pl.Score(ctx, state, pod, n1); !st.IsSuccess() || s != 67 {
		t.Fatalf("Score(n1) = %d, %v; want 67", s, st.Message())
	}
	if n := testing.AllocsPerRun(100, func() { pl.Score(ctx, state, pod, n1) }); n != 0 {
		t.Errorf("Score allocates %v times", n)
	}
}
