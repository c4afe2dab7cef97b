package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/internal/schedtest"
)

// draDriver is the driver every scenario's devices belong to; pools are
// named after their nodes, which are the test's own.
const draDriver = "gpu.e2e.yardmaster.io"

// draScenario is a cluster with devices, claims and pods that use them,
// played once under kube-scheduler and once under yardmaster on fresh
// nodes of the shared control plane, whose kube-controller-manager runs
// the ResourceClaim controller.
type draScenario struct {
	name  string
	nodes []string
	// setup makes the classes, slices, claims and templates.
	setup func(r *draRun)
	// steps are the pods, by step, as in volumeScenario; a step may also
	// be a func(r) that changes the cluster (say, deletes a pod).
	steps []draStep
}

// draStep creates pods (name → how), or acts.
type draStep struct {
	pods []draPod
	act  func(r *draRun)
}

type draPod struct {
	name string
	// claims are resourceClaimName (or "tmpl:<template>" for a template)
	// entries.
	claims []string
	// extended are container requests of extended resources.
	extended map[v1.ResourceName]string
}

// draRun is one play of a scenario.
type draRun struct {
	e *env
}

func (r *draRun) name(n string) string { return r.e.ns + "-" + n }

// class makes DeviceClass name selecting the driver's devices, serving
// extendedResource when it is set.
func (r *draRun) class(name, extendedResource string) {
	e := r.e
	e.t.Helper()
	dc := &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: r.name(name)},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", draDriver)},
		}}},
	}
	if extendedResource != "" {
		dc.Spec.ExtendedResourceName = ptr(extendedResource)
	}
	if _, err := e.client.ResourceV1().DeviceClasses().Create(e.ctx, dc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create DeviceClass: %v", err)
	}
	e.t.Cleanup(func() {
		_ = e.client.ResourceV1().DeviceClasses().Delete(context.Background(), dc.Name, metav1.DeleteOptions{})
	})
}

// device is one device of a slice: name, attributes (k=v, numbers as
// ints), and a NoSchedule taint when tainted.
type device struct {
	name    string
	attrs   map[string]string
	tainted bool
}

// slice publishes the devices on node, in a pool named after the node.
func (r *draRun) slice(node string, devices ...device) {
	e := r.e
	e.t.Helper()
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: r.name(node) + "-gpus"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   draDriver,
			NodeName: ptr(r.name(node)),
			Pool:     resourceapi.ResourcePool{Name: r.name(node), Generation: 1, ResourceSliceCount: 1},
		},
	}
	for _, d := range devices {
		dev := resourceapi.Device{Name: d.name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}}
		for k, v := range d.attrs {
			var n int64
			if _, err := fmt.Sscan(v, &n); err == nil {
				dev.Attributes[resourceapi.QualifiedName(k)] = resourceapi.DeviceAttribute{IntValue: ptr(n)}
			} else {
				dev.Attributes[resourceapi.QualifiedName(k)] = resourceapi.DeviceAttribute{StringValue: ptr(v)}
			}
		}
		if d.tainted {
			dev.Taints = []resourceapi.DeviceTaint{{Key: "e2e.yardmaster.io/unhealthy", Value: "true", Effect: resourceapi.DeviceTaintEffectNoSchedule}}
		}
		s.Spec.Devices = append(s.Spec.Devices, dev)
	}
	if _, err := e.client.ResourceV1().ResourceSlices().Create(e.ctx, s, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create ResourceSlice: %v", err)
	}
	e.t.Cleanup(func() {
		_ = e.client.ResourceV1().ResourceSlices().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
}

// duplicatedPool publishes on node a pool of two slices that both list
// gpu-0: an invalid pool, which the allocator leaves out.
func (r *draRun) duplicatedPool(node string) {
	e := r.e
	e.t.Helper()
	for i := range 2 {
		s := &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-dup-%d", r.name(node), i)},
			Spec: resourceapi.ResourceSliceSpec{
				Driver:   draDriver,
				NodeName: ptr(r.name(node)),
				Pool:     resourceapi.ResourcePool{Name: r.name(node), Generation: 1, ResourceSliceCount: 2},
				Devices:  []resourceapi.Device{{Name: "gpu-0"}},
			},
		}
		if _, err := e.client.ResourceV1().ResourceSlices().Create(e.ctx, s, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("create ResourceSlice: %v", err)
		}
		e.t.Cleanup(func() {
			_ = e.client.ResourceV1().ResourceSlices().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
		})
	}
}

// request is one request of a claim of class.
func (r *draRun) request(name, class string, count int64, cel string) resourceapi.DeviceRequest {
	req := resourceapi.ExactDeviceRequest{DeviceClassName: r.name(class), AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}
	if count == 0 {
		req.AllocationMode, req.Count = resourceapi.DeviceAllocationModeAll, 0
	}
	if cel != "" {
		req.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: cel}}}
	}
	return resourceapi.DeviceRequest{Name: name, Exactly: &req}
}

// claim makes a claim with the requests (and constraints).
func (r *draRun) claim(name string, spec resourceapi.DeviceClaim) {
	e := r.e
	e.t.Helper()
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}, Spec: resourceapi.ResourceClaimSpec{Devices: spec}}
	if _, err := e.client.ResourceV1().ResourceClaims(e.ns).Create(e.ctx, c, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create ResourceClaim %s: %v", name, err)
	}
}

// template makes a ResourceClaimTemplate.
func (r *draRun) template(name string, spec resourceapi.DeviceClaim) {
	e := r.e
	e.t.Helper()
	t := &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: spec}},
	}
	if _, err := e.client.ResourceV1().ResourceClaimTemplates(e.ns).Create(e.ctx, t, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create ResourceClaimTemplate %s: %v", name, err)
	}
}

// draOutcome is what a scheduler did.
type draOutcome struct {
	// Pods are where each pod went ("" pending).
	Pods map[string]string
	// Pending are why the pending pods wait.
	Pending map[string]string
	// Claims are, per claim (by pod and pod claim name for generated
	// ones), its allocation: "pool/device@request" sorted, and its
	// reservations' pods.
	Claims map[string]string
}

func (sc draScenario) play(t *testing.T, kube bool) draOutcome {
	e := newEnv(t)
	r := &draRun{e: e}
	for _, n := range sc.nodes {
		e.addNode(e.node(n).Capacity("8", "16Gi", 110))
	}
	sc.setup(r)
	if kube {
		e.startKubeScheduler()
	} else {
		e.startScheduler()
	}
	out := draOutcome{Pods: map[string]string{}, Pending: map[string]string{}, Claims: map[string]string{}}
	for _, step := range sc.steps {
		if step.act != nil {
			step.act(r)
			continue
		}
		for _, p := range step.pods {
			e.createPod(r.podOf(p))
		}
		for _, p := range step.pods {
			node, why := e.settle(p.name)
			out.Pods[p.name] = node
			delete(out.Pending, p.name)
			if node == "" {
				out.Pending[p.name] = why
			}
		}
	}
	// Where the pods are at the end: a step may have freed room for a
	// pending one (which a later step then waited for), or deleted one.
	pods, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	why := out.Pending
	out.Pods, out.Pending = map[string]string{}, map[string]string{}
	for _, p := range pods.Items {
		node := strings.TrimPrefix(p.Spec.NodeName, e.ns+"-")
		out.Pods[p.Name] = node
		if node == "" {
			out.Pending[p.Name] = why[p.Name]
		}
	}
	for name := range out.Pending {
		e.expectPending(name, time.Second)
	}
	claims, err := e.client.ResourceV1().ResourceClaims(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims.Items {
		out.Claims[r.claimKey(&c)] = r.describeAllocation(&c)
	}
	return out
}

// podOf builds the pod of p.
func (r *draRun) podOf(p draPod) *schedtest.PodWrapper {
	w := r.e.pod(p.name).Req("100m", "64Mi")
	for i, c := range p.claims {
		pc := v1.PodResourceClaim{Name: fmt.Sprintf("c%d", i)}
		if tmpl, ok := strings.CutPrefix(c, "tmpl:"); ok {
			pc.ResourceClaimTemplateName = ptr(tmpl)
		} else {
			pc.ResourceClaimName = ptr(c)
		}
		w.Spec.ResourceClaims = append(w.Spec.ResourceClaims, pc)
		w.Spec.Containers[0].Resources.Claims = append(w.Spec.Containers[0].Resources.Claims, v1.ResourceClaim{Name: pc.Name})
	}
	for name, q := range p.extended {
		// Extended resources cannot be overcommitted: limit = request.
		w.Res(map[v1.ResourceName]string{name: q})
		c := &w.Spec.Containers[0]
		if c.Resources.Limits == nil {
			c.Resources.Limits = v1.ResourceList{}
		}
		c.Resources.Limits[name] = c.Resources.Requests[name]
	}
	return w
}

// claimKey names a claim the same way in both runs: its own name, or for
// a generated one its pod and what made it.
func (r *draRun) claimKey(c *resourceapi.ResourceClaim) string {
	owner := ""
	for _, ref := range c.OwnerReferences {
		if ref.Kind == "Pod" {
			owner = ref.Name
		}
	}
	switch {
	case c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] == "true":
		return owner + "/extended-resources"
	case c.Annotations["resource.kubernetes.io/pod-claim-name"] != "":
		return owner + "/" + c.Annotations["resource.kubernetes.io/pod-claim-name"]
	}
	return c.Name
}

// describeAllocation is the claim's allocation without names that differ
// between runs: the devices by pool (node) and request, and who holds it.
func (r *draRun) describeAllocation(c *resourceapi.ResourceClaim) string {
	a := c.Status.Allocation
	if a == nil {
		return "unallocated"
	}
	var devs []string
	for _, res := range a.Devices.Results {
		devs = append(devs, fmt.Sprintf("%s/%s@%s", strings.TrimPrefix(res.Pool, r.e.ns+"-"), res.Device, res.Request))
	}
	sort.Strings(devs)
	var holders []string
	for _, ref := range c.Status.ReservedFor {
		holders = append(holders, ref.Name)
	}
	sort.Strings(holders)
	return strings.Join(devs, ",") + " for " + strings.Join(holders, ",")
}

// deletePod deletes a pod at once, as a kubelet would finish it.
func (r *draRun) deletePod(name string) {
	e := r.e
	e.t.Helper()
	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		e.t.Fatalf("delete pod %s: %v", name, err)
	}
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
		return err != nil, nil
	}); err != nil {
		e.t.Fatalf("pod %s never went: %v", name, err)
	}
}

func gpus(n int, attrs ...string) []device {
	var out []device
	for i := range n {
		d := device{name: fmt.Sprintf("gpu-%d", i), attrs: map[string]string{}}
		for _, a := range attrs {
			k, v, _ := strings.Cut(a, "=")
			d.attrs[k] = v
		}
		out = append(out, d)
	}
	return out
}

// yardmaster and kube-scheduler v1.36, given the same devices, claims and
// pods, put every pod on the same node, allocate the same number of
// devices from the same pools to every claim, and leave the same pods
// pending for the same reason.
func TestDRAMatchesKubeScheduler(t *testing.T) {
	one := func(class string, count int64, cel string) func(r *draRun) resourceapi.DeviceClaim {
		return func(r *draRun) resourceapi.DeviceClaim {
			return resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{r.request("gpu", class, count, cel)}}
		}
	}
	scenarios := []draScenario{{
		name:  "a single device on one node",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("b", gpus(1)...)
			r.claim("one", one("gpu", 1, "")(r))
			r.claim("none-left", one("gpu", 1, "")(r))
		},
		steps: []draStep{{pods: []draPod{{name: "p", claims: []string{"one"}}}}, {pods: []draPod{{name: "q", claims: []string{"none-left"}}}}},
	}, {
		name:  "a device count, and all devices",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(2)...)
			r.slice("b", gpus(4)...)
			r.claim("three", one("gpu", 3, "")(r))
			r.claim("all", one("gpu", 0, "")(r))
			r.claim("five", one("gpu", 5, "")(r))
		},
		// three fits b only; all then takes a's two devices (b's are not
		// all free); five fits nowhere.
		steps: []draStep{
			{pods: []draPod{{name: "p3", claims: []string{"three"}}}},
			{pods: []draPod{{name: "p-all", claims: []string{"all"}}}},
			{pods: []draPod{{name: "p5", claims: []string{"five"}}}},
		},
	}, {
		name:  "a CEL selector that matches nothing",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(2, "model=a100")...)
			r.claim("h100", one("gpu", 1, fmt.Sprintf(`device.attributes[%q].model == "h100"`, draDriver))(r))
		},
		steps: []draStep{{pods: []draPod{{name: "p", claims: []string{"h100"}}}}},
	}, {
		name:  "two pods sharing one claim",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("b", gpus(1)...)
			r.claim("shared", one("gpu", 1, "")(r))
		},
		steps: []draStep{{pods: []draPod{{name: "p1", claims: []string{"shared"}}}}, {pods: []draPod{{name: "p2", claims: []string{"shared"}}}}},
	}, {
		name:  "claims made from a template",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.slice("b", gpus(2)...)
			r.template("two-gpus", one("gpu", 2, "")(r))
		},
		steps: []draStep{{pods: []draPod{{name: "p", claims: []string{"tmpl:two-gpus"}}}}},
	}, {
		name:  "a constraint across two requests",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", device{name: "gpu-0", attrs: map[string]string{"numa": "0"}}, device{name: "gpu-1", attrs: map[string]string{"numa": "1"}})
			r.slice("b", device{name: "gpu-0", attrs: map[string]string{"numa": "0"}}, device{name: "gpu-1", attrs: map[string]string{"numa": "1"}}, device{name: "gpu-2", attrs: map[string]string{"numa": "1"}})
			r.claim("pair", resourceapi.DeviceClaim{
				Requests:    []resourceapi.DeviceRequest{r.request("a", "gpu", 1, ""), r.request("b", "gpu", 1, "")},
				Constraints: []resourceapi.DeviceConstraint{{Requests: []string{"a", "b"}, MatchAttribute: ptr(resourceapi.FullyQualifiedName(draDriver + "/numa"))}},
			})
		},
		steps: []draStep{{pods: []draPod{{name: "p", claims: []string{"pair"}}}}},
	}, {
		name:  "a prioritized list whose first choice is taken",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1, "model=a100")...)
			r.slice("b", gpus(1, "model=t4")...)
			r.claim("big", one("gpu", 1, fmt.Sprintf(`device.attributes[%q].model == "a100"`, draDriver))(r))
			sub := func(name, model string) resourceapi.DeviceSubRequest {
				return resourceapi.DeviceSubRequest{Name: name, DeviceClassName: r.name("gpu"), AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
					Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf(`device.attributes[%q].model == %q`, draDriver, model)}}}}
			}
			r.claim("any", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{sub("a100", "a100"), sub("t4", "t4")}}}})
		},
		steps: []draStep{{pods: []draPod{{name: "first", claims: []string{"big"}}}}, {pods: []draPod{{name: "second", claims: []string{"any"}}}}},
	}, {
		name:  "a tainted device",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", device{name: "gpu-0", tainted: true})
			r.slice("b", gpus(1)...)
			r.claim("plain", one("gpu", 1, "")(r))
			r.claim("again", one("gpu", 1, "")(r))
			tolerating := r.request("gpu", "gpu", 1, "")
			tolerating.Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: "e2e.yardmaster.io/unhealthy", Operator: resourceapi.DeviceTolerationOpExists, Effect: resourceapi.DeviceTaintEffectNoSchedule}}
			r.claim("tolerant", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{tolerating}})
		},
		steps: []draStep{
			{pods: []draPod{{name: "p1", claims: []string{"plain"}}}},
			{pods: []draPod{{name: "p2", claims: []string{"again"}}}},
			{pods: []draPod{{name: "p3", claims: []string{"tolerant"}}}},
		},
	}, {
		name:  "an extended resource served by DRA",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "e2e.yardmaster.io/gpu")
			r.slice("b", gpus(2)...)
		},
		steps: []draStep{
			{pods: []draPod{{name: "p", extended: map[v1.ResourceName]string{"e2e.yardmaster.io/gpu": "2"}}}},
			{pods: []draPod{{name: "q", extended: map[v1.ResourceName]string{"e2e.yardmaster.io/gpu": "1"}}}},
		},
	}, {
		name:  "a pod deleted while its claim is reserved",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.claim("c1", one("gpu", 1, "")(r))
			r.claim("c2", one("gpu", 1, "")(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p1", claims: []string{"c1"}}}},
			{pods: []draPod{{name: "p2", claims: []string{"c2"}}}},
			{act: func(r *draRun) { r.deletePod("p1") }},
			{act: func(r *draRun) {
				node := r.e.waitBound(60*time.Second, "p2")["p2"]
				if node != r.name("a") {
					r.e.t.Errorf("p2 on %s", node)
				}
			}},
		},
	}, {
		name:  "a claim whose class does not exist",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.claim("lost", one("no-such-class", 1, "")(r))
		},
		steps: []draStep{{pods: []draPod{{name: "p", claims: []string{"lost"}}}}},
	}, {
		// Bad input: a selector that fails at run time on the devices it
		// reads (a missing attribute) is an error for the pod, and a pool
		// whose two slices list the same device is not used; a pod that
		// asks for neither is placed.
		name:  "a CEL runtime error and a pool that lists a device twice",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.duplicatedPool("b")
			r.claim("bad-cel", one("gpu", 1, fmt.Sprintf(`device.attributes[%q].missing == "x"`, draDriver))(r))
			r.claim("fine", one("gpu", 1, "")(r))
			r.claim("more", one("gpu", 1, "")(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-bad", claims: []string{"bad-cel"}}}},
			{pods: []draPod{{name: "p-fine", claims: []string{"fine"}}}},
			{pods: []draPod{{name: "p-more", claims: []string{"more"}}}},
		},
	}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sideBySide(t, sc.play) })
	}
}
