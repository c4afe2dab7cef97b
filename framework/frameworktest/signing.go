package frameworktest

// Checks of framework.PodSigner. The scheduler keeps a signing plugin's
// answer for a node (Filter's status, Score's raw score) under the pod's
// signature and gives it to the next pod that signs alike, without asking
// the plugin, while the node's NodeInfo is unchanged. So a plugin must
// sign everything it reads of a pod: CheckSigning checks pairs of pods
// the test says differ (or not) in what the plugin reads, and
// CheckKeptAnswers checks the consequence itself, that pods signed alike
// get the same answers on every node.

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// SignCase is two pods and whether a plugin must sign them alike.
type SignCase struct {
	// Name says what the pods differ in.
	Name string
	// A and B are the pods.
	A, B *v1.Pod
	// Same says the pods differ only in what the plugin does not read.
	Same bool
}

// SignPod runs the plugin's PreFilter or PreScore, if it has one, on a
// fresh cycle state (as a cycle does before signing), then SignPod. A
// pre-step that rejects or skips leaves the state as it is.
func SignPod(t testing.TB, pl framework.PodSigner, pod *v1.Pod) ([]byte, bool) {
	t.Helper()
	state := framework.NewCycleState()
	ctx := context.Background()
	if pf, ok := pl.(framework.PreFilterPlugin); ok {
		pf.PreFilter(ctx, state, pod, nil)
	}
	if ps, ok := pl.(framework.PreScorePlugin); ok {
		ps.PreScore(ctx, state, pod, nil)
	}
	return pl.SignPod(state, pod, nil)
}

// CheckSigning checks every case against pl: both pods sign, alike when
// the case says Same and differently otherwise.
func CheckSigning(t testing.TB, pl framework.PodSigner, cases []SignCase) {
	t.Helper()
	for _, tc := range cases {
		a, okA := SignPod(t, pl, tc.A)
		b, okB := SignPod(t, pl, tc.B)
		if !okA || !okB {
			t.Errorf("%s/%s: SignPod refused (%v, %v)", pl.Name(), tc.Name, okA, okB)
			continue
		}
		if same := bytes.Equal(a, b); same != tc.Same {
			t.Errorf("%s/%s: signed alike = %v, want %v", pl.Name(), tc.Name, same, tc.Same)
		}
	}
}

// CheckKeptAnswers checks what the scheduler's kept answers rely on: any
// two of pods that pl signs alike get the same answer from pl on every
// node of snapshot (NewSnapshot), the same Filter status (code and
// reasons) and the same Score. Each pod is evaluated fresh, in the order
// of a cycle: PreFilter over every node, SignPod, Filter on each node
// PreFilter left; then PreScore over the nodes Filter passed, SignPod
// again, Score on each of them. A plugin that implements one side only
// is checked on that side.
//
// Pods whose pre-step skips, rejects or fails, and pods SignPod refuses,
// are checked against nobody (the scheduler keeps nothing for them); so
// that the check is not empty, at least two pods must sign alike on some
// side, else it fails. Give it look-alikes, the replicas of a workload,
// and pods that differ in one thing each: what the plugin reads (they
// should sign apart) or what it does not (they should sign alike).
func CheckKeptAnswers(t testing.TB, pl framework.PodSigner, snapshot framework.NodeInfoLister, pods []*v1.Pod) {
	t.Helper()
	nodes := snapshot.List()
	answers := make([]keptAnswers, len(pods))
	for i, pod := range pods {
		answers[i] = evaluate(t, pl, pod, nodes)
	}
	pairs := 0
	for i := range pods {
		for j := i + 1; j < len(pods); j++ {
			a, b := &answers[i], &answers[j]
			if a.filterSigned && b.filterSigned && bytes.Equal(a.filterSig, b.filterSig) {
				pairs++
				for _, ni := range nodes {
					name := ni.NodeName()
					x, okX := a.filter[name]
					y, okY := b.filter[name]
					if okX && okY && !sameStatus(x, y) {
						t.Errorf("%s: %s and %s sign alike for Filter but node %s answers %s and %s: the signature leaves out something Filter reads",
							pl.Name(), podName(pods[i]), podName(pods[j]), name, statusText(x), statusText(y))
					}
				}
			}
			if a.scoreSigned && b.scoreSigned && bytes.Equal(a.scoreSig, b.scoreSig) {
				pairs++
				for _, ni := range nodes {
					name := ni.NodeName()
					x, okX := a.score[name]
					y, okY := b.score[name]
					if okX && okY && x != y {
						t.Errorf("%s: %s and %s sign alike for Score but node %s scores %d and %d: the signature leaves out something Score reads",
							pl.Name(), podName(pods[i]), podName(pods[j]), name, x, y)
					}
				}
			}
		}
	}
	if pairs == 0 {
		t.Errorf("%s: no two of the %d pods signed alike; CheckKeptAnswers checked nothing", pl.Name(), len(pods))
	}
}

// keptAnswers are one pod's signatures and fresh answers, by node name.
type keptAnswers struct {
	filterSig, scoreSig       []byte
	filterSigned, scoreSigned bool
	filter                    map[string]*framework.Status
	score                     map[string]int64
}

// evaluate runs pl for pod on nodes as one cycle would, signing after
// each pre-step.
func evaluate(t testing.TB, pl framework.PodSigner, pod *v1.Pod, nodes []*framework.NodeInfo) keptAnswers {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	var out keptAnswers
	feasible := nodes
	if f, ok := pl.(framework.FilterPlugin); ok {
		run := true
		allowed := nodes
		if pf, ok := pl.(framework.PreFilterPlugin); ok {
			res, st := pf.PreFilter(ctx, state, pod, nodes)
			run = st.IsSuccess()
			if run && res != nil && res.NodeNames != nil {
				allowed = slices.DeleteFunc(slices.Clone(nodes), func(ni *framework.NodeInfo) bool {
					_, in := res.NodeNames[ni.NodeName()]
					return !in
				})
			}
		}
		feasible = nil
		if run {
			out.filterSig, out.filterSigned = pl.SignPod(state, pod, nil)
			out.filter = map[string]*framework.Status{}
			for _, ni := range allowed {
				st := f.Filter(ctx, state, pod, ni)
				out.filter[ni.NodeName()] = st
				if st.IsSuccess() {
					feasible = append(feasible, ni)
				}
			}
		}
	}
	if s, ok := pl.(framework.ScorePlugin); ok && len(feasible) > 0 {
		run := true
		if ps, ok := pl.(framework.PreScorePlugin); ok {
			run = ps.PreScore(ctx, state, pod, feasible).IsSuccess()
		}
		if run {
			out.scoreSig, out.scoreSigned = pl.SignPod(state, pod, nil)
			out.score = map[string]int64{}
			for _, ni := range feasible {
				score, st := s.Score(ctx, state, pod, ni)
				if !st.IsSuccess() {
					t.Errorf("%s: Score of %s on %s: %s", pl.Name(), podName(pod), ni.NodeName(), statusText(st))
					continue
				}
				out.score[ni.NodeName()] = score
			}
		}
	}
	return out
}

// sameStatus reports whether two Filter answers are the same to the pod:
// code and reasons.
func sameStatus(a, b *framework.Status) bool {
	return a.Code() == b.Code() && slices.Equal(a.Reasons(), b.Reasons())
}

func statusText(s *framework.Status) string {
	if s.IsSuccess() {
		return "Success"
	}
	return fmt.Sprintf("%s %q", s.Code(), s.Reasons())
}

func podName(p *v1.Pod) string { return p.Namespace + "/" + p.Name }
