// Package nodeunschedulable is NodeUnschedulable, kube-scheduler's filter
// that keeps pods off cordoned nodes (spec.unschedulable) unless they
// tolerate node.kubernetes.io/unschedulable:NoSchedule.
package nodeunschedulable

// Name is the plugin's name in configuration files.
const Name = "NodeUnschedulable"
