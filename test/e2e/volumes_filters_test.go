package e2e

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// immediateClass makes an Immediate class without a provisioner: its
// claims are bound by the PV controller, or not at all.
func (r *volumeRun) immediateClass(name string) {
	r.classWithMode(name, "kubernetes.io/no-provisioner", storagev1.VolumeBindingImmediate, nil)
}

// boundVolume makes a 1Gi CSI volume without a class, adjusted by mutate,
// and claim bound to it by the PV controller.
func (r *volumeRun) boundVolume(claim string, mutate func(pv *v1.PersistentVolume)) {
	e := r.e
	e.t.Helper()
	e.boundClaim(claim, e.persistentVolume(claim+"-pv", mutate))
}

// onHost pins a volume to the node of the scenario named node.
func (r *volumeRun) onHost(node string) func(pv *v1.PersistentVolume) {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{r.e.ns + "-" + node}}},
		}}}}
	}
}

// labelled labels a volume (k, v, ...).
func labelled(kv ...string) func(pv *v1.PersistentVolume) {
	return func(pv *v1.PersistentVolume) {
		pv.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			pv.Labels[kv[i]] = kv[i+1]
		}
	}
}

// readWriteOncePod gives a volume the ReadWriteOncePod access mode.
func readWriteOncePod(pv *v1.PersistentVolume) {
	pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
}

// claimReadWriteOncePod asks for the ReadWriteOncePod access mode.
func claimReadWriteOncePod(pvc *v1.PersistentVolumeClaim) {
	pvc.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
}

// csiNode makes the CSINode of node, where the test's provisioner (a CSI
// driver by name) can attach at most limit volumes.
func (r *volumeRun) csiNode(node string, limit int32) {
	e := r.e
	e.t.Helper()
	cn := frameworktest.MakeCSINode(e.ns+"-"+node, map[string]int32{r.provisionerName(): limit})
	if _, err := e.client.StorageV1().CSINodes().Create(e.ctx, cn, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create CSINode %s: %v", cn.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().CSINodes().Delete(context.Background(), cn.Name, metav1.DeleteOptions{})
	})
}

// attached makes a CSI volume of the test's provisioner and a
// VolumeAttachment that holds it on node, with no pod using it.
func (r *volumeRun) attached(name, node string) {
	e := r.e
	e.t.Helper()
	pv := e.persistentVolume(name, func(pv *v1.PersistentVolume) {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: r.provisionerName(), VolumeHandle: e.ns + "-" + name}
	})
	va := frameworktest.MakeVolumeAttachment(pv.Name, r.provisionerName(), pv.Name, e.ns+"-"+node)
	if _, err := e.client.StorageV1().VolumeAttachments().Create(e.ctx, va, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create VolumeAttachment %s: %v", va.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().VolumeAttachments().Delete(context.Background(), va.Name, metav1.DeleteOptions{})
	})
}

// publishesCapacity makes the CSIDriver of the test's provisioner, which
// says it publishes CSIStorageCapacity.
func (r *volumeRun) publishesCapacity() {
	e := r.e
	e.t.Helper()
	d := frameworktest.MakeCSIDriver(r.provisionerName(), true)
	if _, err := e.client.StorageV1().CSIDrivers().Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create CSIDriver %s: %v", d.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().CSIDrivers().Delete(context.Background(), d.Name, metav1.DeleteOptions{})
	})
}

// requiresDriver makes the CSIDriver of the test's provisioner, which asks
// that pods with its volumes go only to nodes whose CSINode lists it
// (preventPodSchedulingIfMissing, VolumeLimitScaling).
func (r *volumeRun) requiresDriver() {
	e := r.e
	e.t.Helper()
	d := frameworktest.MakeCSIDriver(r.provisionerName(), false)
	d.Spec.PreventPodSchedulingIfMissing = new(true)
	if _, err := e.client.StorageV1().CSIDrivers().Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create CSIDriver %s: %v", d.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().CSIDrivers().Delete(context.Background(), d.Name, metav1.DeleteOptions{})
	})
}

// csiNodeOfOtherDriver makes the CSINode of node, which lists another CSI
// driver than the test's provisioner.
func (r *volumeRun) csiNodeOfOtherDriver(node string) {
	e := r.e
	e.t.Helper()
	cn := frameworktest.MakeCSINode(e.ns+"-"+node, map[string]int32{"other." + e.ns + ".yardmaster.io": -1})
	if _, err := e.client.StorageV1().CSINodes().Create(e.ctx, cn, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create CSINode %s: %v", cn.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().CSINodes().Delete(context.Background(), cn.Name, metav1.DeleteOptions{})
	})
}

// capacity publishes the storage of class in zone: capacity and, when
// not empty, maximumVolumeSize.
func (r *volumeRun) capacity(name, class, zone, capacity, maxVolume string) {
	e := r.e
	e.t.Helper()
	c := frameworktest.MakeCSIStorageCapacity(name, e.ns+"-"+class, v1.LabelTopologyZone, zone, capacity, maxVolume)
	c.Namespace = e.ns
	if _, err := e.client.StorageV1().CSIStorageCapacities(e.ns).Create(e.ctx, c, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create CSIStorageCapacity %s: %v", name, err)
	}
}

// keepFinalizer holds a claim the test deleted.
const keepFinalizer = "e2e.yardmaster.io/keep"

// deletingClaim makes a claim and deletes it; a finalizer keeps it, with
// its deletionTimestamp, until the test ends.
func (r *volumeRun) deletingClaim(name, class, size string) {
	e := r.e
	e.t.Helper()
	r.volumeClaimWith(name, class, size, func(pvc *v1.PersistentVolumeClaim) { pvc.Finalizers = []string{keepFinalizer} })
	claims := e.client.CoreV1().PersistentVolumeClaims(e.ns)
	e.t.Cleanup(func() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			c, err := claims.Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			c.Finalizers = nil
			_, err = claims.Update(context.Background(), c, metav1.UpdateOptions{})
			return err
		})
		if err := ignoreNotFound(err); err != nil {
			e.t.Logf("cleanup claim %s: %v", name, err)
		}
	})
	if err := claims.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete claim %s: %v", name, err)
	}
}

// ephemeralTemplate registers the claim template of the generic
// ephemeral volumes named name (~name in a step).
func (r *volumeRun) ephemeralTemplate(name, class, size string) {
	r.templates[name] = r.claimSpec(class, size)
}

// strangersClaim makes the claim that pod's ephemeral volume vol would
// get, owned by some other pod.
func (r *volumeRun) strangersClaim(pod, vol, class, size string) {
	yes := true
	r.volumeClaimWith(pod+"-"+vol, class, size, func(pvc *v1.PersistentVolumeClaim) {
		pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "stranger", UID: types.UID("stranger"), Controller: &yes}}
	})
}

// blockClaims sets a quota of no claims in the namespace: the ephemeral
// volume controller can make none. The quota's status is written here, as
// the resource quota controller, which the control plane does not run,
// would.
func (r *volumeRun) blockClaims() {
	e := r.e
	e.t.Helper()
	none := v1.ResourceList{v1.ResourcePersistentVolumeClaims: resource.MustParse("0")}
	q := &v1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "no-claims"}, Spec: v1.ResourceQuotaSpec{Hard: none}}
	q, err := e.client.CoreV1().ResourceQuotas(e.ns).Create(e.ctx, q, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create quota: %v", err)
	}
	q.Status = v1.ResourceQuotaStatus{Hard: none, Used: none}
	if _, err := e.client.CoreV1().ResourceQuotas(e.ns).UpdateStatus(e.ctx, q, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("set quota status: %v", err)
	}
	r.claimsBlocked = true
}

// yardmaster and kube-scheduler v1.37 agree on the volume filters beyond
// finding volumes for WaitForFirstConsumer claims: bound volumes' node
// affinity and zone labels, ReadWriteOncePod, CSI attach limits, storage
// capacity, generic ephemeral volumes, and claims that cannot be used.
// Every step has at most one node that fits, so neither scheduler's
// tie-break decides anything.
func TestVolumeFiltersMatchKubeScheduler(t *testing.T) {
	scenarios := []volumeScenario{{
		// A bound volume pins the pod to its node; a WaitForFirstConsumer
		// claim of the same pod then takes the smallest volume that fits
		// there, not the smaller one elsewhere. A node can fail for
		// several reasons at once.
		name:  "bound volumes with node affinity",
		nodes: map[string]string{"a": "z1", "b": "z1", "c": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.localVolume("a-4", "local", "a", "4Gi")
			r.localVolume("b-5", "local", "b", "5Gi")
			r.localVolume("b-10", "local", "b", "10Gi")
			r.boundVolume("pinned", r.onHost("b"))
			r.boundVolume("nowhere", r.onHost("gone"))
			r.volumeClaim("data", "local", "3Gi")
			r.volumeClaim("more", "local", "8Gi")
		},
		steps: [][]string{{"p-pinned:pinned"}, {"p-nowhere:nowhere"}, {"p-mixed:pinned,data"}, {"p-stuck:nowhere,more"}},
	}, {
		// topology.kubernetes.io labels on the volume, the legacy
		// failure-domain ones matched against the node's GA label, a
		// value listing several zones, and a region no node carries.
		name:  "bound volumes with zone labels",
		nodes: map[string]string{"a": "z1", "b": "z2", "c": "z3"},
		storage: func(r *volumeRun) {
			r.boundVolume("zonal", labelled(v1.LabelTopologyZone, "z2"))
			r.boundVolume("legacy", labelled(v1.LabelFailureDomainBetaZone, "z3"))
			r.boundVolume("multi", labelled(v1.LabelTopologyZone, "z1__z3"))
			r.boundVolume("regional", labelled(v1.LabelTopologyRegion, "r1"))
		},
		steps: [][]string{{"p-zonal:zonal"}, {"p-legacy:legacy"}, {"p-both:multi,legacy"}, {"p-regional:regional"}},
	}, {
		// The second pod of a ReadWriteOncePod claim waits on every node;
		// of two pods sharing one, one is placed. Each claim selects the
		// volume of one node.
		name:  "ReadWriteOncePod claims",
		nodes: map[string]string{"a": "z1", "b": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.localVolumeWith("a-vol", "local", "a", "10Gi", readWriteOncePod, "for", "solo")
			r.localVolumeWith("b-vol", "local", "b", "10Gi", readWriteOncePod, "for", "duo")
			r.volumeClaimWith("solo", "local", "1Gi", claimReadWriteOncePod, "for", "solo")
			r.volumeClaimWith("duo", "local", "1Gi", claimReadWriteOncePod, "for", "duo")
		},
		steps:    [][]string{{"p1:solo"}, {"p2:solo"}, {"q1:duo", "q2:duo"}},
		together: map[int]bool{2: true},
	}, {
		// a can attach 1 volume of the driver, b 3, c 2 of which a
		// VolumeAttachment holds one. Unbound claims count as new
		// volumes; a volume a pod on the node already uses does not.
		name:  "CSI attach limits",
		nodes: map[string]string{"a": "z1", "b": "z1", "c": "z1"},
		storage: func(r *volumeRun) {
			r.provisionedClass("csi")
			r.csiNode("a", 1)
			r.csiNode("b", 3)
			r.csiNode("c", 2)
			r.attached("held", "c")
			for _, c := range []string{"c1", "c2", "c3", "c4", "c5"} {
				r.volumeClaim(c, "csi", "1Gi")
			}
		},
		steps: [][]string{{"p1:c1,c2"}, {"p2:c3,c4"}, {"p3:c1,c5"}},
	}, {
		// The driver's CSIDriver asks to be installed where its volumes
		// go (VolumeLimitScaling, beta and on in v1.37): a lists it, b's
		// CSINode lists another driver, c has none. The second pod also
		// needs b's local volume: it fits nowhere, for a reason per node.
		name:  "a CSI driver that must be installed",
		nodes: map[string]string{"a": "z1", "b": "z1", "c": "z1"},
		storage: func(r *volumeRun) {
			r.provisionedClass("csi")
			r.localClass("local")
			r.requiresDriver()
			r.csiNode("a", 8)
			r.csiNodeOfOtherDriver("b")
			r.localVolume("b-disk", "local", "b", "10Gi")
			r.volumeClaim("c1", "csi", "1Gi")
			r.volumeClaim("c2", "csi", "1Gi")
			r.volumeClaim("disk", "local", "1Gi")
		},
		steps: [][]string{{"p1:c1"}, {"p2:c2,disk"}},
	}, {
		// The driver publishes capacity: 10Gi in z1, volumes of at most
		// 2Gi in z2, nothing in z3.
		name:  "storage capacity",
		nodes: map[string]string{"a": "z1", "b": "z2", "c": "z3"},
		storage: func(r *volumeRun) {
			r.provisionedClass("fast")
			r.localClass("local")
			r.publishesCapacity()
			r.capacity("z1", "fast", "z1", "10Gi", "")
			r.capacity("z2", "fast", "z2", "100Gi", "2Gi")
			r.localVolume("b-disk", "local", "b", "10Gi")
			r.volumeClaim("big", "fast", "5Gi")
			r.volumeClaim("huge", "fast", "50Gi")
			r.volumeClaim("small", "fast", "1Gi")
			r.volumeClaim("scratch", "local", "1Gi")
		},
		steps: [][]string{{"p-big:big"}, {"p-huge:huge"}, {"p-small:small,scratch"}},
	}, {
		name:  "generic ephemeral volumes",
		nodes: map[string]string{"a": "z1", "b": "z2"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.provisionedClass("zonal", "z1")
			r.localVolume("b-vol", "local", "b", "10Gi")
			r.ephemeralTemplate("scratch", "local", "1Gi")
			r.ephemeralTemplate("cache", "zonal", "1Gi")
		},
		steps: [][]string{{"p:~scratch"}, {"q:~cache"}, {"r:~scratch"}},
	}, {
		// A claim of the pod's ephemeral volume made for someone else,
		// and one the ephemeral volume controller cannot make.
		name:  "generic ephemeral volumes the pod cannot have",
		nodes: map[string]string{"a": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.localVolume("a-vol", "local", "a", "10Gi")
			r.ephemeralTemplate("scratch", "local", "1Gi")
			r.strangersClaim("taken", "scratch", "local", "1Gi")
			r.blockClaims()
		},
		steps: [][]string{{"taken:~scratch"}, {"blocked:~scratch"}},
	}, {
		// An Immediate claim no volume fits, a claim being deleted, and a
		// claim whose selector matches no volume.
		name:  "claims that cannot be used",
		nodes: map[string]string{"a": "z1"},
		storage: func(r *volumeRun) {
			r.immediateClass("now")
			r.localClass("local")
			r.localVolume("a-silver", "local", "a", "10Gi", "tier", "silver")
			r.volumeClaim("unbound", "now", "1Gi")
			r.deletingClaim("going", "local", "1Gi")
			r.volumeClaim("picky", "local", "1Gi", "tier", "gold")
		},
		steps: [][]string{{"p-unbound:unbound"}, {"p-going:going"}, {"p-picky:picky"}},
	}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sideBySide(t, sc.play) })
	}
}

// A pod with a generic ephemeral volume tried before the ephemeral volume
// controller made its claim, as a user's pods often are: VolumeBinding
// rejects it ("waiting for ephemeral volume controller to create the
// persistentvolumeclaim"), and the claim's creation must wake it; it is
// then placed where its volume is. A quota holds the claim back until the
// pod was found unschedulable, so the wake-up is tested every time.
func TestEphemeralClaimMadeAfterThePodMatchesKubeScheduler(t *testing.T) {
	sideBySide(t, func(t *testing.T, kube bool) string {
		e := newEnv(t)
		r := &volumeRun{e: e, templates: map[string]v1.PersistentVolumeClaimSpec{}}
		for _, n := range []string{"a", "b"} {
			e.addNode(e.node(n).Capacity("8", "16Gi", 110).Label(v1.LabelHostname, e.ns+"-"+n))
		}
		r.localClass("local")
		r.localVolume("b-vol", "local", "b", "10Gi")
		r.ephemeralTemplate("scratch", "local", "1Gi")
		r.blockClaims()
		if kube {
			e.startKubeScheduler()
		} else {
			e.startScheduler()
		}
		e.createPod(e.pod("p").Req("100m", "64Mi").Volume(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
			VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: r.templates["scratch"]},
		}}}))
		e.waitFailedScheduling("p", `waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"`)
		if err := e.client.CoreV1().ResourceQuotas(e.ns).Delete(e.ctx, "no-claims", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete quota: %v", err)
		}
		node := e.waitBoundWithin("p", requeueBound, "of its claim being made")
		return strings.TrimPrefix(node, e.ns+"-")
	})
}
