package frameworktest

import (
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// StatusView is the part of a framework.Status a test compares: its code
// by name and its reasons. A Status carries an error and unexported
// fields that cmp cannot read.
type StatusView struct {
	Code    string
	Reasons []string
}

// ViewOf returns the view of s; a nil s is Success.
func ViewOf(s *framework.Status) StatusView {
	return StatusView{Code: s.Code().String(), Reasons: s.Reasons()}
}

// NodeInfoOf returns a NodeInfo of node holding pods, outside any cache
// (no slot, generation 0).
func NodeInfoOf(node *v1.Node, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}
