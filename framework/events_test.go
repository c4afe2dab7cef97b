package framework

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNodeUpdateActions(t *testing.T) {
	base := func() *v1.Node {
		n := &v1.Node{}
		n.Name = "n1"
		n.Labels = map[string]string{"zone": "a"}
		n.Annotations = map[string]string{"a": "1"}
		n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}
		n.Status.DeclaredFeatures = []string{"RestartAllContainersOnContainerExits"}
		n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue,
			LastHeartbeatTime: metav1.NewTime(time.Unix(100, 0))}}
		return n
	}
	tests := []struct {
		name   string
		change func(*v1.Node)
		want   ActionType
	}{
		{name: "heartbeat only", change: func(n *v1.Node) {
			n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(time.Unix(110, 0))
			n.Status.Images = []v1.ContainerImage{{Names: []string{"web:1"}}}
		}, want: None},
		{name: "condition status", change: func(n *v1.Node) { n.Status.Conditions[0].Status = v1.ConditionFalse }, want: UpdateNodeCondition},
		{name: "condition added", change: func(n *v1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: v1.NodeDiskPressure})
		}, want: UpdateNodeCondition},
		{name: "cordoned", change: func(n *v1.Node) { n.Spec.Unschedulable = true }, want: None},
		{name: "labels", change: func(n *v1.Node) { n.Labels["zone"] = "b" }, want: UpdateNodeLabel},
		{name: "allocatable", change: func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("8") }, want: UpdateNodeAllocatable},
		{name: "allocatable respelled", change: func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("4000m") }, want: None},
		{name: "annotations", change: func(n *v1.Node) { n.Annotations["a"] = "2" }, want: UpdateNodeAnnotation},
		{name: "labels and taints", change: func(n *v1.Node) {
			n.Labels["x"] = "y"
			n.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
		}, want: UpdateNodeLabel | UpdateNodeTaint},
		{name: "declared features", change: func(n *v1.Node) {
			n.Status.DeclaredFeatures = append(n.Status.DeclaredFeatures, "UserNamespacesHostNetworkSupport")
		}, want: UpdateNodeDeclaredFeature},
		{name: "pod preemption policy", change: func(n *v1.Node) {
			n.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{}
		}, want: UpdateNodePreemptionPolicy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := NodeUpdateActions(base(), n); got != tc.want {
				t.Errorf("NodeUpdateActions = %b, want %b", got, tc.want)
			}
		})
	}
	t.Run("uncordoned", func(t *testing.T) {
		o := base()
		o.Spec.Unschedulable = true
		if got := NodeUpdateActions(o, base()); got != UpdateNodeTaint {
			t.Errorf("NodeUpdateActions = %b, want UpdateNodeTaint", got)
		}
	})
}

func TestPodUpdateActions(t *testing.T) {
	base := func() *v1.Pod {
		p := &v1.Pod{}
		p.Name, p.UID = "p", "p"
		p.Labels = map[string]string{"app": "web"}
		p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}
		p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "g"}}
		return p
	}
	tests := []struct {
		name   string
		change func(*v1.Pod)
		want   ActionType
	}{
		{name: "status only", change: func(p *v1.Pod) { p.Status.Phase = v1.PodRunning }, want: Update},
		{name: "labels", change: func(p *v1.Pod) { p.Labels["app"] = "db" }, want: UpdatePodLabel},
		{name: "scaled down", change: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m")
		}, want: UpdatePodScaleDown},
		{name: "scaled up", change: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2")
		}, want: UpdatePodScaleUp},
		{name: "a new resource requested", change: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1")
		}, want: UpdatePodScaleUp},
		{name: "one request down, another up", change: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m")
			p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("1Gi")
		}, want: UpdatePodScaleDown | UpdatePodScaleUp},
		{name: "gates removed", change: func(p *v1.Pod) { p.Spec.SchedulingGates = nil }, want: UpdatePodSchedulingGatesEliminated},
		{name: "toleration added", change: func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}}
		}, want: UpdatePodToleration},
		{name: "generated claim recorded", change: func(p *v1.Pod) {
			p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu"}}
		}, want: UpdatePodGeneratedResourceClaim},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.change(p)
			if got := PodUpdateActions(base(), p); got != tc.want {
				t.Errorf("PodUpdateActions = %b, want %b", got, tc.want)
			}
		})
	}
}

func TestClusterEventMatch(t *testing.T) {
	tests := []struct {
		name            string
		registered, got ClusterEvent
		want            bool
	}{
		{"same", ClusterEvent{Node, Add}, ClusterEvent{Node, Add}, true},
		{"one of several actions", ClusterEvent{Node, Add | UpdateNodeLabel}, ClusterEvent{Node, UpdateNodeLabel | UpdateNodeTaint}, true},
		{"other action", ClusterEvent{Node, Add | UpdateNodeLabel}, ClusterEvent{Node, UpdateNodeCondition}, false},
		{"other resource", ClusterEvent{Node, Add}, ClusterEvent{PersistentVolume, Add}, false},
		{"Pod covers assigned pods", ClusterEvent{Pod, Delete}, ClusterEvent{AssignedPod, Delete}, true},
		{"Pod covers unscheduled pods", ClusterEvent{Pod, UpdatePodLabel}, ClusterEvent{UnscheduledPod, UpdatePodLabel}, true},
		{"AssignedPod does not cover Pod", ClusterEvent{AssignedPod, Delete}, ClusterEvent{UnscheduledPod, Delete}, false},
		{"wildcard", ClusterEvent{WildCard, All}, ClusterEvent{CSINode, Update}, true},
		{"Update covers every update", ClusterEvent{Pod, Update}, ClusterEvent{AssignedPod, UpdatePodScaleDown}, true},
		{"Update is not Add", ClusterEvent{Pod, Update}, ClusterEvent{AssignedPod, Add}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.registered.Match(tc.got); got != tc.want {
				t.Errorf("%v.Match(%v) = %v, want %v", tc.registered, tc.got, got, tc.want)
			}
		})
	}
}

// ResourceOf gives each resource one EventResource, named as
// kube-scheduler names the resources of its dynamic informers.
func TestResourceOf(t *testing.T) {
	podGroups := schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	pg := ResourceOf(podGroups)
	if again := ResourceOf(podGroups); again != pg {
		t.Errorf("ResourceOf twice: %d then %d", pg, again)
	}
	svc := ResourceOf(services)
	if svc == pg {
		t.Fatalf("two resources share %d", pg)
	}
	if got := pg.String(); got != "podgroups.v1alpha1.scheduling.x-k8s.io" {
		t.Errorf("String() = %q", got)
	}
	if got := svc.String(); got != "services.v1" {
		t.Errorf("String() = %q", got)
	}
	if got, ok := pg.GroupVersionResource(); !ok || got != podGroups {
		t.Errorf("GroupVersionResource() = %v, %v", got, ok)
	}
	if _, ok := Node.GroupVersionResource(); ok {
		t.Error("Node has a GroupVersionResource")
	}
	reg := ClusterEvent{Resource: pg, ActionType: Add | Update}
	if !reg.Match(ClusterEvent{Resource: pg, ActionType: Update}) {
		t.Error("a registration of its updates does not match an update")
	}
	if reg.Match(ClusterEvent{Resource: svc, ActionType: Add}) {
		t.Error("a registration of PodGroups matches a Service")
	}
}
