// Package defaultpreemption is DefaultPreemption, kube-scheduler's
// PostFilter plugin (v1.37's rules): when a pod fits no node, it looks for
// a node where evicting pods of lower priority would let the pod fit,
// picks the node where that costs least, nominates the pod there and
// evicts those pods. The pod is tried again once the victims are gone.
//
// Victims are chosen on a what-if copy of each candidate node and of the
// cycle's PreFilter state (framework.PreFilterExtensions, through
// framework.PreemptionHandle), so every filter, inter-pod affinity and
// topology spread included, agrees that the pod fits once they are gone.
// A candidate is never evicted on a guess: a filter whose state
// preemption cannot update (a ReadWriteOncePod claim held elsewhere, say)
// keeps rejecting, and the node is not a candidate.
//
// The plugin decides; the scheduler keeps the nominations and makes the
// API requests (framework.PreemptionHandle's Preempt and ClearNomination).
// A PostFilter plugin sits with the filters: it acts on their rejection.
package defaultpreemption

// Name is the plugin's name in configuration files.
const Name = "DefaultPreemption"
