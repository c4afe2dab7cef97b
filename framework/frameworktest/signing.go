package frameworktest

// Checks of framework.PodSigner. The scheduler keeps a signing plugin's
// answer for a node (Filter's status, Score's raw score) under the pod's
// signature and gives it to the next pod that signs alike, without asking
// the plugin, while the node's NodeInfo is unchanged. So a plugin must
// sign everything it reads of a pod: CheckSigning checks pairs of pods
// the test says differ (or not) in what the plugin reads.

import (
	"bytes"
	"context"
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
