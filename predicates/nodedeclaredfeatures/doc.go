// Package nodedeclaredfeatures is NodeDeclaredFeatures, kube-scheduler's
// filter for the features a pod needs of its node's kubelet, which a node
// lists in status.declaredFeatures.
package nodedeclaredfeatures

// Name is the plugin's name in configuration files.
const Name = "NodeDeclaredFeatures"
