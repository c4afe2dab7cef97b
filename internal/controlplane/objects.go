package controlplane

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// CreateReadyNode creates node and makes it look like one a kubelet
// reports: its status (capacity; allocatable, defaulting to capacity; a
// Ready=True condition unless node already has a Ready condition) is
// written with UpdateStatus, and the node.kubernetes.io/not-ready:NoSchedule
// taint that the TaintNodesByCondition admission plugin adds on create is
// removed (no node-lifecycle controller runs to do it). A not-ready taint
// already in node.Spec is kept. node is not modified.
func CreateReadyNode(ctx context.Context, c kubernetes.Interface, node *v1.Node) (*v1.Node, error) {
	want := node.Status.DeepCopy()
	if want.Allocatable == nil && want.Capacity != nil {
		want.Allocatable = want.Capacity.DeepCopy()
	}
	if !hasCondition(want.Conditions, v1.NodeReady) {
		now := metav1.Now()
		want.Conditions = append(want.Conditions, v1.NodeCondition{
			Type:               v1.NodeReady,
			Status:             v1.ConditionTrue,
			Reason:             "KubeletReady",
			Message:            "created ready by yardmaster controlplane",
			LastHeartbeatTime:  now,
			LastTransitionTime: now,
		})
	}
	keepNotReadyTaint := hasTaint(node.Spec.Taints, v1.TaintNodeNotReady)

	in := node.DeepCopy()
	in.Status = *want
	cur, err := c.CoreV1().Nodes().Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating node %q: %w", node.Name, err)
	}
	name := cur.Name // node.Name may be empty with GenerateName.

	// Create currently keeps the status it is given; UpdateStatus is the
	// path that keeps working if the node strategy starts dropping it.
	if !statusApplied(&cur.Status, want) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur.Status = *want.DeepCopy()
			updated, err := c.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			if err == nil {
				cur = updated
				return nil
			}
			if apierrors.IsConflict(err) {
				if latest, getErr := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); getErr == nil {
					cur = latest
				}
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("updating status of node %q: %w", name, err)
		}
	}

	if keepNotReadyTaint || !hasTaint(cur.Spec.Taints, v1.TaintNodeNotReady) {
		return cur, nil
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		taints := make([]v1.Taint, 0, len(cur.Spec.Taints))
		for _, t := range cur.Spec.Taints {
			if t.Key != v1.TaintNodeNotReady {
				taints = append(taints, t)
			}
		}
		cur.Spec.Taints = taints
		updated, err := c.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			cur = updated
			return nil
		}
		if apierrors.IsConflict(err) {
			if latest, getErr := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); getErr == nil {
				cur = latest
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("removing taint %q from node %q: %w", v1.TaintNodeNotReady, name, err)
	}
	return cur, nil
}

// statusApplied reports whether got carries want's resources and conditions.
func statusApplied(got, want *v1.NodeStatus) bool {
	if !apiequality.Semantic.DeepEqual(got.Capacity, want.Capacity) ||
		!apiequality.Semantic.DeepEqual(got.Allocatable, want.Allocatable) {
		return false
	}
	for _, w := range want.Conditions {
		found := false
		for _, g := range got.Conditions {
			if g.Type == w.Type && g.Status == w.Status {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func hasCondition(conds []v1.NodeCondition, t v1.NodeConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return true
		}
	}
	return false
}

func hasTaint(taints []v1.Taint, key string) bool {
	for _, t := range taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// CreateNamespace creates a namespace named prefix plus a random suffix,
// and a "default" ServiceAccount in it, which no controller creates here
// (pods do not need it: the ServiceAccount admission plugin is off, but
// code that looks for it finds it). It returns the namespace's name.
func CreateNamespace(ctx context.Context, c kubernetes.Interface, prefix string) (string, error) {
	if prefix == "" {
		prefix = "test"
	}
	if !strings.HasSuffix(prefix, "-") {
		prefix += "-"
	}
	ns, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating namespace with prefix %q: %w", prefix, err)
	}
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns.Name}}
	if _, err := c.CoreV1().ServiceAccounts(ns.Name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating default service account in %q: %w", ns.Name, err)
	}
	return ns.Name, nil
}
