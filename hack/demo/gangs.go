package main

// The demo's gangs: training jobs whose workers are useless unless all of
// them run, each a Job whose pods name a scheduling.k8s.io/v1beta1
// PodGroup with a gang policy (spec.schedulingGroup.podGroupName). The
// training nodes are a pool of their own, tainted so that only the
// workers go there. The first job fits and is placed whole; the second
// cannot fit beside it and waits whole, none of its workers bound,
// although one of them would fit; once the first job is deleted, the
// second is placed whole. Then a gang of higher priority preempts: the
// second job's PodGroup says disruptionMode all, so its workers are
// evicted together and its replacements wait whole. yardmaster decides
// each group in one cycle (docs/gang.md): no worker holds a node while
// its group is undecided.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

const (
	// trainNodes nodes of trainNodeCPU; a worker of workerCPU takes a
	// node to itself, so a job of gangWorkers fits only where
	// gangWorkers nodes are free: one job at a time.
	trainNodes   = 5
	trainNodeCPU = "8"
	workerCPU    = "6"
	gangWorkers  = 4
	// trainPool labels the training nodes; trainTaint keeps every other
	// pod off them.
	trainPool  = "train"
	trainTaint = "dedicated"
	// gangHold is how long the demo watches the waiting gang to show that
	// none of its workers is bound meanwhile.
	gangHold = 3 * time.Second
	// trainRunFor is how long KWOK runs a worker before it succeeds.
	trainRunFor = "1h"
	// urgentWorkers of urgentClass preempt for room.
	urgentWorkers = 2
	urgentClass   = "demo-urgent"
)

func trainNodeName(i int) string { return fmt.Sprintf("train-%02d", i) }

// gangs runs the gang part.
func gangs(ctx context.Context, c kubernetes.Interface) error {
	step(fmt.Sprintf("Gangs: adding %d training nodes of %s cpu (pool=%s, tainted %s=%s:NoSchedule)", trainNodes, trainNodeCPU, trainPool, trainTaint, trainPool))
	zones := []string{"zone-a", "zone-b", "zone-c"}
	for i := range trainNodes {
		n := frameworktest.MakeNode().Name(trainNodeName(i)).Capacity(trainNodeCPU, "32Gi", 110).
			Label(v1.LabelHostname, trainNodeName(i)).Label(v1.LabelTopologyZone, zones[i%3]).
			Label(v1.LabelTopologyRegion, "demo").Label("pool", trainPool).
			Taint(trainTaint, trainPool, v1.TaintEffectNoSchedule)
		if _, err := controlplane.CreateKWOKNode(ctx, c, n.Obj()); err != nil {
			return err
		}
	}

	step(fmt.Sprintf("Job train-a: %d workers × %s cpu, members of PodGroup train-a (gang, minCount %d): all placed or none", gangWorkers, workerCPU, gangWorkers))
	if err := createGangJob(ctx, c, "train-a", gangSpec{workers: gangWorkers}); err != nil {
		return err
	}
	if err := waitRunning(ctx, c, "train-a", gangWorkers); err != nil {
		return err
	}
	if _, err := waitGroupCondition(ctx, c, "train-a", metav1.ConditionTrue); err != nil {
		return err
	}
	if err := printGang(ctx, c, "train-a"); err != nil {
		return err
	}

	step(fmt.Sprintf("Job train-b: the same, while train-a holds %d of the %d nodes; one worker would fit on the last one, but the gang needs %d", gangWorkers, trainNodes, gangWorkers))
	if err := createGangJob(ctx, c, "train-b", gangSpec{workers: gangWorkers, disruptAll: true}); err != nil {
		return err
	}
	if _, err := waitGroupCondition(ctx, c, "train-b", metav1.ConditionFalse); err != nil {
		return err
	}
	// Watched for a while: not one worker is bound, not even for a moment.
	deadline := time.Now().Add(gangHold)
	for time.Now().Before(deadline) {
		pods, err := gangPods(ctx, c, "train-b")
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				return fmt.Errorf("worker %s of the waiting gang train-b was bound to %s", p.Name, p.Spec.NodeName)
			}
		}
		time.Sleep(settlePollRate)
	}
	if err := printGang(ctx, c, "train-b"); err != nil {
		return err
	}

	step("Job train-a done: deleting it and its PodGroup, which frees its nodes")
	background := metav1.DeletePropagationBackground
	if err := c.BatchV1().Jobs(namespace).Delete(ctx, "train-a", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		return fmt.Errorf("delete job train-a: %w", err)
	}
	// The PodGroup goes once its last pod has (its protection finalizer).
	if err := c.SchedulingV1beta1().PodGroups(namespace).Delete(ctx, "train-a", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete PodGroup train-a: %w", err)
	}
	if err := waitRunning(ctx, c, "train-b", gangWorkers); err != nil {
		return err
	}
	if _, err := waitGroupCondition(ctx, c, "train-b", metav1.ConditionTrue); err != nil {
		return err
	}
	if err := printGang(ctx, c, "train-b"); err != nil {
		return err
	}
	if err := waitJobReady(ctx, c, "train-b", gangWorkers); err != nil {
		return err
	}
	if err := waitPodGroupGone(ctx, c, "train-a"); err != nil {
		return err
	}
	return urgentGang(ctx, c)
}

// urgentGang shows a preemption by a group: a gang of higher priority
// that fits only by evicting train-b, whose PodGroup's disruptionMode is
// all, so train-b goes whole and its replacements wait whole.
func urgentGang(ctx context.Context, c kubernetes.Interface) error {
	step(fmt.Sprintf("Job urgent: %d workers of PriorityClass %s (1000); one training node is free, so the gang preempts, and train-b, whose PodGroup has disruptionMode all, is evicted whole", urgentWorkers, urgentClass))
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: urgentClass}, Value: 1000}
	if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create PriorityClass %s: %w", urgentClass, err)
	}
	if err := createGangJob(ctx, c, "urgent", gangSpec{workers: urgentWorkers, priorityClass: urgentClass}); err != nil {
		return err
	}
	if err := waitRunning(ctx, c, "urgent", urgentWorkers); err != nil {
		return err
	}
	if _, err := waitGroupCondition(ctx, c, "urgent", metav1.ConditionTrue); err != nil {
		return err
	}
	if err := printGang(ctx, c, "urgent"); err != nil {
		return err
	}
	// train-b: marked, its workers evicted; the Job's replacements wait
	// whole (3 nodes are free, the gang needs 4).
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		pg, err := c.SchedulingV1beta1().PodGroups(namespace).Get(ctx, "train-b", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.DisruptionTarget) == nil {
			return false, nil
		}
		pods, err := gangPods(ctx, c, "train-b")
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				return false, nil
			}
		}
		return true, nil
	})
	if timedOut(ctx, err) {
		return fmt.Errorf("train-b was not evicted whole within %s; see the yardmaster log", settleTimeout)
	}
	if err != nil {
		return err
	}
	pg, err := c.SchedulingV1beta1().PodGroups(namespace).Get(ctx, "train-b", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cond := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.DisruptionTarget); cond != nil {
		fmt.Printf("   PodGroup train-b: %s=%s, reason %s, %q\n", cond.Type, cond.Status, cond.Reason, cond.Message)
	}
	fmt.Printf("   train-b's %d workers were evicted together, none left bound; the new ones its Job makes wait whole until %d nodes are free\n", gangWorkers, gangWorkers)
	return nil
}

// waitJobReady waits until the Job counts n ready pods, so that the
// workloads table shows the gang as its controller sees it.
func waitJobReady(ctx context.Context, c kubernetes.Interface, name string, n int32) error {
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		j, err := c.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return j.Status.Ready != nil && *j.Status.Ready >= n, nil
	})
	if timedOut(ctx, err) {
		return fmt.Errorf("job %q: fewer than %d pods ready after %s", name, n, settleTimeout)
	}
	return err
}

// gangSpec is what differs between the demo's gangs.
type gangSpec struct {
	workers       int32
	priorityClass string
	// disruptAll makes the group's disruptionMode all: a preemption
	// evicts every worker or none.
	disruptAll bool
}

// createGangJob creates the PodGroup name and then the Job name, an
// Indexed Job of g.workers workers that name the group.
func createGangJob(ctx context.Context, c kubernetes.Interface, name string, g gangSpec) error {
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: g.workers},
			},
			PriorityClassName: g.priorityClass,
		},
	}
	if g.disruptAll {
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	}
	// Admission finds a PriorityClass just created in its informer's
	// cache a moment later.
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.SchedulingV1beta1().PodGroups(namespace).Create(ctx, pg, metav1.CreateOptions{})
		if g.priorityClass != "" && apierrors.IsForbidden(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("create PodGroup %q: %w", name, err)
	}
	pod := frameworktest.MakePod().Namespace(namespace).Label(appLabel, name).Req(workerCPU, "8Gi").
		NodeSelector(map[string]string{"pool": trainPool}).
		Toleration(trainTaint, v1.TolerationOpEqual, trainPool, v1.TaintEffectNoSchedule).
		PodGroup(name)
	if g.priorityClass != "" {
		pod = pod.PriorityClassName(g.priorityClass)
	}
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	t := template(pod)
	// Training outlasts the demo: without it KWOK would have a Job's pods
	// succeed at once.
	t.Annotations = map[string]string{controlplane.KWOKRunDurationAnnotation: trainRunFor}
	n := g.workers
	indexed := batchv1.IndexedCompletion
	_, err = c.BatchV1().Jobs(namespace).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       batchv1.JobSpec{Parallelism: &n, Completions: &n, CompletionMode: &indexed, Template: t},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create job %q: %w", name, err)
	}
	return nil
}

// gangPods returns the pods of the gang's Job that are not being deleted,
// by name.
func gangPods(ctx context.Context, c kubernetes.Interface, name string) ([]v1.Pod, error) {
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: appLabel + "=" + name})
	if err != nil {
		return nil, err
	}
	var out []v1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// waitGroupCondition waits until the PodGroup's PodGroupInitiallyScheduled
// condition has status, and returns it.
func waitGroupCondition(ctx context.Context, c kubernetes.Interface, name string, status metav1.ConditionStatus) (*metav1.Condition, error) {
	var got *metav1.Condition
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		pg, err := c.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
		return got != nil && got.Status == status, nil
	})
	if timedOut(ctx, err) {
		return nil, fmt.Errorf("PodGroup %s: no %s=%s after %s; see the yardmaster log", name, schedulingv1beta1.PodGroupInitiallyScheduled, status, settleTimeout)
	}
	return got, err
}

// waitPodGroupGone waits until the deleted PodGroup is gone: kube-
// controller-manager's PodGroup protection controller removes its
// finalizer once no pod names it.
func waitPodGroupGone(ctx context.Context, c kubernetes.Interface, name string) error {
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if timedOut(ctx, err) {
		return fmt.Errorf("PodGroup %s still there %s after its Job was deleted", name, settleTimeout)
	}
	return err
}

// printGang prints the gang's PodGroup condition and, for each worker,
// its node or why it waits (its PodScheduled condition).
func printGang(ctx context.Context, c kubernetes.Interface, name string) error {
	pg, err := c.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pods, err := gangPods(ctx, c, name)
	if err != nil {
		return err
	}
	bound := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound++
		}
	}
	fmt.Printf("   PodGroup %s (minCount %d): %d of %d workers bound\n", name, pg.Spec.SchedulingPolicy.Gang.MinCount, bound, len(pods))
	if cond := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); cond != nil {
		fmt.Printf("   status: %s=%s, reason %s, %q\n", cond.Type, cond.Status, cond.Reason, cond.Message)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   WORKER\tNODE\tPHASE\tWHY IT WAITS (PodScheduled)")
	for _, p := range pods {
		why := ""
		if p.Spec.NodeName == "" {
			why = unschedulableMessage(&p)
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\n", p.Name, orDash(p.Spec.NodeName), p.Status.Phase, orDash(why))
	}
	return tw.Flush()
}
