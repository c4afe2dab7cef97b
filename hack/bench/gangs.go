package main

// The gang workloads, the shapes of kube-scheduler's scheduler_perf
// GangScheduling (test/integration/scheduler_perf/podgroup/gangscheduling
// in k8s.io/kubernetes v1.37.2): PodGroups of scheduling.k8s.io/v1beta1
// with a gang policy whose minCount is the group's size, and pods of
// 100m/100Mi that name them in spec.schedulingGroup.podGroupName. Pod i
// belongs to group i / size, named gangName(i / size) as upstream's
// template names it (gang-0, gang-1, ...). A drain of count pods that is
// not a whole number of groups ends with a smaller group, whose minCount
// is its own size, so every group is all or nothing.
//
// The pods' requests need no scaling to the harness's 32-cpu nodes: even
// 10,000 pods of 100m take 3% of 1,000 nodes, so where a group goes is
// decided by the scheduler's scoring, not by room. The drain creates the
// PodGroups before the pods, as scheduler_perf's createPodGroups op
// does, and the scheduler starts on both, as every drain starts.
//
// The API server serves PodGroups only with
// controlplane.GenericWorkloadAPIServerFlags, which the harness adds when
// a gang workload runs; kube-scheduler then runs with its GenericWorkload
// feature gate, without which it ignores spec.schedulingGroup. Every
// PodGroup gets the scheduling.k8s.io/podgroup-protection finalizer from
// admission; kube-controller-manager's PodGroup protection controller
// (controlplane.GangControllers), which runs while a gang workload is
// measured, removes it once no pod names the group, so deletePodGroups
// deletes the pods' groups after the pods.

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

const (
	// smallGangSize and smallGangPods are 5000Nodes_1000Gangs_3000Pods:
	// 1,000 groups of 3.
	smallGangSize = 3
	smallGangPods = 3000
	// largeGangSize and largeGangPods are 10 groups of 1,000, as issue
	// #39 asks; upstream has 5000Nodes_{3,6,9}Gangs_..._1000PerGroup.
	largeGangSize = 1000
	largeGangPods = 10000

	// gangTimeout bounds the wait for deleted PodGroups to go.
	gangTimeout = 2 * time.Minute
)

// gangName is the name of the g-th PodGroup of a drain.
func gangName(g int) string { return fmt.Sprintf("gang-%d", g) }

// gangPod is upstream's gang-pod template: 100m/100Mi, a member of the
// group of pod i in groups of size.
func gangPod(i, size int) *v1.Pod {
	p := basePod(i, "gang", "100m", "100Mi")
	name := gangName(i / size)
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return p
}

// podGroupsFor returns the PodGroups of count pods in groups of size, in
// ns: gang policy, minCount the number of pods of the group (size, but
// for a smaller last group).
func podGroupsFor(count, size int, ns string) []*schedulingv1beta1.PodGroup {
	var groups []*schedulingv1beta1.PodGroup
	for first := 0; first < count; first += size {
		members := int32(min(size, count-first))
		groups = append(groups, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gangName(first / size)},
			Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: members},
			}},
		})
	}
	return groups
}

// createPodGroups creates groups in parallel, retrying transient errors.
func createPodGroups(ctx context.Context, c kubernetes.Interface, workers int, groups []*schedulingv1beta1.PodGroup) error {
	return parallel(ctx, workers, len(groups), func(ctx context.Context, i int) error {
		pg := groups[i]
		attempt := 0
		return retry.OnError(retry.DefaultBackoff, isTransient, func() error {
			attempt++
			_, err := c.SchedulingV1beta1().PodGroups(pg.Namespace).Create(ctx, pg, metav1.CreateOptions{})
			if attempt > 1 && apierrors.IsAlreadyExists(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("creating PodGroup %s/%s: %w", pg.Namespace, pg.Name, err)
			}
			return nil
		})
	})
}

// deletePodGroups deletes the PodGroups in ns, whose pods must be gone,
// and waits until the protection controller has let them go, so that the
// next contender's scheduler does not list them.
func deletePodGroups(ctx context.Context, c kubernetes.Interface, ns string) error {
	if err := c.SchedulingV1beta1().PodGroups(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting PodGroups in %q: %w", ns, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, gangTimeout, true, func(ctx context.Context) (bool, error) {
		l, err := c.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		return len(l.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the PodGroups in %q to go (is the PodGroup protection controller running?): %w", ns, err)
	}
	return nil
}

// listGangs returns the pods and the PodGroups in ns, read from the API
// server after the contender stopped: the gang check must not miss a
// binding that the recorder's watch has not delivered yet.
func listGangs(ctx context.Context, c kubernetes.Interface, ns string) ([]*v1.Pod, []*schedulingv1beta1.PodGroup, error) {
	pl, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing pods in %q: %w", ns, err)
	}
	gl, err := c.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing PodGroups in %q: %w", ns, err)
	}
	pods := make([]*v1.Pod, len(pl.Items))
	for i := range pl.Items {
		pods[i] = &pl.Items[i]
	}
	groups := make([]*schedulingv1beta1.PodGroup, len(gl.Items))
	for i := range gl.Items {
		groups[i] = &gl.Items[i]
	}
	return pods, groups, nil
}

// checkGangs adds to res the check of the gangs: every group has either
// none of its members bound or at least its minCount. A group with some
// but fewer is partially bound, what gang scheduling exists to prevent;
// so is a member whose group does not exist or has no gang policy, since
// nothing should have placed it. Groups counts the PodGroups, GroupsPlaced
// those with minCount members bound.
func checkGangs(res *Placement, pods []*v1.Pod, groups []*schedulingv1beta1.PodGroup) {
	minCount := make(map[string]int, len(groups))
	for _, pg := range groups {
		if g := pg.Spec.SchedulingPolicy.Gang; g != nil {
			minCount[pg.Namespace+"/"+pg.Name] = int(g.MinCount)
		}
	}
	bound := map[string]int{}
	for _, p := range pods {
		sg := p.Spec.SchedulingGroup
		if sg == nil || sg.PodGroupName == nil {
			continue
		}
		key := p.Namespace + "/" + *sg.PodGroupName
		if _, ok := minCount[key]; !ok {
			if p.Spec.NodeName != "" {
				res.violate(&res.PartialGroups, "pod %s on %s names PodGroup %s, which does not exist or is no gang", p.Name, p.Spec.NodeName, key)
			}
			continue
		}
		if p.Spec.NodeName != "" {
			bound[key]++
		}
	}
	res.Groups = len(groups)
	keys := make([]string, 0, len(minCount))
	for k := range minCount {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch n := bound[k]; {
		case n >= minCount[k]:
			res.GroupsPlaced++
		case n > 0:
			res.violate(&res.PartialGroups, "PodGroup %s partially bound: %d members bound, minCount %d", k, n, minCount[k])
		}
	}
}
