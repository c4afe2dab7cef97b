// Package nodename is NodeName, kube-scheduler's filter for pods that name
// their node in spec.nodeName: every other node is rejected.
package nodename

// Name is the plugin's name in configuration files.
const Name = "NodeName"
