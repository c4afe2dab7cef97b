// Package interpodaffinity is InterPodAffinity, kube-scheduler's plugin for
// spec.affinity.podAffinity and podAntiAffinity: a filter for the pod's
// required terms (and existing pods' required anti-affinity, symmetry),
// and a scorer for the preferred terms of the pod and of existing pods.
// Both keep running totals per topology domain across cycles
// (framework.SyncTotal), brought up to date by the nodes that changed.
package interpodaffinity

// Name is the plugin's name in configuration files.
const Name = "InterPodAffinity"
