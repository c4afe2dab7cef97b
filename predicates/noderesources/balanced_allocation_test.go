package noderesources

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// In every case below, balance = int((1-std)*100) over the capped
// requested/allocatable fractions, and
// score = 50 + (50 + balanceWithPod - balanceWithoutPod)/2.
func TestBalancedAllocationScore(t *testing.T) {
	withFoo := &BalancedAllocationArgs{Resources: []framework.ResourceSpec{
		res(v1.ResourceCPU, 1), res(v1.ResourceMemory, 1), res("example.com/foo", 1),
	}}
	fooNode := func(foo string) *v1.Node {
		return makeNode("4", "8Gi").Allocatable(map[v1.ResourceName]string{"example.com/foo": foo}).Obj()
	}
	tests := []struct {
		name  string
		args  *BalancedAllocationArgs
		pod   *v1.Pod
		nodes []*framework.NodeInfo
		want  []int64
	}{
		{
			// With: 0.25, 0.25 -> std 0 -> 100. Without: 0, 0 -> 100.
			// 50 + (50+100-100)/2 = 75.
			name:  "a pod that keeps the balance scores 75",
			pod:   frameworktest.MakePod().Req("1", "2Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{75},
		},
		{
			// With: 0.25, 0.5 -> std |0.25-0.5|/2 = 0.125 -> 87. Without: 100.
			// 50 + (50+87-100)/2 = 50 + 18 = 68.
			name:  "a pod that skews the node scores lower",
			pod:   frameworktest.MakePod().Req("1", "4Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{68},
		},
		{
			// Without: 0.75, 0.25 -> std 0.25 -> 75. With the pod's 4Gi:
			// 0.75, 0.75 -> 100. 50 + (50+100-75)/2 = 50 + 37 = 87.
			name:  "a pod that evens the node out scores higher",
			pod:   frameworktest.MakePod().Req("", "4Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj(), onNode("3", "2Gi"))},
			want:  []int64{87},
		},
		{
			// Plain requests: the request-less pod on the node counts for
			// nothing, the pod's missing memory is 0 (not 200Mi).
			// With: 0.5, 0 -> std 0.25 -> 75. Without: 0, 0 -> 100.
			// 50 + (50+75-100)/2 = 50 + 12 = 62.
			name:  "no non-zero defaults",
			pod:   frameworktest.MakePod().Req("2", "").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj(), frameworktest.MakePod().Name("e").Node("n").Obj())},
			want:  []int64{62},
		},
		{
			// With: 0.25, 0.25, 0.75 -> mean 5/12, variance
			// (2*(1/6)^2 + (1/3)^2)/3 = 1/18, std 0.2357 -> 76.
			// Without: 0, 0, 0 -> 100. 50 + (50+76-100)/2 = 50 + 13 = 63.
			name:  "three resources use the standard deviation",
			args:  withFoo,
			pod:   frameworktest.MakePod().Req("1", "2Gi").Res(map[v1.ResourceName]string{"example.com/foo": "3"}).Obj(),
			nodes: []*framework.NodeInfo{scoreNode(fooNode("4"))},
			want:  []int64{63},
		},
		{
			// foo is not requested, so it is left out (not counted as 0):
			// 0.25, 0.25 -> 100 both ways -> 75. On a node without foo, the same.
			name:  "an extended resource the pod does not request is left out",
			args:  withFoo,
			pod:   frameworktest.MakePod().Req("1", "2Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(fooNode("4")), scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{75, 75},
		},
		{
			// On the node without foo, foo is left out: 0.25, 0.25 -> 75, as
			// above. On the node with 4: 63, as in the three-resource case.
			name:  "an extended resource the node does not have is left out",
			args:  withFoo,
			pod:   frameworktest.MakePod().Req("1", "2Gi").Res(map[v1.ResourceName]string{"example.com/foo": "3"}).Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj()), scoreNode(fooNode("4"))},
			want:  []int64{75, 63},
		},
		{
			// Without: cpu 5000/4000 capped to 1, memory 0.125 -> std 0.4375
			// -> 56. With: cpu 1, memory 0.25 -> std 0.375 -> 62.
			// 50 + (50+62-56)/2 = 50 + 28 = 78.
			name:  "fractions are capped at 1",
			pod:   frameworktest.MakePod().Req("1", "1Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj(), onNode("5", "1Gi"))},
			want:  []int64{78},
		},
		{
			// No allocatable: no fraction, std 0, 100 both ways -> 75.
			name:  "node with zero allocatable",
			pod:   frameworktest.MakePod().Req("1", "1Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("0", "0").Obj())},
			want:  []int64{75},
		},
		{
			// Pod-level cpu 1000 replaces the containers' 2000: 0.25, 0.25
			// -> 75. (On the containers it would be 0.5, 0.25 -> 68.)
			name: "pod-level requests count",
			pod: withPodLevel(frameworktest.MakePod().Req("2", "2Gi").Obj(),
				map[v1.ResourceName]string{v1.ResourceCPU: "1"}),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{75},
		},
		{
			// Containers + sidecar: 2000, 2Gi. Init container beside the
			// sidecar: 3000+1000, 1Gi+1Gi. Max: 4000, 2Gi -> 0.5, 0.25 ->
			// std 0.125 -> 87. 50 + (50+87-100)/2 = 68.
			name:  "init and sidecar containers",
			pod:   frameworktest.MakePod().Req("1", "1Gi").SidecarReq("1", "1Gi").InitReq("3", "1Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("8", "8Gi").Obj())},
			want:  []int64{68},
		},
		{
			// 1000+1000, 1Gi+3Gi -> 0.5, 0.5 -> 100 -> 75.
			name:  "overhead",
			pod:   frameworktest.MakePod().Req("1", "1Gi").Overhead("1", "3Gi").Obj(),
			nodes: []*framework.NodeInfo{scoreNode(makeNode("4", "8Gi").Obj())},
			want:  []int64{75},
		},
		{
			// hugepages-2Mi and memory. Without: 0.5, 0.25 -> 87. With:
			// 0.75, 0.5 -> 87. 50 + (50+87-87)/2 = 75.
			name: "hugepages",
			args: &BalancedAllocationArgs{Resources: []framework.ResourceSpec{
				res(v1.ResourceMemory, 1), res("hugepages-2Mi", 1),
			}},
			pod: frameworktest.MakePod().Req("", "2Gi").Res(map[v1.ResourceName]string{"hugepages-2Mi": "1Gi"}).Obj(),
			nodes: []*framework.NodeInfo{scoreNode(
				makeNode("4", "8Gi").Allocatable(map[v1.ResourceName]string{"hugepages-2Mi": "4Gi"}).Obj(),
				frameworktest.MakePod().Name("e").Node("n").Req("", "4Gi").Res(map[v1.ResourceName]string{"hugepages-2Mi": "1Gi"}).Obj(),
			)},
			want: []int64{75},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := NewBalancedAllocation(tt.args)
			if err != nil {
				t.Fatalf("NewBalancedAllocation: %v", err)
			}
			if diff := cmp.Diff(tt.want, scores(t, pl, tt.pod, tt.nodes)); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBalancedAllocationSkipsBestEffortPods(t *testing.T) {
	ctx := context.Background()
	pl, err := NewBalancedAllocation(nil)
	if err != nil {
		t.Fatal(err)
	}
	// No cpu or memory request anywhere (an extended resource does not
	// count: it is not among the configured resources).
	pod := frameworktest.MakePod().Res(map[v1.ResourceName]string{"example.com/foo": "1"}).Obj()
	if s := pl.PreScore(ctx, framework.NewCycleState(), pod, nil); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip", s.Code())
	}
	// Without PreScore, Score computes the requests itself and gives 0.
	got, s := pl.Score(ctx, framework.NewCycleState(), pod, scoreNode(makeNode("4", "8Gi").Obj()))
	if !s.IsSuccess() || got != 0 {
		t.Errorf("Score = %d, %v; want 0, success", got, s.Message())
	}
}

func TestNewBalancedAllocation(t *testing.T) {
	tests := []struct {
		name    string
		args    *BalancedAllocationArgs
		wantErr string // a substring of the error; "" for none
	}{
		{name: "nil args"},
		{name: "empty resources", args: &BalancedAllocationArgs{}},
		{
			name: "zero weight defaults to 1",
			args: &BalancedAllocationArgs{Resources: []framework.ResourceSpec{res(v1.ResourceCPU, 0)}},
		},
		{
			name:    "weight other than 1",
			args:    &BalancedAllocationArgs{Resources: []framework.ResourceSpec{res(v1.ResourceCPU, 2)}},
			wantErr: `resources[0].weight: Invalid value: 2: weight of resource "cpu" must be 1`,
		},
		{
			name: "duplicate resource",
			args: &BalancedAllocationArgs{Resources: []framework.ResourceSpec{
				res(v1.ResourceCPU, 1), res(v1.ResourceMemory, 1), res(v1.ResourceCPU, 1),
			}},
			wantErr: `resources[2].name: Duplicate value: "cpu"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewBalancedAllocation(tt.args)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("no error, want one containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

// newResourceScorers returns NodeResourcesFit and
// NodeResourcesBalancedAllocation with their default arguments.
func newResourceScorers(t *testing.T) (*FitScorer, *BalancedAllocation) {
	t.Helper()
	fit, err := NewFitScorer(nil)
	if err != nil {
		t.Fatal(err)
	}
	ba, err := NewBalancedAllocation(nil)
	if err != nil {
		t.Fatal(err)
	}
	return fit, ba
}

func TestResourcePluginNames(t *testing.T) {
	fit, ba := newResourceScorers(t)
	got := []string{fit.Name(), ba.Name()}
	want := []string{"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if fit.ScoreExtensions() != nil || ba.ScoreExtensions() != nil {
		t.Error("ScoreExtensions should be nil: scores are already in [0, 100]")
	}
}

func BenchmarkBalancedAllocationScore(b *testing.B) {
	pl, err := NewBalancedAllocation(&BalancedAllocationArgs{Resources: []framework.ResourceSpec{
		res(v1.ResourceCPU, 1), res(v1.ResourceMemory, 1), res("example.com/gpu", 1),
	}})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkScore(b, pl)
}
