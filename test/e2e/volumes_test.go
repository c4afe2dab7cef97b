package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
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

// volumeScenario is a cluster with storage and pods that use it, played
// once under kube-scheduler and once under yardmaster, each on fresh nodes
// of the shared control plane, whose kube-controller-manager runs the PV
// binder; dynamic provisioning is done by the test's provisioner.
type volumeScenario struct {
	name string
	// nodes are name → zone.
	nodes map[string]string
	// storage makes the classes, volumes and claims.
	storage func(r *volumeRun)
	// steps are the pods, by step: a step's pods are created together,
	// and the next step waits until each is bound or reported
	// unschedulable. A pod is name:claim,claim; a claim written ~name is
	// a generic ephemeral volume made from the template of that name
	// (volumeRun.ephemeralTemplate), whose claim is "<pod>-<name>"; one
	// written kind=name is an inline volume (volumeRun.inlineVolume).
	steps [][]string
	// together marks the steps whose pods compete: which of them wins is
	// the scheduler's choice, so only the set of outcomes is compared.
	together map[int]bool
}

// volumeRun is one play of a scenario.
type volumeRun struct {
	e    *env
	prov *provisioner
	// templates are the claim templates of generic ephemeral volumes,
	// by volume name.
	templates map[string]v1.PersistentVolumeClaimSpec
	// claimsBlocked says that no claim can be created any more (a quota
	// forbids them), so the ephemeral volume controller makes none.
	claimsBlocked bool
}

// provisionerName is the name the test's provisioner answers to.
func (r *volumeRun) provisionerName() string { return "provisioner." + r.e.ns + ".yardmaster.io" }

// localClass makes a WaitForFirstConsumer class without a provisioner, the
// class of local volumes.
func (r *volumeRun) localClass(name string) {
	r.class(name, "kubernetes.io/no-provisioner", nil)
}

// provisionedClass makes a WaitForFirstConsumer class that the test's
// provisioner provisions, restricted to zones when given.
func (r *volumeRun) provisionedClass(name string, zones ...string) {
	var topo []v1.TopologySelectorTerm
	if len(zones) > 0 {
		topo = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: v1.LabelTopologyZone, Values: zones}}}}
	}
	r.class(name, r.provisionerName(), topo)
}

func (r *volumeRun) class(name, provisioner string, topo []v1.TopologySelectorTerm) {
	r.classWithMode(name, provisioner, storagev1.VolumeBindingWaitForFirstConsumer, topo)
}

func (r *volumeRun) classWithMode(name, provisioner string, mode storagev1.VolumeBindingMode, topo []v1.TopologySelectorTerm) {
	e := r.e
	e.t.Helper()
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: e.ns + "-" + name},
		Provisioner:       provisioner,
		VolumeBindingMode: &mode,
		AllowedTopologies: topo,
	}
	if _, err := e.client.StorageV1().StorageClasses().Create(e.ctx, sc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create StorageClass %s: %v", sc.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})
	})
}

// localVolume makes an available volume of class on node, of size, with
// labels (k=v,...).
func (r *volumeRun) localVolume(name, class, node, size string, labels ...string) {
	r.localVolumeWith(name, class, node, size, func(*v1.PersistentVolume) {}, labels...)
}

// localVolumeWith is localVolume adjusted by mutate.
func (r *volumeRun) localVolumeWith(name, class, node, size string, mutate func(*v1.PersistentVolume), labels ...string) {
	e := r.e
	e.persistentVolume(name, func(pv *v1.PersistentVolume) {
		pv.Spec.StorageClassName = e.ns + "-" + class
		pv.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}}
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{e.ns + "-" + node}}},
		}}}}
		for i := 0; i+1 < len(labels); i += 2 {
			if pv.Labels == nil {
				pv.Labels = map[string]string{}
			}
			pv.Labels[labels[i]] = labels[i+1]
		}
		mutate(pv)
	})
}

// volumeClaim makes a claim of class for size, selecting volumes with
// labels (k=v,...) when given.
func (r *volumeRun) volumeClaim(name, class, size string, labels ...string) {
	r.volumeClaimWith(name, class, size, func(*v1.PersistentVolumeClaim) {}, labels...)
}

// volumeClaimWith is volumeClaim adjusted by mutate.
func (r *volumeRun) volumeClaimWith(name, class, size string, mutate func(*v1.PersistentVolumeClaim), labels ...string) {
	e := r.e
	e.t.Helper()
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       r.claimSpec(class, size),
	}
	if len(labels) > 0 {
		pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{}}
		for i := 0; i+1 < len(labels); i += 2 {
			pvc.Spec.Selector.MatchLabels[labels[i]] = labels[i+1]
		}
	}
	mutate(pvc)
	if _, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Create(e.ctx, pvc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create PersistentVolumeClaim %s: %v", name, err)
	}
}

// claimSpec is a ReadWriteOnce claim of class (named without the
// namespace prefix) for size.
func (r *volumeRun) claimSpec(class, size string) v1.PersistentVolumeClaimSpec {
	sc := r.e.ns + "-" + class
	return v1.PersistentVolumeClaimSpec{
		AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		StorageClassName: &sc,
	}
}

// lostClaim makes a claim bound to a volume by the PV controller, then
// deletes the volume: the PV controller marks the claim Lost.
func (r *volumeRun) lostClaim(name string) {
	e := r.e
	e.t.Helper()
	pv := e.persistentVolume(name+"-pv", func(*v1.PersistentVolume) {})
	e.boundClaim(name, pv)
	e.deletePersistentVolume(pv.Name)
	if err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && c.Status.Phase == v1.ClaimLost, err
	}); err != nil {
		e.t.Fatalf("claim %s never became Lost: %v", name, err)
	}
}

// volumeOutcome is what a scheduler did: where each pod went ("" for
// pending), the volume each claim got (without the namespace prefix;
// "provisioned on NODE" for a provisioned one), and why each pending pod
// waits.
type volumeOutcome struct {
	Pods    map[string]string
	Claims  map[string]string
	Pending map[string]string
	// Together lists, per competing step, its pods' nodes, sorted, and
	// TogetherClaims what their claims got, sorted: which of two equal
	// pods wins a race is not part of the outcome.
	Together       map[int][]string
	TogetherClaims map[int][]string
}

// play runs the scenario with one scheduler and returns what it did.
func (sc volumeScenario) play(t *testing.T, kube bool) volumeOutcome {
	e := newEnv(t)
	r := &volumeRun{e: e, templates: map[string]v1.PersistentVolumeClaimSpec{}}
	r.prov = e.startProvisioner(r.provisionerName())
	for _, n := range sortedKeys(sc.nodes) {
		e.addNode(e.node(n).Capacity("8", "16Gi", 110).Label(v1.LabelHostname, e.ns+"-"+n).Label(v1.LabelTopologyZone, sc.nodes[n]))
	}
	sc.storage(r)
	if kube {
		e.startKubeScheduler()
	} else {
		e.startScheduler()
	}
	out := volumeOutcome{Pods: map[string]string{}, Claims: map[string]string{}, Pending: map[string]string{}, Together: map[int][]string{}, TogetherClaims: map[int][]string{}}
	togetherClaims := map[int][]string{}
	for i, step := range sc.steps {
		var names []string
		for _, spec := range step {
			name, claims, _ := strings.Cut(spec, ":")
			w := e.pod(name).Req("100m", "64Mi")
			var ephemeral []string
			for _, c := range strings.Split(claims, ",") {
				if v, ok := r.inlineVolume(c); ok {
					w.Volume(v)
					continue
				}
				if vol, ok := strings.CutPrefix(c, "~"); ok {
					tmpl, ok := r.templates[vol]
					if !ok {
						t.Fatalf("pod %s: no ephemeral volume template %q", name, vol)
					}
					w.Volume(v1.Volume{Name: vol, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
						VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: tmpl},
					}}})
					c = name + "-" + vol
					ephemeral = append(ephemeral, c)
				} else if c != "" {
					w.PVC(c)
				}
				// Two competing pods may share a claim.
				if c != "" && sc.together[i] && !slices.Contains(togetherClaims[i], c) {
					togetherClaims[i] = append(togetherClaims[i], c)
				}
			}
			r.createPod(w, ephemeral)
			names = append(names, name)
		}
		for _, name := range names {
			node, why := e.settle(name)
			out.Pods[name] = node
			if node == "" {
				out.Pending[name] = why
			}
		}
		if sc.together[i] {
			var nodes []string
			for _, name := range names {
				nodes = append(nodes, out.Pods[name])
				delete(out.Pods, name)
				delete(out.Pending, name)
			}
			sort.Strings(nodes)
			out.Together[i] = nodes
		}
	}
	// A pod reported unschedulable stays pending; a bound pod's claims
	// are bound.
	claims, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims.Items {
		got := e.waitClaimSettled(c.Name)
		if made := r.prov.provisioned(e.ns, c.Name); made != "" && made == got {
			pv, err := e.client.CoreV1().PersistentVolumes().Get(e.ctx, got, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got = "provisioned on " + strings.TrimPrefix(pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0], e.ns+"-")
		}
		out.Claims[c.Name] = strings.TrimPrefix(got, e.ns+"-")
	}
	for i, names := range togetherClaims {
		var got []string
		for _, c := range names {
			got = append(got, out.Claims[c])
			delete(out.Claims, c)
		}
		sort.Strings(got)
		out.TogetherClaims[i] = got
	}
	for name := range out.Pending {
		e.expectPending(name, time.Second)
	}
	return out
}

// ephemeralGate holds a pod with generic ephemeral volumes back until
// the ephemeral volume controller has made their claims: whether a
// scheduler tries the pod before or after that is a race, and its
// FailedScheduling event would end the step.
const ephemeralGate = "e2e.yardmaster.io/ephemeral-claims"

// createPod creates the pod; when it has ephemeral volumes whose claims
// the controller can make, it is gated until they exist.
func (r *volumeRun) createPod(w *frameworktest.PodWrapper, ephemeral []string) {
	e := r.e
	e.t.Helper()
	if len(ephemeral) == 0 || r.claimsBlocked {
		e.createPod(w)
		return
	}
	pod := e.createPod(w.SchedulingGate(ephemeralGate))
	for _, c := range ephemeral {
		if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, c, metav1.GetOptions{})
			return err == nil, ignoreNotFound(err)
		}); err != nil {
			e.t.Fatalf("the ephemeral volume controller made no claim %s: %v", c, err)
		}
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.SchedulingGates = nil
		_, err = e.client.CoreV1().Pods(e.ns).Update(e.ctx, p, metav1.UpdateOptions{})
		return err
	}); err != nil {
		e.t.Fatalf("ungate pod %s: %v", pod.Name, err)
	}
}

// settle waits until the pod is bound (and returns its node without the
// namespace prefix) or has a FailedScheduling event (and returns its
// message, the namespace left out).
func (e *env) settle(pod string) (node, why string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := e.client.CoreV1().Pods(e.ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			node = strings.TrimPrefix(p.Spec.NodeName, e.ns+"-")
			return true, nil
		}
		evs, err := e.client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=FailedScheduling"})
		if err != nil {
			return false, err
		}
		if len(evs.Items) > 0 {
			why = strings.ReplaceAll(strings.ReplaceAll(evs.Items[0].Message, e.ns+"-", ""), e.ns+"/", "NS/")
			// The test's provisioner (a CSI driver by name) is named
			// after the namespace too.
			why = strings.ReplaceAll(why, "."+e.ns+".", ".NS.")
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("pod %s neither bound nor reported unschedulable: %v", pod, err)
	}
	return node, why
}

// waitClaimSettled waits a while for the claim to be bound and returns its
// volume, or "" when it stays unbound.
func (e *env) waitClaimSettled(name string) string {
	e.t.Helper()
	var vol string
	_ = wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if c.Status.Phase == v1.ClaimBound {
			vol = c.Spec.VolumeName
			return true, nil
		}
		return false, nil
	})
	return vol
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// yardmaster and kube-scheduler v1.37, given the same cluster, volumes and
// claims, put every pod on the same node, bind every claim to the same
// volume (or provision it on the same node), and leave the same pods
// pending for the same reason.
func TestVolumeBindingMatchesKubeScheduler(t *testing.T) {
	scenarios := []volumeScenario{{
		// Each step has one node that fits, and on b the smallest volume
		// that fits is chosen.
		name:  "local volumes of different sizes on different nodes",
		nodes: map[string]string{"a": "z1", "b": "z1", "c": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.localVolume("a-5", "local", "a", "5Gi")
			r.localVolume("b-10", "local", "b", "10Gi")
			r.localVolume("b-12", "local", "b", "12Gi")
			r.localVolume("b-30", "local", "b", "30Gi")
			r.localVolume("c-20", "local", "c", "20Gi")
			for _, c := range []struct{ name, size string }{{"huge", "25Gi"}, {"big", "15Gi"}, {"mid", "8Gi"}, {"mid2", "8Gi"}, {"small", "4Gi"}, {"giant", "50Gi"}} {
				r.volumeClaim(c.name, "local", c.size)
			}
		},
		steps: [][]string{{"p-huge:huge"}, {"p-big:big"}, {"p-mid:mid"}, {"p-mid2:mid2"}, {"p-small:small"}, {"p-giant:giant"}},
	}, {
		// VolumeBinding scores by storage capacity (StorageCapacityScoring,
		// beta and on in v1.37): each 10Gi claim goes where its volume
		// stays emptiest, a (30Gi) before c (20Gi) before b (12Gi), though
		// every node has a volume that fits.
		name:  "local volumes scored by the room they leave",
		nodes: map[string]string{"a": "z1", "b": "z1", "c": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.localVolume("a-30", "local", "a", "30Gi")
			r.localVolume("b-12", "local", "b", "12Gi")
			r.localVolume("c-20", "local", "c", "20Gi")
			for _, c := range []string{"first", "second", "third"} {
				r.volumeClaim(c, "local", "10Gi")
			}
		},
		steps: [][]string{{"p1:first"}, {"p2:second"}, {"p3:third"}},
	}, {
		name:  "a claim that fits no volume",
		nodes: map[string]string{"a": "z1", "b": "z2"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.localVolume("a-1", "local", "a", "1Gi")
			r.localVolume("b-1", "local", "b", "1Gi")
			r.volumeClaim("data", "local", "5Gi")
		},
		steps: [][]string{{"p:data"}},
	}, {
		name:  "two pods competing for one volume",
		nodes: map[string]string{"a": "z1", "b": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.localVolume("only", "local", "a", "10Gi")
			r.volumeClaim("one", "local", "5Gi")
			r.volumeClaim("two", "local", "5Gi")
		},
		steps:    [][]string{{"p1:one", "p2:two"}},
		together: map[int]bool{0: true},
	}, {
		name:  "a StatefulSet's pods, each with its own claim",
		nodes: map[string]string{"a": "z1", "b": "z1", "c": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			for i, n := range []string{"c", "a", "b"} {
				r.localVolume(fmt.Sprintf("vol-%d", i), "local", n, "10Gi", "ordinal", fmt.Sprint(i))
				r.volumeClaim(fmt.Sprintf("data-web-%d", i), "local", "1Gi", "ordinal", fmt.Sprint(i))
			}
		},
		steps: [][]string{{"web-0:data-web-0"}, {"web-1:data-web-1"}, {"web-2:data-web-2"}},
	}, {
		// Only b has two volumes; the smaller claim picks first and takes
		// the smaller volume.
		name:  "two claims of one pod never share a volume",
		nodes: map[string]string{"a": "z1", "b": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.localVolume("a-1", "local", "a", "30Gi")
			r.localVolume("b-1", "local", "b", "20Gi")
			r.localVolume("b-2", "local", "b", "30Gi")
			r.volumeClaim("data", "local", "15Gi")
			r.volumeClaim("logs", "local", "1Gi")
		},
		steps: [][]string{{"p:data,logs"}},
	}, {
		name:  "dynamic provisioning restricted by allowedTopologies",
		nodes: map[string]string{"a": "z1", "b": "z2", "c": "z3"},
		storage: func(r *volumeRun) {
			r.provisionedClass("zonal", "z2")
			r.provisionedClass("nowhere", "z9")
			r.volumeClaim("data", "zonal", "3Gi")
			r.volumeClaim("more", "zonal", "3Gi")
			r.volumeClaim("lost", "nowhere", "3Gi")
		},
		steps: [][]string{{"p:data"}, {"q:more"}, {"r:lost"}},
	}, {
		name:  "a local volume first, provisioning when none is left",
		nodes: map[string]string{"a": "z1", "b": "z2"},
		storage: func(r *volumeRun) {
			r.provisionedClass("mixed", "z2")
			r.localVolume("b-local", "mixed", "b", "10Gi")
			r.volumeClaim("first", "mixed", "5Gi")
			r.volumeClaim("second", "mixed", "5Gi")
		},
		steps: [][]string{{"p1:first"}, {"p2:second"}},
	}, {
		// Bad input: a claim of a class that does not exist (it binds
		// immediately, so it waits for the PV controller), a volume whose
		// node affinity does not parse (it fits no node), a claim whose
		// volume was deleted after the PV controller bound them (Lost).
		name:  "bad input",
		nodes: map[string]string{"a": "z1"},
		storage: func(r *volumeRun) {
			r.localClass("local")
			r.e.persistentVolume("malformed", func(pv *v1.PersistentVolume) {
				pv.Spec.StorageClassName = r.e.ns + "-local"
				pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: "cores", Operator: v1.NodeSelectorOpGt, Values: []string{"many"}}},
				}}}}
			})
			r.volumeClaim("odd", "local", "1Gi")
			r.volumeClaim("classless", "no-such-class", "1Gi")
			r.lostClaim("orphan")
		},
		steps: [][]string{{"p-odd:odd"}, {"p-classless:classless"}, {"p-orphan:orphan"}},
	}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sideBySide(t, sc.play) })
	}
}
