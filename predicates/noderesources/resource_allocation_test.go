package noderesources

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// scorePlugin is what both resource scorers are.
type scorePlugin interface {
	framework.PreScorePlugin
	framework.ScorePlugin
}

// scoreNode returns the NodeInfo of node with pods already on it.
func scoreNode(node *v1.Node, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

// makeNode returns a node builder with cpu, memory and 110 pods.
func makeNode(cpu, mem string) *frameworktest.NodeWrapper {
	return frameworktest.MakeNode().Name("n").Capacity(cpu, mem, 110)
}

// onNode returns a pod already bound to "n" with the given requests.
func onNode(cpu, mem string) *v1.Pod {
	return frameworktest.MakePod().Name(fmt.Sprintf("existing-%s-%s", cpu, mem)).Node("n").Req(cpu, mem).Obj()
}

// withPodLevel sets pod-level requests (spec.resources).
func withPodLevel(pod *v1.Pod, rl map[v1.ResourceName]string) *v1.Pod {
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{}}
	for k, v := range rl {
		pod.Spec.Resources.Requests[k] = resource.MustParse(v)
	}
	return pod
}

// scores runs PreScore once and Score on every node, as a cycle does.
func scores(t *testing.T, pl scorePlugin, pod *v1.Pod, nodes []*framework.NodeInfo) []int64 {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	if s := pl.PreScore(ctx, state, pod, nodes); !s.IsSuccess() {
		t.Fatalf("PreScore: %v %s", s.Code(), s.Message())
	}
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		score, s := pl.Score(ctx, state, pod, n)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v %s", s.Code(), s.Message())
		}
		out[i] = score
	}
	return out
}

func fitArgs(typ framework.ScoringStrategyType, resources ...framework.ResourceSpec) *FitArgs {
	return &FitArgs{ScoringStrategy: &framework.ScoringStrategy{Type: typ, Resources: resources}}
}

func rtcrArgs(shape []framework.UtilizationShapePoint, resources ...framework.ResourceSpec) *FitArgs {
	a := fitArgs(framework.RequestedToCapacityRatio, resources...)
	a.ScoringStrategy.RequestedToCapacityRatio = &framework.RequestedToCapacityRatioParam{Shape: shape}
	return a
}

func res(name v1.ResourceName, weight int64) framework.ResourceSpec {
	return framework.ResourceSpec{Name: string(name), Weight: weight}
}

func TestFitScore(t *testing.T) {
	linear := []framework.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}
	tests := []struct {
		name  string
		args  *FitArgs
		pod   *v1.Pod
		nodes []*framework.NodeInfo
		want  []int64
	}{
		// LeastAllocated.
		{
			// n1: cpu (4000-1000)*100/4000 = 75, memory (8-2)*100/8 = 75 -> 75.
			// n2: cpu (8000-1000)*100/8000 = 87, memory (16-2)*100/16 = 87 -> 87.
			name:  "least allocated: default args favour the emptier node",
			pod:   frameworktest.MakePod().Req("1", "2Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj()), scoreNode(makeNode("8", "16Gi").Obj())},
			want:  []int64{75, 87},
		},
		{
			// cpu (4000-2000-1000)*100/4000 = 25, memory (8-4-2)*100/8 = 25 -> 25.
			name:  "least allocated: existing pods count",
			pod:   frameworktest.MakePod().Req("1", "2Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj(), onNode("2", "4Gi"))},
			want:  []int64{25},
		},
		{
			// Empty node: cpu (1000-100)*100/1000 = 90, memory
			// (1024-200)*100/1024 = 80 -> (90+80)/2 = 85.
			// With a request-less pod on it: cpu (1000-200)*100/1000 = 80,
			// memory (1024-400)*100/1024 = 60 -> 70.
			name: "least allocated: request-less pods count at 100m and 200Mi",
			pod:  frameworktest.MakePod().Obj(),
			nodes: []*framework.NodeInfo{
				scoreNode(makeNode("1", "1Gi").Obj()),
				scoreNode(makeNode("1", "1Gi").Obj(), frameworktest.MakePod().Name("e").Node("n").Obj()),
			},
			want: []int64{85, 70},
		},
		{
			// An explicit 0 is not defaulted: cpu 100, memory 100 -> 100.
			name:  "least allocated: explicit zero requests stay zero",
			pod:   frameworktest.MakePod().Req("0", "0").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("1", "1Gi").Obj())},
			want:  []int64{100},
		},
		{
			// cpu (4000-2000)*100/4000 = 50 (weight 3), memory (8-2)*100/8 = 75
			// (weight 1) -> (50*3+75*1)/4 = 225/4 = 56.
			name:  "least allocated: weights",
			args:  fitArgs(framework.LeastAllocated, res(v1.ResourceCPU, 3), res(v1.ResourceMemory, 1)),
			pod:   frameworktest.MakePod().Req("2", "2Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{56},
		},
		{
			// cpu 1000+500 > 1000 -> 0; memory (8-1-1)*100/8 = 75 -> 75/2 = 37.
			name:  "least allocated: an overcommitted resource scores 0",
			pod:   frameworktest.MakePod().Req("500m", "1Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("1", "8Gi").Obj(), onNode("1", "1Gi"))},
			want:  []int64{37},
		},
		{
			// No allocatable at all: nothing to score -> 0.
			// No memory: only cpu, (4000-1000)*100/4000 = 75.
			name: "least allocated: resources with zero allocatable are skipped",
			pod:  frameworktest.MakePod().Req("1", "1Gi").Obj(),
			nodes: []*framework.NodeInfo{
				scoreNode(makeNode("0", "0").Obj()),
				scoreNode(makeNode("4", "0").Obj()),
			},
			want: []int64{0, 75},
		},
		{
			// n1: cpu (4000-1000)*100/4000 = 75, foo (2-1)*100/2 = 50 -> 62.
			// n2 has no foo: cpu alone -> 75.
			name: "least allocated: extended resource",
			args: fitArgs(framework.LeastAllocated, res(v1.ResourceCPU, 1), res("example.com/foo", 1)),
			pod:  frameworktest.MakePod().Req("1", "").Res(map[v1.ResourceName]string{"example.com/foo": "1"}).Obj(),
			nodes: []*framework.NodeInfo{
				scoreNode(makeNode("4", "8Gi").Allocatable(map[v1.ResourceName]string{"example.com/foo": "2"}).Obj()),
				scoreNode(makeNode("4", "8Gi").Obj()),
			},
			want: []int64{62, 75},
		},
		{
			// The pod requests no foo, so foo is not scored on n1 either:
			// cpu alone, 75, on both nodes.
			name: "least allocated: extended resource the pod does not request",
			args: fitArgs(framework.LeastAllocated, res(v1.ResourceCPU, 1), res("example.com/foo", 1)),
			pod:  frameworktest.MakePod().Req("1", "").Obj(),
			nodes: []*framework.NodeInfo{
				scoreNode(makeNode("4", "8Gi").Allocatable(map[v1.ResourceName]string{"example.com/foo": "2"}).Obj()),
				scoreNode(makeNode("4", "8Gi").Obj()),
			},
			want: []int64{75, 75},
		},
		{
			// ephemeral-storage (100-10-10)*100/100 = 80, hugepages-2Mi
			// (4-1-1)*100/4 = 50 -> 65.
			name: "least allocated: ephemeral storage and hugepages",
			args: fitArgs(framework.LeastAllocated, res(v1.ResourceEphemeralStorage, 1), res("hugepages-2Mi", 1)),
			pod: frameworktest.MakePod().Res(map[v1.ResourceName]string{
				v1.ResourceEphemeralStorage: "10Gi", "hugepages-2Mi": "1Gi",
			}).Obj(),
			nodes: []*framework.NodeInfo{scoreNode(
				makeNode("4", "8Gi").Allocatable(map[v1.ResourceName]string{v1.ResourceEphemeralStorage: "100Gi", "hugepages-2Mi": "4Gi"}).Obj(),
				frameworktest.MakePod().Name("e").Node("n").Res(map[v1.ResourceName]string{
					v1.ResourceEphemeralStorage: "10Gi", "hugepages-2Mi": "1Gi",
				}).Obj(),
			)},
			want: []int64{65},
		},
		{
			// cpu max(1000, init 3000) = 3000 -> (4000-3000)*100/4000 = 25;
			// memory max(1Gi, 1Gi) -> (8-1)*100/8 = 87 -> (25+87)/2 = 56.
			name:  "least allocated: init containers",
			pod:   frameworktest.MakePod().Req("1", "1Gi").InitReq("3", "1Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{56},
		},
		{
			// Container 1000m + 200Mi (default), request-less sidecar 100m +
			// 200Mi: cpu 1100 -> (2000-1100)*100/2000 = 45; memory 400Mi ->
			// (1024-400)*100/1024 = 60 -> (45+60)/2 = 52.
			name:  "least allocated: request-less sidecar counts at the defaults",
			pod:   frameworktest.MakePod().Req("1", "").SidecarReq("", "").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("2", "1Gi").Obj())},
			want:  []int64{52},
		},
		{
			// cpu 1000 + overhead 1000 -> 50; memory 1Gi + 1Gi -> 75 -> 62.
			name:  "least allocated: overhead",
			pod:   frameworktest.MakePod().Req("1", "1Gi").Overhead("1", "1Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{62},
		},
		{
			// Scored on the containers, 2000 and 2Gi: 50 and 75 -> 62. (With
			// the pod-level 1000 and 1Gi it would be 75 and 87 -> 81, but
			// kube-scheduler v1.37's scorer does not see pod-level requests.)
			name: "least allocated: pod-level requests are not scored",
			pod: withPodLevel(frameworktest.MakePod().Req("2", "2Gi").Obj(),
				map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{62},
		},
		{
			// The pod on the node has pod-level memory 1Gi and cpu 200m
			// from one of its two containers: kube-scheduler counts it at
			// cpu 200 (no default once cpu is requested anywhere), not
			// 200+100. cpu 200+1000 -> (2000-1200)*100/2000 = 40; memory
			// 1Gi+1Gi -> (4-2)*100/4 = 50 -> 45.
			name: "least allocated: a pod-level pod on the node counts no cpu default",
			pod:  frameworktest.MakePod().Req("1", "1Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("2", "4Gi").Obj(),
				withPodLevel(frameworktest.MakePod().Name("pl").Node("n").Req("200m", "").Container("", "").Obj(),
					map[v1.ResourceName]string{v1.ResourceMemory: "1Gi"}))},
			want: []int64{45},
		},

		// MostAllocated.
		{
			// n1: cpu (1000+1000)*100/4000 = 50, memory (2+2)*100/8 = 50 -> 50.
			// n2: cpu 1000*100/8000 = 12, memory 2*100/16 = 12 -> 12.
			name: "most allocated: favours the fuller node",
			args: fitArgs(framework.MostAllocated),
			pod:  frameworktest.MakePod().Req("1", "2Gi").Obj(),
			nodes: []*framework.NodeInfo{
				scoreNode(makeNode("4", "8Gi").Obj(), onNode("1", "2Gi")),
				scoreNode(makeNode("8", "16Gi").Obj()),
			},
			want: []int64{50, 12},
		},
		{
			// cpu 100+100 (defaults) > 150 -> capped -> 100; memory
			// 400Mi*100/1024Mi = 39 -> (100+39)/2 = 69.
			name:  "most allocated: requested above allocatable is capped",
			args:  fitArgs(framework.MostAllocated),
			pod:   frameworktest.MakePod().Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("150m", "1Gi").Obj(), frameworktest.MakePod().Name("e").Node("n").Obj())},
			want:  []int64{69},
		},
		{
			// cpu 1000*100/4000 = 25 (weight 1), memory 4*100/8 = 50 (weight 4)
			// -> (25+200)/5 = 45.
			name:  "most allocated: weights",
			args:  fitArgs(framework.MostAllocated, res(v1.ResourceCPU, 1), res(v1.ResourceMemory, 4)),
			pod:   frameworktest.MakePod().Req("1", "4Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{45},
		},

		// RequestedToCapacityRatio.
		{
			// Utilization 25 and 25 through (0,0)-(100,100): 25 and 25 -> 25.
			name:  "requested to capacity ratio: linear shape packs",
			args:  rtcrArgs(linear),
			pod:   frameworktest.MakePod().Req("1", "2Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{25},
		},
		{
			// cpu utilization 1000*100/3000 = 33 -> 100 + (0-100)*33/100 = 67;
			// memory 25 -> 75; round((67+75)/2) = 71.
			name: "requested to capacity ratio: falling shape spreads, interpolation truncates",
			args: rtcrArgs([]framework.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}),
			pod:  frameworktest.MakePod().Req("1", "2Gi").Obj(),
			nodes: []*framework.NodeInfo{
				scoreNode(makeNode("3", "8Gi").Obj()),
			},
			want: []int64{71},
		},
		{
			// Shape (20,20) (60,80) (80,100), cpu only:
			// 10cpu: utilization 10, before the first point -> 20.
			// 2500m: utilization 40 -> 20 + (80-20)*(40-20)/(60-20) = 50.
			// 1100m: utilization 90, after the last point -> 100.
			// 1428m: utilization 1000*100/1428 = 70 -> 80 + 20*10/20 = 90.
			name: "requested to capacity ratio: piecewise interpolation and flat ends",
			args: rtcrArgs([]framework.UtilizationShapePoint{
				{Utilization: 20, Score: 2}, {Utilization: 60, Score: 8}, {Utilization: 80, Score: 10},
			}, res(v1.ResourceCPU, 1)),
			pod: frameworktest.MakePod().Req("1", "").Obj(),
			nodes: []*framework.NodeInfo{
				scoreNode(makeNode("10", "8Gi").Obj()),
				scoreNode(makeNode("2500m", "8Gi").Obj()),
				scoreNode(makeNode("1100m", "8Gi").Obj()),
				scoreNode(makeNode("1428m", "8Gi").Obj()),
			},
			want: []int64{20, 50, 100, 90},
		},
		{
			// cpu utilization 50 -> 50; memory 200Mi (default) of 64Gi is
			// utilization 0 -> 0, and a 0 score drops out of the average,
			// weight and all: 50/1 = 50, not (50+0)/2 = 25.
			name:  "requested to capacity ratio: a resource scoring 0 leaves the average",
			args:  rtcrArgs(linear),
			pod:   frameworktest.MakePod().Req("1", "").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("2", "64Gi").Obj())},
			want:  []int64{50},
		},
		{
			// cpu 25 (weight 1), memory 50 (weight 2): (25+100)/3 = 41.67,
			// rounded to 42 (LeastAllocated and MostAllocated truncate).
			name:  "requested to capacity ratio: the average rounds",
			args:  rtcrArgs(linear, res(v1.ResourceCPU, 1), res(v1.ResourceMemory, 2)),
			pod:   frameworktest.MakePod().Req("1", "4Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{42},
		},
		{
			// cpu 1000+1000 > 1000: utilization counts as 100 -> 100.
			name:  "requested to capacity ratio: overcommitted is 100% utilized",
			args:  rtcrArgs(linear, res(v1.ResourceCPU, 1)),
			pod:   frameworktest.MakePod().Req("1", "").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("1", "8Gi").Obj(), onNode("1", ""))},
			want:  []int64{100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := NewFitScorer(tt.args)
			if err != nil {
				t.Fatalf("NewFit: %v", err)
			}
			if diff := cmp.Diff(tt.want, scores(t, pl, tt.pod, tt.nodes)); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFitScoreWithoutPreScore(t *testing.T) {
	// Like kube-scheduler, Score computes the requests itself when PreScore
	// did not run: (4000-1000)*100/4000 = 75 and (8-2)*100/8 = 75.
	pl, err := NewFitScorer(nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := frameworktest.MakePod().Req("1", "2Gi").Obj()
	got, s := pl.Score(context.Background(), framework.NewCycleState(), pod, scoreNode(makeNode("4", "8Gi").Obj()))
	if !s.IsSuccess() || got != 75 {
		t.Errorf("Score = %d, %v; want 75, success", got, s.Message())
	}
}

func TestNewFit(t *testing.T) {
	shape := func(points ...int32) *framework.RequestedToCapacityRatioParam {
		p := &framework.RequestedToCapacityRatioParam{}
		for i := 0; i < len(points); i += 2 {
			p.Shape = append(p.Shape, framework.UtilizationShapePoint{Utilization: points[i], Score: points[i+1]})
		}
		return p
	}
	withShape := func(a *FitArgs, p *framework.RequestedToCapacityRatioParam) *FitArgs {
		a.ScoringStrategy.RequestedToCapacityRatio = p
		return a
	}
	tests := []struct {
		name    string
		args    *FitArgs
		wantErr []string // substrings of the error; none for no error
	}{
		{name: "nil args", args: nil},
		{name: "nil strategy", args: &FitArgs{}},
		{name: "zero weight defaults to 1", args: fitArgs(framework.MostAllocated, res(v1.ResourceCPU, 0))},
		{name: "weight 100", args: fitArgs(framework.LeastAllocated, res(v1.ResourceCPU, 100))},
		{name: "valid shape", args: withShape(fitArgs(framework.RequestedToCapacityRatio), shape(0, 0, 50, 10, 100, 0))},
		{
			name:    "unknown strategy",
			args:    fitArgs("Balanced"),
			wantErr: []string{`scoringStrategy.type: Unsupported value: "Balanced"`},
		},
		{
			name:    "empty strategy type",
			args:    fitArgs(""),
			wantErr: []string{`scoringStrategy.type: Unsupported value: ""`},
		},
		{
			name:    "negative weight",
			args:    fitArgs(framework.LeastAllocated, res(v1.ResourceCPU, -1)),
			wantErr: []string{`scoringStrategy.resources[0].weight: Invalid value: -1: weight of resource "cpu" not in range [1, 100]`},
		},
		{
			name:    "weight above 100",
			args:    fitArgs(framework.LeastAllocated, res(v1.ResourceCPU, 1), res(v1.ResourceMemory, 101)),
			wantErr: []string{`scoringStrategy.resources[1].weight: Invalid value: 101`},
		},
		{
			name:    "RequestedToCapacityRatio without shape",
			args:    fitArgs(framework.RequestedToCapacityRatio),
			wantErr: []string{"scoringStrategy.requestedToCapacityRatio: Required value"},
		},
		{
			name:    "empty shape",
			args:    withShape(fitArgs(framework.RequestedToCapacityRatio), shape()),
			wantErr: []string{"scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point"},
		},
		{
			name:    "shape not strictly increasing",
			args:    withShape(fitArgs(framework.RequestedToCapacityRatio), shape(10, 1, 10, 2)),
			wantErr: []string{"scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: values must be sorted in strictly increasing order"},
		},
		{
			name:    "utilization above 100",
			args:    withShape(fitArgs(framework.RequestedToCapacityRatio), shape(0, 0, 101, 10)),
			wantErr: []string{"scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 101: not in range [0, 100]"},
		},
		{
			name:    "score above 10",
			args:    withShape(fitArgs(framework.RequestedToCapacityRatio), shape(0, 11)),
			wantErr: []string{"scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in range [0, 10]"},
		},
		{
			name:    "negative score",
			args:    withShape(fitArgs(framework.RequestedToCapacityRatio), shape(0, -1)),
			wantErr: []string{"scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: -1"},
		},
		{
			name:    "shape with another strategy",
			args:    withShape(fitArgs(framework.LeastAllocated), shape(0, 0, 100, 10)),
			wantErr: []string{"scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"},
		},
		{
			name:    "ignored resource group with a slash",
			args:    &FitArgs{IgnoredResourceGroups: []string{"example.com/foo"}},
			wantErr: []string{"ignoredResourceGroups[0]: Invalid value: \"example.com/foo\": resource group name can't contain '/'"},
		},
		{
			name:    "invalid ignored resource",
			args:    &FitArgs{IgnoredResources: []string{"-foo"}},
			wantErr: []string{`ignoredResources[0]: Invalid value: "-foo"`},
		},
		{
			// Every invalid field is named, not just the first.
			name: "several errors at once",
			args: withShape(fitArgs("Balanced", res(v1.ResourceCPU, 0), res(v1.ResourceMemory, 200)), shape(0, 0)),
			wantErr: []string{
				`scoringStrategy.type: Unsupported value: "Balanced"`,
				"scoringStrategy.resources[1].weight: Invalid value: 200",
				"scoringStrategy.requestedToCapacityRatio: Forbidden",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewFitScorer(tt.args)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Errorf("NewFit: unexpected error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("NewFit: no error, want one containing %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("NewFit error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestNewFitLeavesArgsAlone(t *testing.T) {
	args := fitArgs(framework.LeastAllocated, res(v1.ResourceCPU, 0))
	if _, err := NewFitScorer(args); err != nil {
		t.Fatal(err)
	}
	want := []framework.ResourceSpec{{Name: "cpu", Weight: 0}}
	if diff := cmp.Diff(want, args.ScoringStrategy.Resources); diff != "" {
		t.Errorf("NewFit changed its args (-want +got):\n%s", diff)
	}
}

// benchmarkNodes returns 5,000 nodes of varying size and load.
func benchmarkNodes() []*framework.NodeInfo {
	nodes := make([]*framework.NodeInfo, 5000)
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i)
		node := frameworktest.MakeNode().Name(name).Capacity(fmt.Sprint(16+i%48), fmt.Sprintf("%dGi", 64+i%192), 110).
			Allocatable(map[v1.ResourceName]string{"example.com/gpu": "8"}).Obj()
		var pods []*v1.Pod
		for j := range i % 20 {
			pods = append(pods, frameworktest.MakePod().Name(fmt.Sprintf("%s-p%d", name, j)).Node(name).Req("500m", "1Gi").Obj())
		}
		nodes[i] = scoreNode(node, pods...)
	}
	return nodes
}

// benchmarkScore scores one pod on 5,000 nodes, Score called directly; the
// per-node call must not allocate.
func benchmarkScore(b *testing.B, pl scorePlugin) {
	ctx := context.Background()
	nodes := benchmarkNodes()
	pod := frameworktest.MakePod().Name("p").Req("2", "4Gi").SidecarReq("100m", "").
		Res(map[v1.ResourceName]string{"example.com/gpu": "1"}).Obj()
	state := framework.NewCycleState()
	if s := pl.PreScore(ctx, state, pod, nodes); !s.IsSuccess() {
		b.Fatal(s.Message())
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, s := pl.Score(ctx, state, pod, nodes[i%len(nodes)]); !s.IsSuccess() {
			b.Fatal(s.Message())
		}
	}
}

func BenchmarkLeastAllocatedScore(b *testing.B) {
	pl, err := NewFitScorer(fitArgs(framework.LeastAllocated,
		res(v1.ResourceCPU, 1), res(v1.ResourceMemory, 1), res("example.com/gpu", 3)))
	if err != nil {
		b.Fatal(err)
	}
	benchmarkScore(b, pl)
}

func BenchmarkRequestedToCapacityRatioScore(b *testing.B) {
	pl, err := NewFitScorer(rtcrArgs([]framework.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}))
	if err != nil {
		b.Fatal(err)
	}
	benchmarkScore(b, pl)
}
