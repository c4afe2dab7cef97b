package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// A backlog keeps arriving while kube-apiserver restarts, or while etcd is
// stopped for 10 s: yardmaster's watches break, Bindings fail or lose their
// answers, and it relists. Afterwards every pod that fits is bound once,
// no node holds more than it has, and the pods that fit nowhere are still
// pending. The nodes are filled exactly, so a Binding that committed but
// whose capacity yardmaster gave back would show as an overcommitted node
// or a fitting pod left over.
func TestBacklogSurvivesControlPlaneFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	plane, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatalf("start a control plane of its own: %v", err)
	}
	t.Cleanup(func() {
		if err := plane.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})

	faults := []struct {
		name  string
		fault func(ctx context.Context) error
	}{
		{name: "kube-apiserver restarted", fault: func(ctx context.Context) error {
			return plane.RestartAPIServer(ctx, 2*time.Second)
		}},
		{name: "etcd stopped for 10s", fault: func(ctx context.Context) error {
			if err := plane.StopEtcd(); err != nil {
				return err
			}
			time.Sleep(10 * time.Second)
			return plane.StartEtcd(ctx)
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			const (
				nodes       = 10
				podsPerNode = 10 // 10 × 200m on 2 cpu
				unfit       = 5
			)
			e := newEnvOn(t, plane)
			for i := range nodes {
				e.addNode(e.node(fmt.Sprintf("n%d", i)).Capacity("2", "8Gi", 110))
			}
			e.startScheduler()

			// Pods arrive steadily; the fault strikes a quarter of the
			// way in. Creation retries until the API answers again.
			total := nodes * podsPerNode
			create := func(name, cpu string) {
				p := e.pod(name).Req(cpu, "64Mi").Obj()
				p.UID = ""
				err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					_, err := e.client.CoreV1().Pods(e.ns).Create(ctx, p, metav1.CreateOptions{})
					if err != nil && !apierrors.IsAlreadyExists(err) {
						return false, nil
					}
					return true, nil
				})
				if err != nil {
					t.Errorf("create pod %s: %v", name, err)
				}
			}
			faultDone := make(chan error, 1)
			for i := range total {
				if i == total/4 {
					go func() { faultDone <- f.fault(e.ctx) }()
				}
				create(fmt.Sprintf("p-%03d", i), "200m")
				if i%10 == 0 && i/10 < unfit {
					create(fmt.Sprintf("huge-%d", i/10), "64")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := <-faultDone; err != nil {
				t.Fatalf("fault: %v", err)
			}

			// Every fitting pod bound; the nodes full and not beyond.
			var pods *v1.PodList
			err := wait.PollUntilContextTimeout(e.ctx, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
				var err error
				pods, err = e.client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return false, nil
				}
				bound := 0
				for _, p := range pods.Items {
					if p.Spec.NodeName != "" {
						bound++
					}
				}
				return bound >= total, nil
			})
			perNode := map[string]int64{}
			var pending, boundHuge []string
			for _, p := range pods.Items {
				if p.Spec.NodeName == "" {
					pending = append(pending, p.Name)
					continue
				}
				perNode[p.Spec.NodeName] += p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
				if p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() > 2000 {
					boundHuge = append(boundHuge, p.Name)
				}
			}
			if err != nil {
				t.Errorf("not every fitting pod was bound: %d pending: %v", len(pending), pending)
			}
			for node, cpu := range perNode {
				if cpu > 2000 {
					t.Errorf("node %s holds %dm cpu of 2000m", node, cpu)
				}
			}
			if len(boundHuge) > 0 {
				t.Errorf("pods that fit nowhere were bound: %v", boundHuge)
			}
			if len(pending) != unfit {
				t.Errorf("%d pods pending, want the %d that fit nowhere: %v", len(pending), unfit, pending)
			}
			// And the scheduler still works: a pod that fits nowhere is
			// reported, which also shows its events reach the API.
			e.waitEventContaining("huge-0", "Insufficient cpu")
		})
	}
}
