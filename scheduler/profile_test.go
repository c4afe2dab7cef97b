package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// A profile runs each plugin where the file places it and at its steps:
// NodeName, a filter as in kube-scheduler, narrows the cycle in PreFilter
// too; ImageLocality, a scorer, prepares in PreScore. DefaultPreemption
// at preEnqueue runs nothing there (its PostFilter holds back a pod whose
// evictions are under way).
func TestProfileSteps(t *testing.T) {
	names := func(ps []framework.Plugin) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name())
		}
		return out
	}
	tests := []struct {
		name                string
		p                   framework.Profile
		preFilter, preScore []string
		preEnqueue          int
		preempts            bool
	}{{
		// NodeName's PreFilter is a point since kube-scheduler v1.37:
		// listed at filter only, it does not run at preFilter.
		name: "steps of plugins placed at the points they serve",
		p: framework.Profile{
			Filter:     []string{"NodeName"},
			Score:      []framework.WeightedPlugin{{Name: "ImageLocality", Weight: 1}},
			PreEnqueue: []string{registry.DefaultPreemptionName},
			PostFilter: []string{registry.DefaultPreemptionName},
		},
		preScore: []string{"ImageLocality"},
		preempts: true,
	}, {
		name: "no steps of plugins not placed",
		p: framework.Profile{
			PreFilter: []string{"NodePorts"},
			Filter:    []string{"NodePorts"},
		},
		preFilter: []string{"NodePorts"},
	}, {
		name:       "the default profile",
		p:          registry.DefaultProfile("s"),
		preFilter:  []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"},
		preScore:   []string{"ImageLocality", "TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation"},
		preEnqueue: 2, // DynamicResources, GangScheduling
		preempts:   true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.SchedulerName = "s"
			s, err := New(Options{Registry: registry.NewInTree(), Profiles: []framework.Profile{tc.p}})
			if err != nil {
				t.Fatal(err)
			}
			prof := s.profiles["s"]
			var pre, ps []framework.Plugin
			for _, p := range prof.preFilter {
				pre = append(pre, p)
			}
			for _, p := range prof.preScore {
				ps = append(ps, p)
			}
			if diff := cmp.Diff(tc.preFilter, names(pre)); diff != "" {
				t.Errorf("preFilter (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.preScore, names(ps)); diff != "" {
				t.Errorf("preScore (-want +got):\n%s", diff)
			}
			if len(prof.preEnqueue) != tc.preEnqueue {
				t.Errorf("%d preEnqueue plugins, want %d", len(prof.preEnqueue), tc.preEnqueue)
			}
			if got := prof.planner != nil; got != tc.preempts {
				t.Errorf("preempts = %v, want %v", got, tc.preempts)
			}
		})
	}
}
