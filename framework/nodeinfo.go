package framework

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
)

// PodInfo is a pod with what the scheduler derives from its spec, computed
// once when the pod enters the cache or the queue, so that no filter or
// scorer recomputes it per node. A PodInfo is never mutated after creation.
type PodInfo struct {
	Pod *v1.Pod
	// Requests is what the pod takes on its node, as kube-scheduler counts
	// it (see podRequestsOnNode): with pod-level requests and, for a pod
	// being resized, what the kubelet allocated and actuated.
	Requests Resource
	// NonZeroRequests is the pod's cpu and memory with request-less
	// containers counted at the defaults.
	NonZeroRequests NonZeroResource
	// HostPorts are the host ports the pod binds.
	HostPorts []HostPort
	// Affinity holds the pod's compiled inter-pod (anti-)affinity terms
	// (see podaffinity.go); nil when it has none.
	Affinity *PodAffinityTerms

	// hint is what a PodInfoHintFn derived from this version of the pod
	// (HintState): only queueing hints use it, and the queue runs them
	// one at a time, under its lock.
	hint hintState
}

type hintState struct {
	owner any
	value any
}

// HintState returns what owner (a plugin's hints) derived from this pod,
// computing it with compute the first time. It keeps one owner's value:
// another owner's call replaces it. Only queueing hints may call it (the
// queue serializes them); a pod's update makes a new PodInfo, so the value
// always matches the pod object.
func (p *PodInfo) HintState(owner any, compute func(*v1.Pod) any) any {
	if p.hint.owner != owner || p.hint.value == nil {
		p.hint = hintState{owner: owner, value: compute(p.Pod)}
	}
	return p.hint.value
}

// NewPodInfo derives a PodInfo from pod. The pod is not copied: callers hand
// over an object nobody mutates.
func NewPodInfo(pod *v1.Pod) *PodInfo {
	requests, nonZero := podRequestsOnNode(pod)
	return &PodInfo{
		Pod:             pod,
		Requests:        requests,
		NonZeroRequests: nonZero,
		HostPorts:       PodHostPorts(pod),
		Affinity:        NewPodAffinityTerms(pod),
	}
}

// HasAffinity reports whether the pod carries any inter-pod affinity or
// anti-affinity term.
func (p *PodInfo) HasAffinity() bool {
	a := p.Pod.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// HasRequiredAntiAffinity reports whether the pod carries a required
// anti-affinity term, which constrains pods that come after it.
func (p *PodInfo) HasRequiredAntiAffinity() bool {
	a := p.Pod.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// ImageStateSummary describes one container image on a node and how many
// nodes in the cluster have it.
type ImageStateSummary struct {
	Size     int64
	NumNodes int
}

// NodeInfo is the scheduler's view of one node: the Node object, the pods
// assigned or assumed on it, and aggregates over them. The cache owns the
// NodeInfos it mutates; a Snapshot holds clones that plugins only read.
type NodeInfo struct {
	// node, name, Generation and Slot come first, in one cache line: a
	// cycle reads them for thousands of NodeInfos spread over the heap,
	// often nothing else (see scheduler/signatures.go).
	node *v1.Node
	// name is node's name, kept here so that reading it costs no visit to
	// the Node object.
	name string

	// Generation is set by the cache on every change; the snapshot copies a
	// NodeInfo only when its generation moved. The cache never gives the
	// same generation twice, so two NodeInfos with one non-zero generation
	// hold the same node and pods.
	Generation int64
	// Slot is a small number the cache gives the node, from 1 up, unique
	// among the nodes it holds and given to another node once this one is
	// gone; NodeMemo files per-node values under it. 0 in NodeInfos the
	// cache did not make.
	Slot int

	// Pods are every pod on the node, assumed pods included.
	Pods []*PodInfo
	// PodsWithAffinity are the Pods that carry inter-pod (anti-)affinity.
	PodsWithAffinity []*PodInfo
	// PodsWithRequiredAntiAffinity are the Pods with required anti-affinity.
	PodsWithRequiredAntiAffinity []*PodInfo

	// Allocatable is the node's status.allocatable.
	Allocatable Resource
	// Requested is the sum of the pods' Requests.
	Requested Resource
	// NonZeroRequested is the sum of the pods' NonZeroRequests.
	NonZeroRequested NonZeroResource
	// UsedPorts are the host ports the pods bind.
	UsedPorts HostPortInfo
	// ImageStates are the node's images, keyed by every name of each image.
	ImageStates map[string]*ImageStateSummary
	// PVCRefCounts counts, per "namespace/claim", the pods here that use it.
	PVCRefCounts map[string]int
	// declaredFeatures is the node's status.declaredFeatures (see
	// DeclaredFeatures), behind a pointer to keep NodeInfo's size (below).
	declaredFeatures *ndf.FeatureSet

	// NodeInfo is 256 bytes, one of Go's size classes whose objects start
	// on a cache line, so that the hot fields above always share one line
	// and the others take four. At 288 bytes (the set itself here) the
	// filters and scorers that walk thousands of NodeInfos ran 5 to 10%
	// slower; at 240 (no padding) objects start mid-line, and
	// PodTopologySpread's filter, which reads little else, ran 4% slower.
	// TestNodeInfoSize keeps it so.
	_ [2]uint64
}

// NonZeroResource is cpu and memory with request-less containers counted
// at DefaultMilliCPURequest and DefaultMemoryRequest, the view
// NodeResourcesFit's scorer takes of a node.
type NonZeroResource struct {
	MilliCPU int64
	Memory   int64
}

// NewNodeInfo returns a NodeInfo holding the given pods and no node.
func NewNodeInfo(pods ...*v1.Pod) *NodeInfo {
	ni := &NodeInfo{}
	for _, p := range pods {
		ni.AddPodInfo(NewPodInfo(p))
	}
	return ni
}

// Node returns the Node object, or nil when the node is gone but pods of it
// are still known.
func (n *NodeInfo) Node() *v1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// NodeName returns the node's name, "" when the node is gone. It reads
// only the NodeInfo: cheaper than Node().Name in a per-node loop.
func (n *NodeInfo) NodeName() string {
	if n == nil {
		return ""
	}
	return n.name
}

// Labels returns the node's labels, nil when the node is gone.
func (n *NodeInfo) Labels() map[string]string {
	if node := n.Node(); node != nil {
		return node.Labels
	}
	return nil
}

// SetNode sets the Node object, its allocatable resources and its
// declared features.
func (n *NodeInfo) SetNode(node *v1.Node) {
	n.node, n.name = node, node.Name
	n.Allocatable = *NewResource(node.Status.Allocatable)
	n.declaredFeatures = declaredFeatures(node.Status.DeclaredFeatures)
}

// DeclaredFeatures returns the node's status.declaredFeatures as a set of
// the features component-helpers knows (unknown names dropped), made once
// per node update so that NodeDeclaredFeatures' Filter only compares
// bits; the set of a node that declares none when the node is gone. The
// set is shared: callers do not change it.
func (n *NodeInfo) DeclaredFeatures() ndf.FeatureSet {
	if n.declaredFeatures == nil {
		return *noDeclaredFeatures
	}
	return *n.declaredFeatures
}

// noDeclaredFeatures is the set of a node that declares none (most nodes,
// and every node before v1.35): one shared set, never mutated.
var noDeclaredFeatures = new(ndf.DefaultFramework.NewFeatureSet())

// declaredFeatures maps a node's status.declaredFeatures as kube-scheduler
// v1.37 does (NodeInfo.SetNode): TryMap, which expects the list sorted, as
// the kubelet writes it, and drops names it does not know.
func declaredFeatures(names []string) *ndf.FeatureSet {
	if len(names) == 0 {
		return noDeclaredFeatures
	}
	return new(ndf.DefaultFramework.TryMap(names))
}

// RemoveNode clears the Node object, keeping the pods.
func (n *NodeInfo) RemoveNode() {
	n.node, n.name = nil, ""
	n.Allocatable = Resource{}
	n.declaredFeatures = nil
}

// AddPodInfo adds a pod and its requests, ports and claims.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if pi.HasAffinity() {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if pi.HasRequiredAntiAffinity() {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// RemovePod removes the pod with pod's UID. It fails when the pod is not here.
func (n *NodeInfo) RemovePod(pod *v1.Pod) error {
	uid := pod.UID
	n.PodsWithAffinity = removeFrom(n.PodsWithAffinity, uid)
	n.PodsWithRequiredAntiAffinity = removeFrom(n.PodsWithRequiredAntiAffinity, uid)
	for i, pi := range n.Pods {
		if pi.Pod.UID != uid {
			continue
		}
		last := len(n.Pods) - 1
		n.Pods[i] = n.Pods[last]
		n.Pods[last] = nil
		n.Pods = n.Pods[:last]
		n.update(pi, -1)
		return nil
	}
	return fmt.Errorf("pod %s/%s (uid %s) is not on node %q", pod.Namespace, pod.Name, uid, n.nodeName())
}

func (n *NodeInfo) nodeName() string {
	if n.node == nil {
		return ""
	}
	return n.node.Name
}

func removeFrom(list []*PodInfo, uid types.UID) []*PodInfo {
	for i, pi := range list {
		if pi.Pod.UID == uid {
			last := len(list) - 1
			list[i] = list[last]
			list[last] = nil
			return list[:last]
		}
	}
	return list
}

// update adds (sign +1) or subtracts (sign -1) what pi uses.
func (n *NodeInfo) update(pi *PodInfo, sign int64) {
	n.Requested.AddResource(&pi.Requests, sign)
	n.NonZeroRequested.MilliCPU += sign * pi.NonZeroRequests.MilliCPU
	n.NonZeroRequested.Memory += sign * pi.NonZeroRequests.Memory
	for _, hp := range pi.HostPorts {
		if sign > 0 {
			n.UsedPorts.Add(hp)
		} else {
			n.UsedPorts.Remove(hp)
		}
	}
	for _, v := range pi.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		key := pi.Pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName
		if n.PVCRefCounts == nil {
			n.PVCRefCounts = make(map[string]int)
		}
		n.PVCRefCounts[key] += int(sign)
		if n.PVCRefCounts[key] <= 0 {
			delete(n.PVCRefCounts, key)
		}
	}
}

// Clone returns a copy that shares the immutable PodInfos but no slice or
// map with n, so the cache can go on mutating n.
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		node:             n.node,
		name:             n.name,
		Pods:             append([]*PodInfo(nil), n.Pods...),
		Allocatable:      *n.Allocatable.Clone(),
		Requested:        *n.Requested.Clone(),
		NonZeroRequested: n.NonZeroRequested,
		UsedPorts:        n.UsedPorts.Clone(),
		ImageStates:      n.ImageStates,
		Generation:       n.Generation,
		Slot:             n.Slot,
		declaredFeatures: n.declaredFeatures,
	}
	if len(n.PodsWithAffinity) > 0 {
		c.PodsWithAffinity = append([]*PodInfo(nil), n.PodsWithAffinity...)
	}
	if len(n.PodsWithRequiredAntiAffinity) > 0 {
		c.PodsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...)
	}
	if len(n.PVCRefCounts) > 0 {
		c.PVCRefCounts = make(map[string]int, len(n.PVCRefCounts))
		for k, v := range n.PVCRefCounts {
			c.PVCRefCounts[k] = v
		}
	}
	return c
}
