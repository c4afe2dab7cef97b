package frameworktest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// recorder is a testing.TB that keeps what a check reports, so that a
// test can assert that the check fails.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// tierFilter rejects the nodes labelled tier=interactive for pods
// labelled tier=batch, and returns the node's zone in the reasons of
// every rejection. With signsTier unset it signs only the pod's cpu
// request, which is wrong: a batch pod and an interactive one then sign
// alike and get different answers.
type tierFilter struct{ signsTier bool }

var (
	_ framework.FilterPlugin = tierFilter{}
	_ framework.PodSigner    = tierFilter{}
)

func (tierFilter) Name() string { return "TierFilter" }

func (tierFilter) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	if pod.Labels["tier"] == "batch" && ni.Node().Labels["tier"] == "interactive" {
		return framework.NewStatus(framework.Unschedulable, "node(s) for interactive pods")
	}
	return nil
}

func (pl tierFilter) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	sig = framework.SignString(sig, pod.Spec.Containers[0].Resources.Requests.Cpu().String())
	if pl.signsTier {
		sig = framework.SignString(sig, pod.Labels["tier"])
	}
	return sig, true
}

// sizeScorer scores a node by how many pods it holds, minus the pod's
// cpu request in cores; it signs nothing of the pod.
type sizeScorer struct{}

func (sizeScorer) Name() string { return "SizeScorer" }

func (sizeScorer) Score(_ context.Context, _ *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	return int64(len(ni.Pods)) - pod.Spec.Containers[0].Resources.Requests.Cpu().Value(), nil
}

func (sizeScorer) ScoreExtensions() framework.ScoreExtensions { return nil }

func (sizeScorer) SignPod(_ *framework.CycleState, _ *v1.Pod, sig []byte) ([]byte, bool) {
	return sig, true
}

func snapshot() framework.NodeInfoLister {
	return frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Label("tier", "interactive").Obj(),
		frameworktest.MakeNode().Name("n2").Label("tier", "batch").Obj(),
	}, []*v1.Pod{frameworktest.MakePod().Name("old").Node("n2").Obj()})
}

func TestCheckKeptAnswers(t *testing.T) {
	pod := func(name, tier, cpu string) *v1.Pod {
		return frameworktest.MakePod().Name(name).Label("tier", tier).Req(cpu, "").Obj()
	}
	// Two replicas of each tier, and pods that differ in cpu only.
	pods := []*v1.Pod{
		pod("batch-1", "batch", "1"), pod("batch-2", "batch", "1"),
		pod("web-1", "interactive", "1"), pod("web-2", "interactive", "1"),
		pod("big", "batch", "2"),
	}
	tests := []struct {
		name string
		pl   framework.PodSigner
		// want are substrings of the errors the check reports, in order.
		want []string
	}{
		{name: "filter signs what it reads", pl: tierFilter{signsTier: true}},
		{
			name: "filter leaves out a label it reads",
			pl:   tierFilter{},
			// batch-1, batch-2, web-1 and web-2 sign alike: each batch
			// pod with each web pod disagrees on n1.
			want: []string{
				"TierFilter: default/batch-1 and default/web-1 sign alike for Filter but node n1 answers Unschedulable",
				"TierFilter: default/batch-1 and default/web-2 sign alike",
				"TierFilter: default/batch-2 and default/web-1 sign alike",
				"TierFilter: default/batch-2 and default/web-2 sign alike",
			},
		},
		{
			name: "scorer leaves out the request it reads",
			pl:   sizeScorer{},
			// Every pod signs alike; big scores 1 less than the others on
			// each node.
			want: []string{
				"SizeScorer: default/batch-1 and default/big sign alike for Score but node n1 scores -1 and -2",
				"SizeScorer: default/batch-1 and default/big sign alike for Score but node n2 scores 0 and -1",
				"SizeScorer: default/batch-2 and default/big", "SizeScorer: default/batch-2 and default/big",
				"SizeScorer: default/web-1 and default/big", "SizeScorer: default/web-1 and default/big",
				"SizeScorer: default/web-2 and default/big", "SizeScorer: default/web-2 and default/big",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			frameworktest.CheckKeptAnswers(rec, tc.pl, snapshot(), pods)
			if len(rec.errors) != len(tc.want) {
				t.Fatalf("%d errors, want %d:\n%s", len(rec.errors), len(tc.want), strings.Join(rec.errors, "\n"))
			}
			for i, w := range tc.want {
				if !strings.Contains(rec.errors[i], w) {
					t.Errorf("error %d: %q, want it to contain %q", i, rec.errors[i], w)
				}
			}
		})
	}
}

// A check where no two pods sign alike checks nothing, and says so.
func TestCheckKeptAnswersNothingAlike(t *testing.T) {
	rec := &recorder{TB: t}
	frameworktest.CheckKeptAnswers(rec, tierFilter{signsTier: true}, snapshot(), []*v1.Pod{
		frameworktest.MakePod().Name("a").Label("tier", "batch").Obj(),
		frameworktest.MakePod().Name("b").Label("tier", "interactive").Obj(),
	})
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "checked nothing") {
		t.Errorf("errors %q, want one saying the check checked nothing", rec.errors)
	}
}

func TestCheckSigning(t *testing.T) {
	batch := frameworktest.MakePod().Name("a").Label("tier", "batch").Req("1", "").Obj()
	web := frameworktest.MakePod().Name("b").Label("tier", "interactive").Req("1", "").Obj()
	cases := []frameworktest.SignCase{{Name: "tier", A: batch, B: web}}

	frameworktest.CheckSigning(t, tierFilter{signsTier: true}, cases)

	rec := &recorder{TB: t}
	frameworktest.CheckSigning(rec, tierFilter{}, cases)
	if want := "TierFilter/tier: signed alike = true, want false"; len(rec.errors) != 1 || rec.errors[0] != want {
		t.Errorf("errors %q, want [%q]", rec.errors, want)
	}
}
