// Package nodeaffinity is NodeAffinity, kube-scheduler's plugin for
// spec.nodeSelector and spec.affinity.nodeAffinity: a filter for the
// nodeSelector and the required terms, and a scorer for the preferred
// terms. A profile may add terms of its own to every pod's (Args'
// addedAffinity).
package nodeaffinity

// Name is the plugin's name in configuration files.
const Name = "NodeAffinity"
