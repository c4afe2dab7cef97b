// Package predicates is the home of the Filter plugins: the checks that
// decide whether a pod can run on a node at all. Each plugin that can reject
// a pod is a package of its own below this one (predicates/nodename,
// predicates/tainttoleration, ...), holding its filter, its scorer when it
// has one, its args, signing, queueing hints and tests, written on package
// framework alone as an outside module's plugin is.
//
// The model: a filter is pure over the cycle's snapshot. Whatever depends
// only on the pod (its requests, its compiled selectors, its tolerations) is
// computed once in PreFilter and kept in the CycleState; Filter then reads
// that state and one NodeInfo, makes no API call, takes no lock and does not
// allocate unless it rejects the node. Filter is called concurrently for
// different nodes.
//
// A rejection is never a bare false: it is a framework.Status whose reasons
// are constant strings ("Insufficient cpu", "Too many pods"), one per failed
// check, so that "0/N nodes are available: ..." always says why each node was
// skipped. Unschedulable means the node might fit after the cluster changes
// (a pod leaves); UnschedulableAndUnresolvable means preempting pods on that
// node cannot help.
//
// Filters run cheapest first: name, unschedulable flag, taints and selectors
// reject most nodes with a few comparisons, before the resource and port
// arithmetic and long before anything that walks the pods of other nodes.
package predicates
