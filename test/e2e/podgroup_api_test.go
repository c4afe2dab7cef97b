package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// podGroupProtection is the finalizer kube-apiserver's PodGroupProtection
// admission puts on every PodGroup.
const podGroupProtection = "scheduling.k8s.io/podgroup-protection"

// createGang creates a PodGroup of the gang policy with minCount.
func (e *env) createGang(name string, minCount int32) *schedulingv1beta1.PodGroup {
	e.t.Helper()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount},
		}},
	}
	got, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Create(e.ctx, pg, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create PodGroup %s: %v", name, err)
	}
	return got
}

// The shared control plane serves PodGroups: one is created with its
// protection finalizer, the built-in system:kube-scheduler role may read
// PodGroups and write their status, and a deleted PodGroup that no pod
// names goes (the PodGroup protection controller removes the finalizer).
func TestPodGroupAPIServed(t *testing.T) {
	e := newEnv(t)
	pg := e.createGang("gang", 2)
	if !slices.Contains(pg.Finalizers, podGroupProtection) {
		t.Errorf("PodGroup finalizers %q, want %q", pg.Finalizers, podGroupProtection)
	}
	if pg.Spec.SchedulingPolicy.Gang == nil || pg.Spec.SchedulingPolicy.Gang.MinCount != 2 {
		t.Errorf("PodGroup scheduling policy %+v, want gang of minCount 2", pg.Spec.SchedulingPolicy)
	}

	// What a kube-scheduler deployed with its own identity needs; the
	// bootstrap policy grants it only while the API server's GenericWorkload
	// gate is on.
	for _, a := range []authorizationv1.ResourceAttributes{
		{Verb: "list", Group: schedulingv1beta1.GroupName, Resource: "podgroups"},
		{Verb: "watch", Group: schedulingv1beta1.GroupName, Resource: "podgroups"},
		{Verb: "patch", Group: schedulingv1beta1.GroupName, Resource: "podgroups", Subresource: "status", Namespace: e.ns, Name: pg.Name},
		{Verb: "update", Group: schedulingv1beta1.GroupName, Resource: "podgroups", Subresource: "status", Namespace: e.ns, Name: pg.Name},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:kube-scheduler",
			Groups:             []string{"system:authenticated"},
			ResourceAttributes: &a,
		}}
		got, err := e.client.AuthorizationV1().SubjectAccessReviews().Create(e.ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !got.Status.Allowed {
			t.Errorf("system:kube-scheduler may not %s %s/%s: %q", a.Verb, a.Resource, a.Subresource, got.Status.Reason)
		}
	}

	if err := e.client.SchedulingV1beta1().PodGroups(e.ns).Delete(e.ctx, pg.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Get(ctx, pg.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("waiting for the deleted PodGroup to go (is podgroup-protection-controller running?): %v", err)
	}
}

// kube-scheduler v1.37.2 started with the GenericWorkload gate (and with
// TopologyAwareWorkloadScheduling beside it) schedules PodGroups as gangs:
// a group with as many pods as its minCount is placed whole and marked
// PodGroupInitiallyScheduled, while the pods of a group short of its
// minCount, created first, stay pending (without the gate they would be
// placed one by one).
func TestKubeSchedulerWithGangFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"GenericWorkload", kubeSchedulerGangFlags},
		{"GenericWorkload and TopologyAwareWorkloadScheduling", kubeSchedulerTopologyGangFlags},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.addNode(e.node("n0").Capacity("4", "8Gi", 110))
			member := func(name string, pg *schedulingv1beta1.PodGroup) {
				p := e.pod(name).Req("100m", "64Mi")
				p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &pg.Name}
				if got := e.createPod(p); got.Spec.SchedulingGroup == nil {
					t.Fatalf("the API server dropped pod %s's spec.schedulingGroup", name)
				}
			}
			short := e.createGang("short", 3)
			member("short-0", short)
			member("short-1", short)
			whole := e.createGang("whole", 2)
			member("whole-0", whole)
			member("whole-1", whole)

			e.startKubeSchedulerFlags(tc.flags, "")
			e.waitBound(60*time.Second, "whole-0", "whole-1")
			err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				pg, err := e.client.SchedulingV1beta1().PodGroups(e.ns).Get(ctx, whole.Name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				return meta.IsStatusConditionTrue(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled), nil
			})
			if err != nil {
				t.Errorf("waiting for PodGroup %s's condition %s=True: %v", whole.Name, schedulingv1beta1.PodGroupInitiallyScheduled, err)
			}
			e.expectPending("short-0", 2*time.Second)
			e.expectPending("short-1", 200*time.Millisecond)
		})
	}
}
