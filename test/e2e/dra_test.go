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
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
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
	// labels are node labels, by node.
	labels map[string]map[string]string
	// nodeWith changes a node before it is made (taints, allocatable).
	nodeWith map[string]func(*frameworktest.NodeWrapper)
	// before runs before the scheduler starts, after setup, with the
	// nodes made: pods already bound, priority classes.
	before func(r *draRun)
	// setup makes the classes, slices, claims and templates.
	setup func(r *draRun)
	// steps are the pods, by step, as in volumeScenario; a step may also
	// be a func(r) that changes the cluster (say, deletes a pod).
	steps []draStep
}

// draStep creates pods (name → how) and waits until each is bound or
// reported unschedulable, or acts.
type draStep struct {
	pods []draPod
	act  func(r *draRun)
	// async creates the pods without waiting (a pod whose binding waits
	// for its devices is neither bound nor refused).
	async bool
}

type draPod struct {
	name string
	// claims are resourceClaimName (or "tmpl:<template>" for a template)
	// entries.
	claims []string
	// extended are container requests of extended resources.
	extended map[v1.ResourceName]string
	// nodeSelector is the pod's, on the scenario's node labels.
	nodeSelector map[string]string
	// cpu is the pod's CPU request; 100m when unset.
	cpu string
	// with changes the pod before it is made (affinity, spread,
	// priority).
	with func(r *draRun, w *frameworktest.PodWrapper)
}

// draRun is one play of a scenario.
type draRun struct {
	e *env
	// notes are what acts observed, for the outcome.
	notes map[string]string
}

func (r *draRun) name(n string) string { return r.e.ns + "-" + n }

// class makes DeviceClass name selecting the driver's devices, serving
// extendedResource when it is set.
func (r *draRun) class(name, extendedResource string) {
	dc := r.classObj(name, "")
	if extendedResource != "" {
		dc.Spec.ExtendedResourceName = ptr(extendedResource)
	}
	r.createClass(dc)
}

// classObj is DeviceClass name selecting the driver's devices for which
// cel, when set, holds.
func (r *draRun) classObj(name, cel string) *resourceapi.DeviceClass {
	dc := &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: r.name(name)},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", draDriver)},
		}}},
	}
	if cel != "" {
		dc.Spec.Selectors = append(dc.Spec.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: cel}})
	}
	return dc
}

// createClass creates the DeviceClass, deleted when the test ends.
func (r *draRun) createClass(dc *resourceapi.DeviceClass) {
	e := r.e
	e.t.Helper()
	if _, err := e.client.ResourceV1().DeviceClasses().Create(e.ctx, dc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create DeviceClass %s: %v", dc.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.ResourceV1().DeviceClasses().Delete(context.Background(), dc.Name, metav1.DeleteOptions{})
	})
}

// deleteClass deletes DeviceClass name.
func (r *draRun) deleteClass(name string) {
	e := r.e
	e.t.Helper()
	if err := e.client.ResourceV1().DeviceClasses().Delete(e.ctx, r.name(name), metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete DeviceClass %s: %v", name, err)
	}
}

// opaque is a driver's configuration with parameters p (JSON).
func opaque(p string) resourceapi.DeviceConfiguration {
	return resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{Driver: draDriver, Parameters: runtime.RawExtension{Raw: []byte(p)}}}
}

// device is one device of a slice: name, attributes (k=v, numbers as
// ints), a taint with that effect when taint is set, and capacity (name →
// quantity).
type device struct {
	name     string
	attrs    map[string]string
	taint    resourceapi.DeviceTaintEffect
	capacity map[string]string
	// bindingConditions must all be true in the claim's status before
	// the pod is bound; failureConditions make its binding fail.
	bindingConditions, failureConditions []string
	// shared lets several claims take the device, each some of its
	// capacity (consumable capacity).
	shared bool
	// counters are the device's draws on the pool's counter set "mem"
	// (partitionable devices): counter name → quantity.
	counters map[string]string
}

// taintKey is the key of the devices' taints.
const taintKey = "e2e.yardmaster.io/unhealthy"

// apiDevice is d as the API has it.
func (d device) apiDevice() resourceapi.Device {
	dev := resourceapi.Device{Name: d.name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}}
	for k, v := range d.attrs {
		var n int64
		if _, err := fmt.Sscan(v, &n); err == nil {
			dev.Attributes[resourceapi.QualifiedName(k)] = resourceapi.DeviceAttribute{IntValue: ptr(n)}
		} else {
			dev.Attributes[resourceapi.QualifiedName(k)] = resourceapi.DeviceAttribute{StringValue: ptr(v)}
		}
	}
	if d.taint != "" {
		dev.Taints = []resourceapi.DeviceTaint{{Key: taintKey, Value: "true", Effect: d.taint}}
	}
	for k, v := range d.capacity {
		if dev.Capacity == nil {
			dev.Capacity = map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}
		}
		dev.Capacity[resourceapi.QualifiedName(k)] = resourceapi.DeviceCapacity{Value: resource.MustParse(v)}
	}
	if d.shared {
		dev.AllowMultipleAllocations = ptr(true)
	}
	if len(d.bindingConditions) > 0 {
		dev.BindingConditions, dev.BindingFailureConditions, dev.BindsToNode = d.bindingConditions, d.failureConditions, ptr(true)
	}
	if len(d.counters) > 0 {
		c := resourceapi.DeviceCounterConsumption{CounterSet: "mem", Counters: map[string]resourceapi.Counter{}}
		for k, v := range d.counters {
			c.Counters[k] = resourceapi.Counter{Value: resource.MustParse(v)}
		}
		dev.ConsumesCounters = []resourceapi.DeviceCounterConsumption{c}
	}
	return dev
}

// slice publishes the devices on node, in a pool named after the node.
func (r *draRun) slice(node string, devices ...device) {
	r.publish(r.nodeSlice(node, devices...))
}

// nodeSlice is the slice of node's devices, in a pool named after the
// node.
func (r *draRun) nodeSlice(node string, devices ...device) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: r.name(node) + "-gpus"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   draDriver,
			NodeName: ptr(r.name(node)),
			Pool:     resourceapi.ResourcePool{Name: r.name(node), Generation: 1, ResourceSliceCount: 1},
		},
	}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, d.apiDevice())
	}
	return s
}

// publish creates the slice, deleted when the test ends.
func (r *draRun) publish(s *resourceapi.ResourceSlice) {
	e := r.e
	e.t.Helper()
	if _, err := e.client.ResourceV1().ResourceSlices().Create(e.ctx, s, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create ResourceSlice %s: %v", s.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.ResourceV1().ResourceSlices().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
}

// taintRule taints node's device with a DeviceTaintRule (resource.k8s.io/v1,
// Kubernetes 1.37), deleted when the test ends.
func (r *draRun) taintRule(name, node, device string, effect resourceapi.DeviceTaintEffect) {
	e := r.e
	e.t.Helper()
	rule := &resourceapi.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: r.name(name)},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr(draDriver), Pool: ptr(r.name(node)), Device: ptr(device)},
			Taint:          resourceapi.DeviceTaint{Key: taintKey, Value: "rule", Effect: effect},
		},
	}
	if _, err := e.client.ResourceV1().DeviceTaintRules().Create(e.ctx, rule, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create DeviceTaintRule %s: %v", rule.Name, err)
	}
	e.t.Cleanup(func() {
		_ = e.client.ResourceV1().DeviceTaintRules().Delete(context.Background(), rule.Name, metav1.DeleteOptions{})
	})
}

// deleteTaintRule deletes the DeviceTaintRule taintRule made.
func (r *draRun) deleteTaintRule(name string) {
	e := r.e
	e.t.Helper()
	if err := e.client.ResourceV1().DeviceTaintRules().Delete(e.ctx, r.name(name), metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete DeviceTaintRule %s: %v", r.name(name), err)
	}
}

// republish replaces node's slice with one of devices, as a driver does
// when its devices change.
func (r *draRun) republish(node string, devices ...device) {
	e := r.e
	e.t.Helper()
	want := r.nodeSlice(node, devices...)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := e.client.ResourceV1().ResourceSlices().Get(e.ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Devices = want.Spec.Devices
		_, err = e.client.ResourceV1().ResourceSlices().Update(e.ctx, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("update ResourceSlice %s: %v", want.Name, err)
	}
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

// allocate writes an allocation to claim name, as a driver or an earlier
// scheduler would have: the devices (pool/device, the pool a node's) for
// its request "gpu", usable on node, reserved for consumers.
func (r *draRun) allocate(name, node string, consumers []resourceapi.ResourceClaimConsumerReference, devices ...string) {
	e := r.e
	e.t.Helper()
	c, err := e.client.ResourceV1().ResourceClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get ResourceClaim %s: %v", name, err)
	}
	// With the time of allocation, as kube-scheduler v1.37 writes it: a
	// scheduler adds it when it reserves the claim if it is missing,
	// which the API server refuses (the allocation is immutable).
	a := &resourceapi.AllocationResult{
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{r.name(node)}}},
		}}},
		AllocationTimestamp: ptr(metav1.Now()),
	}
	for _, d := range devices {
		pool, dev, _ := strings.Cut(d, "/")
		a.Devices.Results = append(a.Devices.Results, resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: draDriver, Pool: r.name(pool), Device: dev})
	}
	c.Status.Allocation, c.Status.ReservedFor = a, consumers
	if _, err := e.client.ResourceV1().ResourceClaims(e.ns).UpdateStatus(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("allocate ResourceClaim %s: %v", name, err)
	}
}

// waitClaim waits until claim name satisfies ok.
func (r *draRun) waitClaim(name, what string, ok func(*resourceapi.ResourceClaim) bool) {
	e := r.e
	e.t.Helper()
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := e.client.ResourceV1().ResourceClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return ok(c), nil
	}); err != nil {
		e.t.Fatalf("ResourceClaim %s never %s: %v", name, what, err)
	}
}

func deallocated(c *resourceapi.ResourceClaim) bool { return c.Status.Allocation == nil }

func reserved(c *resourceapi.ResourceClaim) bool { return len(c.Status.ReservedFor) > 0 }

// setDeviceCondition sets condition to true on the devices allocated to
// claim name, as their driver does when it has attached them (or failed
// to).
func (r *draRun) setDeviceCondition(name, condition string) {
	e := r.e
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := e.client.ResourceV1().ResourceClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Status.Allocation == nil {
			return fmt.Errorf("claim %s is not allocated", name)
		}
		c.Status.Devices = nil
		for _, res := range c.Status.Allocation.Devices.Results {
			c.Status.Devices = append(c.Status.Devices, resourceapi.AllocatedDeviceStatus{
				Driver: res.Driver, Pool: res.Pool, Device: res.Device,
				Conditions: []metav1.Condition{{Type: condition, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.Now()}},
			})
		}
		_, err = e.client.ResourceV1().ResourceClaims(e.ns).UpdateStatus(e.ctx, c, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("set condition %s on the devices of claim %s: %v", condition, name, err)
	}
}

// note records an observation under key, the test's names made alike in
// both runs.
func (r *draRun) note(key, value string) {
	r.notes[key] = strings.ReplaceAll(strings.ReplaceAll(value, r.e.ns+"-", ""), r.e.ns+"/", "NS/")
}

// labelNamespace sets a label of the test's namespace.
func (r *draRun) labelNamespace(key, value string) {
	e := r.e
	e.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := e.client.CoreV1().Namespaces().Patch(e.ctx, e.ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatalf("label namespace: %v", err)
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
	// Notes are what the scenario's acts observed.
	Notes map[string]string
	// Claims are, per claim (by pod and pod claim name for generated
	// ones), its allocation: "pool/device@request" sorted, and its
	// reservations' pods.
	Claims map[string]string
}

func (sc draScenario) play(t *testing.T, kube bool) draOutcome {
	e := newEnv(t)
	r := &draRun{e: e, notes: map[string]string{}}
	for _, n := range sc.nodes {
		w := e.node(n).Capacity("8", "16Gi", 110)
		for k, v := range sc.labels[n] {
			w.Label(k, v)
		}
		if f := sc.nodeWith[n]; f != nil {
			f(w)
		}
		e.addNode(w)
	}
	sc.setup(r)
	if sc.before != nil {
		sc.before(r)
	}
	if kube {
		e.startKubeScheduler()
	} else {
		e.startScheduler()
	}
	out := draOutcome{Pods: map[string]string{}, Pending: map[string]string{}, Notes: r.notes, Claims: map[string]string{}}
	for _, step := range sc.steps {
		if step.act != nil {
			step.act(r)
			continue
		}
		for _, p := range step.pods {
			e.createPod(r.podOf(p))
		}
		if step.async {
			continue
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
func (r *draRun) podOf(p draPod) *frameworktest.PodWrapper {
	cpu := p.cpu
	if cpu == "" {
		cpu = "100m"
	}
	w := r.e.pod(p.name).Req(cpu, "64Mi")
	if p.nodeSelector != nil {
		w.NodeSelector(p.nodeSelector)
	}
	if p.with != nil {
		p.with(r, w)
	}
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
// between runs: the devices by pool (node) and request, with admin access
// and the capacity they consume; where the configuration comes from; and
// who holds it.
func (r *draRun) describeAllocation(c *resourceapi.ResourceClaim) string {
	a := c.Status.Allocation
	if a == nil {
		return "unallocated"
	}
	var devs []string
	for _, res := range a.Devices.Results {
		d := fmt.Sprintf("%s/%s@%s", strings.TrimPrefix(res.Pool, r.e.ns+"-"), res.Device, res.Request)
		if res.AdminAccess != nil && *res.AdminAccess {
			d += "(admin)"
		}
		if len(res.BindingConditions) > 0 {
			d += "(binding)"
		}
		var used []string
		for k, q := range res.ConsumedCapacity {
			used = append(used, fmt.Sprintf("%s=%s", k, q.String()))
		}
		sort.Strings(used)
		if len(used) > 0 {
			d += "(" + strings.Join(used, ",") + ")"
		}
		devs = append(devs, d)
	}
	sort.Strings(devs)
	var configs []string
	for _, cfg := range a.Devices.Config {
		configs = append(configs, fmt.Sprintf("%s%v", cfg.Source, cfg.Requests))
	}
	desc := strings.Join(devs, ",")
	if len(configs) > 0 {
		desc += " config " + strings.Join(configs, ",")
	}
	var holders []string
	for _, ref := range c.Status.ReservedFor {
		holders = append(holders, ref.Name)
	}
	sort.Strings(holders)
	if len(holders) > 8 {
		holders = []string{fmt.Sprintf("%d consumers", len(holders))}
	}
	return desc + " for " + strings.Join(holders, ",")
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

// yardmaster and kube-scheduler v1.37, given the same devices, claims and
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
			r.slice("a", device{name: "gpu-0", taint: resourceapi.DeviceTaintEffectNoSchedule})
			r.slice("b", gpus(1)...)
			r.claim("plain", one("gpu", 1, "")(r))
			r.claim("again", one("gpu", 1, "")(r))
			tolerating := r.request("gpu", "gpu", 1, "")
			tolerating.Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: taintKey, Operator: resourceapi.DeviceTolerationOpExists, Effect: resourceapi.DeviceTaintEffectNoSchedule}}
			r.claim("tolerant", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{tolerating}})
		},
		steps: []draStep{
			{pods: []draPod{{name: "p1", claims: []string{"plain"}}}},
			{pods: []draPod{{name: "p2", claims: []string{"again"}}}},
			{pods: []draPod{{name: "p3", claims: []string{"tolerant"}}}},
		},
	}, {
		name:  "a device tainted by a DeviceTaintRule",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.slice("b", gpus(1)...)
			r.taintRule("maintenance", "a", "gpu-0", resourceapi.DeviceTaintEffectNoSchedule)
			r.claim("plain", one("gpu", 1, "")(r))
			r.claim("again", one("gpu", 1, "")(r))
			tolerating := r.request("gpu", "gpu", 1, "")
			tolerating.Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: taintKey, Operator: resourceapi.DeviceTolerationOpEqual, Value: "rule", Effect: resourceapi.DeviceTaintEffectNoSchedule}}
			r.claim("tolerant", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{tolerating}})
		},
		// plain takes b's device; again finds only a's, tainted by the
		// rule; tolerant tolerates it.
		steps: []draStep{
			{pods: []draPod{{name: "p1", claims: []string{"plain"}}}},
			{pods: []draPod{{name: "p2", claims: []string{"again"}}}},
			{pods: []draPod{{name: "p3", claims: []string{"tolerant"}}}},
		},
	}, {
		name:  "a DeviceTaintRule added, then deleted",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(2)...)
			r.taintRule("drain", "a", "gpu-1", resourceapi.DeviceTaintEffectNoSchedule)
			r.claim("c1", one("gpu", 1, "")(r))
			r.claim("c2", one("gpu", 1, "")(r))
		},
		// c1 gets gpu-0; c2 waits on the tainted gpu-1 until the rule is
		// gone, which wakes it.
		steps: []draStep{
			{pods: []draPod{{name: "p1", claims: []string{"c1"}}}},
			{pods: []draPod{{name: "p2", claims: []string{"c2"}}}},
			{act: func(r *draRun) { r.deleteTaintRule("drain") }},
			{act: func(r *draRun) {
				node := r.e.waitBound(60*time.Second, "p2")["p2"]
				if node != r.name("a") {
					r.e.t.Errorf("p2 on %s", node)
				}
			}},
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
	}, {
		// A claim a driver (or an earlier scheduler) allocated takes its
		// pod to the node of its allocation, and its devices are not
		// handed out again; a claim allocated on a node its pod cannot
		// use, and held by no one, is deallocated (PostFilter) and
		// allocated anew where the pod can go.
		name:   "claims allocated before their pods",
		nodes:  []string{"a", "b"},
		labels: map[string]map[string]string{"b": {"pin": "b"}},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.slice("b", gpus(2)...)
			r.claim("pre", one("gpu", 1, "")(r))
			r.allocate("pre", "b", nil, "b/gpu-0")
			r.claim("elsewhere", one("gpu", 1, "")(r))
			r.allocate("elsewhere", "a", nil, "a/gpu-0")
			r.claim("fresh", one("gpu", 1, "")(r))
		},
		// p1 goes where pre is; p2 must go to b, so elsewhere moves to
		// b's gpu-1; fresh then finds only a's gpu-0 free.
		steps: []draStep{
			{pods: []draPod{{name: "p1", claims: []string{"pre"}}}},
			{pods: []draPod{{name: "p2", claims: []string{"elsewhere"}, nodeSelector: map[string]string{"pin": "b"}}}},
			// The first attempt deallocates; the claim's update brings
			// the pod back.
			{act: func(r *draRun) { r.e.waitBound(60*time.Second, "p2") }},
			{pods: []draPod{{name: "p3", claims: []string{"fresh"}}}},
		},
	}, {
		// status.reservedFor holds at most 256 consumers: a pod cannot
		// join a claim that has them all. kube-scheduler v1.37 finds out
		// in PreBind, from the API server (resourceclaim.CanBeReserved
		// allows any number).
		name:  "a claim reserved for as many consumers as it may have",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.claim("full", one("gpu", 1, "")(r))
			var consumers []resourceapi.ResourceClaimConsumerReference
			for i := range resourceapi.ResourceClaimReservedForMaxSize {
				// Not pods: the ResourceClaim controller keeps the
				// reservations of consumers it does not know.
				consumers = append(consumers, resourceapi.ResourceClaimConsumerReference{
					APIGroup: "e2e.yardmaster.io", Resource: "jobs", Name: fmt.Sprintf("job-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
				})
			}
			r.allocate("full", "a", consumers, "a/gpu-0")
		},
		steps: []draStep{{pods: []draPod{{name: "p", claims: []string{"full"}}}}},
	}, {
		// Each claim alone fits a node, but no node has both; a request
		// for all matching devices goes where some match.
		name:  "claims whose devices are on different nodes",
		nodes: []string{"a", "b", "c"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(2, "model=a100")...)
			r.slice("b", gpus(1, "model=t4")...)
			model := func(m string) string { return fmt.Sprintf(`device.attributes[%q].model == %q`, draDriver, m) }
			r.claim("a100", one("gpu", 1, model("a100"))(r))
			r.claim("t4", one("gpu", 1, model("t4"))(r))
			r.claim("all-t4", one("gpu", 0, model("t4"))(r))
			r.claim("all-a100", one("gpu", 0, model("a100"))(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "split", claims: []string{"a100", "t4"}}}},
			{pods: []draPod{{name: "all-t4", claims: []string{"all-t4"}}}},
			{pods: []draPod{{name: "all-a100", claims: []string{"all-a100"}}}},
		},
	}, {
		// A driver publishes more devices, or clears a taint, while pods
		// wait for them: the slice's update brings the pods back.
		name:   "devices published while pods wait",
		nodes:  []string{"a", "b"},
		labels: map[string]map[string]string{"b": {"pin": "b"}},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.slice("b", device{name: "gpu-0", taint: resourceapi.DeviceTaintEffectNoExecute}, device{name: "gpu-1", taint: resourceapi.DeviceTaintEffectNoExecute})
			r.claim("two", one("gpu", 2, "")(r))
			tolerating := func(effect resourceapi.DeviceTaintEffect) resourceapi.DeviceClaim {
				req := r.request("gpu", "gpu", 1, "")
				req.Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: taintKey, Operator: resourceapi.DeviceTolerationOpExists, Effect: effect}}
				return resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req}}
			}
			r.claim("no-schedule", tolerating(resourceapi.DeviceTaintEffectNoSchedule))
			r.claim("no-execute", tolerating(resourceapi.DeviceTaintEffectNoExecute))
		},
		steps: []draStep{
			// b's two devices would do for "two", but they are tainted
			// NoExecute, which a NoSchedule toleration does not cover.
			{pods: []draPod{{name: "p-two", claims: []string{"two"}}, {name: "p-ns", claims: []string{"no-schedule"}, nodeSelector: map[string]string{"pin": "b"}}}},
			{act: func(r *draRun) { r.republish("a", gpus(2)...) }},
			{act: func(r *draRun) {
				r.republish("b", device{name: "gpu-0"}, device{name: "gpu-1", taint: resourceapi.DeviceTaintEffectNoExecute})
			}},
			{act: func(r *draRun) { r.e.waitBound(60*time.Second, "p-two", "p-ns") }},
			{pods: []draPod{{name: "p-ne", claims: []string{"no-execute"}, nodeSelector: map[string]string{"pin": "b"}}}},
		},
	}, {
		// Devices reached over the network: a slice for the nodes of a
		// selector, one for all nodes, and one that says per device which
		// nodes reach it.
		name:   "network-attached devices",
		nodes:  []string{"a", "b", "c"},
		labels: map[string]map[string]string{"a": {"rack": "r1"}, "b": {"rack": "r1", "pin": "b"}, "c": {"rack": "r2"}},
		setup: func(r *draRun) {
			r.class("gpu", "")
			kind := func(k string) string { return fmt.Sprintf(`device.attributes[%q].kind == %q`, draDriver, k) }
			pool := func(name string, devices ...device) *resourceapi.ResourceSlice {
				s := &resourceapi.ResourceSlice{
					ObjectMeta: metav1.ObjectMeta{Name: r.name(name)},
					Spec:       resourceapi.ResourceSliceSpec{Driver: draDriver, Pool: resourceapi.ResourcePool{Name: r.name(name), Generation: 1, ResourceSliceCount: 1}},
				}
				for _, d := range devices {
					s.Spec.Devices = append(s.Spec.Devices, d.apiDevice())
				}
				return s
			}
			rack := pool("rack", device{name: "nic-0", attrs: map[string]string{"kind": "rack"}})
			rack.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "rack", Operator: v1.NodeSelectorOpIn, Values: []string{"r1"}}},
			}}}
			r.publish(rack)
			everywhere := pool("everywhere", device{name: "fpga-0", attrs: map[string]string{"kind": "all"}})
			everywhere.Spec.AllNodes = ptr(true)
			r.publish(everywhere)
			perDevice := pool("per-device", device{name: "dev-b", attrs: map[string]string{"kind": "per"}})
			perDevice.Spec.PerDeviceNodeSelection = ptr(true)
			perDevice.Spec.Devices[0].NodeName = ptr(r.name("b"))
			r.publish(perDevice)
			r.slice("c", gpus(1, "kind=local")...)
			r.claim("rack", one("gpu", 1, kind("rack"))(r))
			r.claim("rack-again", one("gpu", 1, kind("rack"))(r))
			r.claim("local", one("gpu", 1, kind("local"))(r))
			r.claim("all", one("gpu", 1, kind("all"))(r))
			r.claim("per", one("gpu", 1, kind("per"))(r))
			r.claim("per-again", one("gpu", 1, kind("per"))(r))
		},
		steps: []draStep{
			// b is fuller, so the rack's device goes to a; on b it is
			// then taken too.
			{pods: []draPod{{name: "filler", cpu: "4", nodeSelector: map[string]string{"pin": "b"}}}},
			{pods: []draPod{{name: "p-rack", claims: []string{"rack"}}}},
			{pods: []draPod{{name: "p-rack-again", claims: []string{"rack-again"}}}},
			{pods: []draPod{{name: "p-both", claims: []string{"local", "all"}}}},
			{pods: []draPod{{name: "p-per", claims: []string{"per"}}}},
			{pods: []draPod{{name: "p-per-again", claims: []string{"per-again"}}}},
		},
	}, {
		// A class's own selectors and configuration, with a request's; a
		// class deleted after its claim was made, and made again.
		name:  "a DeviceClass with selectors and configuration",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			a100 := r.classObj("a100", fmt.Sprintf(`device.attributes[%q].model == "a100"`, draDriver))
			a100.Spec.Config = []resourceapi.DeviceClassConfiguration{{DeviceConfiguration: opaque(`{"mode":"fast"}`)}}
			r.createClass(a100)
			r.class("temp", "")
			r.slice("a", device{name: "gpu-0", attrs: map[string]string{"model": "a100", "mem": "40"}}, device{name: "gpu-1", attrs: map[string]string{"model": "t4", "mem": "80"}})
			r.slice("b", device{name: "gpu-0", attrs: map[string]string{"model": "a100", "mem": "80"}})
			big := resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{r.request("gpu", "a100", 1, fmt.Sprintf(`device.attributes[%q].mem >= 80`, draDriver))}}
			big.Config = []resourceapi.DeviceClaimConfiguration{{Requests: []string{"gpu"}, DeviceConfiguration: opaque(`{"sharing":"none"}`)}}
			r.claim("big", big)
			r.claim("any-a100", one("a100", 1, "")(r))
			r.claim("orphan", one("temp", 1, "")(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-big", claims: []string{"big"}}}},
			{pods: []draPod{{name: "p-any", claims: []string{"any-a100"}}}},
			{act: func(r *draRun) {
				r.deleteClass("temp")
				// Both schedulers learn of it from a watch, which
				// nothing here can observe: give it time, generously,
				// for a loaded machine.
				time.Sleep(3 * time.Second)
			}},
			{pods: []draPod{{name: "p-orphan", claims: []string{"orphan"}}}},
			{act: func(r *draRun) { r.class("temp", "") }},
			{act: func(r *draRun) { r.e.waitBound(60*time.Second, "p-orphan") }},
		},
	}, {
		// The ResourceClaim controller deallocates a claim whose pods are
		// gone; the next pod that uses it gets it allocated anew, where
		// devices are free now.
		name:  "a claim freed by its pod and used again",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1, "model=t4")...)
			r.slice("b", gpus(1, "model=a100")...)
			model := func(m string) string { return fmt.Sprintf(`device.attributes[%q].model == %q`, draDriver, m) }
			r.claim("t4", one("gpu", 1, model("t4"))(r))
			r.claim("any", one("gpu", 1, "")(r))
			r.claim("a100", one("gpu", 1, model("a100"))(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-t4", claims: []string{"t4"}}}},
			{pods: []draPod{{name: "p-any", claims: []string{"any"}}}},
			{act: func(r *draRun) {
				r.deletePod("p-t4")
				r.deletePod("p-any")
				r.waitClaim("any", "deallocated", deallocated)
				r.waitClaim("t4", "deallocated", deallocated)
			}},
			{pods: []draPod{{name: "p-a100", claims: []string{"a100"}}}},
			{pods: []draPod{{name: "p-any-again", claims: []string{"any"}}}},
		},
	}, {
		// A device taken can still be given with admin access, and a
		// device given with admin access is not taken.
		name:  "admin access",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.labelNamespace(resourceapi.DRAAdminNamespaceLabelKey, "true")
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.claim("plain", one("gpu", 1, "")(r))
			admin := r.request("gpu", "gpu", 1, "")
			admin.Exactly.AdminAccess = ptr(true)
			r.claim("admin", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{admin}})
			r.claim("plain-again", one("gpu", 1, "")(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-plain", claims: []string{"plain"}}}},
			{pods: []draPod{{name: "p-admin", claims: []string{"admin"}}}},
			{pods: []draPod{{name: "p-plain-again", claims: []string{"plain-again"}}}},
			// Only the plain claim's going frees the device.
			{act: func(r *draRun) {
				r.deletePod("p-plain")
				r.e.waitBound(60*time.Second, "p-plain-again")
			}},
		},
	}, {
		// Consumable capacity: claims share a device, each taking some of
		// its memory, until it is used up.
		name:  "a device shared by capacity",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", device{name: "gpu-0", shared: true, capacity: map[string]string{"memory": "40Gi"}})
			for _, name := range []string{"c1", "c2", "c3"} {
				req := r.request("gpu", "gpu", 1, "")
				req.Exactly.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{"memory": resource.MustParse("16Gi")}}
				r.claim(name, resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req}})
			}
		},
		steps: []draStep{
			{pods: []draPod{{name: "p1", claims: []string{"c1"}}}},
			{pods: []draPod{{name: "p2", claims: []string{"c2"}}}},
			{pods: []draPod{{name: "p3", claims: []string{"c3"}}}},
			// A claim deallocated gives its share back.
			{act: func(r *draRun) {
				r.deletePod("p1")
				r.e.waitBound(60*time.Second, "p3")
			}},
		},
	}, {
		// Partitionable devices: a whole GPU and its two halves draw on
		// the same memory counter; taking a half leaves no room for the
		// whole.
		name:  "partitions of a device",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			counters := &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: r.name("a") + "-counters"},
				Spec: resourceapi.ResourceSliceSpec{
					Driver:   draDriver,
					NodeName: ptr(r.name("a")),
					Pool:     resourceapi.ResourcePool{Name: r.name("a"), Generation: 1, ResourceSliceCount: 2},
					SharedCounters: []resourceapi.CounterSet{{Name: "mem", Counters: map[string]resourceapi.Counter{
						"memory": {Value: resource.MustParse("40Gi")},
					}}},
				},
			}
			r.publish(counters)
			devices := r.nodeSlice("a",
				device{name: "whole", attrs: map[string]string{"size": "2"}, counters: map[string]string{"memory": "40Gi"}},
				device{name: "half-0", attrs: map[string]string{"size": "1"}, counters: map[string]string{"memory": "20Gi"}},
				device{name: "half-1", attrs: map[string]string{"size": "1"}, counters: map[string]string{"memory": "20Gi"}})
			devices.Spec.Pool.ResourceSliceCount = 2
			r.publish(devices)
			size := func(n int) string { return fmt.Sprintf(`device.attributes[%q].size == %d`, draDriver, n) }
			r.claim("half", one("gpu", 1, size(1))(r))
			r.claim("whole", one("gpu", 1, size(2))(r))
			r.claim("other-half", one("gpu", 1, size(1))(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-half", claims: []string{"half"}}}},
			{pods: []draPod{{name: "p-whole", claims: []string{"whole"}}}},
			{pods: []draPod{{name: "p-other-half", claims: []string{"other-half"}}}},
			// The halves' going gives the counter back.
			{act: func(r *draRun) {
				r.deletePod("p-half")
				r.deletePod("p-other-half")
				r.e.waitBound(60*time.Second, "p-whole")
			}},
		},
	}, {
		// Binding conditions: the pod is bound once the driver says its
		// device is attached; when it says attaching failed, the pod's
		// binding fails, the claim is deallocated and allocated again.
		name:  "devices with binding conditions",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			attach := func(name string) device {
				return device{name: name, bindingConditions: []string{"attached"}, failureConditions: []string{"failed"}}
			}
			r.slice("a", attach("gpu-0"), attach("gpu-1"))
			r.claim("ok", one("gpu", 1, "")(r))
			r.claim("fails", one("gpu", 1, "")(r))
		},
		steps: []draStep{
			{async: true, pods: []draPod{{name: "p-ok", claims: []string{"ok"}}}},
			{act: func(r *draRun) {
				r.waitClaim("ok", "reserved", reserved)
				r.setDeviceCondition("ok", "attached")
				r.e.waitBound(60*time.Second, "p-ok")
			}},
			{async: true, pods: []draPod{{name: "p-fails", claims: []string{"fails"}}}},
			{act: func(r *draRun) {
				r.waitClaim("fails", "reserved", reserved)
				r.setDeviceCondition("fails", "failed")
				r.note("p-fails", r.e.waitFailedScheduling("p-fails", "binding failed"))
				// The next attempt finds the failure, deallocates, and
				// allocates anew.
				r.waitClaim("fails", "allocated again", func(c *resourceapi.ResourceClaim) bool { return reserved(c) && len(c.Status.Devices) == 0 })
				r.setDeviceCondition("fails", "attached")
				r.e.waitBound(60*time.Second, "p-fails")
			}},
		},
	}}

	for _, sc := range slices.Concat(scenarios, composedDRAScenarios(one), oddDRAScenarios(one)) {
		t.Run(sc.name, func(t *testing.T) { sideBySide(t, sc.play) })
	}
}
