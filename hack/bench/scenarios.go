package main

// The shapes of kube-scheduler's own benchmark, scheduler_perf
// (test/integration/scheduler_perf/misc/performance-config.yaml and its
// templates in k8s.io/kubernetes v1.37.2), on the harness's nodes.
//
// scheduler_perf's nodes have 4 cpu; the harness's have 32 (nodeCPU), so
// every cpu figure of a template is scaled by 8 where the shape depends on
// it: PreemptionBasic's low-priority pods of 900m four to a node and
// high-priority pods of 3 cpu that need three of them evicted become pods
// of 7.2 and 24 cpu. A pod that "fits nowhere" (pod-high-priority-large-
// cpu: 9 cpu on 4-cpu nodes) asks for twice a node's cpu. Memory and the
// pod count per node do not bind anywhere, as upstream.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

const (
	// unschedulablePods and mixedChurnPods are the measured pods of
	// scheduler_perf's Unschedulable (5kNodes/20kInit: 20,000 queued, as
	// issue #19 asks, then 5,000) and SchedulingWithMixedChurn
	// (5000Nodes_10000Pods).
	unschedulablePods = 5000
	mixedChurnPods    = 10000

	// highPriorityClass is the PriorityClass of scheduler_perf's
	// "priority: 10" pods; the Priority admission plugin takes the value
	// only from a class.
	highPriorityClass = "bench-high"
	highPriority      = 10

	// poolCPU is the request of a pod that fits nowhere: twice a node.
	poolCPU = "64"

	// PreemptionBasic, scaled by 8: fillPerNode pods of fillCPU fill a
	// node to 28.8 of 32 cpu; a preemptor of preemptorCPU needs 3.2 +
	// 3·7.2 = 24.8 ≥ 24, so exactly preemptVictims of them gone (two
	// leave 17.6).
	fillPerNode    = 4
	fillCPU        = "7200m"
	preemptorCPU   = "24"
	preemptVictims = 3

	// perfMemory is the memory request of scheduler_perf's pods.
	perfMemory = "500Mi"
)

// Name prefixes of the pods that are not measured.
const (
	poolPrefix  = "pool-"
	fillPrefix  = "fill-"
	churnPrefix = "churn-"
	// donePrefix names the pods that run and complete on KWOK nodes in
	// the idle workload.
	donePrefix = "done-"
)

// defaultPerfPod is scheduler_perf's pod-default: 100m/500Mi.
func defaultPerfPod(i int) *v1.Pod {
	return basePod(i, "perf", "100m", perfMemory)
}

// poolPod is pod-high-priority-large-cpu: high priority, fits nowhere.
func poolPod(i int) *v1.Pod {
	p := basePod(i, "pool", poolCPU, perfMemory)
	p.Name = fmt.Sprintf(poolPrefix+"%06d", i)
	p.Spec.PriorityClassName = highPriorityClass
	return p
}

// fillPod is pod-low-priority (no priority, terminationGracePeriodSeconds
// 0, so a victim is gone as soon as the scheduler deletes it: no kubelet
// runs to end it), bound to node i mod nodes when created.
func fillPod(i, nodes int) *v1.Pod {
	p := basePod(i, "fill", fillCPU, perfMemory)
	p.Name = fmt.Sprintf(fillPrefix+"%06d", i)
	p.Spec.NodeName = nodeName(i % nodes)
	zero := int64(0)
	p.Spec.TerminationGracePeriodSeconds = &zero
	return p
}

// preemptorPod is pod-high-priority: it fits only where victims go.
func preemptorPod(i int) *v1.Pod {
	p := basePod(i, "preemptor", preemptorCPU, perfMemory)
	p.Spec.PriorityClassName = highPriorityClass
	return p
}

// daemonSetPod is daemonset-pod: pinned to node i by metadata.name, as
// the DaemonSet controller pins its pods; no requests.
func daemonSetPod(i, _ int) *v1.Pod {
	p := frameworktest.MakePod().Name(podName(i)).Label("app", "daemonset").
		RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().Field("metadata.name", v1.NodeSelectorOpIn, nodeName(i)).Obj()).
		Obj()
	p.Namespace, p.UID = "", ""
	for j := range p.Spec.Containers {
		p.Spec.Containers[j].Resources = v1.ResourceRequirements{}
	}
	return p
}

// ensurePriorityClass creates highPriorityClass unless it exists.
func ensurePriorityClass(ctx context.Context, c kubernetes.Interface) error {
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: highPriorityClass}, Value: highPriority}
	_, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating PriorityClass %q: %w", highPriorityClass, err)
	}
	return nil
}

// namedPods returns count pods made by mk, in ns, for schedulerName.
func namedPods(count int, ns, schedulerName string, mk func(i int) *v1.Pod) []*v1.Pod {
	pods := make([]*v1.Pod, count)
	for i := range pods {
		p := mk(i)
		p.Namespace, p.Spec.SchedulerName = ns, schedulerName
		pods[i] = p
	}
	return pods
}

// churner is scheduler_perf's churn op in recreate mode with number 1: at
// every tick it creates a node that holds no pod (capacity pods 0), a pod
// that fits nowhere addressed to the contender and a Service, and at the
// next tick deletes them. Each is an event every scheduler must look at
// and none changes where a measured pod can go.
type churner struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ops    atomic.Int64
	errs   atomic.Int64
	first  atomic.Value // error
}

// startChurn starts a churner in ns for schedulerName, its nodes named
// churn-<ns>-<n>.
func startChurn(ctx context.Context, c kubernetes.Interface, ns, schedulerName string, interval time.Duration) *churner {
	ctx, cancel := context.WithCancel(ctx)
	ch := &churner{cancel: cancel}
	ch.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		var live []func(context.Context) error // deletes of what the last tick made
		for n := 0; ; n++ {
			if len(live) > 0 {
				for _, del := range live {
					ch.record(del(ctx))
				}
				live = nil
			} else {
				live = ch.create(ctx, c, ns, schedulerName, n)
			}
			select {
			case <-ctx.Done():
				// What the last tick made goes, whatever the context.
				for _, del := range live {
					ch.record(del(context.WithoutCancel(ctx)))
				}
				return
			case <-t.C:
			}
		}
	})
	return ch
}

func (ch *churner) record(err error) {
	if err == nil {
		ch.ops.Add(1)
		return
	}
	if apierrors.IsNotFound(err) || ch.errs.Add(1) > 1 {
		return
	}
	ch.first.Store(err)
}

// create makes the node, pod and Service of tick n and returns their
// deletes.
func (ch *churner) create(ctx context.Context, c kubernetes.Interface, ns, schedulerName string, n int) []func(context.Context) error {
	var dels []func(context.Context) error
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}

	node := frameworktest.MakeNode().Name(fmt.Sprintf("%s%s-%05d", churnPrefix, ns, n)).Capacity(nodeCPU, nodeMemory, 0).Obj()
	_, err := controlplane.CreateReadyNode(ctx, c, node)
	ch.record(err)
	if err == nil {
		dels = append(dels, func(ctx context.Context) error {
			return c.CoreV1().Nodes().Delete(ctx, node.Name, del)
		})
	}

	p := poolPod(n)
	p.Name = fmt.Sprintf("%s%06d", churnPrefix, n)
	p.Namespace, p.Spec.SchedulerName = ns, schedulerName
	_, err = c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	ch.record(err)
	if err == nil {
		dels = append(dels, func(ctx context.Context) error {
			return c.CoreV1().Pods(ns).Delete(ctx, p.Name, del)
		})
	}

	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%05d", churnPrefix, n), Namespace: ns},
		Spec: v1.ServiceSpec{
			Selector: map[string]string{"app": "foo"},
			Ports:    []v1.ServicePort{{Protocol: v1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	_, err = c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	ch.record(err)
	if err == nil {
		dels = append(dels, func(ctx context.Context) error {
			return c.CoreV1().Services(ns).Delete(ctx, svc.Name, del)
		})
	}
	return dels
}

// stop ends the churn, deletes what is left of it and returns the number
// of creates and deletes done, and the first error (the churn goes on
// after errors: a shed request is load, not a reason to stop measuring).
func (ch *churner) stop() (ops int64, err error) {
	ch.cancel()
	ch.wg.Wait()
	if e, ok := ch.first.Load().(error); ok {
		err = fmt.Errorf("%d churn requests failed, the first: %w", ch.errs.Load(), e)
	}
	return ch.ops.Load(), err
}

// kwokNodeName is the name of the i-th KWOK node of the idle workload.
func kwokNodeName(i int) string { return fmt.Sprintf("kwok-node-%03d", i) }

// churnTaint keeps every scheduler's pods off the KWOK nodes: only the
// idle workload's completing pods run there, bound by name.
const churnTaint = "bench.yardmaster.io/kwok"

// createKWOKNodes creates n KWOK nodes, tainted NoSchedule.
func createKWOKNodes(ctx context.Context, c kubernetes.Interface, n int) error {
	for i := range n {
		node := frameworktest.MakeNode().Name(kwokNodeName(i)).Capacity(nodeCPU, nodeMemory, nodePods).
			Taint(churnTaint, "", v1.TaintEffectNoSchedule).Obj()
		err := retry.OnError(retry.DefaultBackoff, isTransient, func() error {
			_, err := controlplane.CreateKWOKNode(ctx, c, node)
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// donePod is the i-th completing pod: bound to a KWOK node, where KWOK
// runs it for runFor and then has it succeed.
func donePod(i, kwokNodes int, ns, schedulerName string, runFor time.Duration) *v1.Pod {
	p := basePod(i, "done", "100m", "128Mi")
	p.Name = fmt.Sprintf(donePrefix+"%06d", i)
	p.Namespace, p.Spec.SchedulerName = ns, schedulerName
	p.Spec.NodeName = kwokNodeName(i % kwokNodes)
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	p.Spec.Tolerations = []v1.Toleration{{Key: churnTaint, Operator: v1.TolerationOpExists}}
	metav1.SetMetaDataAnnotation(&p.ObjectMeta, controlplane.KWOKRunDurationAnnotation, runFor.String())
	zero := int64(0)
	p.Spec.TerminationGracePeriodSeconds = &zero
	return p
}
