package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// An incoming pod's namespaceSelector that accepts a namespace without
// the label ("env notin (prod)") selects only the namespaces it lists, as
// kube-scheduler v1.37 reads it: the web pod of the env=prod namespace on
// the only node is not in the way of the pod's anti-affinity, and the pod
// is placed there. kube-scheduler v1.36 matched such a selector against
// no labels and so every namespace, and kept the pod pending.
func TestNamespaceSelectorMatchesKubeScheduler(t *testing.T) {
	sideBySide(t, func(t *testing.T, kube bool) string {
		e := newEnv(t)
		e.addNode(e.node("a").Capacity("1", "2Gi", 110).Label(v1.LabelHostname, e.ns+"-a"))

		prod := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-prod", Labels: map[string]string{"env": "prod"}}}
		if _, err := e.client.CoreV1().Namespaces().Create(e.ctx, prod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			zero := int64(0)
			_ = e.client.CoreV1().Pods(prod.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
			_ = e.client.CoreV1().Namespaces().Delete(ctx, prod.Name, metav1.DeleteOptions{})
		})
		web := frameworktest.MakePod().Namespace(prod.Name).Name("web").Label("app", "web").Req("100m", "").Obj()
		web.Spec.NodeName = e.ns + "-a"
		if _, err := e.client.CoreV1().Pods(prod.Name).Create(e.ctx, web, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}

		if kube {
			e.startKubeScheduler()
		} else {
			e.startScheduler()
		}
		e.createPod(e.pod("p").Req("100m", "").
			RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("app", "web").
				NamespaceSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}},
				}}).Obj()))

		return boundWithin(e, "p", 15*time.Second)
	})
}

// A pod with two anti-affinity terms, kept off the only node by a pod
// matching one of them, is retried as soon as that pod is deleted: the
// InterPodAffinity hint of kube-scheduler v1.37 asks whether the deleted
// pod matched any term (v1.36 asked for all, and left the pod parked
// until the 5-minute flush). yardmaster and kube-scheduler agree.
func TestAntiAffinityHintMatchesKubeScheduler(t *testing.T) {
	sideBySide(t, func(t *testing.T, kube bool) string {
		e := newEnv(t)
		e.addNode(e.node("a").Capacity("1", "2Gi", 110).Label(v1.LabelHostname, e.ns+"-a"))
		web := e.pod("web").Label("app", "web").Req("100m", "")
		web.Spec.NodeName = e.ns + "-a"
		web.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
		e.createPod(web)
		if kube {
			e.startKubeScheduler()
		} else {
			e.startScheduler()
		}
		e.createPod(e.pod("p").Req("100m", "").
			RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).
			RequiredPodAntiAffinity(frameworktest.MakePodAffinityTerm(v1.LabelHostname).MatchLabel("app", "db").Obj()))
		e.waitFailedScheduling("p", "didn't match pod anti-affinity rules")
		zero := int64(0)
		if err := e.client.CoreV1().Pods(e.ns).Delete(e.ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		// Well short of the 5-minute flush, longer than any backoff.
		return boundWithin(e, "p", 20*time.Second)
	})
}

// boundWithin waits up to timeout for the pod to be bound and says where
// ("bound to <node>"), or "pending".
func boundWithin(e *env, name string, timeout time.Duration) string {
	outcome := "pending"
	_ = wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := e.client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.Spec.NodeName == "" {
			return false, nil
		}
		outcome = "bound to " + strings.TrimPrefix(p.Spec.NodeName, e.ns+"-")
		return true, nil
	})
	return outcome
}
