// Package prioritysort is PrioritySort, kube-scheduler's default
// queue-sort plugin: pods of higher priority are scheduled first, pods of
// equal priority in the order they entered the queue.
package prioritysort

import (
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Name is the plugin's name in configuration files.
const Name = "PrioritySort"

// PrioritySort orders pods by spec.priority (higher first; none counts as
// 0), then by when they entered the queue.
type PrioritySort struct{}

var _ framework.QueueSortPlugin = PrioritySort{}

// Name returns Name.
func (PrioritySort) Name() string { return Name }

// Less reports whether a goes before b.
func (PrioritySort) Less(a, b *framework.QueuedPodInfo) bool {
	pa, pb := priority(a.Pod), priority(b.Pod)
	return pa > pb || (pa == pb && a.Timestamp.Before(b.Timestamp))
}

func priority(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// Registration is PrioritySort's, for a framework.Registry.
func Registration() framework.Registration {
	return framework.Registration{
		Name:   Name,
		Points: []string{framework.PointQueueSort},
		New: func(any, framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{PrioritySort{}}, nil
		},
	}
}
