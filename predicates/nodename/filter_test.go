package nodename_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodename"
)

func TestNodeNamePreFilter(t *testing.T) {
	tests := []struct {
		name       string
		pod        *v1.Pod
		wantResult *framework.PreFilterResult
		wantStatus *framework.Status
	}{
		{name: "no node name: skip", pod: frameworktest.MakePod().Obj(), wantStatus: framework.NewStatus(framework.Skip)},
		{name: "node name narrows to that node", pod: frameworktest.MakePod().Node("n1").Obj(),
			wantResult: &framework.PreFilterResult{NodeNames: map[string]struct{}{"n1": {}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, st := nodename.NewFilter().PreFilter(context.Background(), framework.NewCycleState(), tc.pod, nil)
			if diff := cmp.Diff(frameworktest.ViewOf(tc.wantStatus), frameworktest.ViewOf(st)); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResult, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeNameFilter(t *testing.T) {
	node := frameworktest.MakeNode().Name("n1").Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		want *framework.Status
	}{
		{name: "no node name fits every node", pod: frameworktest.MakePod().Obj()},
		{name: "same node name fits", pod: frameworktest.MakePod().Node("n1").Obj()},
		{name: "other node name", pod: frameworktest.MakePod().Node("n2").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match the requested node name")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := nodename.NewFilter().Filter(context.Background(), framework.NewCycleState(), tc.pod, frameworktest.NodeInfoOf(node))
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReasonMatchesKubeScheduler(t *testing.T) {
	// Users grep events for this string: it must stay kube-scheduler
	// v1.37's (unchanged since v1.36).
	if got, want := nodename.ReasonNodeName, "node(s) didn't match the requested node name"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	if got := nodename.NewFilter().Name(); got != "NodeName" {
		t.Errorf("name = %q, want NodeName", got)
	}
}

// The filter signs everything it reads of a pod, and only that: see
// framework.PodSigner.
func TestNodeNameSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	cases := []frameworktest.SignCase{
		{Name: "replica", A: base().Obj(), B: replica, Same: true},
		{Name: "nodeName", A: base().Obj(), B: base().Node("n1").Obj()},
		// PreFilter skips a pod without a nodeName: these are the
		// ones the scheduler keeps answers for.
		{Name: "replica with a nodeName", A: base().Node("n1").Obj(), B: base().Name("b").Node("n1").Obj(), Same: true},
		{Name: "another nodeName", A: base().Node("n1").Obj(), B: base().Node("n2").Obj()},
	}
	pl := nodename.NewFilter()
	frameworktest.CheckSigning(t, pl, cases)
	// What the signatures are for: pods signed alike get the same
	// answers, on nodes that answer the pods of the cases apart.
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("n2").Capacity("4", "8Gi", 110).Obj(),
	}, nil)
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
}
