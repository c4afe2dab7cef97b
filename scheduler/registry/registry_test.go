package registry

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A file may name each of kube-scheduler's in-tree plugins exactly where
// kube-scheduler v1.37.2 accepts it: the points its plugin implements
// (its `var _ fwk.XPlugin` checks; v1.37 made NodeUnschedulable, NodeName
// and TaintToleration PreFilter plugins). GangScheduling,
// TopologyPlacementGenerator, PodGroupPodsCount and DeferredPodScheduling
// are not in yardmaster, nor is the pod-group point podGroupPostFilter
// (DynamicResources and DefaultPreemption implement it).
func TestKubeSchedulerPoints(t *testing.T) {
	kube := map[string][]string{
		"PrioritySort":                    {QueueSort},
		"SchedulingGates":                 {PreEnqueue},
		"NodeUnschedulable":               {PreFilter, Filter},
		"NodeName":                        {PreFilter, Filter},
		"TaintToleration":                 {PreFilter, Filter, PreScore, Score},
		"NodeAffinity":                    {PreFilter, Filter, PreScore, Score},
		"NodePorts":                       {PreFilter, Filter},
		"NodeResourcesFit":                {PreFilter, Filter, PreScore, Score},
		"VolumeRestrictions":              {PreFilter, Filter},
		"NodeVolumeLimits":                {PreFilter, Filter},
		"VolumeBinding":                   {PreFilter, Filter, PreScore, Score, Reserve, PreBind},
		"VolumeZone":                      {PreFilter, Filter},
		"PodTopologySpread":               {PreFilter, Filter, PreScore, Score},
		"InterPodAffinity":                {PreFilter, Filter, PreScore, Score},
		"DynamicResources":                {PreEnqueue, PreFilter, Filter, PostFilter, Score, Reserve, PreBind},
		"DefaultPreemption":               {PreEnqueue, PostFilter},
		"NodeResourcesBalancedAllocation": {PreScore, Score},
		"ImageLocality":                   {Score},
		"DefaultBinder":                   {Bind},
		"NodeDeclaredFeatures":            {PreFilter, Filter},
	}
	reg := NewInTree()
	for name, want := range kube {
		r, ok := reg[name]
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if diff := cmp.Diff(want, r.Points, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("%s's points (-kube-scheduler +yardmaster):\n%s", name, diff)
		}
	}
}

// Steps run where the plugin runs at the point they serve, before the
// plugins listed at their own point, and nowhere else.
func TestRunAt(t *testing.T) {
	reg := NewInTree()
	tests := []struct {
		name  string
		p     Profile
		point string
		want  []string
	}{{
		name:  "ImageLocality scoring runs its PreScore step",
		p:     Profile{PreScore: []string{"TaintToleration"}, Score: []WeightedPlugin{{Name: "TaintToleration", Weight: 3}, {Name: "ImageLocality", Weight: 1}}},
		point: PreScore,
		want:  []string{"ImageLocality", "TaintToleration"},
	}, {
		name:  "ImageLocality not scoring: no step",
		p:     Profile{PreScore: []string{"TaintToleration"}, Score: []WeightedPlugin{{Name: "TaintToleration", Weight: 3}}},
		point: PreScore,
		want:  []string{"TaintToleration"},
	}, {
		// NodeName's PreFilter is a point since kube-scheduler v1.37
		// made it one: it runs where the profile lists it, not as a step.
		name:  "NodeName at filter only: no PreFilter",
		p:     Profile{PreFilter: []string{"NodePorts"}, Filter: []string{"NodePorts", "NodeName"}},
		point: PreFilter,
		want:  []string{"NodePorts"},
	}, {
		name:  "no step at score",
		p:     Profile{Score: []WeightedPlugin{{Name: "ImageLocality", Weight: 1}}},
		point: Score,
		want:  []string{"ImageLocality"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, reg.RunAt(&tc.p, tc.point)); diff != "" {
				t.Errorf("RunAt(%s) (-want +got):\n%s", tc.point, diff)
			}
		})
	}

	// The default profile runs what it ran when the steps were points.
	def := DefaultProfile("s")
	if slices.Contains(def.PreScore, "ImageLocality") {
		t.Errorf("the default profile lists a step: preScore %v", def.PreScore)
	}
	if got := reg.RunAt(&def, PreFilter); got[0] != "NodeName" || !slices.Equal(got, def.PreFilter) {
		t.Errorf("default preFilter runs %v", got)
	}
	if got := reg.RunAt(&def, PreScore); got[0] != "ImageLocality" || !slices.Equal(got[1:], def.PreScore) {
		t.Errorf("default preScore runs %v", got)
	}
}

func TestRegisterSteps(t *testing.T) {
	tests := []struct {
		name string
		r    Registration
		err  string // empty: registered
	}{
		{"a preFilter step of a filter", Registration{Name: "a", Points: []string{Filter}, Steps: map[string]string{PreFilter: Filter}}, ""},
		{"a step at a point that adds up", Registration{Name: "b", Points: []string{PreScore}, Steps: map[string]string{Score: PreScore}}, "only preFilter and preScore"},
		{"a step where the plugin is configured", Registration{Name: "c", Points: []string{PreFilter, Filter}, Steps: map[string]string{PreFilter: Filter}}, "where it is configured"},
		{"a step serving nothing", Registration{Name: "d", Points: []string{Filter}, Steps: map[string]string{PreScore: Score}}, "does not implement"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Registry{}.Register(tc.r)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("Register: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("Register = %v, want an error containing %q", err, tc.err)
			}
		})
	}
}
