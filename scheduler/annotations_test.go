package scheduler

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// attempt runs one cycle for pod with a recorder and returns its
// annotations, decoded.
func attempt(t *testing.T, s *Scheduler, pod *v1.Pod) (map[string]map[string]string, map[string]map[string]string, string) {
	t.Helper()
	s.Cache.UpdateSnapshot(s.snapshot)
	prof := s.profiles[pod.Spec.SchedulerName]
	state := framework.NewCycleState()
	rec := &cycleRecorder{}
	res, _ := s.scheduleRecorded(context.Background(), prof, state, pod, rec)
	got := attemptResultsOf(prof, skipped(state.SkipFilterPlugins), rec, res.node).annotations()
	var filter, final map[string]map[string]string
	if err := json.Unmarshal([]byte(got[AnnotationFilterResult]), &filter); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got[AnnotationFinalScoreResult]), &final); err != nil {
		t.Fatal(err)
	}
	return filter, final, got[AnnotationSelectedNode]
}

func TestSimulatorAnnotations(t *testing.T) {
	s := newTestScheduler(t, 0,
		frameworktest.MakeNode().Name("a").Capacity("4", "16Gi", 110).Obj(),
		frameworktest.MakeNode().Name("b").Capacity("8", "16Gi", 110).Obj(),
		frameworktest.MakeNode().Name("cordoned").Capacity("8", "16Gi", 110).Unschedulable().Obj(),
		frameworktest.MakeNode().Name("small").Capacity("1", "16Gi", 110).Obj(),
	)
	filter, final, selected := attempt(t, s, frameworktest.MakePod().Name("web").Req("2", "1Gi").Obj())
	// NodeUnschedulable runs first; NodeResourcesFit after
	// TaintToleration (NodeName, NodeAffinity and NodePorts skip a pod
	// without a node name, affinity or ports: they did not run).
	if diff := cmp.Diff(map[string]string{"NodeUnschedulable": "node(s) were unschedulable"}, filter["cordoned"]); diff != "" {
		t.Errorf("cordoned (-want +got):\n%s", diff)
	}
	wantSmall := map[string]string{"NodeUnschedulable": passed, "TaintToleration": passed, "NodeResourcesFit": "Insufficient cpu"}
	if diff := cmp.Diff(wantSmall, filter["small"]); diff != "" {
		t.Errorf("small (-want +got):\n%s", diff)
	}
	for _, n := range []string{"a", "b"} {
		for plugin, v := range filter[n] {
			if v != passed {
				t.Errorf("%s: %s says %q", n, plugin, v)
			}
		}
	}
	// b has twice a's cpu: more free after the pod (LeastAllocated).
	fitA, _ := strconv.Atoi(final["a"]["NodeResourcesFit"])
	fitB, _ := strconv.Atoi(final["b"]["NodeResourcesFit"])
	if selected != "b" || fitB <= fitA || final["a"]["TaintToleration"] != "300" {
		t.Errorf("selected %q, final scores %v", selected, final)
	}
}
