package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// The writes a binding cycle makes before its Binding, through the fault
// proxy of faults_test.go: every one of them may be refused, delayed, or
// committed with its answer lost, and a scheduler must neither give a
// volume or a device twice, nor leave a pod pending, nor put a pod where
// its volume or device cannot follow.

// The writes of the binding cycle before its Binding, for faultProxy:
// VolumeBinding's volumes and claims, and the pod's status (the nominated
// node, the PodScheduled condition)...
var volumeWrites = []string{"persistentvolumes", "persistentvolumeclaims", "pods/status"}

// ... and DynamicResources' ResourceClaims (a finalizer, the claim it
// makes for extended resources), their status (allocation and
// reservation), and the pod's status (its extended resource claim too).
var draWrites = []string{"resourceclaims", "resourceclaims/status", "pods/status"}

// runThroughFaults starts yardmaster behind a proxy that fails the writes
// of resources and returns the proxy and the daemon's stop.
func (e *env) runThroughFaults(resources []string) (*faultProxy, func() error) {
	e.t.Helper()
	proxy := newFaultProxy(e.t, e.plane, resources)
	_, stop := e.runScheduler(func(o *app.Options) { o.RESTConfig = proxy.restConfig(e.plane.AdminToken) })
	e.t.Cleanup(func() { _ = stop() })
	return proxy, stop
}

// allBoundWithin reports whether n pods of the namespace are bound within
// timeout.
func (e *env) allBoundWithin(timeout time.Duration, n int) bool {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return len(e.placements()) >= n, nil
	})
	return err == nil
}

// assertBoundOnce checks that the API server committed one Binding for
// each pod of the namespace and returns the pods by name.
func (e *env) assertBoundOnce(proxy *faultProxy) map[string]*v1.Pod {
	e.t.Helper()
	pods, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*v1.Pod{}
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	for i := range pods.Items {
		p := &pods.Items[i]
		out[p.Name] = p
		if got := len(proxy.committed[e.ns+"/"+p.Name]); got != 1 {
			e.t.Errorf("pod %s: %d Bindings committed, want 1", p.Name, got)
		}
	}
	return out
}

// Pods with WaitForFirstConsumer claims, half on local volumes (exactly
// as many as claims, four per node) and half provisioned on the node
// chosen, scheduled while every write to volumes, claims and pod statuses
// meets a fault in turn: every pod is bound once, every claim is bound to
// a volume of its own that the pod's node reaches.
func TestVolumeBindingThroughFaults(t *testing.T) {
	e := newEnv(t)
	r := &volumeRun{e: e, templates: map[string]v1.PersistentVolumeClaimSpec{}}
	r.prov = e.startProvisioner(r.provisionerName())
	const nodes, perNode = 4, 4
	r.localClass("local")
	r.provisionedClass("provisioned")
	for i := range nodes {
		n := fmt.Sprintf("n%d", i)
		e.addNode(e.node(n).Capacity("8", "16Gi", 110).Label(v1.LabelHostname, e.ns+"-"+n))
		for j := range perNode {
			r.localVolume(fmt.Sprintf("%s-local-%d", n, j), "local", n, "1Gi")
		}
	}
	const pods = nodes * perNode
	for i := range pods {
		r.volumeClaim(fmt.Sprintf("local-%02d", i), "local", "1Gi")
		r.volumeClaim(fmt.Sprintf("provisioned-%02d", i), "provisioned", "1Gi")
	}
	proxy, stop := e.runThroughFaults(volumeWrites)
	for i := range pods {
		e.createPod(e.pod(fmt.Sprintf("local-%02d", i)).Req("100m", "64Mi").PVC(fmt.Sprintf("local-%02d", i)))
		e.createPod(e.pod(fmt.Sprintf("provisioned-%02d", i)).Req("100m", "64Mi").PVC(fmt.Sprintf("provisioned-%02d", i)))
	}
	if !e.allBoundWithin(90*time.Second, 2*pods) {
		t.Fatalf("%d pods not bound after 90 s", 2*pods-len(e.placements()))
	}
	if err := stop(); err != nil {
		t.Errorf("scheduler exited: %v", err)
	}
	proxy.report(true)

	bound := e.assertBoundOnce(proxy)
	claimOf := map[string]string{} // volume → claim
	for name, pod := range bound {
		claimName := pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName
		var claim *v1.PersistentVolumeClaim
		// The PV controller may finish binding the claim just after the
		// pod is bound (the scheduler waits for the claim's volumeName
		// and annotations, its phase comes after).
		if err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			c, err := e.client.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, claimName, metav1.GetOptions{})
			claim = c
			return err == nil && c.Status.Phase == v1.ClaimBound, err
		}); err != nil {
			t.Errorf("claim %s of pod %s never bound: %v", claimName, name, err)
			continue
		}
		vol := claim.Spec.VolumeName
		if other, ok := claimOf[vol]; ok {
			t.Errorf("persistentvolume %s given to claims %s and %s", vol, other, claimName)
		}
		claimOf[vol] = claimName
		pv, err := e.client.CoreV1().PersistentVolumes().Get(e.ctx, vol, metav1.GetOptions{})
		if err != nil {
			t.Errorf("claim %s: persistentvolume %s: %v", claimName, vol, err)
			continue
		}
		if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != claim.UID {
			t.Errorf("persistentvolume %s is bound to %v, not to claim %s", vol, ref, claimName)
		}
		node, err := e.client.CoreV1().Nodes().Get(e.ctx, pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := storagehelpers.CheckNodeAffinity(pv, node.Labels); err != nil {
			t.Errorf("pod %s on node %s, its claim %s on persistentvolume %s out of its reach: %v", name, node.Name, claimName, vol, err)
		}
		if strings.HasPrefix(claimName, "provisioned-") && r.prov.provisioned(e.ns, claimName) != vol {
			t.Errorf("claim %s bound to %s, not to the volume provisioned for it (%q)", claimName, vol, r.prov.provisioned(e.ns, claimName))
		}
	}
	if len(claimOf) != 2*pods {
		t.Errorf("%d volumes bound, want %d", len(claimOf), 2*pods)
	}
}

// Pods with ResourceClaims (their own, made by the ResourceClaim
// controller from a template, and a claim the scheduler makes for
// extended resources), exactly as many devices as they ask for, scheduled
// while every write to claims and pod statuses meets a fault in turn:
// every pod is bound once, every claim allocated and reserved for its
// pod on the pod's node, no device allocated twice, and no claim made for
// extended resources left over.
func TestDRAThroughFaults(t *testing.T) {
	e := newEnv(t)
	r := &draRun{e: e, notes: map[string]string{}}
	// Two fifths of the devices for claims of their own, two fifths for
	// claims from the template, one fifth for extended resources, the
	// slowest through faults: the creation of their claim is tried only
	// once per attempt (its answer lost may have made one), and each
	// attempt that fails doubles the pod's backoff.
	const nodes, perNode = 3, 5
	const claimed, extended = 6, 3
	r.class("gpu", "")
	r.class("ext", "example.com/"+e.ns+"-gpu")
	for i := range nodes {
		n := fmt.Sprintf("n%d", i)
		e.addNode(e.node(n).Capacity("8", "16Gi", 110))
		r.slice(n, gpus(perNode)...)
	}
	one := resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{r.request("gpu", "gpu", 1, "")}}
	r.template("one", one)
	const pods = nodes * perNode
	for i := range claimed {
		r.claim(fmt.Sprintf("own-%02d", i), one)
	}
	proxy, stop := e.runThroughFaults(draWrites)
	for i := range claimed {
		e.createPod(r.podOf(draPod{name: fmt.Sprintf("own-%02d", i), claims: []string{fmt.Sprintf("own-%02d", i)}}))
		e.createPod(r.podOf(draPod{name: fmt.Sprintf("tmpl-%02d", i), claims: []string{"tmpl:one"}}))
		if i < extended {
			e.createPod(r.podOf(draPod{name: fmt.Sprintf("ext-%02d", i), extended: map[v1.ResourceName]string{v1.ResourceName("example.com/" + e.ns + "-gpu"): "1"}}))
		}
	}
	if !e.allBoundWithin(90*time.Second, pods) {
		// What holds the devices, to tell a leak from a slow retry.
		claims, err := e.client.ResourceV1().ResourceClaims(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range claims.Items {
			t.Logf("claim %s: owners %v, finalizers %v, deleting %v, allocation %v, reserved for %v",
				c.Name, c.OwnerReferences, c.Finalizers, c.DeletionTimestamp != nil, c.Status.Allocation, c.Status.ReservedFor)
		}
		t.Fatalf("%d pods not bound after 90 s", pods-len(e.placements()))
	}
	if err := stop(); err != nil {
		t.Errorf("scheduler exited: %v", err)
	}
	proxy.report(true)

	bound := e.assertBoundOnce(proxy)
	claims, err := e.client.ResourceV1().ResourceClaims(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := map[string]string{}     // pool/device → claim
	claimsOf := map[string][]string{} // pod → claims
	for _, c := range claims.Items {
		if len(c.Status.ReservedFor) != 1 {
			t.Errorf("claim %s reserved for %v, want one pod", c.Name, c.Status.ReservedFor)
			continue
		}
		pod := bound[c.Status.ReservedFor[0].Name]
		if pod == nil || pod.UID != c.Status.ReservedFor[0].UID {
			t.Errorf("claim %s reserved for %v, which is no pod of the test", c.Name, c.Status.ReservedFor[0])
			continue
		}
		claimsOf[pod.Name] = append(claimsOf[pod.Name], c.Name)
		a := c.Status.Allocation
		if a == nil || len(a.Devices.Results) != 1 {
			t.Errorf("claim %s of pod %s: allocation %v, want one device", c.Name, pod.Name, a)
			continue
		}
		d := a.Devices.Results[0]
		dev := d.Pool + "/" + d.Device
		if other, ok := holder[dev]; ok {
			t.Errorf("device %s allocated to claims %s and %s", dev, other, c.Name)
		}
		holder[dev] = c.Name
		if d.Pool != pod.Spec.NodeName {
			t.Errorf("claim %s of pod %s on node %s has a device of node %s", c.Name, pod.Name, pod.Spec.NodeName, d.Pool)
		}
		if a.NodeSelector == nil || len(a.NodeSelector.NodeSelectorTerms) != 1 ||
			len(a.NodeSelector.NodeSelectorTerms[0].MatchFields) != 1 ||
			!slices.Equal(a.NodeSelector.NodeSelectorTerms[0].MatchFields[0].Values, []string{pod.Spec.NodeName}) {
			t.Errorf("claim %s of pod %s on node %s allocated for nodes %v", c.Name, pod.Name, pod.Spec.NodeName, a.NodeSelector)
		}
	}
	for name, pod := range bound {
		if got := len(claimsOf[name]); got != 1 {
			t.Errorf("pod %s holds claims %v, want one", name, claimsOf[name])
			continue
		}
		if strings.HasPrefix(name, "ext-") {
			st := pod.Status.ExtendedResourceClaimStatus
			if st == nil || st.ResourceClaimName != claimsOf[name][0] {
				t.Errorf("pod %s: extended resource claim status %v, want claim %s", name, st, claimsOf[name][0])
			}
		}
	}
	if len(claims.Items) != pods {
		var names []string
		for _, c := range claims.Items {
			names = append(names, c.Name)
		}
		t.Errorf("%d claims (%v), want %d", len(claims.Items), names, pods)
	}
}
