package gangscheduling

import "github.com/yardmaster-io/yardmaster/framework"

// Registration is GangScheduling's, for a framework.Registry. As in
// kube-scheduler v1.37, a file may name it at preEnqueue and permit; its
// group check (kube-scheduler's PlacementFeasible) runs wherever it is
// enabled.
func Registration() framework.Registration {
	return framework.Registration{
		Name:   Name,
		Points: []string{framework.PointPreEnqueue, framework.PointPermit},
		New: func(_ any, h framework.Handle) ([]framework.Plugin, error) {
			var groups framework.PodGroupLister = noPodGroups{}
			if ph, ok := h.(framework.PodGroupHandle); ok && ph.PodGroups() != nil {
				groups = ph.PodGroups()
			}
			return []framework.Plugin{New(groups, h.SnapshotSharedLister())}, nil
		},
	}
}

// noPodGroups is the lister of a handle that has none (a plugin built
// outside a scheduler): no PodGroup exists, so a member waits.
type noPodGroups struct{}

func (noPodGroups) Get(key framework.PodGroupKey) framework.PodGroupInfo {
	return framework.PodGroupInfo{Key: key}
}

func (noPodGroups) Peek(key framework.PodGroupKey) framework.PodGroupInfo {
	return framework.PodGroupInfo{Key: key}
}

func (noPodGroups) Served(framework.PodGroupAPI) bool { return false }
