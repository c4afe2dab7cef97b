// Package noderesources is the family of plugins on a node's allocatable
// and its pods' requests: NodeResourcesFit, a filter (room for the pod's
// requests) and a scorer (LeastAllocated, MostAllocated or
// RequestedToCapacityRatio), and NodeResourcesBalancedAllocation, a scorer
// (cpu as full as memory). The two scorers share the resource vector a
// node is scored on. The arithmetic is kube-scheduler v1.37's.
package noderesources

// The plugins' names in configuration files.
const (
	FitName                = "NodeResourcesFit"
	BalancedAllocationName = "NodeResourcesBalancedAllocation"
)
