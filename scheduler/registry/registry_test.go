package registry

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/yardmaster-io/yardmaster/framework"
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
		"PrioritySort":                    {framework.PointQueueSort},
		"SchedulingGates":                 {framework.PointPreEnqueue},
		"NodeUnschedulable":               {framework.PointPreFilter, framework.PointFilter},
		"NodeName":                        {framework.PointPreFilter, framework.PointFilter},
		"TaintToleration":                 {framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		"NodeAffinity":                    {framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		"NodePorts":                       {framework.PointPreFilter, framework.PointFilter},
		"NodeResourcesFit":                {framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		"VolumeRestrictions":              {framework.PointPreFilter, framework.PointFilter},
		"NodeVolumeLimits":                {framework.PointPreFilter, framework.PointFilter},
		"VolumeBinding":                   {framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore, framework.PointReserve, framework.PointPreBind},
		"VolumeZone":                      {framework.PointPreFilter, framework.PointFilter},
		"PodTopologySpread":               {framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		"InterPodAffinity":                {framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
		"DynamicResources":                {framework.PointPreEnqueue, framework.PointPreFilter, framework.PointFilter, framework.PointPostFilter, framework.PointScore, framework.PointReserve, framework.PointPreBind},
		"DefaultPreemption":               {framework.PointPreEnqueue, framework.PointPostFilter},
		"NodeResourcesBalancedAllocation": {framework.PointPreScore, framework.PointScore},
		"ImageLocality":                   {framework.PointScore},
		"DefaultBinder":                   {framework.PointBind},
		"NodeDeclaredFeatures":            {framework.PointPreFilter, framework.PointFilter},
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
		p     framework.Profile
		point string
		want  []string
	}{{
		name:  "ImageLocality scoring runs its PreScore step",
		p:     framework.Profile{PreScore: []string{"TaintToleration"}, Score: []framework.WeightedPlugin{{Name: "TaintToleration", Weight: 3}, {Name: "ImageLocality", Weight: 1}}},
		point: framework.PointPreScore,
		want:  []string{"ImageLocality", "TaintToleration"},
	}, {
		name:  "ImageLocality not scoring: no step",
		p:     framework.Profile{PreScore: []string{"TaintToleration"}, Score: []framework.WeightedPlugin{{Name: "TaintToleration", Weight: 3}}},
		point: framework.PointPreScore,
		want:  []string{"TaintToleration"},
	}, {
		// NodeName's PreFilter is a point since kube-scheduler v1.37
		// made it one: it runs where the profile lists it, not as a step.
		name:  "NodeName at filter only: no PreFilter",
		p:     framework.Profile{PreFilter: []string{"NodePorts"}, Filter: []string{"NodePorts", "NodeName"}},
		point: framework.PointPreFilter,
		want:  []string{"NodePorts"},
	}, {
		name:  "no step at score",
		p:     framework.Profile{Score: []framework.WeightedPlugin{{Name: "ImageLocality", Weight: 1}}},
		point: framework.PointScore,
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
	if got := reg.RunAt(&def, framework.PointPreFilter); got[0] != "NodeName" || !slices.Equal(got, def.PreFilter) {
		t.Errorf("default preFilter runs %v", got)
	}
	if got := reg.RunAt(&def, framework.PointPreScore); got[0] != "ImageLocality" || !slices.Equal(got[1:], def.PreScore) {
		t.Errorf("default preScore runs %v", got)
	}
}
