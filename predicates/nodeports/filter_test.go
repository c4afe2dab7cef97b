package nodeports_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeports"
)

func TestNodePortsPreFilterSkipsPodsWithoutHostPorts(t *testing.T) {
	pod := frameworktest.MakePod().Obj()
	pod.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}} // no hostPort
	res, st := nodeports.NewFilter().PreFilter(context.Background(), framework.NewCycleState(), pod, nil)
	if diff := cmp.Diff(frameworktest.ViewOf(framework.NewStatus(framework.Skip)), frameworktest.ViewOf(st)); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if res != nil {
		t.Errorf("result = %v, want nil", res)
	}
}

func TestNodePortsFilter(t *testing.T) {
	rejected := framework.NewStatus(framework.Unschedulable, "node(s) didn't have free ports for the requested pod ports")
	node := frameworktest.MakeNode().Name("n1").Obj()
	using := func(port int32, protocol v1.Protocol, ip string) *v1.Pod {
		return frameworktest.MakePod().Name("existing").Node("n1").HostPort(port, protocol, ip).Obj()
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing []*v1.Pod
		want     *framework.Status
	}{
		{name: "free node", pod: frameworktest.MakePod().HostPort(8080, v1.ProtocolTCP, "").Obj()},
		{name: "same port, protocol and wildcard IP", pod: frameworktest.MakePod().HostPort(8080, v1.ProtocolTCP, "").Obj(),
			existing: []*v1.Pod{using(8080, v1.ProtocolTCP, "")}, want: rejected},
		{name: "empty protocol means TCP", pod: frameworktest.MakePod().HostPort(8080, "", "").Obj(),
			existing: []*v1.Pod{using(8080, v1.ProtocolTCP, "")}, want: rejected},
		{name: "other protocol", pod: frameworktest.MakePod().HostPort(8080, v1.ProtocolUDP, "").Obj(),
			existing: []*v1.Pod{using(8080, v1.ProtocolTCP, "")}},
		{name: "other port", pod: frameworktest.MakePod().HostPort(8081, v1.ProtocolTCP, "").Obj(),
			existing: []*v1.Pod{using(8080, v1.ProtocolTCP, "")}},
		{name: "specific IP against wildcard in use", pod: frameworktest.MakePod().HostPort(8080, v1.ProtocolTCP, "10.0.0.1").Obj(),
			existing: []*v1.Pod{using(8080, v1.ProtocolTCP, "0.0.0.0")}, want: rejected},
		{name: "wildcard against specific IP in use", pod: frameworktest.MakePod().HostPort(8080, v1.ProtocolTCP, "").Obj(),
			existing: []*v1.Pod{using(8080, v1.ProtocolTCP, "10.0.0.1")}, want: rejected},
		{name: "two specific IPs", pod: frameworktest.MakePod().HostPort(8080, v1.ProtocolTCP, "10.0.0.2").Obj(),
			existing: []*v1.Pod{using(8080, v1.ProtocolTCP, "10.0.0.1")}},
		{name: "second port clashes", pod: frameworktest.MakePod().HostPort(80, v1.ProtocolTCP, "").HostPort(443, v1.ProtocolTCP, "").Obj(),
			existing: []*v1.Pod{using(443, v1.ProtocolTCP, "")}, want: rejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, state := nodeports.NewFilter(), framework.NewCycleState()
			if _, st := pl.PreFilter(context.Background(), state, tc.pod, nil); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st.Message())
			}
			got := pl.Filter(context.Background(), state, tc.pod, frameworktest.NodeInfoOf(node, tc.existing...))
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodePortsFilterWithoutPreFilterIsAnError(t *testing.T) {
	pod := frameworktest.MakePod().HostPort(8080, v1.ProtocolTCP, "").Obj()
	st := nodeports.NewFilter().Filter(context.Background(), framework.NewCycleState(), pod, frameworktest.NodeInfoOf(frameworktest.MakeNode().Name("n1").Obj()))
	if st.Code() != framework.Error {
		t.Errorf("Filter code = %v, want Error", st.Code())
	}
}

// Two pods can hold one host port on a node (a profile without NodePorts
// placed them, or another scheduler did); when one leaves, the port is
// still in use. kube-scheduler v1.37 keeps a node's ports as a set, so
// there the first to leave frees the port and a third pod is placed where
// the kubelet refuses it; yardmaster counts each use and keeps the port
// taken (configuration.md lists the difference).
func TestNodePortsPortHeldTwiceStaysTakenWhenOneLeaves(t *testing.T) {
	node := frameworktest.MakeNode().Name("n1").Obj()
	a := frameworktest.MakePod().Name("a").UID("a").Node("n1").HostPort(8080, v1.ProtocolTCP, "").Obj()
	b := frameworktest.MakePod().Name("b").UID("b").Node("n1").HostPort(8080, v1.ProtocolTCP, "").Obj()
	ni := frameworktest.NodeInfoOf(node, a, b)
	if err := ni.RemovePod(a); err != nil {
		t.Fatal(err)
	}
	pod := frameworktest.MakePod().HostPort(8080, v1.ProtocolTCP, "").Obj()
	pl, state := nodeports.NewFilter(), framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), state, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Message())
	}
	want := framework.NewStatus(framework.Unschedulable, "node(s) didn't have free ports for the requested pod ports")
	if diff := cmp.Diff(frameworktest.ViewOf(want), frameworktest.ViewOf(pl.Filter(context.Background(), state, pod, ni))); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}
}

func TestReasonMatchesKubeScheduler(t *testing.T) {
	// Users grep events for this string: it must stay kube-scheduler
	// v1.37's (unchanged since v1.36).
	if got, want := nodeports.ReasonNodePorts, "node(s) didn't have free ports for the requested pod ports"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	if got := nodeports.NewFilter().Name(); got != "NodePorts" {
		t.Errorf("name = %q, want NodePorts", got)
	}
}

// The filter signs everything it reads of a pod, and only that: see
// framework.PodSigner.
func TestNodePortsSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	cases := []frameworktest.SignCase{
		{Name: "replica", A: base().Obj(), B: replica, Same: true},
		{Name: "port", A: base().Obj(), B: frameworktest.MakePod().Req("500m", "1Gi").HostPort(81, v1.ProtocolTCP, "").Obj()},
		{Name: "protocol", A: base().Obj(), B: frameworktest.MakePod().Req("500m", "1Gi").HostPort(80, v1.ProtocolUDP, "").Obj()},
		{Name: "host IP", A: base().Obj(), B: frameworktest.MakePod().Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "10.0.0.1").Obj()},
	}
	pl := nodeports.NewFilter()
	frameworktest.CheckSigning(t, pl, cases)
	// What the signatures are for: pods signed alike get the same
	// answers, on nodes that answer the pods of the cases apart.
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("n2").Capacity("550m", "4Gi", 110).Obj(),
		frameworktest.MakeNode().Name("n3").Capacity("4", "8Gi", 110).Obj(),
	}, []*v1.Pod{
		frameworktest.MakePod().Name("port-80").Node("n1").HostPort(80, v1.ProtocolTCP, "").Obj(),
		frameworktest.MakePod().Name("port-81").Node("n2").HostPort(81, v1.ProtocolTCP, "10.0.0.1").Obj(),
	})
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
}
