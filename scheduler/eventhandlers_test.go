package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestNodeChangeCouldHelp(t *testing.T) {
	base := func() *v1.Node {
		n := &v1.Node{}
		n.Name = "n1"
		n.Labels = map[string]string{"zone": "a"}
		n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}
		n.Status.DeclaredFeatures = []string{"RestartAllContainersOnContainerExits"}
		return n
	}
	tests := []struct {
		name   string
		change func(*v1.Node)
		want   bool
	}{
		{name: "heartbeat only", change: func(n *v1.Node) { n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady}} }},
		{name: "cordoned or uncordoned", change: func(n *v1.Node) { n.Spec.Unschedulable = true }, want: true},
		{name: "labels", change: func(n *v1.Node) { n.Labels["zone"] = "b" }, want: true},
		{name: "allocatable", change: func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("8") }, want: true},
		{name: "taints", change: func(n *v1.Node) { n.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}} }, want: true},
		{name: "images", change: func(n *v1.Node) { n.Status.Images = []v1.ContainerImage{{Names: []string{"web:1"}}} }, want: true},
		{
			name: "declared features",
			change: func(n *v1.Node) {
				n.Status.DeclaredFeatures = append(n.Status.DeclaredFeatures, "UserNamespacesHostNetworkSupport")
			},
			want: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := nodeChangeCouldHelp(base(), n); got != tc.want {
				t.Errorf("nodeChangeCouldHelp = %v, want %v", got, tc.want)
			}
		})
	}
}
