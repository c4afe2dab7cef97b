package scheduler

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/yardmaster-io/yardmaster/framework"
)

// ErrNoNodesAvailable is returned when the cluster has no nodes at all.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// FitError says why a pod fits no node: how many nodes were considered and
// how many of them failed for each reason.
type FitError struct {
	NumAllNodes int
	// ReasonCounts counts nodes per rejection reason.
	ReasonCounts map[string]int
	// PreFilterMessage is set when a PreFilter rejected the pod outright.
	PreFilterMessage string
	// Unresolvable is true when every node failed in a way no cluster event
	// can fix (the pod names another node, say).
	Unresolvable bool
	// Plugins names the plugins that rejected the pod on some node.
	Plugins sets.Set[string]
	// PostFilterMessage is what preemption found, when it did not help:
	// kube-scheduler's "preemption: ..." appended to the message.
	PostFilterMessage string

	// candidates are the nodes whose rejection another pod's eviction
	// might undo (not UnschedulableAndUnresolvable), for preemption.
	candidates []*framework.NodeInfo
}

// Error renders the message users know from kube-scheduler:
// "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) were unschedulable."
// Reasons are counted per node and sorted, so the message is stable.
func (f *FitError) Error() string {
	msg := f.reasons()
	if f.PostFilterMessage != "" {
		msg += " " + f.PostFilterMessage
	}
	return msg
}

func (f *FitError) reasons() string {
	if f.PreFilterMessage != "" {
		return fmt.Sprintf("0/%d nodes are available: %s.", f.NumAllNodes, f.PreFilterMessage)
	}
	parts := make([]string, 0, len(f.ReasonCounts))
	for reason, n := range f.ReasonCounts {
		parts = append(parts, fmt.Sprintf("%d %s", n, reason))
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", f.NumAllNodes, strings.Join(parts, ", "))
}

// addStatus counts each reason of a node's rejection by plugin p.
func (f *FitError) addStatus(s *framework.Status, p string) {
	for _, r := range s.Reasons() {
		f.ReasonCounts[r]++
	}
	if p != "" {
		if f.Plugins == nil {
			f.Plugins = sets.New[string]()
		}
		f.Plugins.Insert(p)
	}
}
