package volumes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// The volume index must choose what kube-scheduler's FindPodVolumes
// chooses: the same verdict on every node and the same volume for every
// claim. The reference below is kube-scheduler's algorithm written
// plainly, over component-helpers' FindMatchingVolume with the volumes
// listed by name (so that its first-found tie-break is the index's
// by-name one), on random clusters.
func TestVolumeIndexAgreesWithFindMatchingVolume(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 400 {
		w := randomVolumeWorld(rng)
		h := frameworktest.NewHandle(frameworktest.NewSnapshot(w.nodes, nil)).AddObjects(w.objects...)
		pl, err := NewBinding(DefaultBindingArgs(), h)
		if err != nil {
			t.Fatal(err)
		}
		state := framework.NewCycleState()
		_, st := pl.PreFilter(context.Background(), state, w.pod, nil)
		if !st.IsSuccess() {
			t.Fatalf("round %d: PreFilter: %v", round, st.Message())
		}
		s, err := framework.ReadAs[*volumeBindingState](state, volumeBindingStateKey)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, node := range w.nodes {
			got, gotConflicts, gotErr := s.findPodVolumes(node, true)
			want, wantConflicts, wantErr := w.reference(node)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("round %d node %s: error %v, want %v", round, node.Name, gotErr, wantErr)
			}
			if gotErr != nil {
				continue
			}
			if gotConflicts != wantConflicts {
				t.Fatalf("round %d node %s: conflicts %04b, want %04b\n%s", round, node.Name, gotConflicts, wantConflicts, w.describe())
			}
			if gotConflicts == 0 {
				if g, wt := bindingsOf(got), bindingsOf(want); !slices.Equal(g, wt) {
					t.Fatalf("round %d node %s: bindings %v, want %v\n%s", round, node.Name, g, wt, w.describe())
				}
			}
		}
	}
}

// bindingsOf lists claim→volume and claim→provision in order.
func bindingsOf(pvs *podVolumes) []string {
	if pvs == nil {
		return nil
	}
	var out []string
	for _, b := range pvs.static {
		out = append(out, b.claim.Name+"->"+b.pv.Name)
	}
	for _, d := range pvs.dynamic {
		out = append(out, d.claim.Name+"->provision")
	}
	return out
}

// volumeWorld is a random cluster of nodes, volumes, claims and classes,
// and a pod with some of the claims.
type volumeWorld struct {
	nodes   []*v1.Node
	pvs     []*v1.PersistentVolume
	claims  []*v1.PersistentVolumeClaim
	classes map[string]*storagev1.StorageClass
	objects []runtime.Object
	pod     *v1.Pod
	// capacities are those of the CSI class, by zone.
	capacities []*storagev1.CSIStorageCapacity
}

func randomVolumeWorld(rng *rand.Rand) *volumeWorld {
	w := &volumeWorld{classes: map[string]*storagev1.StorageClass{}}
	zones := []string{"a", "b"}
	for i := range 4 {
		w.nodes = append(w.nodes, frameworktest.MakeNode().Name(fmt.Sprintf("n%d", i)).
			Label(v1.LabelHostname, fmt.Sprintf("h%d", i)).Label(v1.LabelTopologyZone, zones[i%2]).Obj())
	}
	local := frameworktest.MakeStorageClass("local", storagehelpers.NotSupportedProvisioner, storagev1.VolumeBindingWaitForFirstConsumer)
	csi := frameworktest.MakeStorageClass("csi", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer)
	if rng.IntN(2) == 0 {
		frameworktest.AllowedTopologies(csi, v1.LabelTopologyZone, zones[rng.IntN(2)])
	}
	w.classes["local"], w.classes["csi"] = local, csi
	w.objects = append(w.objects, local, csi, frameworktest.MakeCSIDriver("csi.example.com", rng.IntN(2) == 0))
	for i, z := range zones {
		if rng.IntN(3) == 0 {
			continue
		}
		c := frameworktest.MakeCSIStorageCapacity(fmt.Sprintf("cap-%d", i), "csi", v1.LabelTopologyZone, z, fmt.Sprintf("%dGi", 1+rng.IntN(20)), "")
		w.capacities = append(w.capacities, c)
		w.objects = append(w.objects, c)
	}

	sizes := []string{"1Gi", "2Gi", "5Gi", "10Gi", "20Gi"}
	claimNames := []string{"c0", "c1", "c2"}
	for i := range 3 {
		cw := frameworktest.MakePVC("default", claimNames[i]).UID(claimNames[i] + "-uid").Request(sizes[rng.IntN(len(sizes))]).Version("1")
		if rng.IntN(5) == 0 {
			cw.Class("csi")
		} else {
			cw.Class("local")
		}
		switch rng.IntN(6) {
		case 0:
			cw.AccessModes(v1.ReadWriteOnce, v1.ReadOnlyMany)
		case 1:
			cw.Block()
		case 2:
			cw.Selector(map[string]string{"tier": "gold"})
		}
		if rng.IntN(8) == 0 {
			cw.Annotation(storagehelpers.AnnSelectedNode, w.nodes[rng.IntN(len(w.nodes))].Name)
		}
		w.claims = append(w.claims, cw.Obj())
		w.objects = append(w.objects, cw.Obj())
	}
	for i := range 3 + rng.IntN(12) {
		pw := frameworktest.MakePV(fmt.Sprintf("pv%02d", i)).Class("local").Capacity(sizes[rng.IntN(len(sizes))]).Version("1")
		if rng.IntN(8) == 0 {
			pw.Class("csi")
		}
		switch rng.IntN(8) {
		case 0: // no affinity
		case 1:
			pw.NodeAffinity(frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, zones[rng.IntN(2)]).Obj())
		case 2:
			pw.NodeAffinity(frameworktest.MakeNodeSelectorTerm().In(v1.LabelHostname, "h0", "h3").Obj())
		case 3:
			pw.NodeAffinity(frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, "a").NotIn(v1.LabelHostname, "h0").Obj())
		case 4:
			pw.NodeAffinity(frameworktest.MakeNodeSelectorTerm().In(v1.LabelHostname, "h1").Obj()).
				NodeAffinity(frameworktest.MakeNodeSelectorTerm().In(v1.LabelHostname, "h2").Obj())
		case 5:
			pw.NodeAffinity(frameworktest.MakeNodeSelectorTerm().Gt("cores", "x").Obj())
		default:
			pw.OnNode(fmt.Sprintf("h%d", rng.IntN(5)))
		}
		switch rng.IntN(10) {
		case 0:
			pw.ClaimRef("default", claimNames[rng.IntN(3)])
		case 1:
			pw.ClaimRef("default", claimNames[rng.IntN(3)])
			pw.Spec.ClaimRef.UID = types.UID("stale")
		case 2:
			pw.ClaimRef("default", "someone-else")
		case 3:
			pw.Phase(v1.VolumeReleased)
		case 4:
			pw.Terminating()
		}
		if rng.IntN(4) == 0 {
			pw.Block()
		}
		if rng.IntN(3) == 0 {
			pw.Label("tier", "gold")
		}
		if rng.IntN(6) == 0 {
			pw.AccessModes(v1.ReadWriteOnce, v1.ReadOnlyMany)
		}
		w.pvs = append(w.pvs, pw.Obj())
		w.objects = append(w.objects, pw.Obj())
	}
	pod := frameworktest.MakePod().Namespace("default").Name("p").UID("p-uid")
	for _, c := range w.claims[:1+rng.IntN(3)] {
		pod.PVC(c.Name)
	}
	w.pod = pod.Obj()
	return w
}

// reference is kube-scheduler v1.37's FindPodVolumes for the world's pod,
// whose claims are all unbound and of WaitForFirstConsumer classes.
func (w *volumeWorld) reference(node *v1.Node) (*podVolumes, volumeConflicts, error) {
	pvs := &podVolumes{}
	byName := map[string]*v1.PersistentVolumeClaim{}
	for _, c := range w.claims {
		byName[c.Name] = c
	}
	var toFind, toProvision []*v1.PersistentVolumeClaim
	for _, vol := range w.pod.Spec.Volumes {
		c := byName[vol.PersistentVolumeClaim.ClaimName]
		if sel, ok := c.Annotations[storagehelpers.AnnSelectedNode]; ok {
			if sel != node.Name {
				return pvs, conflictBind, nil
			}
			toProvision = append(toProvision, c)
		} else {
			toFind = append(toFind, c)
		}
	}
	slices.SortStableFunc(toFind, func(a, b *v1.PersistentVolumeClaim) int {
		x, y := requestOf(a), requestOf(b)
		return x.Cmp(y)
	})
	chosen := map[string]*v1.PersistentVolume{}
	for _, c := range toFind {
		var ofClass []*v1.PersistentVolume
		for _, pv := range w.pvs {
			if storagehelpers.GetPersistentVolumeClass(pv) == storagehelpers.GetPersistentVolumeClaimClass(c) {
				ofClass = append(ofClass, pv)
			}
		}
		pv, err := storagehelpers.FindMatchingVolume(c, ofClass, node, chosen, true, true)
		if err != nil {
			return nil, 0, err
		}
		if pv == nil {
			toProvision = append(toProvision, c)
			continue
		}
		chosen[pv.Name] = pv
		pvs.static = append(pvs.static, staticBinding{pv: pv, claim: c})
	}
	for _, c := range toProvision {
		class := w.classes[storagehelpers.GetPersistentVolumeClaimClass(c)]
		if class.Provisioner == storagehelpers.NotSupportedProvisioner {
			return pvs, conflictBind, nil
		}
		if !topologyAllows(class.AllowedTopologies, node.Labels) {
			return pvs, conflictBind, nil
		}
		if w.driverPublishesCapacity() {
			size := requestOf(c)
			room := false
			for _, capacity := range w.capacities {
				sel, err := metav1.LabelSelectorAsSelector(capacity.NodeTopology)
				if err == nil && capacity.Capacity.Cmp(size) >= 0 && sel.Matches(labels.Set(node.Labels)) {
					room = true
				}
			}
			if !room {
				return pvs, conflictStorage, nil
			}
		}
		pvs.dynamic = append(pvs.dynamic, dynamicProvision{claim: c})
	}
	return pvs, 0, nil
}

func (w *volumeWorld) driverPublishesCapacity() bool {
	for _, o := range w.objects {
		if d, ok := o.(*storagev1.CSIDriver); ok {
			return *d.Spec.StorageCapacity
		}
	}
	return false
}

// topologyAllows is MatchTopologySelectorTerms for single-expression
// terms with valid values, which is what the worlds have.
func topologyAllows(terms []v1.TopologySelectorTerm, nodeLabels map[string]string) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		e := t.MatchLabelExpressions[0]
		if v, ok := nodeLabels[e.Key]; ok && slices.Contains(e.Values, v) {
			return true
		}
	}
	return false
}

func (w *volumeWorld) describe() string {
	s := "claims:"
	for _, c := range w.claims {
		q := requestOf(c)
		s += fmt.Sprintf(" %s(%s %s %v sel=%v ann=%v)", c.Name, *c.Spec.StorageClassName, q.String(), c.Spec.AccessModes, c.Spec.Selector != nil, c.Annotations)
	}
	s += "\npod volumes:"
	for _, v := range w.pod.Spec.Volumes {
		s += " " + v.Name
	}
	s += "\nvolumes:"
	for _, pv := range w.pvs {
		q := pv.Spec.Capacity[v1.ResourceStorage]
		s += fmt.Sprintf("\n  %s %s %s %s ref=%v del=%v labels=%v", pv.Name, pv.Spec.StorageClassName, q.String(), pv.Status.Phase, pv.Spec.ClaimRef, pv.DeletionTimestamp != nil, pv.Labels)
	}
	return s
}
