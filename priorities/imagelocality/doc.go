// Package imagelocality is ImageLocality, kube-scheduler's scorer that
// favours nodes that already have a pod's images, so that the pod starts
// without a long pull.
package imagelocality

// Name is the plugin's name in configuration files.
const Name = "ImageLocality"
