package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// attrIs is a CEL selector on the driver's attribute name being value
// (a string).
func attrIs(name, value string) string {
	return fmt.Sprintf(`device.attributes[%q].%s == %q`, draDriver, name, value)
}

// updateClass sets the extra selector of DeviceClass name (its second)
// to cel, as an administrator fixing a class does.
func (r *draRun) updateClass(name, cel string) {
	e := r.e
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dc, err := e.client.ResourceV1().DeviceClasses().Get(e.ctx, r.name(name), metav1.GetOptions{})
		if err != nil {
			return err
		}
		dc.Spec.Selectors = r.classObj(name, cel).Spec.Selectors
		_, err = e.client.ResourceV1().DeviceClasses().Update(e.ctx, dc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("update DeviceClass %s: %v", name, err)
	}
}

// poolSlice is slice name of node's pool, of generation gen and count
// slices, with the devices.
func (r *draRun) poolSlice(node, name string, gen, count int64, devices ...device) *resourceapi.ResourceSlice {
	s := r.nodeSlice(node, devices...)
	s.Name = r.name(node) + "-" + name
	s.Spec.Pool.Generation, s.Spec.Pool.ResourceSliceCount = gen, count
	return s
}

// replaceSlice writes want over the slice of its name.
func (r *draRun) replaceSlice(want *resourceapi.ResourceSlice) {
	e := r.e
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := e.client.ResourceV1().ResourceSlices().Get(e.ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec = want.Spec
		_, err = e.client.ResourceV1().ResourceSlices().Update(e.ctx, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("update ResourceSlice %s: %v", want.Name, err)
	}
}

// deleteSlice deletes ResourceSlice name of node.
func (r *draRun) deleteSlice(node, name string) {
	e := r.e
	e.t.Helper()
	if err := e.client.ResourceV1().ResourceSlices().Delete(e.ctx, r.name(node)+"-"+name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete ResourceSlice %s: %v", name, err)
	}
}

// noteQuiet records, after a while, whether the pods are still unbound
// without a FailedScheduling event: held back before their first cycle.
func (r *draRun) noteQuiet(pods ...string) {
	e := r.e
	e.t.Helper()
	time.Sleep(2 * time.Second)
	for _, pod := range pods {
		p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, pod, metav1.GetOptions{})
		if err != nil {
			e.t.Fatalf("get pod %s: %v", pod, err)
		}
		evs, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=FailedScheduling"})
		if err != nil {
			e.t.Fatalf("list events of %s: %v", pod, err)
		}
		r.note(pod+" held", fmt.Sprintf("node=%q events=%d", p.Spec.NodeName, len(evs.Items)))
	}
}

// priority makes the pod one of PriorityClass class, gone at once when
// deleted (no kubelet waits for it).
func priority(class string) func(r *draRun, w *frameworktest.PodWrapper) {
	return func(r *draRun, w *frameworktest.PodWrapper) {
		w.PriorityClassName(r.name(class))
		w.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
	}
}

// composedDRAScenarios are the workloads where devices meet the rest of
// the scheduler (other filters, scores, preemption, the queue) or a
// cluster that changes under waiting pods.
func composedDRAScenarios(one func(class string, count int64, cel string) func(r *draRun) resourceapi.DeviceClaim) []draScenario {
	gpu := func(name string, attrs ...string) device { return gpus(1, attrs...)[0].named(name) }
	return []draScenario{{
		// A pod's claims must all be allocated on its node: a has one of
		// the two models, b both, c the other. Then two pods made together
		// race for the last t4: the first gets it.
		name:  "several claims on one node, and two pods racing for the last device",
		nodes: []string{"a", "b", "c"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpu("gpu-0", "model=t4"))
			r.slice("b", gpu("gpu-0", "model=t4"), gpu("gpu-1", "model=a100"))
			r.slice("c", gpu("gpu-0", "model=a100"))
			r.claim("t4", one("gpu", 1, attrIs("model", "t4"))(r))
			r.claim("a100", one("gpu", 1, attrIs("model", "a100"))(r))
			r.claim("x1", one("gpu", 1, attrIs("model", "t4"))(r))
			r.claim("x2", one("gpu", 1, attrIs("model", "t4"))(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "both", claims: []string{"t4", "a100"}}}},
			{pods: []draPod{{name: "r1", claims: []string{"x1"}}, {name: "r2", claims: []string{"x2"}}}},
		},
	}, {
		// count > 1 in two requests that must share a NUMA node, which
		// only b's devices allow; two NICs that must be distinct PCI
		// devices, which only b has.
		name:  "counts with matchAttribute, and distinctAttribute",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			dev := func(name, kind, attr, v string) device {
				return device{name: name, attrs: map[string]string{"kind": kind, attr: v}}
			}
			r.slice("a", dev("gpu-0", "gpu", "numa", "0"), dev("gpu-1", "gpu", "numa", "0"), dev("gpu-2", "gpu", "numa", "1"), dev("gpu-3", "gpu", "numa", "1"),
				dev("nic-0", "nic", "pci", "1"), dev("nic-1", "nic", "pci", "1"))
			r.slice("b", dev("gpu-0", "gpu", "numa", "0"), dev("gpu-1", "gpu", "numa", "0"), dev("gpu-2", "gpu", "numa", "0"), dev("gpu-3", "gpu", "numa", "1"),
				dev("nic-0", "nic", "pci", "1"), dev("nic-1", "nic", "pci", "2"))
			trio := func() resourceapi.DeviceClaim {
				return resourceapi.DeviceClaim{
					Requests:    []resourceapi.DeviceRequest{r.request("pair", "gpu", 2, attrIs("kind", "gpu")), r.request("single", "gpu", 1, attrIs("kind", "gpu"))},
					Constraints: []resourceapi.DeviceConstraint{{MatchAttribute: ptr(resourceapi.FullyQualifiedName(draDriver + "/numa"))}},
				}
			}
			r.claim("trio", trio())
			r.claim("trio-again", trio())
			r.claim("nics", resourceapi.DeviceClaim{
				Requests:    []resourceapi.DeviceRequest{r.request("nic", "gpu", 2, attrIs("kind", "nic"))},
				Constraints: []resourceapi.DeviceConstraint{{Requests: []string{"nic"}, DistinctAttribute: ptr(resourceapi.FullyQualifiedName(draDriver + "/pci"))}},
			})
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-trio", claims: []string{"trio"}}}},
			{pods: []draPod{{name: "p-nics", claims: []string{"nics"}}}},
			{pods: []draPod{{name: "p-trio-again", claims: []string{"trio-again"}}}},
		},
	}, {
		// Prioritized lists whose choices differ in class and count: b
		// gives the first choice (two a100s), a and c only the second;
		// Score must take b over a, first in name order. The next pod's
		// list gets its first choice on a only.
		name:  "prioritized lists of classes and counts, scored",
		nodes: []string{"a", "b", "c"},
		setup: func(r *draRun) {
			r.createClass(r.classObj("a100", attrIs("model", "a100")))
			r.createClass(r.classObj("t4", attrIs("model", "t4")))
			r.slice("a", gpu("gpu-0", "model=a100"), gpu("gpu-1", "model=t4"))
			r.slice("b", gpu("gpu-0", "model=a100"), gpu("gpu-1", "model=a100"))
			r.slice("c", gpu("gpu-0", "model=t4"), gpu("gpu-1", "model=t4"))
			list := func(bigCount int64) resourceapi.DeviceClaim {
				sub := func(name, class string, count int64) resourceapi.DeviceSubRequest {
					return resourceapi.DeviceSubRequest{Name: name, DeviceClassName: r.name(class), AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}
				}
				return resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{sub("big", "a100", bigCount), sub("small", "t4", 1)}}}}
			}
			r.claim("two-a100", list(2))
			r.claim("one-a100", list(1))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-two", claims: []string{"two-a100"}}}},
			{pods: []draPod{{name: "p-one", claims: []string{"one-a100"}}}},
		},
	}, {
		// Devices with cpu, node affinity, a node taint and topology
		// spread: a has a device but no cpu left, b is tainted, c has no
		// device, d is in the wrong zone; e fits. The next pod fits
		// nowhere, each node for its own reason, counted as kube-scheduler
		// counts them (the first filter that fails).
		name:  "devices with cpu, affinity, taints and spread",
		nodes: []string{"a", "b", "c", "d", "e"},
		labels: map[string]map[string]string{
			"a": {"zone": "z1", "host": "a", "pin": "a"}, "b": {"zone": "z1", "host": "b"}, "c": {"zone": "z1", "host": "c"},
			"d": {"zone": "z2", "host": "d"}, "e": {"zone": "z1", "host": "e"},
		},
		nodeWith: map[string]func(*frameworktest.NodeWrapper){
			"b": func(w *frameworktest.NodeWrapper) { w.Taint("dedicated", "infra", v1.TaintEffectNoSchedule) },
		},
		setup: func(r *draRun) {
			r.class("gpu", "")
			for _, n := range []string{"a", "b", "d", "e"} {
				r.slice(n, gpus(1)...)
			}
			r.claim("g1", one("gpu", 1, "")(r))
			r.claim("g2", one("gpu", 1, "")(r))
			r.claim("g3", one("gpu", 1, "")(r))
		},
		steps: func() []draStep {
			spread := func(r *draRun, w *frameworktest.PodWrapper) {
				w.Label("app", "x")
				w.RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().Expr("zone", v1.NodeSelectorOpIn, "z1").Obj())
				w.SpreadConstraint(frameworktest.MakeSpreadConstraint(1, "host", v1.DoNotSchedule).MatchLabels("app", "x").Obj())
			}
			return []draStep{
				{pods: []draPod{{name: "filler", cpu: "7", nodeSelector: map[string]string{"pin": "a"}}}},
				{pods: []draPod{{name: "p-fit", cpu: "2", claims: []string{"g1"}, with: spread}}},
				{pods: []draPod{{name: "p-none", cpu: "2", claims: []string{"g2"}, with: spread}}},
				{pods: []draPod{{name: "p-a", cpu: "2", claims: []string{"g3"}, nodeSelector: map[string]string{"pin": "a"}}}},
			}
		}(),
	}, {
		// A claim allocated on a, shared by a pod that must run on b: it
		// waits, and the claim (in use) stays. A pod whose template does
		// not exist yet, and one whose claim exists only in another
		// namespace, are held back without an attempt until what they
		// name is made.
		name:   "a shared claim pinned elsewhere, a missing template, a claim of another namespace",
		nodes:  []string{"a", "b"},
		labels: map[string]map[string]string{"a": {"pin": "a"}, "b": {"pin": "b"}},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.slice("b", gpus(1)...)
			r.claim("shared", one("gpu", 1, "")(r))
			other := r.e.otherNamespace()
			c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "elsewhere"}, Spec: resourceapi.ResourceClaimSpec{Devices: one("gpu", 1, "")(r)}}
			if _, err := r.e.client.ResourceV1().ResourceClaims(other).Create(r.e.ctx, c, metav1.CreateOptions{}); err != nil {
				r.e.t.Fatalf("create ResourceClaim %s/elsewhere: %v", other, err)
			}
		},
		steps: []draStep{
			{pods: []draPod{{name: "p1", claims: []string{"shared"}, nodeSelector: map[string]string{"pin": "a"}}}},
			{pods: []draPod{{name: "p2", claims: []string{"shared"}, nodeSelector: map[string]string{"pin": "b"}}}},
			{async: true, pods: []draPod{{name: "p-tmpl", claims: []string{"tmpl:later"}}, {name: "p-other", claims: []string{"elsewhere"}}}},
			{act: func(r *draRun) {
				r.noteQuiet("p-tmpl", "p-other")
				r.template("later", one("gpu", 1, "")(r))
				r.e.waitBound(60*time.Second, "p-tmpl")
				// Its own claim of that name, with no device left.
				r.claim("elsewhere", one("gpu", 1, "")(r))
				r.note("p-other", r.e.waitFailedScheduling("p-other"))
			}},
		},
	}, {
		// A pool of two slices is usable once both are published; a new
		// generation of it replaces its devices, usable once complete; a
		// DeviceClass fixed while a pod waits for it.
		name:  "a pool over several slices, a new generation, a class changed",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.createClass(r.classObj("picky", attrIs("model", "h100")))
			r.publish(r.poolSlice("a", "s0", 1, 2, gpu("gpu-0", "model=t4"), gpu("gpu-1", "model=t4")))
			r.slice("b", gpu("gpu-0", "model=a100"))
			r.claim("one", one("gpu", 1, attrIs("model", "t4"))(r))
			r.claim("two", one("gpu", 2, attrIs("model", "t4"))(r))
			r.claim("picky", one("picky", 1, "")(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-one", claims: []string{"one"}}}},
			{act: func(r *draRun) {
				r.publish(r.poolSlice("a", "s1", 1, 2, gpu("gpu-2", "model=t4")))
				r.e.waitBound(60*time.Second, "p-one")
			}},
			// Generation 2 of s0 replaces the devices; s1, of generation
			// 1, is obsolete, and the pool incomplete until s0 says it is
			// the only slice.
			{act: func(r *draRun) {
				r.replaceSlice(r.poolSlice("a", "s0", 2, 2, gpu("gpu-3", "model=t4"), gpu("gpu-4", "model=t4")))
			}},
			{pods: []draPod{{name: "p-two", claims: []string{"two"}}}},
			{act: func(r *draRun) {
				r.deleteSlice("a", "s1")
				r.replaceSlice(r.poolSlice("a", "s0", 2, 1, gpu("gpu-3", "model=t4"), gpu("gpu-4", "model=t4")))
				r.e.waitBound(60*time.Second, "p-two")
			}},
			{pods: []draPod{{name: "p-picky", claims: []string{"picky"}}}},
			{act: func(r *draRun) {
				r.updateClass("picky", attrIs("model", "a100"))
				r.e.waitBound(60*time.Second, "p-picky")
			}},
		},
	}, {
		// A device reached over the network by the nodes of a rack: the
		// pod waits until a node joins the rack (a label), and the
		// answer kept for that node before must not be given again.
		name:   "a node relabelled into the reach of a network-attached device",
		nodes:  []string{"a", "b"},
		labels: map[string]map[string]string{"a": {"rack": "r2"}, "b": {"rack": "r2"}},
		setup: func(r *draRun) {
			r.class("gpu", "")
			rack := r.namedPoolSlice("a", "rack", device{name: "nic-0"})
			rack.Spec.NodeName = nil
			rack.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "rack", Operator: v1.NodeSelectorOpIn, Values: []string{"r1"}}},
			}}}
			r.publish(rack)
			r.claim("nic", one("gpu", 1, "")(r))
			r.claim("nic-again", one("gpu", 1, "")(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p", claims: []string{"nic"}}}},
			{act: func(r *draRun) {
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					n, err := r.e.client.CoreV1().Nodes().Get(r.e.ctx, r.name("b"), metav1.GetOptions{})
					if err != nil {
						return err
					}
					n.Labels["rack"] = "r1"
					_, err = r.e.client.CoreV1().Nodes().Update(r.e.ctx, n, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					r.e.t.Fatalf("label node b: %v", err)
				}
				r.e.waitBound(60*time.Second, "p")
			}},
			{pods: []draPod{{name: "q", claims: []string{"nic-again"}}}},
		},
	}, {
		// Preemption: a pod whose device is free on a, but not its cpu,
		// evicts the lower-priority pod there; a pod whose devices are
		// all held by lower-priority pods evicts no one (kube-scheduler
		// never preempts for devices).
		name:   "preemption with devices",
		nodes:  []string{"a", "b"},
		labels: map[string]map[string]string{"a": {"pin": "a"}, "b": {"pin": "b"}},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(1)...)
			r.slice("b", gpus(1)...)
			r.claim("low-dev", one("gpu", 1, "")(r))
			r.claim("hi", one("gpu", 1, "")(r))
			r.claim("hi2", one("gpu", 1, "")(r))
		},
		before: func(r *draRun) {
			r.e.priorityClass("low", 10)
			r.e.priorityClass("high", 1000)
		},
		steps: []draStep{
			{pods: []draPod{{name: "low-fill", cpu: "7", nodeSelector: map[string]string{"pin": "a"}, with: priority("low")}}},
			{pods: []draPod{{name: "low-dev", cpu: "7", claims: []string{"low-dev"}, nodeSelector: map[string]string{"pin": "b"}, with: priority("low")}}},
			{pods: []draPod{{name: "hi", cpu: "4", claims: []string{"hi"}, with: priority("high")}}},
			{act: func(r *draRun) { r.e.waitBound(60*time.Second, "hi") }},
			{pods: []draPod{{name: "hi2", claims: []string{"hi2"}, with: priority("high")}}},
		},
	}, {
		// An extended resource a DeviceClass serves, on a node that also
		// publishes it in its allocatable (a device plugin's): there the
		// allocatable counts, not the devices.
		name:  "an extended resource in a node's allocatable and in devices",
		nodes: []string{"a", "b"},
		nodeWith: map[string]func(*frameworktest.NodeWrapper){
			"a": func(w *frameworktest.NodeWrapper) {
				w.Allocatable(map[v1.ResourceName]string{"e2e.yardmaster.io/gpu": "1"})
			},
		},
		setup: func(r *draRun) {
			r.class("gpu", "e2e.yardmaster.io/gpu")
			r.slice("a", gpus(2)...)
			r.slice("b", gpus(2)...)
		},
		steps: []draStep{
			{pods: []draPod{{name: "p", extended: map[v1.ResourceName]string{"e2e.yardmaster.io/gpu": "2"}}}},
			{pods: []draPod{{name: "q", extended: map[v1.ResourceName]string{"e2e.yardmaster.io/gpu": "1"}}}},
			{pods: []draPod{{name: "s", extended: map[v1.ResourceName]string{"e2e.yardmaster.io/gpu": "1"}}}},
		},
	}}
}

// named is d with another name.
func (d device) named(name string) device {
	d.name = name
	return d
}

// noteMappings records the pod's status.extendedResourceClaimStatus: the
// request of its claim for extended resources that serves each
// container's request.
func (r *draRun) noteMappings(pod string) {
	e := r.e
	e.t.Helper()
	p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, pod, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get pod %s: %v", pod, err)
	}
	var got []string
	if st := p.Status.ExtendedResourceClaimStatus; st != nil {
		for _, m := range st.RequestMappings {
			got = append(got, fmt.Sprintf("%s:%s=%s", m.ContainerName, m.ResourceName, m.RequestName))
		}
	}
	r.note(pod+" mappings", fmt.Sprint(got))
}

// oddDRAScenarios are pods that ask for devices in unusual ways.
func oddDRAScenarios(one func(class string, count int64, cel string) func(r *draRun) resourceapi.DeviceClaim) []draScenario {
	const ext = v1.ResourceName("e2e.yardmaster.io/gpu")
	return []draScenario{{
		// A pod with a claim and an extended resource of the same class
		// needs both on one node; a pod that names one claim twice (each
		// entry is allocated devices of its own, and no node has two
		// left); a request for all devices of a model no node has. Where
		// two are left, kube-scheduler's PreBind fails for ever (the
		// second entry's allocation conflicts, then its reservation is a
		// duplicate), and yardmaster binds the pod on its second attempt
		// (docs/dra.md, "Differences from kube-scheduler").
		name:  "a claim with an extended resource, a claim named twice, all of nothing",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", string(ext))
			r.slice("a", gpus(1, "model=t4")...)
			r.slice("b", gpus(3, "model=t4")...)
			r.claim("mine", one("gpu", 1, "")(r))
			r.claim("twice", one("gpu", 1, "")(r))
			r.claim("all-h100", one("gpu", 0, attrIs("model", "h100"))(r))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-mixed", claims: []string{"mine"}, extended: map[v1.ResourceName]string{ext: "1"}}}},
			{pods: []draPod{{name: "p-twice", claims: []string{"twice", "twice"}}}},
			{pods: []draPod{{name: "p-all-none", claims: []string{"all-h100"}}}},
		},
	}, {
		// Extended resources asked for by an init container, a sidecar
		// and a container, and a class's implicit extended resource name:
		// the claim's requests and the pod's mappings are kube-scheduler's.
		name:  "extended resources of init containers, sidecars and implicit names",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", string(ext))
			r.class("fpga", "")
			r.slice("a", gpus(8)...)
		},
		steps: []draStep{
			{pods: []draPod{{name: "p", with: func(r *draRun, w *frameworktest.PodWrapper) {
				implicit := v1.ResourceName("deviceclass.resource.kubernetes.io/" + r.name("fpga"))
				res := func(n map[v1.ResourceName]string) v1.ResourceRequirements {
					rr := v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
					for k, q := range n {
						rr.Requests[k], rr.Limits[k] = resource.MustParse(q), resource.MustParse(q)
					}
					return rr
				}
				always := v1.ContainerRestartPolicyAlways
				w.Spec.InitContainers = []v1.Container{
					{Name: "init-big", Image: "i", Resources: res(map[v1.ResourceName]string{ext: "3"})},
					{Name: "init-small", Image: "i", Resources: res(map[v1.ResourceName]string{ext: "1", implicit: "1"})},
					{Name: "sidecar", Image: "i", RestartPolicy: &always, Resources: res(map[v1.ResourceName]string{ext: "1"})},
				}
				w.Spec.Containers = append(w.Spec.Containers, v1.Container{Name: "second", Image: "i", Resources: res(map[v1.ResourceName]string{ext: "1", implicit: "2"})})
			}}}},
			{act: func(r *draRun) { r.noteMappings("p") }},
		},
	}, {
		// Two pods made together share a claim nobody allocated: the
		// second waits while the first's allocation is in flight, then
		// joins it on its node.
		name:  "two pods made together sharing an unallocated claim",
		nodes: []string{"a", "b"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("b", gpus(1)...)
			r.claim("shared", one("gpu", 1, "")(r))
		},
		steps: []draStep{
			{async: true, pods: []draPod{{name: "p1", claims: []string{"shared"}}, {name: "p2", claims: []string{"shared"}}, {name: "p3", claims: []string{"shared"}}}},
			{act: func(r *draRun) { r.e.waitBound(60*time.Second, "p1", "p2", "p3") }},
		},
	}, {
		// A pod asks for an extended resource nothing serves; a
		// DeviceClass made to serve it, then one changed to, wake it.
		name:  "an extended resource whose class comes later",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.slice("a", gpus(2)...)
		},
		steps: []draStep{
			{pods: []draPod{{name: "p", extended: map[v1.ResourceName]string{"e2e.yardmaster.io/tpu": "1"}}}},
			{pods: []draPod{{name: "q", extended: map[v1.ResourceName]string{"e2e.yardmaster.io/npu": "1"}}}},
			{act: func(r *draRun) {
				r.class("tpu", "e2e.yardmaster.io/tpu")
				r.e.waitBound(60*time.Second, "p")
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					dc, err := r.e.client.ResourceV1().DeviceClasses().Get(r.e.ctx, r.name("gpu"), metav1.GetOptions{})
					if err != nil {
						return err
					}
					dc.Spec.ExtendedResourceName = ptr("e2e.yardmaster.io/npu")
					_, err = r.e.client.ResourceV1().DeviceClasses().Update(r.e.ctx, dc, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					r.e.t.Fatalf("update DeviceClass gpu: %v", err)
				}
				r.e.waitBound(60*time.Second, "q")
			}},
		},
	}}
}

// namedPoolSlice is a slice of node with its own pool, name.
func (r *draRun) namedPoolSlice(node, name string, devices ...device) *resourceapi.ResourceSlice {
	s := r.nodeSlice(node, devices...)
	s.Name = r.name(node) + "-" + name
	s.Spec.Pool.Name = r.name(node) + "-" + name
	return s
}

// A pod that asks for all of a node's devices, one of which is taken,
// is placed as soon as the pool holding that one is deleted: the slice's
// deletion wakes it. kube-scheduler registers no ResourceSlice deletion
// and leaves such a pod to its 5-minute flush of unschedulable pods (a
// side-by-side play showed it still pending 15 s later), so this is
// yardmaster's alone (docs/dra.md, "Differences from kube-scheduler").
func TestDRASliceDeletedWakesPods(t *testing.T) {
	one := func(r *draRun, count int64) resourceapi.DeviceClaim {
		return resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{r.request("gpu", "gpu", count, "")}}
	}
	sc := draScenario{
		name:  "a pool deleted under a request for all devices",
		nodes: []string{"a"},
		setup: func(r *draRun) {
			r.class("gpu", "")
			r.publish(r.namedPoolSlice("a", "x", gpus(1)...))
			r.publish(r.namedPoolSlice("a", "y", gpus(1)...))
			r.claim("held", one(r, 1))
			r.claim("all", one(r, 0))
		},
		steps: []draStep{
			{pods: []draPod{{name: "p-held", claims: []string{"held"}}}},
			{pods: []draPod{{name: "p-all", claims: []string{"all"}}}},
			{act: func(r *draRun) {
				r.deleteSlice("a", "x")
				r.e.waitBoundWithin("p-all", 30*time.Second, "after the pool holding the taken device was deleted")
			}},
		},
	}
	got := sc.play(t, false)
	want := map[string]string{"held": "a-x/gpu-0@gpu for p-held", "all": "a-y/gpu-0@gpu for p-all"}
	if diff := cmp.Diff(want, got.Claims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
}
