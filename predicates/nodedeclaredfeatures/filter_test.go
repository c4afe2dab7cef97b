package nodedeclaredfeatures_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodedeclaredfeatures"
)

// The feature names component-helpers v0.36.3 infers for scheduling.
const (
	featureRestartAll   = "RestartAllContainersOnContainerExits"
	featureUserNSHostNS = "UserNamespacesHostNetworkSupport"
)

// restartAll gives the pod's first container a rule that restarts every
// container of the pod; in an init container when init is set.
func restartAll(p *v1.Pod, init bool) *v1.Pod {
	rule := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers}}
	if init {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "init", RestartPolicyRules: rule})
		return p
	}
	p.Spec.Containers[0].RestartPolicyRules = rule
	return p
}

// userNSHostNetwork puts the pod on the host network in a user namespace.
func userNSHostNetwork(p *v1.Pod, hostUsers bool) *v1.Pod {
	p.Spec.HostNetwork = true
	p.Spec.HostUsers = &hostUsers
	return p
}

// declaring is a node that declares features.
func declaring(features ...string) *framework.NodeInfo {
	n := frameworktest.MakeNode().Name("n1").Obj()
	n.Status.DeclaredFeatures = features
	return frameworktest.NodeInfoOf(n)
}

func TestNodeDeclaredFeatures(t *testing.T) {
	skip := framework.NewStatus(framework.Skip)
	rejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's required features")
	pod := func() *v1.Pod { return frameworktest.MakePod().Name("p").Req("100m", "").Obj() }
	tests := []struct {
		name string
		pod  *v1.Pod
		node *framework.NodeInfo
		// wantPre is PreFilter's status; want Filter's when PreFilter
		// succeeded.
		wantPre *framework.Status
		want    *framework.Status
	}{
		{name: "pod needs nothing: skip", pod: pod(), node: declaring(), wantPre: skip},
		{name: "host network alone needs nothing", pod: func() *v1.Pod { p := pod(); p.Spec.HostNetwork = true; return p }(), node: declaring(), wantPre: skip},
		{name: "host users kept: needs nothing", pod: userNSHostNetwork(pod(), true), node: declaring(), wantPre: skip},
		{name: "a plain Restart rule needs nothing", pod: func() *v1.Pod {
			p := pod()
			p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart}}
			return p
		}(), node: declaring(), wantPre: skip},
		{name: "restart-all rule, node declares nothing", pod: restartAll(pod(), false), node: declaring(), want: rejected},
		{name: "restart-all rule, node declares it", pod: restartAll(pod(), false), node: declaring(featureRestartAll)},
		{name: "restart-all rule in an init container", pod: restartAll(pod(), true), node: declaring(featureRestartAll, featureUserNSHostNS)},
		{name: "restart-all rule, node declares another feature", pod: restartAll(pod(), false), node: declaring(featureUserNSHostNS), want: rejected},
		{name: "user namespace on the host network", pod: userNSHostNetwork(pod(), false), node: declaring(featureUserNSHostNS)},
		{name: "both features, node declares one", pod: restartAll(userNSHostNetwork(pod(), false), false), node: declaring(featureRestartAll), want: rejected},
		{name: "both features, node declares both", pod: restartAll(userNSHostNetwork(pod(), false), false), node: declaring(featureRestartAll, featureUserNSHostNS)},
		{name: "names the scheduler does not know are ignored", pod: restartAll(pod(), false), node: declaring("AFeatureFromTheFuture", featureRestartAll, "ZFeature")},
		{
			// As in kube-scheduler, the list is read as the kubelet writes
			// it, sorted; out of order, a known name can be missed.
			name: "an unsorted list, read as kube-scheduler reads it", pod: restartAll(userNSHostNetwork(pod(), false), false),
			node: declaring(featureUserNSHostNS, featureRestartAll), want: rejected,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := nodedeclaredfeatures.NewFilter()
			ctx, state := context.Background(), framework.NewCycleState()
			_, st := pl.PreFilter(ctx, state, tc.pod, nil)
			if diff := cmp.Diff(frameworktest.ViewOf(tc.wantPre), frameworktest.ViewOf(st)); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if !st.IsSuccess() {
				return
			}
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(pl.Filter(ctx, state, tc.pod, tc.node))); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			// A clone (what the snapshot holds) answers the same.
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(pl.Filter(ctx, state, tc.pod, tc.node.Clone()))); diff != "" {
				t.Errorf("Filter on a clone (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReasonMatchesKubeScheduler(t *testing.T) {
	// Users grep events for this string: it must stay kube-scheduler
	// v1.37's.
	if got, want := nodedeclaredfeatures.ReasonNodeDeclaredFeatures, "node(s) didn't match Pod's required features"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	if got := nodedeclaredfeatures.NewFilter().Name(); got != "NodeDeclaredFeatures" {
		t.Errorf("name = %q, want NodeDeclaredFeatures", got)
	}
}

// The filter signs everything it reads of a pod, and only that: see
// framework.PodSigner.
func TestNodeDeclaredFeaturesSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	cases := []frameworktest.SignCase{
		{Name: "replica", A: base().Obj(), B: replica, Same: true},
		{Name: "restart-all rule", A: base().Obj(), B: restartAll(base().Obj(), false)},
		{Name: "user namespace on the host network", A: base().Obj(), B: userNSHostNetwork(base().Obj(), false)},
		{Name: "the two features", A: restartAll(base().Obj(), false), B: userNSHostNetwork(base().Obj(), false)},
		// What the inference ignores changes nothing it reads.
		{Name: "host network with host users", A: base().Obj(), B: userNSHostNetwork(base().Obj(), true), Same: true},
	}
	pl := nodedeclaredfeatures.NewFilter()
	frameworktest.CheckSigning(t, pl, cases)
	// What the signatures are for: pods signed alike get the same
	// answers, on nodes that answer the pods of the cases apart.
	featured := frameworktest.MakeNode().Name("featured").Capacity("4", "8Gi", 110).Obj()
	featured.Status.DeclaredFeatures = []string{featureRestartAll, featureUserNSHostNS}
	restartOnly := frameworktest.MakeNode().Name("restart-only").Capacity("4", "8Gi", 110).Obj()
	restartOnly.Status.DeclaredFeatures = []string{featureRestartAll}
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj(), featured, restartOnly,
	}, nil)
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
}
