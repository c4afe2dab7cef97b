package e2e

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// BenchmarkClientRequestCPU measures what one request costs its client in
// CPU (cpu-µs/op, user and system time of this process) through client-go
// configured as the daemon's clients are (protobuf, a rate limiter that
// never waits), 16 requests in flight: the Binding and the Scheduled event
// every scheduler writes per pod, and a GET for comparison. It is the floor
// under a scheduler's CPU per pod (docs/performance.md, daemonset). Run it
// alone, with a fixed count:
//
//	go test ./test/e2e -run '^$' -bench ClientRequestCPU -benchtime 3000x
func BenchmarkClientRequestCPU(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	admin := cp.AdminClient()
	ns, err := controlplane.CreateNamespace(ctx, admin, "cost")
	if err != nil {
		b.Fatal(err)
	}
	rc := cp.RESTConfig(cp.AdminToken)
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.QPS, rc.Burst = 1e6, 1e6
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		b.Fatal(err)
	}
	node := "cost-" + ns
	if _, err := admin.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{testLabel: ns}}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		zero := int64(0)
		_ = admin.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = admin.EventsV1().Events(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = admin.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
		_ = admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})

	// pods creates n unbound pods named <prefix><i>, outside the timing.
	pods := func(b *testing.B, prefix string, n int) {
		b.Helper()
		inParallel(b, 32, n, func(i int) error {
			_, err := admin.CoreV1().Pods(ns).Create(ctx, &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(prefix, i)},
				Spec:       v1.PodSpec{SchedulerName: "nobody", Containers: []v1.Container{{Name: "c", Image: "none"}}},
			}, metav1.CreateOptions{})
			return err
		})
	}
	measure := func(b *testing.B, request func(i int) error) {
		b.Helper()
		b.ResetTimer()
		before := processCPU()
		inParallel(b, 16, b.N, request)
		b.ReportMetric(float64(processCPU()-before)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	}

	runs := 0
	b.Run("Binding", func(b *testing.B) {
		runs++
		prefix := fmt.Sprintf("bind-%d-", runs)
		pods(b, prefix, b.N)
		measure(b, func(i int) error {
			return client.CoreV1().Pods(ns).Bind(ctx, &v1.Binding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint(prefix, i)},
				Target:     v1.ObjectReference{Kind: "Node", Name: node},
			}, metav1.CreateOptions{})
		})
	})
	b.Run("ScheduledEvent", func(b *testing.B) {
		// As binder.ScheduledEvents posts it: through the REST client,
		// the created Event not decoded.
		measure(b, func(i int) error {
			now := metav1.NowMicro()
			ev := &eventsv1.Event{
				ObjectMeta:          metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d.%x", i, now.UnixNano())},
				EventTime:           now,
				ReportingController: "yardmaster", ReportingInstance: "bench",
				Action: "Binding", Reason: "Scheduled", Type: v1.EventTypeNormal,
				Regarding: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: fmt.Sprint("p", i)},
				Note:      fmt.Sprintf("Successfully assigned %s/p%d to %s", ns, i, node),
			}
			return client.EventsV1().RESTClient().Post().Namespace(ns).Resource("events").Body(ev).Do(ctx).Error()
		})
	})
	b.Run("Get", func(b *testing.B) {
		measure(b, func(int) error {
			_, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			return err
		})
	})
}

// inParallel runs f(0..n-1) on workers goroutines and fails b on the first
// error.
func inParallel(b *testing.B, workers, n int, f func(i int) error) {
	b.Helper()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}

// processCPU is the user and system CPU this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
