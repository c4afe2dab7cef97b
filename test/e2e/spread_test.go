package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// 30 pods spread over 3 zones of 3 nodes with zone maxSkew 1
// (DoNotSchedule) end 10/10/10: at no step may a zone get 2 more than
// another, so the final counts, read from the API, differ by at most 1.
// Everything else pulls them to zone a (a preferred node affinity, and
// nodes 8 times as big), so the spread is the filter's doing.
func TestSpreadZonesMaxSkewOne(t *testing.T) {
	e := newEnv(t)
	zoneOf := map[string]string{}
	for _, z := range []string{"a", "b", "c"} {
		cpu, mem := "2", "4Gi"
		if z == "a" {
			cpu, mem = "16", "32Gi"
		}
		for i := range 3 {
			n := e.addNode(e.node(fmt.Sprintf("%s%d", z, i)).Capacity(cpu, mem, 110).Label(v1.LabelTopologyZone, e.ns+"-"+z))
			zoneOf[n.Name] = z
		}
	}
	e.startScheduler()

	spread := frameworktest.MakeSpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule).MatchLabels("app", "web").Obj()
	for i := range 30 {
		e.createPod(e.pod(fmt.Sprintf("web-%d", i)).Label("app", "web").Req("100m", "64Mi").SpreadConstraint(spread).
			PreferredNodeAffinity(100, frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, e.ns+"-a").Obj()))
	}
	placed := e.waitAllBound(60*time.Second, 30)

	perZone := map[string]int{}
	for pod, node := range placed {
		z, ok := zoneOf[node]
		if !ok {
			t.Fatalf("pod %s on %s, not one of this test's nodes", pod, node)
		}
		perZone[z]++
	}
	lo, hi := 30, 0
	for _, z := range []string{"a", "b", "c"} {
		lo, hi = min(lo, perZone[z]), max(hi, perZone[z])
	}
	if hi-lo > 1 {
		t.Errorf("pods per zone %v: skew %d, want ≤ 1", perZone, hi-lo)
	}
}

// A pod whose claim is bound to a PersistentVolume with zone node affinity
// lands only in that zone; one whose volume is labelled with a zone
// (VolumeZone) only in that one.
func TestVolumeNodeAffinityAndZone(t *testing.T) {
	e := newEnv(t)
	zoneOf := map[string]string{}
	for _, z := range []string{"a", "b", "c"} {
		n := e.addNode(e.node(z).Capacity("8", "16Gi", 110).Label(v1.LabelTopologyZone, e.ns+"-"+z))
		zoneOf[n.Name] = z
	}
	pinned := e.persistentVolume("pinned", func(pv *v1.PersistentVolume) {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			frameworktest.MakeNodeSelectorTerm().In(v1.LabelTopologyZone, e.ns+"-b").Obj(),
		}}}
	})
	labelled := e.persistentVolume("labelled", func(pv *v1.PersistentVolume) {
		pv.Labels = map[string]string{v1.LabelTopologyZone: e.ns + "-c"}
	})
	e.boundClaim("pinned", pinned)
	e.boundClaim("labelled", labelled)
	e.startScheduler()

	// Three pods per claim: landing right by chance would be (1/3)³.
	for i := range 3 {
		e.createPod(e.pod(fmt.Sprintf("pinned-%d", i)).Req("100m", "64Mi").PVC("pinned"))
		e.createPod(e.pod(fmt.Sprintf("labelled-%d", i)).Req("100m", "64Mi").PVC("labelled"))
	}
	placed := e.waitAllBound(30*time.Second, 6)
	for pod, node := range placed {
		want := "b"
		if strings.HasPrefix(pod, "labelled") {
			want = "c"
		}
		if zoneOf[node] != want {
			t.Errorf("pod %s on %s (zone %q), want zone %s", pod, node, zoneOf[node], want)
		}
	}
}

// Claims that nobody can bind leave their pods pending: an immediate claim
// that no volume matches waits for the PV binder to find one, with the
// reason; a WaitForFirstConsumer one whose provisioner never answers gets
// the chosen node (volume.kubernetes.io/selected-node) and its pod waits in
// PreBind; a missing one waits to be created, with the reason.
func TestVolumeUnboundClaimsStayPending(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b"} {
		e.addNode(e.node(n).Capacity("8", "16Gi", 110))
	}
	wffc := e.storageClass("wffc", storagev1.VolumeBindingWaitForFirstConsumer)
	e.claim("immediate", "", "")
	e.claim("later", wffc, "")
	e.startScheduler()

	e.createPod(e.pod("immediate").PVC("immediate"))
	e.createPod(e.pod("later").PVC("later"))
	e.createPod(e.pod("missing").PVC("nope"))
	e.createPod(e.pod("free").Req("100m", "64Mi"))

	e.waitBound(30*time.Second, "free")
	e.waitFailedScheduling("immediate", "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.")
	e.waitFailedScheduling("missing", `0/2 nodes are available: persistentvolumeclaim "nope" not found.`)
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, "later", metav1.GetOptions{})
		return err == nil && strings.HasPrefix(c.Annotations["volume.kubernetes.io/selected-node"], e.ns+"-"), err
	}); err != nil {
		t.Fatalf("the WaitForFirstConsumer claim never got a selected node: %v", err)
	}
	for _, p := range []string{"immediate", "later", "missing"} {
		e.expectPending(p, time.Second)
	}
}

// persistentVolume creates a 1Gi CSI volume named after the test,
// adjusted by mutate, and deletes it when the test ends.
func (e *env) persistentVolume(name string, mutate func(*v1.PersistentVolume)) *v1.PersistentVolume {
	e.t.Helper()
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: "",
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: e.ns + "-" + name},
			},
		},
	}
	mutate(pv)
	got, err := e.client.CoreV1().PersistentVolumes().Create(e.ctx, pv, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create PersistentVolume %s: %v", pv.Name, err)
	}
	e.t.Cleanup(func() { e.deletePersistentVolume(got.Name) })
	return got
}

// deletePersistentVolume deletes the volume and then removes its protection
// finalizer: the PV-protection controller would keep a volume that is still
// Bound (its claim outlives the test, until env.cleanup), and it re-adds the
// finalizer to a volume that is not being deleted, so the order matters.
func (e *env) deletePersistentVolume(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pvs := e.client.CoreV1().PersistentVolumes()
	if err := ignoreNotFound(pvs.Delete(ctx, name, metav1.DeleteOptions{})); err != nil {
		e.t.Logf("cleanup PersistentVolume %s: %v", name, err)
		return
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pv, err := pvs.Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(pv.Finalizers) == 0 {
			return err
		}
		pv.Finalizers = nil
		_, err = pvs.Update(ctx, pv, metav1.UpdateOptions{})
		return err
	})
	if err := ignoreNotFound(err); err != nil {
		e.t.Logf("cleanup PersistentVolume %s: %v", name, err)
	}
}

// claim creates a 1Gi claim of class (empty for none, not the default) in
// the test namespace, pre-bound to volume when that is set. env.cleanup
// deletes claims once the pods that use them are gone.
func (e *env) claim(name, class, volume string) *v1.PersistentVolumeClaim {
	e.t.Helper()
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: &class,
			VolumeName:       volume,
		},
	}
	got, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Create(e.ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create PersistentVolumeClaim %s: %v", name, err)
	}
	return got
}

// boundClaim creates claim name pre-bound to pv (spec.volumeName) and waits
// for the PV binder to finish the binding: the volume's claimRef and phase
// Bound, the claim's bind-completed annotation and phase Bound.
func (e *env) boundClaim(name string, pv *v1.PersistentVolume) {
	e.t.Helper()
	pvc := e.claim(name, "", pv.Name)
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		v, err := e.client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return c.Status.Phase == v1.ClaimBound && c.Annotations["pv.kubernetes.io/bind-completed"] != "" &&
			v.Status.Phase == v1.VolumeBound && v.Spec.ClaimRef != nil && v.Spec.ClaimRef.UID == pvc.UID, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for the PV binder to bind claim %s to volume %s: %v", name, pv.Name, err)
	}
}

// storageClass creates a class named after the test and returns its name;
// it is deleted when the test ends.
func (e *env) storageClass(name string, mode storagev1.VolumeBindingMode) string {
	e.t.Helper()
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: e.ns + "-" + name},
		Provisioner:       "csi.example.com",
		VolumeBindingMode: &mode,
	}
	if _, err := e.client.StorageV1().StorageClasses().Create(e.ctx, sc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create StorageClass %s: %v", sc.Name, err)
	}
	e.t.Cleanup(func() {
		if err := ignoreNotFound(e.client.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})); err != nil {
			e.t.Logf("cleanup StorageClass %s: %v", sc.Name, err)
		}
	})
	return sc.Name
}
