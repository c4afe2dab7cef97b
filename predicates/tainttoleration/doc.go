// Package tainttoleration is TaintToleration, kube-scheduler's plugin for
// node taints: a filter that keeps pods off nodes with a NoSchedule or
// NoExecute taint they do not tolerate, and a scorer that prefers nodes
// with fewer PreferNoSchedule taints they do not tolerate.
package tainttoleration

// Name is the plugin's name in configuration files.
const Name = "TaintToleration"
