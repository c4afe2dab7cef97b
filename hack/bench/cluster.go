package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// parallel calls fn(ctx, i) for i in [0, n) from workers goroutines. The
// first error cancels the rest and is returned.
func parallel(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// isTransient reports errors worth another try: the API server shedding
// load or a request timing out under it.
func isTransient(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
}

// createNodes creates nodes 0..n-1 and makes each Ready and untainted.
// CreateReadyNode is two or three requests per node; with 32 workers
// 5,000 nodes take seconds, not minutes.
func createNodes(ctx context.Context, c kubernetes.Interface, workers, n int) error {
	return parallel(ctx, workers, n, func(ctx context.Context, i int) error {
		return retry.OnError(retry.DefaultBackoff, isTransient, func() error {
			_, err := controlplane.CreateReadyNode(ctx, c, benchNode(i))
			return err
		})
	})
}

// createPod creates p, retrying transient errors; AlreadyExists after a
// retry means an earlier attempt got through.
func createPod(ctx context.Context, c kubernetes.Interface, p *v1.Pod) error {
	attempt := 0
	return retry.OnError(retry.DefaultBackoff, isTransient, func() error {
		attempt++
		_, err := c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if attempt > 1 && apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	})
}

// podsFor returns the count pods of w for a cluster of nodes nodes, in
// namespace ns and addressed to schedulerName.
func podsFor(w workload, count, nodes int, ns, schedulerName string) []*v1.Pod {
	pods := make([]*v1.Pod, count)
	for i := range pods {
		p := w.pod(i, nodes)
		p.Namespace = ns
		p.Spec.SchedulerName = schedulerName
		pods[i] = p
	}
	return pods
}

// createPods creates pods in parallel.
func createPods(ctx context.Context, c kubernetes.Interface, workers int, pods []*v1.Pod) error {
	return parallel(ctx, workers, len(pods), func(ctx context.Context, i int) error {
		return createPod(ctx, c, pods[i])
	})
}

// clearNamespace deletes every pod (grace 0: no kubelet has to confirm) and
// event in ns, waits until no pod is left there, and then checks that no
// pod anywhere is bound to a node, so the next scheduler starts on empty
// nodes. The namespace object itself stays: without a namespace controller
// it would sit in Terminating forever, which is harmless but noisy.
func clearNamespace(ctx context.Context, c kubernetes.Interface, ns string) error {
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	if err := c.CoreV1().Pods(ns).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting pods in %q: %w", ns, err)
	}
	if err := c.CoreV1().Events(ns).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting events in %q: %w", ns, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		return len(l.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for pods in %q to go: %w", ns, err)
	}
	return checkNodesEmpty(ctx, c)
}

// checkNodesEmpty fails if any pod in the cluster is bound to a node.
func checkNodesEmpty(ctx context.Context, c kubernetes.Interface) error {
	l, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!=", Limit: 5})
	if err != nil {
		return fmt.Errorf("listing bound pods: %w", err)
	}
	if len(l.Items) > 0 {
		p := l.Items[0]
		return fmt.Errorf("cluster not empty between runs: pod %s/%s is still bound to %q", p.Namespace, p.Name, p.Spec.NodeName)
	}
	return nil
}
