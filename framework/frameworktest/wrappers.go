package frameworktest

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodWrapper builds a pod.
type PodWrapper struct{ v1.Pod }

// MakePod returns a pod in namespace "default" with one container and no requests.
func MakePod() *PodWrapper {
	return &PodWrapper{v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec: v1.PodSpec{
			SchedulerName: "yardmaster",
			Containers:    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}}
}

// Obj returns the pod.
func (p *PodWrapper) Obj() *v1.Pod { return &p.Pod }

// Name sets the name and, when empty, derives the UID from it.
func (p *PodWrapper) Name(n string) *PodWrapper {
	p.Pod.Name = n
	if p.Pod.UID == "" {
		p.Pod.UID = types.UID(p.Pod.Namespace + "-" + n)
	}
	return p
}

// Namespace sets the namespace.
func (p *PodWrapper) Namespace(ns string) *PodWrapper { p.Pod.Namespace = ns; return p }

// UID sets the UID.
func (p *PodWrapper) UID(uid string) *PodWrapper { p.Pod.UID = types.UID(uid); return p }

// SchedulerName sets spec.schedulerName.
func (p *PodWrapper) SchedulerName(s string) *PodWrapper { p.Spec.SchedulerName = s; return p }

// Node sets spec.nodeName.
func (p *PodWrapper) Node(n string) *PodWrapper { p.Spec.NodeName = n; return p }

// Priority sets spec.priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper { p.Spec.Priority = &v; return p }

// Label adds a label.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

// Req sets the first container's cpu and memory requests ("" leaves one unset).
func (p *PodWrapper) Req(cpu, mem string) *PodWrapper {
	p.Spec.Containers[0].Resources.Requests = resourceList(cpu, mem)
	return p
}

// Res sets arbitrary requests of the first container.
func (p *PodWrapper) Res(rl map[v1.ResourceName]string) *PodWrapper {
	if p.Spec.Containers[0].Resources.Requests == nil {
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{}
	}
	for k, v := range rl {
		p.Spec.Containers[0].Resources.Requests[k] = resource.MustParse(v)
	}
	return p
}

// Container appends a container with the given cpu and memory requests.
func (p *PodWrapper) Container(cpu, mem string) *PodWrapper {
	n := len(p.Spec.Containers)
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{
		Name: fmt.Sprintf("c%d", n), Image: "registry.k8s.io/pause:3.10",
		Resources: v1.ResourceRequirements{Requests: resourceList(cpu, mem)},
	})
	return p
}

// InitReq appends an init container with the given requests.
func (p *PodWrapper) InitReq(cpu, mem string) *PodWrapper {
	p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{
		Name: fmt.Sprintf("init%d", len(p.Spec.InitContainers)), Image: "registry.k8s.io/pause:3.10",
		Resources: v1.ResourceRequirements{Requests: resourceList(cpu, mem)},
	})
	return p
}

// SidecarReq appends a restartable init container with the given requests.
func (p *PodWrapper) SidecarReq(cpu, mem string) *PodWrapper {
	always := v1.ContainerRestartPolicyAlways
	p.InitReq(cpu, mem)
	p.Spec.InitContainers[len(p.Spec.InitContainers)-1].RestartPolicy = &always
	return p
}

// Overhead sets spec.overhead.
func (p *PodWrapper) Overhead(cpu, mem string) *PodWrapper {
	p.Spec.Overhead = resourceList(cpu, mem)
	return p
}

// HostPort adds a host port to the first container.
func (p *PodWrapper) HostPort(port int32, protocol v1.Protocol, hostIP string) *PodWrapper {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{
		ContainerPort: port, HostPort: port, Protocol: protocol, HostIP: hostIP,
	})
	return p
}

// NodeSelector sets spec.nodeSelector.
func (p *PodWrapper) NodeSelector(m map[string]string) *PodWrapper { p.Spec.NodeSelector = m; return p }

// Toleration appends a toleration.
func (p *PodWrapper) Toleration(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return p
}

// RequiredNodeAffinity appends a required node selector term.
func (p *PodWrapper) RequiredNodeAffinity(term v1.NodeSelectorTerm) *PodWrapper {
	na := p.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	rd := na.RequiredDuringSchedulingIgnoredDuringExecution
	rd.NodeSelectorTerms = append(rd.NodeSelectorTerms, term)
	return p
}

// PreferredNodeAffinity appends a preferred node selector term.
func (p *PodWrapper) PreferredNodeAffinity(weight int32, term v1.NodeSelectorTerm) *PodWrapper {
	na := p.nodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.PreferredSchedulingTerm{Weight: weight, Preference: term})
	return p
}

func (p *PodWrapper) nodeAffinity() *v1.NodeAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	return p.Spec.Affinity.NodeAffinity
}

// SchedulingGate adds a scheduling gate.
func (p *PodWrapper) SchedulingGate(name string) *PodWrapper {
	p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: name})
	return p
}

// Terminating sets a deletion timestamp.
func (p *PodWrapper) Terminating() *PodWrapper {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

// NodeWrapper builds a node.
type NodeWrapper struct{ v1.Node }

// MakeNode returns a Ready node with no capacity.
func MakeNode() *NodeWrapper {
	return &NodeWrapper{v1.Node{
		Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}}
}

// Obj returns the node.
func (n *NodeWrapper) Obj() *v1.Node { return &n.Node }

// Name sets the name and the kubernetes.io/hostname label.
func (n *NodeWrapper) Name(s string) *NodeWrapper {
	n.Node.Name = s
	return n.Label(v1.LabelHostname, s)
}

// Label adds a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[k] = v
	return n
}

// Capacity sets capacity and allocatable for cpu, memory and pods.
func (n *NodeWrapper) Capacity(cpu, mem string, pods int64) *NodeWrapper {
	rl := resourceList(cpu, mem)
	rl[v1.ResourcePods] = *resource.NewQuantity(pods, resource.DecimalSI)
	n.Status.Capacity = rl
	n.Status.Allocatable = rl.DeepCopy()
	return n
}

// Allocatable adds arbitrary allocatable (and capacity) quantities.
func (n *NodeWrapper) Allocatable(rl map[v1.ResourceName]string) *NodeWrapper {
	if n.Status.Allocatable == nil {
		n.Status.Allocatable = v1.ResourceList{}
		n.Status.Capacity = v1.ResourceList{}
	}
	for k, v := range rl {
		n.Status.Allocatable[k] = resource.MustParse(v)
		n.Status.Capacity[k] = resource.MustParse(v)
	}
	return n
}

// Taint appends a taint.
func (n *NodeWrapper) Taint(key, value string, effect v1.TaintEffect) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return n
}

// Unschedulable sets spec.unschedulable.
func (n *NodeWrapper) Unschedulable() *NodeWrapper { n.Spec.Unschedulable = true; return n }

// Image adds an image to status.images.
func (n *NodeWrapper) Image(size int64, names ...string) *NodeWrapper {
	n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: names, SizeBytes: size})
	return n
}

func resourceList(cpu, mem string) v1.ResourceList {
	rl := v1.ResourceList{}
	if cpu != "" {
		rl[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		rl[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return rl
}

// NodeSelectorTermWrapper builds a node selector term:
//
//	frameworktest.MakeNodeSelectorTerm().In("zone", "a", "b").Gt("cores", "8").Obj()
type NodeSelectorTermWrapper struct{ v1.NodeSelectorTerm }

// MakeNodeSelectorTerm returns a term with no requirement.
func MakeNodeSelectorTerm() *NodeSelectorTermWrapper { return &NodeSelectorTermWrapper{} }

// Obj returns the term.
func (t *NodeSelectorTermWrapper) Obj() v1.NodeSelectorTerm { return t.NodeSelectorTerm }

// Expr appends a matchExpressions requirement with any operator.
func (t *NodeSelectorTermWrapper) Expr(key string, op v1.NodeSelectorOperator, values ...string) *NodeSelectorTermWrapper {
	t.MatchExpressions = append(t.MatchExpressions, v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values})
	return t
}

// In appends "key In values".
func (t *NodeSelectorTermWrapper) In(key string, values ...string) *NodeSelectorTermWrapper {
	return t.Expr(key, v1.NodeSelectorOpIn, values...)
}

// NotIn appends "key NotIn values".
func (t *NodeSelectorTermWrapper) NotIn(key string, values ...string) *NodeSelectorTermWrapper {
	return t.Expr(key, v1.NodeSelectorOpNotIn, values...)
}

// Exists appends "key Exists".
func (t *NodeSelectorTermWrapper) Exists(key string) *NodeSelectorTermWrapper {
	return t.Expr(key, v1.NodeSelectorOpExists)
}

// DoesNotExist appends "key DoesNotExist".
func (t *NodeSelectorTermWrapper) DoesNotExist(key string) *NodeSelectorTermWrapper {
	return t.Expr(key, v1.NodeSelectorOpDoesNotExist)
}

// Gt appends "key Gt value".
func (t *NodeSelectorTermWrapper) Gt(key, value string) *NodeSelectorTermWrapper {
	return t.Expr(key, v1.NodeSelectorOpGt, value)
}

// Lt appends "key Lt value".
func (t *NodeSelectorTermWrapper) Lt(key, value string) *NodeSelectorTermWrapper {
	return t.Expr(key, v1.NodeSelectorOpLt, value)
}

// Field appends a matchFields requirement (metadata.name with In or NotIn
// in valid terms).
func (t *NodeSelectorTermWrapper) Field(key string, op v1.NodeSelectorOperator, values ...string) *NodeSelectorTermWrapper {
	t.MatchFields = append(t.MatchFields, v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values})
	return t
}

// PodGroup names the pod's group (spec.schedulingGroup.podGroupName).
func (p *PodWrapper) PodGroup(name string) *PodWrapper {
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return p
}

// PriorityClassName sets spec.priorityClassName (the API server's admission
// fills spec.priority from it).
func (p *PodWrapper) PriorityClassName(name string) *PodWrapper {
	p.Spec.PriorityClassName = name
	return p
}

// StartTime sets status.startTime, which preemption reads to spare the
// pods that have run longest.
func (p *PodWrapper) StartTime(t time.Time) *PodWrapper {
	p.Status.StartTime = &metav1.Time{Time: t}
	return p
}

// PodReq sets pod-level requests (spec.resources.requests).
func (p *PodWrapper) PodReq(rl map[v1.ResourceName]string) *PodWrapper {
	if p.Spec.Resources == nil {
		p.Spec.Resources = &v1.ResourceRequirements{}
	}
	p.Spec.Resources.Requests = quantities(rl)
	return p
}

// Resized gives the first container a status as the kubelet writes it
// during an in-place resize: what it allocated and what it actuated.
func (p *PodWrapper) Resized(allocated, actuated map[v1.ResourceName]string) *PodWrapper {
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{
		Name:               p.Spec.Containers[0].Name,
		AllocatedResources: quantities(allocated),
		Resources:          &v1.ResourceRequirements{Requests: quantities(actuated)},
	})
	return p
}

// PodResized sets the pod-level status of an in-place resize: what the
// kubelet allocated and actuated for spec.resources.
func (p *PodWrapper) PodResized(allocated, actuated map[v1.ResourceName]string) *PodWrapper {
	p.Status.AllocatedResources = quantities(allocated)
	p.Status.Resources = &v1.ResourceRequirements{Requests: quantities(actuated)}
	return p
}

// ResizeInfeasible marks the pod's resize as one the node cannot satisfy.
func (p *PodWrapper) ResizeInfeasible() *PodWrapper {
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{
		Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible,
	})
	return p
}

func quantities(rl map[v1.ResourceName]string) v1.ResourceList {
	out := make(v1.ResourceList, len(rl))
	for k, v := range rl {
		out[k] = resource.MustParse(v)
	}
	return out
}
