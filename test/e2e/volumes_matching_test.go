package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// inlineVolume is the inline volume a step writes kind=name: "ebs=ID" an
// AWS EBS volume, "gce=PD" a read-only GCE persistent disk (both in-tree
// plugins migrated to CSI), "csi=NAME" a CSI ephemeral volume of the
// test's provisioner. ok is false for anything else.
func (r *volumeRun) inlineVolume(spec string) (v1.Volume, bool) {
	kind, name, ok := strings.Cut(spec, "=")
	if !ok {
		return v1.Volume{}, false
	}
	vol := v1.Volume{Name: kind + "-" + name}
	switch kind {
	case "ebs":
		vol.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: name}
	case "gce":
		vol.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: true}
	case "csi":
		vol.CSI = &v1.CSIVolumeSource{Driver: r.provisionerName()}
	default:
		r.e.t.Fatalf("unknown inline volume %q", spec)
	}
	return vol, true
}

// csiNodeLimits makes the CSINode of node with the attach limit of each
// driver; "" stands for the test's provisioner.
func (r *volumeRun) csiNodeLimits(node string, limits map[string]int32) {
	e := r.e
	e.t.Helper()
	named := map[string]int32{}
	for d, n := range limits {
		if d == "" {
			d = r.provisionerName()
		}
		named[d] = n
	}
	cn := frameworktest.MakeCSINode(e.ns+"-"+node, named)
	if _, err := e.client.StorageV1().CSINodes().Create(e.ctx, cn, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create CSINode %s: %v", cn.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().CSINodes().Delete(context.Background(), cn.Name, metav1.DeleteOptions{})
	})
}

// lockClaimRefs makes the API server refuse to give a volume labelled
// locked a claimRef (a ValidatingAdmissionPolicy), so that a scheduler's
// PreBind write fails; it waits until the policy is in force.
func (r *volumeRun) lockClaimRefs(locked string) {
	e := r.e
	e.t.Helper()
	name := e.ns + "-lock"
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"e2e.yardmaster.io/locked": e.ns}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"persistentvolumes"}},
				}}},
			},
			Validations: []admissionv1.Validation{{
				Expression: "!has(object.spec.claimRef) || has(oldObject.spec.claimRef)",
				Message:    "claimRef locked",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	ar := e.client.AdmissionregistrationV1()
	if _, err := ar.ValidatingAdmissionPolicies().Create(e.ctx, policy, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create ValidatingAdmissionPolicy: %v", err)
	}
	e.t.Cleanup(func() {
		_ = ar.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if _, err := ar.ValidatingAdmissionPolicyBindings().Create(e.ctx, binding, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create ValidatingAdmissionPolicyBinding: %v", err)
	}
	e.t.Cleanup(func() {
		_ = ar.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// In force once a dry-run claimRef write is refused.
	pvs := e.client.CoreV1().PersistentVolumes()
	if err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pv, err := pvs.Get(ctx, e.ns+"-"+locked, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: e.ns, Name: "probe"}
		_, err = pvs.Update(ctx, pv, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err) || apierrors.IsInvalid(err), nil
	}); err != nil {
		e.t.Fatalf("the admission policy never came into force: %v", err)
	}
}

// csiNodeMigrating makes the CSINode of node, whose annotation says the
// in-tree plugins are migrated to CSI there (plugins is a comma-separated
// list, as kubelet writes it).
func (r *volumeRun) csiNodeMigrating(node, plugins string) {
	e := r.e
	e.t.Helper()
	cn := frameworktest.MakeCSINode(e.ns+"-"+node, nil)
	cn.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: plugins}
	if _, err := e.client.StorageV1().CSINodes().Create(e.ctx, cn, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create CSINode %s: %v", cn.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().CSINodes().Delete(context.Background(), cn.Name, metav1.DeleteOptions{})
	})
}

// labelNode labels the scenario's node named node.
func (r *volumeRun) labelNode(node, key, value string) {
	e := r.e
	e.t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.client.CoreV1().Nodes().Get(e.ctx, e.ns+"-"+node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Labels[key] = value
		_, err = e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		e.t.Fatalf("label node %s: %v", node, err)
	}
}

// inTreeEBS makes a volume an in-tree AWS EBS volume in zone.
func inTreeEBS(zone string) func(*v1.PersistentVolume) {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-" + pv.Name}}
		pv.Labels = map[string]string{v1.LabelTopologyZone: zone}
	}
}

// accessModes gives a volume these access modes.
func accessModes(modes ...v1.PersistentVolumeAccessMode) func(*v1.PersistentVolume) {
	return func(pv *v1.PersistentVolume) { pv.Spec.AccessModes = modes }
}

// blockVolume makes a raw block volume.
func blockVolume(pv *v1.PersistentVolume) {
	block := v1.PersistentVolumeBlock
	pv.Spec.VolumeMode = &block
}

// reservedFor pre-binds a volume to the claim of the scenario named
// claim (claimRef without a UID, as an administrator writes it).
func (r *volumeRun) reservedFor(claim string) func(*v1.PersistentVolume) {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: r.e.ns, Name: claim}
	}
}

// claimAccessModes asks for these access modes.
func claimAccessModes(modes ...v1.PersistentVolumeAccessMode) func(*v1.PersistentVolumeClaim) {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.AccessModes = modes }
}

// claimBlock asks for a raw block volume.
func claimBlock(pvc *v1.PersistentVolumeClaim) {
	block := v1.PersistentVolumeBlock
	pvc.Spec.VolumeMode = &block
}

// claimSelecting selects volumes by expressions.
func claimSelecting(reqs ...metav1.LabelSelectorRequirement) func(*v1.PersistentVolumeClaim) {
	return func(pvc *v1.PersistentVolumeClaim) {
		pvc.Spec.Selector = &metav1.LabelSelector{MatchExpressions: reqs}
	}
}

// preBoundTo pre-binds a claim to the scenario's volume named volume
// (spec.volumeName).
func (r *volumeRun) preBoundTo(volume string) func(*v1.PersistentVolumeClaim) {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.VolumeName = r.e.ns + "-" + volume }
}

// waitBound waits until the PV controller has bound the claim, so that no
// scheduler sees it half done.
func (r *volumeRun) waitBound(claim string) {
	e := r.e
	e.t.Helper()
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return c.Status.Phase == v1.ClaimBound && c.Annotations["pv.kubernetes.io/bind-completed"] != "", nil
	}); err != nil {
		e.t.Fatalf("the PV controller did not bind claim %s: %v", claim, err)
	}
}

// yardmaster and kube-scheduler v1.37 agree on which volume a claim can
// have: several claims of one pod that only one node satisfies together,
// claims of different classes, what rules a volume in or out (access
// modes, volume mode, class, selector expressions, node affinity of
// several terms, a claimRef), claims pre-bound to a volume, and CSI
// attach limits with in-tree, inline CSI and generic ephemeral volumes.
// Every step has at most one node that fits.
func TestVolumeMatchingMatchesKubeScheduler(t *testing.T) {
	scenarios := []volumeScenario{{
		// p-pair's claims fit together only on b (a has one volume, c
		// only a small one); p-mixed's Immediate claim, already bound,
		// pins it to c; p-wide's claims want z1 and z2 at once;
		// p-prov's local claim fits on a and c, its provisioned one only
		// in z2.
		name:  "claims a pod needs together",
		nodes: map[string]string{"a": "z1", "b": "z1", "c": "z2"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.immediateClass("now")
			r.provisionedClass("zonal", "z2")
			r.localVolume("a-10", "local", "a", "10Gi")
			r.localVolume("b-2", "local", "b", "2Gi")
			r.localVolume("b-10", "local", "b", "10Gi")
			r.localVolume("c-2", "local", "c", "2Gi")
			r.localVolume("c-3", "local", "c", "3Gi")
			r.localVolume("now-c", "now", "c", "1Gi")
			r.volumeClaim("small", "local", "1Gi")
			r.volumeClaim("big", "local", "8Gi")
			r.volumeClaim("fixed", "now", "1Gi")
			r.waitBound("fixed")
			r.volumeClaim("near", "local", "1Gi")
			r.volumeClaim("wide", "local", "9Gi")
			r.volumeClaim("prov", "zonal", "1Gi")
			r.volumeClaim("tiny", "local", "1Gi")
			r.volumeClaim("prov2", "zonal", "1Gi")
		},
		steps: [][]string{{"p-pair:small,big"}, {"p-mixed:fixed,near"}, {"p-wide:wide,prov"}, {"p-prov:tiny,prov2"}},
	}, {
		name:  "what rules a volume in or out",
		nodes: map[string]string{"a": "z1", "b": "z2", "c": "z3"},
		storage: func(r *volumeRun) {
			ns := r.e.ns
			r.localClass("local")
			r.localClass("other")
			// Access modes: only b-both has both.
			r.localVolumeWith("a-rox", "local", "a", "10Gi", accessModes(v1.ReadOnlyMany))
			r.localVolumeWith("b-both", "local", "b", "10Gi", accessModes(v1.ReadWriteOnce, v1.ReadOnlyMany))
			r.localVolume("c-rwo", "local", "c", "10Gi")
			r.volumeClaimWith("shared", "local", "1Gi", claimAccessModes(v1.ReadWriteOnce, v1.ReadOnlyMany))
			// Volume mode and class.
			r.localVolumeWith("a-block", "local", "a", "5Gi", blockVolume)
			r.volumeClaimWith("raw", "local", "1Gi", claimBlock)
			r.localVolume("c-other", "other", "c", "5Gi")
			r.volumeClaim("elsewhere", "other", "1Gi")
			// Selector expressions: gold or bronze, on an SSD.
			r.localVolume("a-gold", "local", "a", "2Gi", "tier", "gold")
			r.localVolume("b-gold", "local", "b", "2Gi", "tier", "gold", "ssd", "yes")
			r.localVolume("c-silver", "local", "c", "2Gi", "tier", "silver", "ssd", "yes")
			r.volumeClaimWith("exprs", "local", "1Gi", claimSelecting(
				metav1.LabelSelectorRequirement{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold", "bronze"}},
				metav1.LabelSelectorRequirement{Key: "ssd", Operator: metav1.LabelSelectorOpExists},
			))
			// Node affinity of two terms: a node that does not exist, or
			// a or b in z2, which is b.
			r.localVolumeWith("multi", "local", "a", "3Gi", func(pv *v1.PersistentVolume) {
				pv.Spec.NodeAffinity.Required.NodeSelectorTerms = []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{ns + "-gone"}}},
				}, {
					MatchExpressions: []v1.NodeSelectorRequirement{
						{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{ns + "-a", ns + "-b"}},
						{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"z2"}},
					},
				}}
			}, "for", "multi")
			r.volumeClaim("terms", "local", "1Gi", "for", "multi")
			// A volume reserved for a claim by its claimRef (the PV
			// controller binds them), and one reserved for a claim that
			// does not exist, which no other claim may take.
			r.localVolumeWith("reserved", "local", "a", "4Gi", r.reservedFor("mine"))
			r.volumeClaim("mine", "local", "1Gi")
			r.waitBound("mine")
			r.localVolumeWith("held", "local", "c", "1Gi", r.reservedFor("nobody"), "for", "any")
			r.localVolume("free", "local", "a", "6Gi", "for", "any")
			r.volumeClaim("any", "local", "1Gi", "for", "any")
			// Claims pre-bound to a volume: one that exists (the PV
			// controller binds them), one that does not, one too small.
			r.localVolume("named", "local", "c", "2Gi", "for", "named")
			r.volumeClaimWith("named", "local", "1Gi", r.preBoundTo("named"))
			r.waitBound("named")
			r.volumeClaimWith("ghost", "local", "1Gi", r.preBoundTo("nothing"))
			r.localVolume("tiny", "local", "b", "1Gi", "for", "tiny")
			r.volumeClaimWith("toosmall", "local", "5Gi", r.preBoundTo("tiny"))
		},
		steps: [][]string{
			{"p-modes:shared"}, {"p-raw:raw"}, {"p-elsewhere:elsewhere"}, {"p-exprs:exprs"}, {"p-terms:terms"},
			{"p-mine:mine"}, {"p-any:any"}, {"p-named:named"}, {"p-ghost:ghost"}, {"p-toosmall:toosmall"},
		},
	}, {
		// a attaches 3 volumes of the provisioner, 1 EBS and 1 GCE PD
		// volume; b 1 of the provisioner and none of the others. Two
		// pods share an EBS volume only on different nodes, a read-only
		// GCE PD is attached once for two pods, inline CSI volumes are
		// not counted.
		name:  "CSI attach limits of in-tree, inline and ephemeral volumes",
		nodes: map[string]string{"a": "z1", "b": "z1"},
		storage: func(r *volumeRun) {
			r.provisionedClass("csi")
			r.csiNodeLimits("a", map[string]int32{"": 3, "ebs.csi.aws.com": 1, "pd.csi.storage.gke.io": 1})
			r.csiNodeLimits("b", map[string]int32{"": 1, "ebs.csi.aws.com": 0, "pd.csi.storage.gke.io": 0})
			for _, c := range []string{"c1", "c2", "c3", "c4"} {
				r.volumeClaim(c, "csi", "1Gi")
			}
			r.ephemeralTemplate("scratch", "csi", "1Gi")
		},
		steps: [][]string{
			{"p1:ebs=vol-1,c1"}, {"p2:ebs=vol-1"}, {"p3:gce=disk-1,c2"}, {"p4:gce=disk-1,c3"},
			{"p5:csi=inline,c4"}, {"p6:~scratch"},
		},
	}, {
		// Where a node's CSINode says the in-tree EBS plugin is migrated,
		// a bound EBS volume's zone is read as the CSI driver's topology
		// (topology.ebs.csi.aws.com/zone), which a and b lack or
		// contradict; c migrates nothing.
		name:  "bound in-tree volumes on nodes that migrated them to CSI",
		nodes: map[string]string{"a": "z1", "b": "z1", "c": "z2"},
		storage: func(r *volumeRun) {
			r.csiNodeMigrating("a", "kubernetes.io/aws-ebs")
			r.csiNodeMigrating("b", "kubernetes.io/gce-pd,kubernetes.io/aws-ebs")
			r.labelNode("b", "topology.ebs.csi.aws.com/zone", "z2")
			r.boundVolume("ebs-z1", inTreeEBS("z1"))
			r.boundVolume("ebs-z2", inTreeEBS("z2"))
		},
		steps: [][]string{{"p-z1:ebs-z1"}, {"p-z2:ebs-z2"}},
	}, {
		// PreBind's writes fail: the provisioner gives up on the node it
		// was asked for (it removes the claim's selected node), and the
		// API server refuses a volume's claimRef. The pods are retried.
		name:  "PreBind writes that fail",
		nodes: map[string]string{"a": "z1"},
		storage: func(r *volumeRun) {
			r.provisionedClass("csi")
			r.volumeClaim("data", "csi", "1Gi")
			r.prov.givingUp.Store(true)
			r.localClass("local")
			r.localVolume("locked", "local", "a", "10Gi", "e2e.yardmaster.io/locked", r.e.ns)
			r.volumeClaim("held", "local", "1Gi")
			r.lockClaimRefs("locked")
		},
		steps: [][]string{{"p-given-up:data"}, {"p-locked:held"}},
	}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sideBySide(t, sc.play) })
	}
}

// A pod over a node's EBS attach limit, whose volumes are written inline,
// waits until the pod holding the node's only slot is deleted, and is
// then placed there at once: the deletion frees an attach slot, which
// wakes it (kube-scheduler's CSILimits hint counts in-tree volumes written
// inline, as their CSI driver's).
func TestInlineVolumeFreedMatchesKubeScheduler(t *testing.T) {
	sideBySide(t, func(t *testing.T, kube bool) string {
		e := newEnv(t)
		r := &volumeRun{e: e, templates: map[string]v1.PersistentVolumeClaimSpec{}}
		e.addNode(e.node("a").Capacity("8", "16Gi", 110).Label(v1.LabelHostname, e.ns+"-a"))
		r.csiNodeLimits("a", map[string]int32{"ebs.csi.aws.com": 1})
		if kube {
			e.startKubeScheduler()
		} else {
			e.startScheduler()
		}
		ebs := func(name, id string) *frameworktest.PodWrapper {
			v, _ := r.inlineVolume("ebs=" + id)
			return e.pod(name).Req("100m", "64Mi").Volume(v)
		}
		e.createPod(ebs("holder", "vol-1"))
		if node, why := e.settle("holder"); node == "" {
			t.Fatalf("holder not placed: %s", why)
		}
		e.createPod(ebs("waiting", "vol-2"))
		e.waitFailedScheduling("waiting", "exceed max volume count")
		zero := int64(0)
		if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatalf("delete holder: %v", err)
		}
		node := e.waitBoundWithin("waiting", requeueBound, "of the pod holding the attach slot being deleted")
		return strings.TrimPrefix(node, e.ns+"-")
	})
}

// A pod of high priority over a node's EBS attach limit preempts the pod
// of low priority that holds the slot, and takes the node; the other low
// pod, without an attachable volume, stays.
func TestPreemptionForAnAttachSlotMatchesKubeScheduler(t *testing.T) {
	// preempted is where the high pod went and whom it evicted.
	type preempted struct {
		Node    string
		Evicted []string
	}
	sideBySide(t, func(t *testing.T, kube bool) preempted {
		e := newEnv(t)
		r := &volumeRun{e: e, templates: map[string]v1.PersistentVolumeClaimSpec{}}
		e.addNode(e.node("a").Capacity("1", "2Gi", 110).Label(v1.LabelHostname, e.ns+"-a"))
		r.csiNodeLimits("a", map[string]int32{"ebs.csi.aws.com": 1})
		e.priorityClass("low", 10)
		e.priorityClass("high", 1000)
		pinned := func(name, cpu string, vols ...string) *frameworktest.PodWrapper {
			w := e.pod(name).PriorityClassName(e.ns+"-low").Req(cpu, "")
			for _, v := range vols {
				vol, _ := r.inlineVolume(v)
				w.Volume(vol)
			}
			w.Spec.NodeName = e.ns + "-a"
			w.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
			return w
		}
		e.createPod(pinned("holder", "100m", "ebs=vol-1"))
		e.createPod(pinned("bystander", "100m"))
		if kube {
			e.startKubeScheduler()
		} else {
			e.startScheduler()
		}
		vol, _ := r.inlineVolume("ebs=vol-2")
		e.createPod(e.pod("high").PriorityClassName(e.ns+"-high").Req("100m", "").Volume(vol))
		node := e.waitBound(60*time.Second, "high")["high"]
		out := preempted{Node: strings.TrimPrefix(node, e.ns+"-")}
		for _, name := range []string{"holder", "bystander"} {
			_, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				out.Evicted = append(out.Evicted, name)
			case err != nil:
				t.Fatal(err)
			}
		}
		return out
	})
}
