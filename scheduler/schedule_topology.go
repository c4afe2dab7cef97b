package scheduler

// Topology-aware group placement (kube-scheduler v1.37's
// TopologyAwareWorkloadScheduling): a native PodGroup whose
// spec.schedulingConstraints.topology names a node label is placed whole
// inside one domain, the nodes sharing one value of that label. Each
// domain is tried in turn (the members placed there, then undone); of
// the domains where the group fits, the one that scores best takes it:
// more members placed first (kube-scheduler's PodGroupPodsCount), then
// the fullest domain after placement (NodeResourcesFit's MostAllocated
// over the domain's cpu and memory), ties broken at random.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
)

// topologyKey returns the node label the group must stay within, "" for
// none.
func topologyKey(g *framework.PodGroupInfo) string {
	if g.Object == nil || g.Object.Spec.SchedulingConstraints == nil || len(g.Object.Spec.SchedulingConstraints.Topology) == 0 {
		return ""
	}
	return g.Object.Spec.SchedulingConstraints.Topology[0].Key
}

// domain is one value of a topology label: its nodes, by name.
type domain struct {
	value string
	nodes map[string]bool
}

// domains returns the domains of key a group may go to: every value of
// the label on some node, sorted; only the domain of its members already
// scheduled, when some are. The message says why there is none.
func (s *Scheduler) domains(g *framework.PodGroupInfo, key string) ([]domain, string) {
	byValue := map[string]map[string]bool{}
	for _, ni := range s.snapshot.List() {
		v, ok := ni.Node().Labels[key]
		if !ok {
			continue
		}
		if byValue[v] == nil {
			byValue[v] = map[string]bool{}
		}
		byValue[v][ni.NodeName()] = true
	}
	// Members already bound or assumed fix the domain.
	fixed := map[string]bool{}
	for _, node := range s.groups.scheduledNodes(g.Key, s.Cache.AssumedPod) {
		ni, err := s.snapshot.Get(node)
		if err != nil {
			continue
		}
		v, ok := ni.Node().Labels[key]
		if !ok {
			return nil, fmt.Sprintf("a member of the pod group is on node %s, which has no label %s", node, key)
		}
		fixed[v] = true
	}
	if len(fixed) > 1 {
		return nil, fmt.Sprintf("members of the pod group are already in %d domains of %s", len(fixed), key)
	}
	var out []domain
	for v, nodes := range byValue {
		if len(fixed) == 1 && !fixed[v] {
			continue
		}
		out = append(out, domain{value: v, nodes: nodes})
	}
	if len(out) == 0 {
		return nil, "no feasible placements found"
	}
	slices.SortFunc(out, func(a, b domain) int {
		switch {
		case a.value < b.value:
			return -1
		case a.value > b.value:
			return 1
		}
		return 0
	})
	return out, ""
}

// placeInDomain is placeMembers within one domain of key: every domain is
// evaluated, then the group is placed in the best one.
func (s *Scheduler) placeInDomain(ctx context.Context, prof *profile, group *framework.PodGroupInfo, live []*queue.QueuedPodInfo, key string, start time.Time, out *[]memberResult) (*framework.Status, int, error) {
	doms, why := s.domains(group, key)
	if len(doms) == 0 {
		return framework.NewStatus(framework.Unschedulable, why), 0, nil
	}
	defer s.restrictTo(nil)
	type candidate struct {
		d      domain
		placed int
		full   int64
	}
	var fits []candidate
	var firstFailure string
	for _, d := range doms {
		s.restrictTo(d.nodes)
		st, placed, err := s.placeMembers(ctx, prof, group, live, start, out)
		full := s.mostAllocated(d.nodes)
		s.undoGroup(ctx, *out)
		*out = (*out)[:0]
		if err != nil {
			return st, 0, err
		}
		if st.Code() == framework.Error {
			return st, 0, nil
		}
		if st.IsSuccess() && placed > 0 {
			fits = append(fits, candidate{d: d, placed: placed, full: full})
		} else if firstFailure == "" {
			firstFailure = st.Message()
		}
	}
	if len(fits) == 0 {
		// kube-scheduler v1.37.2's words, the first domain's reason
		// (explain tells the domains apart).
		return framework.NewStatus(framework.Unschedulable, errPodGroupUnschedulable.Error(),
			fmt.Sprintf("0/%d placements are available, first placement status: %s", len(doms), firstFailure)), 0, nil
	}
	most := 0
	for _, c := range fits {
		most = max(most, group.Scheduled+c.placed)
	}
	best, ties := 0, 1
	var bestScore int64 = -1
	for i, c := range fits {
		score := int64(group.Scheduled+c.placed)*framework.MaxNodeScore/int64(most) + c.full
		switch {
		case score > bestScore:
			best, ties, bestScore = i, 1, score
		case score == bestScore:
			ties++
			if s.rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	s.restrictTo(fits[best].d.nodes)
	return s.placeMembers(ctx, prof, group, live, start, out)
}

// restrictTo makes the cycle's nodes those named (nil: all).
func (s *Scheduler) restrictTo(nodes map[string]bool) { s.placementNodes = nodes }

// cycleNodes are the nodes a cycle filters: the snapshot's, or the
// domain's while a group is placed in one.
func (s *Scheduler) cycleNodes() []*framework.NodeInfo {
	all := s.snapshot.List()
	if s.placementNodes == nil {
		return all
	}
	out := make([]*framework.NodeInfo, 0, len(s.placementNodes))
	for _, ni := range all {
		if s.placementNodes[ni.NodeName()] {
			out = append(out, ni)
		}
	}
	return out
}

// mostAllocated is NodeResourcesFit's MostAllocated score of the named
// nodes taken together, as they stand: requested over allocatable cpu
// and memory, each weighing 1, from 0 to MaxNodeScore.
func (s *Scheduler) mostAllocated(nodes map[string]bool) int64 {
	var req, alloc framework.Resource
	for name := range nodes {
		ni, err := s.snapshot.Get(name)
		if err != nil {
			continue
		}
		req.AddResource(&ni.Requested, 1)
		alloc.AddResource(&ni.Allocatable, 1)
	}
	var sum int64
	for _, r := range []struct{ req, alloc int64 }{{req.MilliCPU, alloc.MilliCPU}, {req.Memory, alloc.Memory}} {
		if r.alloc > 0 {
			sum += min(r.req, r.alloc) * framework.MaxNodeScore / r.alloc
		}
	}
	return sum / 2
}
