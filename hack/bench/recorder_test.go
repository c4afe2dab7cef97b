package main

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The stream phase waits for its warm-up pod to be bound before it creates
// the measured pods, and then for count+1 bound pods: the recorder must
// count the warm-up pod as bound, and the pool, fill and churn pods not.
func TestRecorderCountsWarmUpPodAsBound(t *testing.T) {
	r := &recorder{bound: map[string]time.Time{}, scheduled: map[string]time.Time{},
		attempted: map[string]bool{}, succeeded: map[string]bool{}}
	pod := func(name, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PodSpec{NodeName: node}}
	}
	r.observe(pod(warmUpPodName, ""), true)
	if _, bound := r.counts(); bound != 0 {
		t.Fatalf("an unbound warm-up pod counted as bound: %d", bound)
	}
	r.observe(pod(warmUpPodName, "n1"), false)
	r.observe(pod(poolPrefix+"000001", "n1"), true)
	r.observe(pod(podName(1), "n2"), true)
	if _, bound := r.counts(); bound != 2 {
		t.Errorf("bound = %d, want 2 (the warm-up pod and one measured pod; not the pool pod)", bound)
	}
	if _, ok := r.boundAt(warmUpPodName); !ok {
		t.Error("the warm-up pod has no bind time")
	}
	if warmUpPodName == podName(0) {
		t.Errorf("the warm-up pod is named as measured pod 0 (%s)", warmUpPodName)
	}
}
