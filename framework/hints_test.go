package framework

import (
	"runtime"
	"testing"
	"weak"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The memo answers for the pod object it computed for, computes afresh
// for a new version of the pod, and keeps no pod alive: a pending pod's
// old versions and the pods bound or deleted since must be collectable.
func TestPodMemoHoldsNoPod(t *testing.T) {
	var m PodMemo[string]
	computed := 0
	compute := func(p *v1.Pod) string { computed++; return p.ResourceVersion }

	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "1"}}
	if got := m.Get(pod, compute); got != "1" || computed != 1 {
		t.Fatalf("first get: %q after %d computations", got, computed)
	}
	if got := m.Get(pod, compute); got != "1" || computed != 1 {
		t.Fatalf("same object: %q after %d computations, want the kept answer", got, computed)
	}
	updated := pod.DeepCopy()
	updated.ResourceVersion = "2"
	if got := m.Get(updated, compute); got != "2" || computed != 2 {
		t.Fatalf("new version: %q after %d computations, want it computed", got, computed)
	}

	seen := weak.Make(pod)
	pod = nil
	for range 5 {
		runtime.GC()
		if seen.Value() == nil {
			break
		}
	}
	if seen.Value() != nil {
		t.Fatal("the memo keeps a pod it computed for alive")
	}
	runtime.KeepAlive(updated)
	runtime.KeepAlive(&m)
}
