// Package signtest checks framework.PodSigner implementations: pods that
// differ in something the plugin reads must sign differently, and pods that
// differ only in what it does not read should sign alike.
package signtest

import (
	"bytes"
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Case is two pods and whether a plugin must sign them alike.
type Case struct {
	Name string
	A, B *v1.Pod
	Same bool
}

// Sign runs the plugin's PreFilter or PreScore, if it has one, on a fresh
// cycle state (as a cycle does before signing), then SignPod. A pre-step
// that rejects or skips leaves the state as it is.
func Sign(t *testing.T, pl framework.PodSigner, pod *v1.Pod) ([]byte, bool) {
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

// Run checks every case against pl.
func Run(t *testing.T, pl framework.PodSigner, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		a, okA := Sign(t, pl, tc.A)
		b, okB := Sign(t, pl, tc.B)
		if !okA || !okB {
			t.Errorf("%s/%s: SignPod refused (%v, %v)", pl.Name(), tc.Name, okA, okB)
			continue
		}
		if same := bytes.Equal(a, b); same != tc.Same {
			t.Errorf("%s/%s: signed alike = %v, want %v", pl.Name(), tc.Name, same, tc.Same)
		}
	}
}
