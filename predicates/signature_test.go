package predicates

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// The filters that sign must sign everything they read of a pod, and only
// that: see framework.PodSigner.
func TestFiltersSignWhatTheyRead(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	tolerating := func(key string, effect v1.TaintEffect) *v1.Pod {
		return base().Toleration(key, v1.TolerationOpExists, "", effect).Obj()
	}
	cases := map[framework.PodSigner][]frameworktest.SignCase{
		NewNodeUnschedulable(): {
			{Name: "replica", A: base().Obj(), B: replica, Same: true},
			{Name: "toleration", A: base().Obj(), B: tolerating(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule)},
		},
		NewNodeName(): {
			{Name: "replica", A: base().Obj(), B: replica, Same: true},
			{Name: "nodeName", A: base().Obj(), B: base().Node("n1").Obj()},
			// PreFilter skips a pod without a nodeName: these are the
			// ones the scheduler keeps answers for.
			{Name: "replica with a nodeName", A: base().Node("n1").Obj(), B: base().Name("b").Node("n1").Obj(), Same: true},
			{Name: "another nodeName", A: base().Node("n1").Obj(), B: base().Node("n2").Obj()},
		},
		NewTaintToleration(): {
			{Name: "replica", A: base().Obj(), B: replica, Same: true},
			{Name: "toleration", A: base().Obj(), B: tolerating("dedicated", v1.TaintEffectNoSchedule)},
			{Name: "effect", A: tolerating("dedicated", v1.TaintEffectNoSchedule), B: tolerating("dedicated", v1.TaintEffectNoExecute)},
		},
		NewNodeAffinity(nil): {
			{Name: "replica", A: base().NodeSelector(map[string]string{"disk": "ssd"}).Obj(), B: base().Name("b").NodeSelector(map[string]string{"disk": "ssd"}).Obj(), Same: true},
			{Name: "nodeSelector", A: base().NodeSelector(map[string]string{"disk": "ssd"}).Obj(), B: base().NodeSelector(map[string]string{"disk": "hdd"}).Obj()},
			{
				Name: "required affinity",
				A:    base().NodeSelector(map[string]string{"disk": "ssd"}).Obj(),
				B: base().NodeSelector(map[string]string{"disk": "ssd"}).
					RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().In("zone", "a").Obj()).Obj(),
			},
			{
				Name: "preferred affinity is the scorer's",
				A:    base().NodeSelector(map[string]string{"disk": "ssd"}).Obj(),
				B: base().NodeSelector(map[string]string{"disk": "ssd"}).
					PreferredNodeAffinity(5, frameworktest.MakeNodeSelectorTerm().In("zone", "a").Obj()).Obj(),
				Same: true,
			},
		},
		NewNodePorts(): {
			{Name: "replica", A: base().Obj(), B: replica, Same: true},
			{Name: "port", A: base().Obj(), B: frameworktest.MakePod().Req("500m", "1Gi").HostPort(81, v1.ProtocolTCP, "").Obj()},
			{Name: "protocol", A: base().Obj(), B: frameworktest.MakePod().Req("500m", "1Gi").HostPort(80, v1.ProtocolUDP, "").Obj()},
			{Name: "host IP", A: base().Obj(), B: frameworktest.MakePod().Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "10.0.0.1").Obj()},
		},
		NewNodeDeclaredFeatures(): {
			{Name: "replica", A: base().Obj(), B: replica, Same: true},
			{Name: "restart-all rule", A: base().Obj(), B: restartAllRule(base().Obj())},
			{Name: "user namespace on the host network", A: base().Obj(), B: hostNetwork(base().Obj(), false)},
			{Name: "the two features", A: restartAllRule(base().Obj()), B: hostNetwork(base().Obj(), false)},
			// What the inference ignores changes nothing it reads.
			{Name: "host network with host users", A: base().Obj(), B: hostNetwork(base().Obj(), true), Same: true},
		},
		NewFit(nil): {
			{Name: "replica", A: base().Obj(), B: replica, Same: true},
			{Name: "cpu", A: base().Obj(), B: base().Req("600m", "1Gi").Obj()},
			{Name: "memory", A: base().Obj(), B: base().Req("500m", "2Gi").Obj()},
			{Name: "ephemeral storage", A: base().Obj(), B: base().Res(map[v1.ResourceName]string{v1.ResourceEphemeralStorage: "1Gi"}).Obj()},
			{Name: "extended resource", A: base().Obj(), B: base().Res(map[v1.ResourceName]string{"example.com/gpu": "1"}).Obj()},
			{
				Name: "extended resource quantity",
				A:    base().Res(map[v1.ResourceName]string{"example.com/gpu": "1"}).Obj(),
				B:    base().Res(map[v1.ResourceName]string{"example.com/gpu": "2"}).Obj(),
			},
			{Name: "init container", A: base().Obj(), B: base().InitReq("2", "1Gi").Obj()},
			{Name: "overhead", A: base().Obj(), B: base().Overhead("100m", "").Obj()},
		},
	}
	nodes := keptAnswersSnapshot()
	for pl, cs := range cases {
		frameworktest.CheckSigning(t, pl, cs)
		// What the signatures are for: pods signed alike get the same
		// answers, on nodes that answer the pods of the cases apart.
		var pods []*v1.Pod
		for _, c := range cs {
			pods = append(pods, c.A, c.B)
		}
		frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
	}
}

// keptAnswersSnapshot is nodes that tell apart the pods of
// TestFiltersSignWhatTheyRead: unschedulable, tainted, labelled, small,
// with host ports taken, declaring features.
func keptAnswersSnapshot() framework.NodeInfoLister {
	return frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Label("disk", "ssd").Label("zone", "a").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("n2").Label("disk", "hdd").Label("zone", "b").Capacity("550m", "4Gi", 110).Obj(),
		frameworktest.MakeNode().Name("unschedulable").Capacity("4", "8Gi", 110).Unschedulable().
			Taint(v1.TaintNodeUnschedulable, "", v1.TaintEffectNoSchedule).Obj(),
		frameworktest.MakeNode().Name("dedicated").Capacity("4", "8Gi", 110).Taint("dedicated", "", v1.TaintEffectNoSchedule).Obj(),
		frameworktest.MakeNode().Name("gpu").Capacity("4", "8Gi", 110).
			Allocatable(map[v1.ResourceName]string{"example.com/gpu": "1", v1.ResourceEphemeralStorage: "10Gi"}).Obj(),
		func() *v1.Node {
			n := frameworktest.MakeNode().Name("featured").Capacity("4", "8Gi", 110).Obj()
			n.Status.DeclaredFeatures = []string{"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}
			return n
		}(),
	}, []*v1.Pod{
		frameworktest.MakePod().Name("port-80").Node("n1").HostPort(80, v1.ProtocolTCP, "").Obj(),
		frameworktest.MakePod().Name("port-81").Node("n2").HostPort(81, v1.ProtocolTCP, "10.0.0.1").Obj(),
	})
}

// restartAllRule gives the pod's first container a rule that restarts every
// container (feature RestartAllContainersOnContainerExits).
func restartAllRule(p *v1.Pod) *v1.Pod {
	p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers}}
	return p
}

// hostNetwork puts the pod on the host network, in a user namespace unless
// hostUsers (feature UserNamespacesHostNetworkSupport).
func hostNetwork(p *v1.Pod, hostUsers bool) *v1.Pod {
	p.Spec.HostNetwork = true
	p.Spec.HostUsers = &hostUsers
	return p
}
