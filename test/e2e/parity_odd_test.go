package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// yardmaster and kube-scheduler v1.37 agree on input the API server
// accepts but that is odd or wrong: selectors and affinities nothing
// matches, requests no node can hold, taints and cordons tolerated in
// unusual ways, host ports that overlap in part, spread and pod affinity
// over labels no node has, claims that are missing or going, a pod bound by
// name to a node that does not exist. Nodes differ in size so that each
// pod has one best node; the pods of a scenario are created one at a time,
// so each later pod sees the earlier ones where they went.
func TestPlacementMatchesKubeSchedulerOnOddInput(t *testing.T) {
	small := func(p *frameworktest.PodWrapper) *frameworktest.PodWrapper { return p.Req("100m", "128Mi") }
	extended := func(p *frameworktest.PodWrapper, name v1.ResourceName, qty string) *frameworktest.PodWrapper {
		p.Res(map[v1.ResourceName]string{name: qty})
		c := &p.Spec.Containers[0]
		c.Resources.Limits = c.Resources.Requests.DeepCopy()
		return p
	}
	term := frameworktest.MakeNodeSelectorTerm
	const zone = v1.LabelTopologyZone
	scenarios := []placementScenario{{
		// a (2 cpu, gold, ram=lots), b (4, silver), c (8, no tier): c wins
		// unless a term keeps the pod off it.
		name: "node selectors and affinity",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("2", "4Gi", 110).Label("cores", "2").Label("tier", "gold").Label("ram", "lots"))
			e.addNode(e.node("b").Capacity("4", "8Gi", 110).Label("cores", "4").Label("tier", "silver"))
			e.addNode(e.node("c").Capacity("8", "16Gi", 110).Label("cores", "8"))
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			name := func(n string) string { return e.ns + "-" + n }
			return []*frameworktest.PodWrapper{
				small(e.pod("selector-nobody")).NodeSelector(map[string]string{"gpu": "yes"}),
				// PreFilter narrows the nodes to ghost, which does not exist.
				small(e.pod("name-ghost")).RequiredNodeAffinity(term().Field(metav1.ObjectNameField, v1.NodeSelectorOpIn, name("ghost")).Obj()),
				// c passes PreFilter and fails Filter; a and b never run it.
				small(e.pod("name-c-gold")).RequiredNodeAffinity(term().Field(metav1.ObjectNameField, v1.NodeSelectorOpIn, name("c")).In("tier", "gold").Obj()),
				// Two names ANDed in one term: no node can be both.
				small(e.pod("name-conflict")).RequiredNodeAffinity(term().
					Field(metav1.ObjectNameField, v1.NodeSelectorOpIn, name("a")).
					Field(metav1.ObjectNameField, v1.NodeSelectorOpIn, name("b")).Obj()),
				small(e.pod("name-ghost-or-a")).
					RequiredNodeAffinity(term().Field(metav1.ObjectNameField, v1.NodeSelectorOpIn, name("ghost")).Obj()).
					RequiredNodeAffinity(term().Field(metav1.ObjectNameField, v1.NodeSelectorOpIn, name("a")).Obj()),
				small(e.pod("name-not-c")).RequiredNodeAffinity(term().Field(metav1.ObjectNameField, v1.NodeSelectorOpNotIn, name("c")).Obj()),
				small(e.pod("between-3-and-8")).RequiredNodeAffinity(term().Gt("cores", "3").Lt("cores", "8").Obj()),
				small(e.pod("above-8")).RequiredNodeAffinity(term().Gt("cores", "8").Obj()),
				// a's value is no integer: Gt matches no node.
				small(e.pod("ram-above-1")).RequiredNodeAffinity(term().Gt("ram", "1").Obj()),
				small(e.pod("no-tier")).RequiredNodeAffinity(term().DoesNotExist("tier").Obj()),
				// NotIn matches a node without the label (c).
				small(e.pod("not-silver")).RequiredNodeAffinity(term().NotIn("tier", "silver").Obj()),
				// An empty term matches no node; terms are ORed.
				small(e.pod("empty-term")).RequiredNodeAffinity(term().Obj()),
				small(e.pod("empty-term-or-silver")).RequiredNodeAffinity(term().Obj()).RequiredNodeAffinity(term().In("tier", "silver").Obj()),
				small(e.pod("prefers-nobody")).PreferredNodeAffinity(100, term().In("gpu", "yes").Obj()),
				small(e.pod("empty-selector")).NodeSelector(map[string]string{}),
			}
		},
	}, {
		// a (2 cpu), b (4, one fpga), c (8); a RuntimeClass with 3 cpu of
		// overhead.
		name: "requests",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("2", "4Gi", 110))
			e.addNode(e.node("b").Capacity("4", "8Gi", 110).Allocatable(map[v1.ResourceName]string{"example.com/fpga": "1"}))
			e.addNode(e.node("c").Capacity("8", "16Gi", 110))
			e.runtimeClass("heavy", "3", "64Mi")
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			overhead := e.pod("overhead").Req("2", "64Mi")
			overhead.Spec.RuntimeClassName = ptr(e.ns + "-heavy")
			return []*frameworktest.PodWrapper{
				e.pod("too-big").Req("16", "64Gi"),
				// Extended resources cannot be overcommitted: limits as requests.
				extended(small(e.pod("widget")), "example.com/widget", "1"),
				small(e.pod("init-too-big")).InitReq("9", "64Mi"),
				extended(small(e.pod("fpga")), "example.com/fpga", "1"),
				e.pod("zero"),
				// 2 + 3 cpu: c only.
				overhead,
				// 3.5 cpu while it starts: b only (3.9 free; c has 3).
				small(e.pod("init-big")).InitReq("3500m", "64Mi"),
				// 1 + 1 cpu for as long as it runs: a (2 free, full after)
				// or c (3 free).
				e.pod("sidecar").Req("1", "64Mi").SidecarReq("1", "64Mi"),
				extended(small(e.pod("fpga-again")), "example.com/fpga", "1"),
			}
		},
	}, {
		// a cordoned, b tainted dedicated=gpu:NoSchedule, c NotReady, d
		// only PreferNoSchedule, e NoExecute; sizes 16, 8, 4, 2, 3 cpu,
		// and pods of 1 cpu, so that no two nodes score alike.
		// Every pod also tolerates not-ready and unreachable NoExecute for
		// 300 s (the DefaultTolerationSeconds admission plugin).
		name: "taints and cordons",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("16", "32Gi", 110).Unschedulable())
			e.addNode(e.node("b").Capacity("8", "16Gi", 110).Taint("dedicated", "gpu", v1.TaintEffectNoSchedule))
			notReady := e.node("c").Capacity("4", "8Gi", 110).Taint(v1.TaintNodeNotReady, "", v1.TaintEffectNoSchedule)
			notReady.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: "KubeletNotReady"}}
			e.addNode(notReady)
			e.addNode(e.node("d").Capacity("2", "4Gi", 110).Taint("spot", "true", v1.TaintEffectPreferNoSchedule))
			e.addNode(e.node("e").Capacity("3", "6Gi", 110).Taint("evict", "now", v1.TaintEffectNoExecute))
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			big := func(p *frameworktest.PodWrapper) *frameworktest.PodWrapper { return p.Req("1", "2Gi") }
			noExecute := big(e.pod("no-execute-for-60s")).Toleration("", v1.TolerationOpExists, "", v1.TaintEffectNoExecute)
			noExecute.Spec.Tolerations[0].TolerationSeconds = ptr[int64](60)
			return []*frameworktest.PodWrapper{
				// Each node is refused by its first failing filter.
				big(e.pod("nowhere")).NodeSelector(map[string]string{"none": "x"}),
				big(e.pod("plain")),
				big(e.pod("tolerates-all")).Toleration("", v1.TolerationOpExists, "", ""),
				big(e.pod("tolerates-cordon")).Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
				noExecute,
				big(e.pod("no-schedule-any-key")).Toleration("", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
				big(e.pod("tolerates-not-ready")).Toleration(v1.TaintNodeNotReady, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
				big(e.pod("wrong-value")).Toleration("dedicated", v1.TolerationOpEqual, "cpu", v1.TaintEffectNoSchedule),
				big(e.pod("any-effect")).Toleration("dedicated", v1.TolerationOpEqual, "gpu", ""),
			}
		},
	}, {
		name: "host ports",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("2", "4Gi", 110))
			e.addNode(e.node("b").Capacity("4", "8Gi", 110))
			e.addNode(e.node("c").Capacity("8", "16Gi", 110))
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			return []*frameworktest.PodWrapper{
				small(e.pod("tcp-any")).HostPort(8080, v1.ProtocolTCP, ""),
				// 127.0.0.1 overlaps 0.0.0.0 on c.
				small(e.pod("tcp-loopback")).HostPort(8080, v1.ProtocolTCP, "127.0.0.1"),
				small(e.pod("udp-any")).HostPort(8080, v1.ProtocolUDP, ""),
				// Another address does not overlap 127.0.0.1 on b.
				small(e.pod("tcp-other-ip")).HostPort(8080, v1.ProtocolTCP, "10.0.0.1"),
				small(e.pod("tcp-any-again")).HostPort(8080, v1.ProtocolTCP, "0.0.0.0"),
				small(e.pod("tcp-any-no-room")).HostPort(8080, v1.ProtocolTCP, ""),
				small(e.pod("sctp-any")).HostPort(8080, v1.ProtocolSCTP, ""),
			}
		},
	}, {
		// Zones z1 (a 8 cpu, b 12), z2 (c 64), z3 (d 6, tainted); e (128)
		// has no zone. Pods of 1 cpu (and memory in the nodes' ratio), so
		// that no two nodes score alike; c is the best zoned node all along.
		name: "topology spread",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("8", "16Gi", 110).Label(zone, "z1"))
			e.addNode(e.node("b").Capacity("12", "24Gi", 110).Label(zone, "z1"))
			e.addNode(e.node("c").Capacity("64", "128Gi", 110).Label(zone, "z2"))
			e.addNode(e.node("d").Capacity("6", "12Gi", 110).Label(zone, "z3").Taint("t", "x", v1.TaintEffectNoSchedule))
			e.addNode(e.node("e").Capacity("128", "256Gi", 110))
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			spread := func(name, app string, c *frameworktest.SpreadConstraintWrapper) *frameworktest.PodWrapper {
				return e.pod(name).Req("1", "2Gi").Label("app", app).SpreadConstraint(c.MatchLabels("app", app).Obj())
			}
			zonal := func(when v1.UnsatisfiableConstraintAction) *frameworktest.SpreadConstraintWrapper {
				return frameworktest.MakeSpreadConstraint(1, zone, when)
			}
			pods := []*frameworktest.PodWrapper{
				spread("missing-key", "mk", frameworktest.MakeSpreadConstraint(1, "example.com/no-such-key", v1.DoNotSchedule)),
				spread("missing-key-anyway", "mka", frameworktest.MakeSpreadConstraint(1, "example.com/no-such-key", v1.ScheduleAnyway)),
				spread("zone-anyway", "za", zonal(v1.ScheduleAnyway)),
			}
			// The third of each group: with d's empty zone counted
			// (nodeTaintsPolicy Ignore) it has nowhere to go; without it
			// (Honor) it goes; with minDomains above the two zones left,
			// the minimum is 0 and it has nowhere to go again.
			for _, n := range []string{"1", "2", "3"} {
				pods = append(pods,
					spread("ignore-"+n, "ignore", zonal(v1.DoNotSchedule)),
					spread("honor-"+n, "honor", zonal(v1.DoNotSchedule).NodeTaintsPolicy(v1.NodeInclusionPolicyHonor)),
					spread("min-domains-"+n, "min", zonal(v1.DoNotSchedule).NodeTaintsPolicy(v1.NodeInclusionPolicyHonor).MinDomains(3)))
			}
			// Pinned to z2: with nodeAffinityPolicy Ignore, z1 counts and
			// the second has nowhere to go; with Honor (the default) it
			// does.
			for _, n := range []string{"1", "2"} {
				pods = append(pods,
					spread("affinity-ignore-"+n, "ai", zonal(v1.DoNotSchedule).NodeAffinityPolicy(v1.NodeInclusionPolicyIgnore)).NodeSelector(map[string]string{zone: "z2"}),
					spread("affinity-honor-"+n, "ah", zonal(v1.DoNotSchedule)).NodeSelector(map[string]string{zone: "z2"}))
			}
			// matchLabelKeys: v2 counts only v2 pods, so it may join v1 on c.
			return append(pods,
				spread("keys-v1", "keys", zonal(v1.DoNotSchedule).MatchLabelKeys("version")).Label("version", "v1"),
				spread("keys-v2", "keys", zonal(v1.DoNotSchedule).MatchLabelKeys("version")).Label("version", "v2"),
			)
		},
	}, {
		// Zones z1 (a 6 cpu, b 16) and z2 (c 64). Another namespace,
		// labelled team=<this test's namespace>, has db on b and loner on
		// c, which keeps app=intruder pods of any namespace off its node.
		// Pods of 1 cpu (and memory in the nodes' ratio), so that no two
		// nodes score alike.
		name: "inter-pod affinity",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("6", "12Gi", 110).Label(zone, "z1"))
			e.addNode(e.node("b").Capacity("16", "32Gi", 110).Label(zone, "z1"))
			e.addNode(e.node("c").Capacity("64", "128Gi", 110).Label(zone, "z2"))
			other := e.otherNamespace()
			e.boundPod(other, "b", frameworktest.MakePod().Name("db").Req("1", "2Gi").Label("app", "db"))
			e.boundPod(other, "c", frameworktest.MakePod().Name("loner").Req("1", "2Gi").
				RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("app", "intruder").NamespaceSelector(&metav1.LabelSelector{}).Obj()))
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			big := func(p *frameworktest.PodWrapper) *frameworktest.PodWrapper { return p.Req("1", "2Gi") }
			team := &metav1.LabelSelector{MatchLabels: map[string]string{"team": e.ns}}
			everywhere := &metav1.LabelSelector{}
			db := func(key string, ns *metav1.LabelSelector) v1.PodAffinityTerm {
				t := frameworktest.MakePodAffinityTerm(key).MatchLabel("app", "db")
				if ns != nil {
					t = t.NamespaceSelector(ns)
				}
				return t.Obj()
			}
			self := func(name, app, key string) *frameworktest.PodWrapper {
				return big(e.pod(name)).Label("app", app).RequiredPodAffinity(frameworktest.MakePodAffinityTerm(key).MatchLabel("app", app).Obj())
			}
			return []*frameworktest.PodWrapper{
				big(e.pod("with-db-of-team")).RequiredPodAffinity(db(zone, team)),
				// Without a namespace selector only its own namespace counts.
				big(e.pod("with-db-own-namespace")).RequiredPodAffinity(db(zone, nil)),
				big(e.pod("with-db-no-such-key")).RequiredPodAffinity(db("example.com/no-such-key", everywhere)),
				// The first of a group with affinity to itself goes
				// anywhere with the key; the second follows it.
				self("self-1", "self", zone).NodeSelector(map[string]string{zone: "z1"}),
				self("self-2", "self", zone),
				self("self-no-such-key", "self-nk", "example.com/no-such-key"),
				big(e.pod("away-from-db-of-team")).RequiredPodAntiAffinity(db(zone, team)),
				big(e.pod("away-from-db-no-such-key")).RequiredPodAntiAffinity(db("example.com/no-such-key", everywhere)),
				big(e.pod("intruder")).Label("app", "intruder"),
				big(e.pod("intruder-on-c")).Label("app", "intruder").NodeSelector(map[string]string{v1.LabelHostname: e.ns + "-c"}),
			}
		},
	}, {
		// a (4 cpu) holds one pod; b (8) alone has ephemeral storage; c
		// (16). Pods of 1 cpu (and memory in the nodes' ratio) unless said.
		name: "node limits and pod-level resources",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("4", "8Gi", 1))
			e.addNode(e.node("b").Capacity("8", "16Gi", 110).Allocatable(map[v1.ResourceName]string{v1.ResourceEphemeralStorage: "10Gi"}))
			e.addNode(e.node("c").Capacity("16", "32Gi", 110))
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			big := func(p *frameworktest.PodWrapper) *frameworktest.PodWrapper { return p.Req("1", "2Gi") }
			onA := map[string]string{v1.LabelHostname: e.ns + "-a"}
			return []*frameworktest.PodWrapper{
				big(e.pod("scratch")).Res(map[v1.ResourceName]string{v1.ResourceEphemeralStorage: "1Gi"}),
				big(e.pod("scratch-too-much")).Res(map[v1.ResourceName]string{v1.ResourceEphemeralStorage: "20Gi"}),
				extended(big(e.pod("hugepages")), "hugepages-2Mi", "2Mi"),
				big(e.pod("first-on-a")).NodeSelector(onA),
				big(e.pod("second-on-a")).NodeSelector(onA),
				// a is full and too small at once: both reasons count.
				big(e.pod("pod-level-too-big")).PodReq(map[v1.ResourceName]string{v1.ResourceCPU: "20", v1.ResourceMemory: "4Gi"}),
				big(e.pod("pod-level")).PodReq(map[v1.ResourceName]string{v1.ResourceCPU: "12", v1.ResourceMemory: "24Gi"}),
				// c has 4 cpu left once pod-level counts for 12: b.
				e.pod("after-pod-level").Req("6", "12Gi"),
			}
		},
	}, {
		// A claim that does not exist, one being deleted, one that waits
		// for the PV binder (no class, no volume).
		name: "claims",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("2", "4Gi", 110))
			e.addNode(e.node("b").Capacity("4", "8Gi", 110))
			e.claim("unbound", "", "")
			e.deletingClaim("going")
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			return []*frameworktest.PodWrapper{
				small(e.pod("missing")).PVC("nope"),
				small(e.pod("deleting")).PVC("going"),
				small(e.pod("unbound")).PVC("unbound"),
				// The unbound claim is listed first; the missing one decides.
				small(e.pod("unbound-then-missing")).PVC("unbound").PVC("nope"),
				small(e.pod("deleting-then-missing")).PVC("going").PVC("nope"),
				small(e.pod("plain")),
			}
		},
	}, {
		// One node of 1 cpu, and a pod bound by name to a node that does
		// not exist, which neither scheduler may count.
		name: "nodeName and preemptionPolicy Never",
		nodes: func(e *env) {
			e.addNode(e.node("a").Capacity("1", "2Gi", 110))
			e.priorityClass("low", 10)
			e.neverPreemptingClass("never", 1000)
		},
		pods: func(e *env) []*frameworktest.PodWrapper {
			return []*frameworktest.PodWrapper{
				small(e.pod("on-ghost")).Node(e.ns + "-ghost"),
				e.pod("filler").Req("1", "64Mi").PriorityClassName(e.ns + "-low"),
				e.pod("never-preempts").Req("500m", "64Mi").PriorityClassName(e.ns + "-never"),
				e.pod("zero-cpu").Req("", "64Mi"),
			}
		},
	}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			sideBySide(t, sc.play)
		})
	}
}

// runtimeClass creates RuntimeClass ns-name with the given pod overhead,
// deleted when the test ends.
func (e *env) runtimeClass(name, cpu, mem string) {
	e.t.Helper()
	rc := &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name},
		Handler:    "runc",
		Overhead:   &nodev1.Overhead{PodFixed: frameworktest.MakePod().Req(cpu, mem).Obj().Spec.Containers[0].Resources.Requests},
	}
	if _, err := e.client.NodeV1().RuntimeClasses().Create(e.ctx, rc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create RuntimeClass: %v", err)
	}
	e.t.Cleanup(func() {
		_ = e.client.NodeV1().RuntimeClasses().Delete(context.Background(), rc.Name, metav1.DeleteOptions{})
	})
}

// neverPreemptingClass creates PriorityClass ns-name with preemptionPolicy
// Never, deleted when the test ends.
func (e *env) neverPreemptingClass(name string, value int32) {
	e.t.Helper()
	never := v1.PreemptNever
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-" + name}, Value: value, PreemptionPolicy: &never}
	if _, err := e.client.SchedulingV1().PriorityClasses().Create(e.ctx, pc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create priority class: %v", err)
	}
	e.t.Cleanup(func() {
		_ = e.client.SchedulingV1().PriorityClasses().Delete(context.Background(), pc.Name, metav1.DeleteOptions{})
	})
}

// deletingClaim creates a claim that a finalizer of the test holds in
// deletion; the finalizer goes when the test ends.
func (e *env) deletingClaim(name string) {
	e.t.Helper()
	const hold = "e2e.yardmaster.io/hold"
	pvc := e.claim(name, "", "")
	claims := e.client.CoreV1().PersistentVolumeClaims(e.ns)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := claims.Get(e.ctx, pvc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c.Finalizers = append(c.Finalizers, hold)
		_, err = claims.Update(e.ctx, c, metav1.UpdateOptions{})
		return err
	}); err != nil {
		e.t.Fatalf("add a finalizer to claim %s: %v", name, err)
	}
	if err := claims.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete claim %s: %v", name, err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			c, err := claims.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			c.Finalizers = slices.DeleteFunc(c.Finalizers, func(f string) bool { return f == hold })
			_, err = claims.Update(ctx, c, metav1.UpdateOptions{})
			return err
		})
		if err := ignoreNotFound(err); err != nil {
			e.t.Logf("cleanup claim %s: %v", name, err)
		}
	})
}

// otherNamespace creates a namespace labelled team=<this test's
// namespace> and returns its name; its pods and it go when the test ends.
func (e *env) otherNamespace() string {
	e.t.Helper()
	ns, err := controlplane.CreateNamespace(e.ctx, e.client, "e2e-other")
	if err != nil {
		e.t.Fatalf("create namespace: %v", err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.client.CoreV1().Namespaces().Get(e.ctx, ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels["team"] = e.ns
		_, err = e.client.CoreV1().Namespaces().Update(e.ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		e.t.Fatalf("label namespace %s: %v", ns, err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		zero := int64(0)
		if err := e.client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
			e.t.Logf("cleanup pods of %s: %v", ns, err)
		}
		if err := e.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			e.t.Logf("cleanup namespace %s: %v", ns, err)
		}
	})
	return ns
}

// boundPod creates p in namespace ns, already bound to node ns-node of this
// test (spec.nodeName), as a pod another scheduler placed.
func (e *env) boundPod(ns, node string, p *frameworktest.PodWrapper) {
	e.t.Helper()
	obj := p.Namespace(ns).Node(e.ns + "-" + node).Obj().DeepCopy()
	if _, err := e.client.CoreV1().Pods(ns).Create(e.ctx, obj, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create pod %s/%s: %v", ns, obj.Name, err)
	}
}
