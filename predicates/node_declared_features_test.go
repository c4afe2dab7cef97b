package predicates_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates"
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

func declaring(features ...string) *framework.NodeInfo {
	n := frameworktest.MakeNode().Name("n1").Obj()
	n.Status.DeclaredFeatures = features
	return nodeInfoOf(n)
}

func TestNodeDeclaredFeatures(t *testing.T) {
	skip := framework.NewStatus(framework.Skip)
	rejected := reject(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's required features")
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
			pl := predicates.NewNodeDeclaredFeatures()
			ctx, state := context.Background(), framework.NewCycleState()
			_, st := pl.PreFilter(ctx, state, tc.pod, nil)
			if diff := cmp.Diff(viewOf(tc.wantPre), viewOf(st)); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if !st.IsSuccess() {
				return
			}
			if diff := cmp.Diff(viewOf(tc.want), viewOf(pl.Filter(ctx, state, tc.pod, tc.node))); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			// A clone (what the snapshot holds) answers the same.
			if diff := cmp.Diff(viewOf(tc.want), viewOf(pl.Filter(ctx, state, tc.pod, tc.node.Clone()))); diff != "" {
				t.Errorf("Filter on a clone (-want +got):\n%s", diff)
			}
		})
	}
}
