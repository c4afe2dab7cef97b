package noderesources

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// The filter and the scorers sign everything they read of a pod, and only
// that: see framework.PodSigner.
func TestFitFilterSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	checkSigners(t, filterKeptAnswersSnapshot(), map[framework.PodSigner][]frameworktest.SignCase{
		NewFitFilter(nil): {
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
	})
}

func TestScorersSignWhatTheyRead(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	fit, ba := newResourceScorers(t)
	requests := []frameworktest.SignCase{
		{Name: "replica", A: base().Obj(), B: replica, Same: true},
		{Name: "cpu", A: base().Obj(), B: base().Req("600m", "1Gi").Obj()},
		{Name: "memory", A: base().Obj(), B: base().Req("500m", "2Gi").Obj()},
		{Name: "second container", A: base().Obj(), B: base().Container("100m", "").Obj()},
	}
	checkSigners(t, scorerKeptAnswersSnapshot(), map[framework.PodSigner][]frameworktest.SignCase{
		fit: requests,
		ba:  requests,
	})
}

// checkSigners checks each signer's cases, and what the signatures are
// for: pods signed alike get the same answers, on nodes that answer the
// pods of the cases apart.
func checkSigners(t *testing.T, nodes framework.NodeInfoLister, cases map[framework.PodSigner][]frameworktest.SignCase) {
	t.Helper()
	for pl, cs := range cases {
		frameworktest.CheckSigning(t, pl, cs)
		var pods []*v1.Pod
		for _, c := range cs {
			pods = append(pods, c.A, c.B)
		}
		frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
	}
}

// filterKeptAnswersSnapshot is nodes that tell apart the pods of
// TestFitFilterSignsWhatItReads: small, with extended resources and
// ephemeral storage (the nodes all the node-local filters' signing was
// checked on, tainted, labelled, with host ports taken, declaring
// features).
func filterKeptAnswersSnapshot() framework.NodeInfoLister {
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

// scorerKeptAnswersSnapshot is nodes that score apart the pods of
// TestScorersSignWhatTheyRead: of different sizes and use.
func scorerKeptAnswersSnapshot() framework.NodeInfoLister {
	return frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Label("zone", "a").Capacity("4", "8Gi", 110).Image(500<<20, "web:1").Obj(),
		frameworktest.MakeNode().Name("n2").Label("zone", "b").Capacity("2", "16Gi", 110).Image(300<<20, "web:2", "data:1").Obj(),
		frameworktest.MakeNode().Name("spot").Capacity("8", "8Gi", 110).Taint("spot", "", v1.TaintEffectPreferNoSchedule).Obj(),
	}, []*v1.Pod{
		frameworktest.MakePod().Name("busy").Node("n1").Req("1500m", "2Gi").Obj(),
	})
}
