// Package gangscheduling is GangScheduling, kube-scheduler v1.37's plugin
// for pods of a scheduling.k8s.io/v1beta1 PodGroup with a gang policy:
// such a pod waits in the queue until its PodGroup exists and at least
// minCount of its members do (PreEnqueue), and the scheduler's group
// cycle places its members together only when at least minCount of them
// fit (PodGroupFeasible), all of them or none.
package gangscheduling

// Name is the plugin's name in configuration files.
const Name = "GangScheduling"
