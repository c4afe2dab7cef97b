// Package podtopologyspread is PodTopologySpread, kube-scheduler's plugin
// for spec.topologySpreadConstraints and the cluster's default
// constraints: a filter for the DoNotSchedule constraints and a scorer for
// the ScheduleAnyway ones, sharing one framework.TopologySpread (which
// constraints a pod has, which nodes and pods count) built from the args.
package podtopologyspread

// Name is the plugin's name in configuration files.
const Name = "PodTopologySpread"
