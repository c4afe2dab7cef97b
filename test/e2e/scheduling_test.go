package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// Our pods are bound; a pod naming another scheduler is left alone.
func TestBindsOwnPodsAndLeavesOthersAlone(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.addNode(e.node("b").Capacity("4", "8Gi", 110))
	e.startScheduler()

	for i := range 4 {
		e.createPod(e.pod(fmt.Sprintf("mine-%d", i)).Req("100m", "128Mi"))
	}
	e.createPod(e.pod("theirs").SchedulerName("some-other-scheduler").Req("100m", "128Mi"))

	got := e.waitBound(30*time.Second, "mine-0", "mine-1", "mine-2", "mine-3")
	for pod, node := range got {
		if !strings.HasPrefix(node, e.ns+"-") {
			t.Errorf("pod %s bound to %s, not one of this test's nodes", pod, node)
		}
	}
	e.expectPending("theirs", 2*time.Second)

	// The Scheduled event users know.
	evs, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=mine-0,reason=Scheduled"})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Successfully assigned %s/mine-0 to %s", e.ns, got["mine-0"])
	if len(evs.Items) == 0 || evs.Items[0].Message != want {
		t.Errorf("Scheduled event = %v, want message %q", evs.Items, want)
	}
}

// A cluster filled exactly to capacity is never overcommitted, and the next
// pod stays Pending with a FailedScheduling event naming the reason.
func TestFillsToCapacityWithoutOvercommit(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		e.addNode(e.node(n).Capacity("2", "4Gi", 110))
	}
	e.startScheduler()

	// 3 nodes × 2 cpu = 6 pods of 1 cpu exactly.
	for i := range 6 {
		e.createPod(e.pod(fmt.Sprintf("p-%d", i)).Req("1", "256Mi"))
	}
	placed := e.waitAllBound(30*time.Second, 6)
	perNode := map[string]int{}
	for _, n := range placed {
		perNode[n]++
	}
	for n, c := range perNode {
		if c != 2 {
			t.Errorf("node %s holds %d pods, want 2 (%v)", n, c, perNode)
		}
	}

	e.createPod(e.pod("one-too-many").Req("1", "256Mi"))
	msg := e.waitFailedScheduling("one-too-many", "0/3 nodes are available", "3 Insufficient cpu")
	if !strings.HasSuffix(msg, ".") {
		t.Errorf("message %q does not end with a period", msg)
	}
	cond := e.waitUnschedulableCondition("one-too-many")
	if !strings.Contains(cond, "Insufficient cpu") {
		t.Errorf("PodScheduled condition message %q does not name the reason", cond)
	}
	e.expectPending("one-too-many", 2*time.Second)
	e.assertNoOvercommit()
}

// Taints repel pods that do not tolerate them; tolerations let pods in.
func TestTaintsAndTolerations(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("gpu").Capacity("4", "8Gi", 110).Label("kind", "gpu").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule))
	e.addNode(e.node("plain").Capacity("4", "8Gi", 110).Label("kind", "plain"))
	e.startScheduler()

	for i := range 3 {
		e.createPod(e.pod(fmt.Sprintf("plain-%d", i)).Req("100m", ""))
	}
	e.createPod(e.pod("tolerant").Req("100m", "").NodeSelector(map[string]string{"kind": "gpu"}).
		Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule))
	e.createPod(e.pod("intolerant").Req("100m", "").NodeSelector(map[string]string{"kind": "gpu"}))

	got := e.waitBound(30*time.Second, "plain-0", "plain-1", "plain-2", "tolerant")
	for i := range 3 {
		if n := got[fmt.Sprintf("plain-%d", i)]; n != e.ns+"-plain" {
			t.Errorf("plain-%d on %s, want the untainted node", i, n)
		}
	}
	if got["tolerant"] != e.ns+"-gpu" {
		t.Errorf("tolerant on %s, want the gpu node", got["tolerant"])
	}
	e.waitFailedScheduling("intolerant", "0/2 nodes are available",
		"1 node(s) had untolerated taint(s)", "1 node(s) didn't match Pod's node affinity/selector")
}

// nodeSelector and required node affinity (In, Gt, matchFields) hold;
// preferred affinity steers among feasible nodes.
func TestNodeSelectorAndAffinity(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("ssd-big").Capacity("8", "16Gi", 110).Label("disk", "ssd").Label("cores", "8"))
	e.addNode(e.node("ssd-small").Capacity("8", "16Gi", 110).Label("disk", "ssd").Label("cores", "2"))
	e.addNode(e.node("hdd").Capacity("8", "16Gi", 110).Label("disk", "hdd").Label("cores", "16"))
	e.startScheduler()

	e.createPod(e.pod("selector").NodeSelector(map[string]string{"disk": "hdd"}))
	e.createPod(e.pod("affinity").RequiredNodeAffinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}},
		{Key: "cores", Operator: v1.NodeSelectorOpGt, Values: []string{"4"}},
	}}))
	e.createPod(e.pod("by-name").RequiredNodeAffinity(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{e.ns + "-ssd-small"}},
	}}))
	e.createPod(e.pod("preferred").PreferredNodeAffinity(100, v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: "cores", Operator: v1.NodeSelectorOpLt, Values: []string{"4"}},
	}}))
	e.createPod(e.pod("nowhere").NodeSelector(map[string]string{"disk": "tape"}))

	got := e.waitBound(30*time.Second, "selector", "affinity", "by-name", "preferred")
	want := map[string]string{
		"selector":  e.ns + "-hdd",
		"affinity":  e.ns + "-ssd-big",
		"by-name":   e.ns + "-ssd-small",
		"preferred": e.ns + "-ssd-small",
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%s on %s, want %s", p, got[p], n)
		}
	}
	e.waitFailedScheduling("nowhere", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
}

// Host ports: two pods asking for the same port never share a node.
func TestHostPorts(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("4", "8Gi", 110))
	e.addNode(e.node("b").Capacity("4", "8Gi", 110))
	e.startScheduler()

	for i := range 3 {
		e.createPod(e.pod(fmt.Sprintf("web-%d", i)).HostPort(8080, v1.ProtocolTCP, ""))
	}
	// A different protocol on the same port does not conflict.
	e.createPod(e.pod("dns").HostPort(8080, v1.ProtocolUDP, ""))

	placed := e.waitAllBound(30*time.Second, 3)
	used := map[string]string{}
	pending := ""
	for i := range 3 {
		name := fmt.Sprintf("web-%d", i)
		n, ok := placed[name]
		if !ok {
			pending = name
			continue
		}
		if other, dup := used[n]; dup {
			t.Errorf("%s and %s both bind host port 8080/TCP on %s", name, other, n)
		}
		used[n] = name
	}
	if _, ok := placed["dns"]; !ok {
		t.Errorf("dns (8080/UDP) not bound: %v", placed)
	}
	if pending == "" {
		t.Fatalf("all three web pods bound on two nodes: %v", placed)
	}
	e.waitFailedScheduling(pending, "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.")
}

// A pod that fits nowhere is bound as soon as a node it fits on appears,
// with no restart.
func TestPodFitsOnceNodeIsAdded(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("small").Capacity("1", "2Gi", 110))
	e.startScheduler()

	e.createPod(e.pod("big").Req("3", "1Gi"))
	e.waitFailedScheduling("big", "1 Insufficient cpu")

	e.addNode(e.node("large").Capacity("4", "8Gi", 110))
	got := e.waitBound(30*time.Second, "big")
	if got["big"] != e.ns+"-large" {
		t.Errorf("big on %s, want the new node", got["big"])
	}
}

// When capacity is short, the higher-priority pod goes first.
func TestHigherPriorityFirst(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("only").Capacity("1", "2Gi", 110))
	// Admission sets spec.priority from the PriorityClass.
	for name, value := range map[string]int32{"low": 1, "mid": 500, "high": 1000} {
		e.priorityClass(name, value)
	}
	// Every pod exists before the scheduler starts, lowest priority first.
	e.createPod(e.pod("low").PriorityClassName(e.ns+"-low").Req("1", ""))
	e.createPod(e.pod("mid").PriorityClassName(e.ns+"-mid").Req("1", ""))
	e.createPod(e.pod("high").PriorityClassName(e.ns+"-high").Req("1", ""))
	e.startScheduler()

	got := e.waitBound(30*time.Second, "high")
	if got["high"] != e.ns+"-only" {
		t.Fatalf("high on %q", got["high"])
	}
	e.waitFailedScheduling("low", "Insufficient cpu")
	e.waitFailedScheduling("mid", "Insufficient cpu")
	e.expectPending("low", time.Second)
	e.expectPending("mid", time.Second)
}

// Pods with scheduling gates wait until the gates are removed.
func TestSchedulingGates(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("a").Capacity("2", "4Gi", 110))
	e.startScheduler()

	e.createPod(e.pod("gated").SchedulingGate("example.com/wait"))
	e.expectPending("gated", 2*time.Second)

	p, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "gated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.SchedulingGates = nil
	if _, err := e.client.CoreV1().Pods(e.ns).Update(e.ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitBound(30*time.Second, "gated")
}

// A pod deleted between assume and bind leaves no ghost usage: the capacity
// it was assumed to take is free again for the next pod.
func TestDeleteBetweenAssumeAndBind(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("only").Capacity("1", "2Gi", 110))

	// Hold the first binding until the test has deleted that pod.
	var once sync.Once
	release := make(chan struct{})
	held := make(chan string, 1)
	e.beforeRun = func(d *app.Daemon) {
		d.Binder.BeforeBind = func(pod *v1.Pod, _ string) {
			if pod.Name != "doomed" {
				return
			}
			once.Do(func() {
				held <- pod.Name
				<-release
			})
		}
	}
	d := e.startScheduler()

	e.createPod(e.pod("doomed").Req("1", ""))
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the doomed pod was never assumed")
	}
	zero := int64(0)
	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, "doomed", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	close(release)

	// The node has room for exactly one such pod: if the deleted pod's
	// assumption lingered, this one would never fit.
	e.createPod(e.pod("next").Req("1", ""))
	got := e.waitBound(30*time.Second, "next")
	if got["next"] != e.ns+"-only" {
		t.Errorf("next on %q", got["next"])
	}
	if err := ignoreNotFound(func() error {
		_, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "doomed", metav1.GetOptions{})
		return err
	}()); err != nil {
		t.Fatal(err)
	}
	// "next" stays assumed until the scheduler's own informer delivers its
	// bound copy, which may come after the test's read above; the deleted
	// pod's assumption must be gone by then too.
	var pods, assumed int
	err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, pods, assumed = d.Scheduler.Cache.Counts()
		return assumed == 0, nil
	})
	if err != nil {
		t.Errorf("%d pods still assumed (of %d cached)", assumed, pods)
	}
	e.assertNoOvercommit()
}
