// Package nodeports is NodePorts, kube-scheduler's filter that keeps a pod
// off nodes where one of its host ports is already bound.
package nodeports

// Name is the plugin's name in configuration files.
const Name = "NodePorts"
