package e2e

import (
	"fmt"
	"time"

	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// Required anti-affinity by hostname spreads a group one pod per node; the
// pods that find no node stay Pending with kube-scheduler's reason, and one
// of them takes the node a deleted member frees.
func TestAntiAffinityOnePodPerNode(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		e.addNode(e.node(n).Capacity("4", "8Gi", 110))
	}
	e.startScheduler()

	apart := frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()
	for i := range 5 {
		e.createPod(e.pod(fmt.Sprintf("web-%d", i)).Label("app", "web").Req("100m", "64Mi").RequiredPodAntiAffinity(apart))
	}

	placed := e.waitAllBound(30*time.Second, 3)
	perNode := map[string][]string{}
	for pod, node := range placed {
		perNode[node] = append(perNode[node], pod)
	}
	if len(perNode) != 3 {
		t.Errorf("3 pods on %d nodes, want one per node: %v", len(perNode), perNode)
	}
	var pending []string
	for i := range 5 {
		if name := fmt.Sprintf("web-%d", i); placed[name] == "" {
			pending = append(pending, name)
		}
	}
	for _, p := range pending {
		e.waitFailedScheduling(p, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.")
	}
	for _, p := range pending {
		e.expectPending(p, time.Second)
	}
	if got := len(e.placements()); got != 3 {
		t.Fatalf("%d pods bound, want 3", got)
	}

	// Deleting a member frees its node for exactly one of the others.
	var victim, freed string
	for pod, node := range placed {
		victim, freed = pod, node
		break
	}
	zero := int64(0)
	if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	got := e.waitAllBound(30*time.Second, 3)
	for _, p := range pending {
		if n := got[p]; n != "" && n != freed {
			t.Errorf("%s bound to %s, want the freed node %s", p, n, freed)
		}
	}
	perNode = map[string][]string{}
	for pod, node := range e.placements() {
		perNode[node] = append(perNode[node], pod)
	}
	for node, pods := range perNode {
		if len(pods) > 1 {
			t.Errorf("node %s holds %v, want one web pod per node", node, pods)
		}
	}
}

// Required affinity by zone places pods in the zone of the pod they follow,
// on either of its nodes; a pod whose affinity nothing matches stays
// Pending with kube-scheduler's reason.
func TestAffinityColocatesInZone(t *testing.T) {
	e := newEnv(t)
	for n, zone := range map[string]string{"a": "z1", "b": "z1", "c": "z2", "d": "z2"} {
		e.addNode(e.node(n).Capacity("4", "8Gi", 110).Label(v1.LabelTopologyZone, e.ns+"-"+zone))
	}
	e.startScheduler()

	// The target goes to c, in z2, by name.
	e.createPod(e.pod("db").Label("app", "db").Req("100m", "64Mi").NodeSelector(map[string]string{v1.LabelHostname: e.ns + "-c"}))
	e.waitBound(30*time.Second, "db")

	near := frameworktest.MakePodAffinityTerm(v1.LabelTopologyZone).MatchLabel("app", "db").Obj()
	var names []string
	for i := range 4 {
		name := fmt.Sprintf("web-%d", i)
		names = append(names, name)
		e.createPod(e.pod(name).Label("app", "web").Req("100m", "64Mi").RequiredPodAffinity(near))
	}
	e.createPod(e.pod("lonely").Label("app", "web").Req("100m", "64Mi").
		RequiredPodAffinity(frameworktest.MakePodAffinityTerm(v1.LabelTopologyZone).MatchLabel("app", "nobody").Obj()))

	got := e.waitBound(30*time.Second, names...)
	for pod, node := range got {
		if node != e.ns+"-c" && node != e.ns+"-d" {
			t.Errorf("%s on %s, want a node of zone z2 (c or d)", pod, node)
		}
	}
	e.waitFailedScheduling("lonely", "0/4 nodes are available: 4 node(s) didn't match pod affinity rules.")
	e.expectPending("lonely", time.Second)
}

// The first pod of a group with affinity to itself goes anywhere (nothing
// matches yet and it matches its own term); the rest follow it into its zone.
func TestAffinitySelfAffineGroupSharesAZone(t *testing.T) {
	e := newEnv(t)
	zoneOf := map[string]string{}
	for n, zone := range map[string]string{"a": "z1", "b": "z1", "c": "z2", "d": "z2"} {
		e.addNode(e.node(n).Capacity("4", "8Gi", 110).Label(v1.LabelTopologyZone, e.ns+"-"+zone))
		zoneOf[e.ns+"-"+n] = zone
	}
	e.startScheduler()

	together := frameworktest.MakePodAffinityTerm(v1.LabelTopologyZone).MatchLabel("app", "cache").Obj()
	for i := range 4 {
		e.createPod(e.pod(fmt.Sprintf("cache-%d", i)).Label("app", "cache").Req("100m", "64Mi").RequiredPodAffinity(together))
	}
	got := e.waitAllBound(30*time.Second, 4)
	zones := map[string][]string{}
	for pod, node := range got {
		zones[zoneOf[node]] = append(zones[zoneOf[node]], pod)
	}
	if len(zones) != 1 {
		t.Errorf("self-affine group spread over zones %v, want one zone", zones)
	}
}
