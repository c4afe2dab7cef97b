package e2e

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Gangs that must stay within one domain of a node label
// (spec.schedulingConstraints.topology), side by side with kube-scheduler
// v1.37.2 running TopologyAwareWorkloadScheduling.

const rackLabel = "e2e.yardmaster.io/rack"

// createRackGang creates a gang of minCount members that must share one
// value of rackLabel, and its members of cpu each; it returns their names.
func (e *env) createRackGang(name string, members int, cpu string) []string {
	e.t.Helper()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy:      schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(members)}},
			SchedulingConstraints: &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: rackLabel}}},
		},
	}
	got, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Create(e.ctx, pg, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create PodGroup %s: %v", name, err)
	}
	if got.Spec.SchedulingConstraints == nil {
		e.t.Fatalf("the API server dropped the PodGroup's topology constraint: is TopologyAwareWorkloadScheduling on?")
	}
	return e.createMembers(name, members, cpu)
}

// racksOf returns the racks the named pods are bound in.
func (e *env) racksOf(names []string) map[string]int {
	e.t.Helper()
	placed := e.placements()
	racks := map[string]int{}
	for _, n := range names {
		node, ok := placed[n]
		if !ok {
			continue
		}
		obj, err := e.client.CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		racks[obj.Labels[rackLabel]]++
	}
	return racks
}

// startTopologyScheduler starts kube-scheduler with the gang and
// topology gates, or yardmaster.
func (e *env) startTopologyScheduler(kube bool) {
	e.t.Helper()
	if kube {
		e.startKubeSchedulerFlags(kubeSchedulerTopologyGangFlags, "")
		return
	}
	e.startScheduler()
}

func TestGangTopology(t *testing.T) {
	// rack-a: 2 nodes of 2 cpu; rack-b: 3 nodes of 2 cpu.
	rig := func(e *env) {
		for i := range 2 {
			e.addNode(e.node(fmt.Sprintf("a%d", i)).Capacity("2", "4Gi", 110).Label(rackLabel, "rack-a"))
		}
		for i := range 3 {
			e.addNode(e.node(fmt.Sprintf("b%d", i)).Capacity("2", "4Gi", 110).Label(rackLabel, "rack-b"))
		}
	}
	t.Run("the rack it fits in, then the fullest", func(t *testing.T) {
		sideBySide(t, func(t *testing.T, kube bool) map[string]map[string]int {
			e := newEnv(t)
			rig(e)
			e.startTopologyScheduler(kube)
			// 5 of 1 cpu fit only in rack-b (6 cpu).
			five := e.createRackGang("five", 5, "1")
			e.waitBound(60*time.Second, five...)
			// 3 of 1 cpu now fit only in rack-a (rack-b has 1 cpu left).
			three := e.createRackGang("three", 3, "1")
			e.waitBound(60*time.Second, three...)
			e.assertNoOvercommit()
			return map[string]map[string]int{"five": e.racksOf(five), "three": e.racksOf(three)}
		})
	})
	t.Run("a gang no rack can hold waits whole", func(t *testing.T) {
		sideBySide(t, func(t *testing.T, kube bool) groupCondition {
			e := newEnv(t)
			rig(e)
			e.startTopologyScheduler(kube)
			// 7 cpu fit in the cluster (10), in no rack.
			seven := e.createRackGang("seven", 7, "1")
			c := e.waitGroupCondition("seven", metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonUnschedulable)
			e.expectNoneBound(seven, time.Second)
			// kube-scheduler's "first" placement is whichever its map
			// gives first: the domain's own reason is not compared.
			msg := regexp.MustCompile(`first placement status: minCount \(7\) cannot be satisfied: \d+ scheduled, \d+ remaining`).
				ReplaceAllString(c.Message, "first placement status: minCount (7) cannot be satisfied: …")
			return groupCondition{Status: c.Status, Reason: c.Reason, Message: msg}
		})
	})
	// The best rack evaluated last: the group is placed there for real
	// after being tried there (and undone), on a snapshot that must not
	// count the tried members still.
	t.Run("the fullest rack, tried last", func(t *testing.T) {
		sideBySide(t, func(t *testing.T, kube bool) map[string]int {
			e := newEnv(t)
			for i := range 3 {
				e.addNode(e.node(fmt.Sprintf("a%d", i)).Capacity("2", "4Gi", 110).Label(rackLabel, "rack-a"))
			}
			for i := range 2 {
				e.addNode(e.node(fmt.Sprintf("z%d", i)).Capacity("2", "4Gi", 110).Label(rackLabel, "rack-z"))
			}
			e.startTopologyScheduler(kube)
			// 4 of 1 cpu fit in both; rack-z is full after (4/4 against 4/6).
			four := e.createRackGang("four", 4, "1")
			e.waitBound(60*time.Second, four...)
			e.assertNoOvercommit()
			return e.racksOf(four)
		})
	})
	t.Run("the fullest rack after placement", func(t *testing.T) {
		sideBySide(t, func(t *testing.T, kube bool) map[string]int {
			e := newEnv(t)
			rig(e)
			e.startTopologyScheduler(kube)
			// 2 of 1 cpu fit in both; rack-a is fuller after (2/4 against 2/6).
			two := e.createRackGang("two", 2, "1")
			e.waitBound(60*time.Second, two...)
			return e.racksOf(two)
		})
	})
}
