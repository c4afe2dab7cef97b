// Package framework is the leaf package every scheduling plugin builds on.
//
// The model: a scheduling cycle places one pod. The scheduler takes a
// Snapshot of the cluster (one NodeInfo per node: the node, the pods on it and
// the resources they request), runs the PreFilter plugins once, every Filter
// plugin on each node until enough feasible nodes are found, the PreScore
// plugins once, every Score plugin on each feasible node, each plugin's
// NormalizeScore once over all feasible nodes, and then weighs and sums the
// normalized scores.
//
// Plugins are pure over the snapshot: a Filter or Score call makes no API
// request, takes no lock and should not allocate. Work that depends only on
// the pod (or on the pod and all nodes) is done in PreFilter/PreScore and kept
// in the CycleState, which lives exactly one cycle.
//
// A failed Filter returns a Status with a human reason ("Insufficient cpu");
// the scheduler counts reasons over all nodes to build the familiar
// "0/N nodes are available: ..." message.
//
// This package imports only the Kubernetes API types, so predicates/,
// priorities/ and scheduler/ can all depend on it without cycles.
package framework
