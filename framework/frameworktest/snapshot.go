package frameworktest

import (
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
)

// NewSnapshot returns the snapshot a scheduling cycle would read for
// nodes with pods on them, built by the scheduler's own cache: every pod
// counts on the node its spec.nodeName names (a pod naming none of nodes
// counts nowhere), and the NodeInfos have the slots and generations the
// scheduler's kept answers and a plugin's NodeMemo follow.
func NewSnapshot(nodes []*v1.Node, pods []*v1.Pod) framework.NodeInfoLister {
	return cache.NewSnapshotFromNodes(nodes, pods)
}
