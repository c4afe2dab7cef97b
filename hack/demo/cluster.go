package main

// The demo's workloads, created as users create them: Deployments, a
// StatefulSet with a volumeClaimTemplate, a Job, Deployments whose pods
// take GPUs through ResourceClaims, and, once the cluster is full, a group
// of high-priority pods that fits only after preemption. kube-controller-
// manager's workload controllers make their pods, KWOK runs them on the
// simulated nodes, and yardmaster places them. Then the cluster changes as
// clusters do: a Deployment is scaled up, a node is drained, a node is
// added.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// Priority classes: backfill below every other pod (which get 0 without a
// class), critical above them all.
const (
	backfillClass    = "backfill"
	backfillPriority = -10
	criticalClass    = "critical"
	criticalPriority = 1000
)

const (
	webReplicas    = 12
	webScaledTo    = 15
	criticalPods   = 3
	criticalCPU    = "2"
	backfillCPU    = 1000 // millicores per backfill pod
	batchPods      = 8
	batchRunFor    = "10s"
	settleTimeout  = 90 * time.Second
	settlePollRate = 500 * time.Millisecond
)

// appLabel names the workload a pod belongs to in the summary.
const appLabel = "app"

// template makes a pod template from a frameworktest pod: its labels and spec.
func template(p *frameworktest.PodWrapper) v1.PodTemplateSpec {
	pod := p.Obj()
	return v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels}, Spec: pod.Spec}
}

func deployment(name string, replicas int32, pod *frameworktest.PodWrapper) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: name}},
			Template: template(pod.Label(appLabel, name)),
		},
	}
}

// workload is what the demo creates, and a line saying what it is.
type workload struct {
	what   string
	create func(context.Context, kubernetes.Interface) error
}

func createDeployment(d *appsv1.Deployment) func(context.Context, kubernetes.Interface) error {
	return func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AppsV1().Deployments(namespace).Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create deployment %q: %w", d.Name, err)
		}
		return nil
	}
}

// workloads are created in this order. finetune comes before infer, so
// that infer's claims, which take any GPU, do not take the 80Gi one.
func workloads() []workload {
	web := frameworktest.MakePod().Namespace(namespace).Req("500m", "512Mi")
	web.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       v1.LabelTopologyZone,
		WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: "web"}},
	}}
	db := frameworktest.MakePod().Namespace(namespace).NodeSelector(map[string]string{"disk": "ssd"}).
		Req("1", "2Gi").HostPort(5432, v1.ProtocolTCP, "")
	tooBig := frameworktest.MakePod().Namespace(namespace).Req("64", "1Gi")
	untolerated := frameworktest.MakePod().Namespace(namespace).
		NodeSelector(map[string]string{"accelerator": "gpu"}).Req("100m", "")
	return []workload{
		{fmt.Sprintf("Deployment web: %d × 500m/512Mi, zone spread maxSkew 1 (DoNotSchedule)", webReplicas),
			createDeployment(deployment("web", webReplicas, web))},
		{"Deployment db: 3 × 1 cpu on ssd nodes, each binding host port 5432", createDeployment(deployment("db", 3, db))},
		{fmt.Sprintf("Job batch: %d pods × 1 cpu for %s on profile yardmaster-packer (MostAllocated: pack)", batchPods, batchRunFor), createBatch},
		{"StatefulSet store: 3 replicas, volumeClaimTemplate data 15Gi on local-ssd (WaitForFirstConsumer)", createStatefulSet("store", 3, "15Gi")},
		{"StatefulSet archive: 1 replica, 50Gi on local-ssd: no volume holds it, no provisioner makes it", createStatefulSet("archive", 1, "50Gi")},
		{"Deployment finetune: 1 pod sharing the claim big-gpu (a GPU of at least 80Gi, by CEL)", createDeployment(gpuDeployment("finetune", 1, "big-gpu", ""))},
		{"Deployment infer: 3 pods, each with a claim for any GPU from template one-gpu; no node selector", createDeployment(gpuDeployment("infer", 3, "", gpuTemplate))},
		{"Deployment too-big: asks for 64 cpu, fits nowhere", createDeployment(deployment("too-big", 1, tooBig))},
		{"Deployment no-toleration: selects the GPU nodes without tolerating their taint", createDeployment(deployment("no-toleration", 1, untolerated))},
	}
}

// createBatch creates the Job. KWOK finishes each of its pods batchRunFor
// after it starts (controlplane.KWOKRunDurationAnnotation).
func createBatch(ctx context.Context, c kubernetes.Interface) error {
	n := int32(batchPods)
	pod := frameworktest.MakePod().Namespace(namespace).SchedulerName("yardmaster-packer").
		Label(appLabel, "batch").Req("1", "1Gi")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	t := template(pod)
	t.Annotations = map[string]string{controlplane.KWOKRunDurationAnnotation: batchRunFor}
	_, err := c.BatchV1().Jobs(namespace).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "batch"},
		Spec:       batchv1.JobSpec{Parallelism: &n, Completions: &n, Template: t},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create job batch: %w", err)
	}
	return nil
}

// createStatefulSet creates a StatefulSet whose pods each get a claim
// "data" of size on the local WaitForFirstConsumer class. Parallel: its
// pods need not wait for each other here.
func createStatefulSet(name string, replicas int32, size string) func(context.Context, kubernetes.Interface) error {
	return func(ctx context.Context, c kubernetes.Interface) error {
		class := localClass
		pod := frameworktest.MakePod().Namespace(namespace).Label(appLabel, name).Req("500m", "1Gi").PVC("data")
		_, err := c.AppsV1().StatefulSets(namespace).Create(ctx, &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: appsv1.StatefulSetSpec{
				Replicas:            &replicas,
				ServiceName:         name,
				PodManagementPolicy: appsv1.ParallelPodManagement,
				Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: name}},
				Template:            template(pod),
				VolumeClaimTemplates: []v1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: v1.PersistentVolumeClaimSpec{
						AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
						StorageClassName: &class,
						Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
					},
				}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create statefulset %q: %w", name, err)
		}
		return nil
	}
}

// createPriorityClasses creates backfill and critical.
func createPriorityClasses(ctx context.Context, c kubernetes.Interface) error {
	never := v1.PreemptNever
	for _, pc := range []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: backfillClass}, Value: backfillPriority, PreemptionPolicy: &never,
			Description: "idle capacity: goes first when anything else needs room"},
		{ObjectMeta: metav1.ObjectMeta{Name: criticalClass}, Value: criticalPriority,
			Description: "must run: preempts lower-priority pods"},
	} {
		if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create priority class %q: %w", pc.Name, err)
		}
	}
	return nil
}

// freeCPU returns how many backfill pods fit on the nodes they may use
// (untainted, schedulable): the sum of each node's whole free backfill
// slots. Any order of placing that many pods fits them all, since a pod
// fails only once every node has less than one slot left.
func freeCPU(ctx context.Context, c kubernetes.Interface) (int32, error) {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	used, err := requestedCPU(ctx, c)
	if err != nil {
		return 0, err
	}
	var slots int64
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable || len(n.Spec.Taints) > 0 {
			continue
		}
		slots += (n.Status.Allocatable.Cpu().MilliValue() - used[n.Name]) / backfillCPU
	}
	return int32(slots), nil
}

// requestedCPU sums the CPU requests of the pods bound to each node that
// have not finished.
func requestedCPU(ctx context.Context, c kubernetes.Interface) (map[string]int64, error) {
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	used := map[string]int64{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		for _, ctr := range p.Spec.Containers {
			used[p.Spec.NodeName] += ctr.Resources.Requests.Cpu().MilliValue()
		}
	}
	return used, nil
}

// fillAndPreempt fills every free CPU with backfill pods, then creates the
// critical pods, which fit only where backfill pods are evicted.
func fillAndPreempt(ctx context.Context, c kubernetes.Interface) error {
	if err := createPriorityClasses(ctx, c); err != nil {
		return err
	}
	slots, err := freeCPU(ctx, c)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("Filling the cluster: Deployment backfill, %d × 1 cpu at PriorityClass %s (%d, preemptionPolicy Never), one per free CPU", slots, backfillClass, backfillPriority))
	backfill := frameworktest.MakePod().Namespace(namespace).Req("1", "256Mi").PriorityClassName(backfillClass)
	if err := createDeployment(deployment("backfill", slots, backfill))(ctx, c); err != nil {
		return err
	}
	if err := waitSettled(ctx, c, "backfill"); err != nil {
		return err
	}
	step(fmt.Sprintf("Deployment critical: %d × %s cpu at PriorityClass %s (%d); no node has %s cpu free", criticalPods, criticalCPU, criticalClass, criticalPriority, criticalCPU))
	critical := frameworktest.MakePod().Namespace(namespace).Req(criticalCPU, "1Gi").PriorityClassName(criticalClass)
	if err := createDeployment(deployment("critical", criticalPods, critical))(ctx, c); err != nil {
		return err
	}
	if err := waitRunning(ctx, c, "critical", criticalPods); err != nil {
		return err
	}
	if err := waitSettled(ctx, c, "critical"); err != nil {
		return err
	}
	return printPreemptions(ctx, c)
}

// printPreemptions lists the Preempted events: which pod was evicted
// from which node, for which pod.
func printPreemptions(ctx context.Context, c kubernetes.Interface) error {
	evs, err := c.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=Preempted"})
	if err != nil {
		return err
	}
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, p := range pods.Items {
		names[string(p.UID)] = p.Name
	}
	var lines []string
	for _, ev := range evs.Items {
		msg := ev.Message
		// "Preempted by pod <uid> on node <node>"
		if f := strings.Fields(msg); len(f) == 7 && names[f[3]] != "" {
			msg = fmt.Sprintf("preempted by %s on %s", names[f[3]], f[6])
		}
		lines = append(lines, fmt.Sprintf("   %-28s %s", ev.InvolvedObject.Name, msg))
	}
	slices.Sort(lines)
	fmt.Printf("   %d pods preempted (Preempted events); the backfill ReplicaSet recreates them, and they wait:\n", len(lines))
	for _, l := range lines {
		fmt.Println(l)
	}
	return nil
}

// scaleWeb scales the web Deployment up; its new pods (priority 0) take
// backfill pods' room.
func scaleWeb(ctx context.Context, c kubernetes.Interface) error {
	step(fmt.Sprintf("Scaling Deployment web from %d to %d replicas", webReplicas, webScaledTo))
	s, err := c.AppsV1().Deployments(namespace).GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	s.Spec.Replicas = webScaledTo
	if _, err := c.AppsV1().Deployments(namespace).UpdateScale(ctx, "web", s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("scale deployment web: %w", err)
	}
	if err := waitRunning(ctx, c, "web", webScaledTo); err != nil {
		return err
	}
	return waitSettled(ctx, c, "web scale-up")
}

// drain cordons the node running the most web pods among those without
// GPUs, SSDs or a 10G uplink (which the other parts of the demo use), and
// evicts its pods, as kubectl drain does; their controllers make new ones,
// which yardmaster places elsewhere.
func drain(ctx context.Context, c kubernetes.Interface) error {
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	webOn := map[string]int{}
	for _, p := range pods.Items {
		if p.Labels[appLabel] == "web" && p.Spec.NodeName != "" {
			webOn[p.Spec.NodeName]++
		}
	}
	node := ""
	for i := 2; i < firstSSD; i++ {
		n := nodeName(i)
		if !isUplink(n) && (node == "" || webOn[n] > webOn[node]) {
			node = n
		}
	}
	// Cordoned first, then listed, as kubectl drain does: a pod bound to
	// the node after the list would otherwise stay on it.
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	if _, err := c.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("cordon %q: %w", node, err)
	}
	onNode := func(ctx context.Context) ([]v1.Pod, error) {
		pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(pods.Items, func(p v1.Pod) bool {
			return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
		}), nil
	}
	left, err := onNode(ctx)
	if err != nil {
		return err
	}
	var evicted []string
	for _, p := range left {
		evicted = append(evicted, p.Name)
	}
	slices.Sort(evicted)
	step(fmt.Sprintf("Draining %s: cordoned, now evicting its %d pods (%s)", node, len(evicted), strings.Join(evicted, " ")))
	// Evicted until none is left: one bound before the cordon was seen
	// by the scheduler shows up late, and an eviction a disruption budget
	// refuses for now (429) is asked again.
	err = wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		left, err := onNode(ctx)
		if err != nil {
			return false, err
		}
		for _, p := range left {
			if p.DeletionTimestamp != nil {
				continue
			}
			err := c.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: p.Name}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsTooManyRequests(err) {
				return false, fmt.Errorf("evict %q: %w", p.Name, err)
			}
		}
		return len(left) == 0, nil
	})
	if timedOut(ctx, err) {
		return fmt.Errorf("pods of the drained node %q not gone after %s", node, settleTimeout)
	}
	if err != nil {
		return err
	}
	if err := waitRunning(ctx, c, "web", webScaledTo); err != nil {
		return err
	}
	return waitSettled(ctx, c, "drain")
}

// addNode adds a node like the plain ones; the waiting backfill pods take it.
func addNode(ctx context.Context, c kubernetes.Interface) error {
	name := nodeName(numNodes)
	step(fmt.Sprintf("Adding node %s (zone-a, 4 cpu)", name))
	n := frameworktest.MakeNode().Name(name).Capacity("4", "16Gi", 110).
		Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, "zone-a").Label(v1.LabelTopologyRegion, "demo")
	if _, err := controlplane.CreateKWOKNode(ctx, c, n.Obj()); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
		return err == nil && len(pods.Items) > 0, err
	})
	if err != nil {
		return fmt.Errorf("no pod went to the new node %q: %w", name, err)
	}
	if err := waitSettled(ctx, c, "node added"); err != nil {
		return err
	}
	return waitRetried(ctx, c, "backfill", numNodes+1)
}

// retryWait bounds waitRetried: yardmaster retries the pods the new node
// woke within a backoff of a second or two.
const retryWait = 10 * time.Second

// waitRetried waits, for at most retryWait, until every pending pod of the
// workload app has been tried on all the nodes: its PodScheduled
// condition, which yardmaster rewrites on each failed attempt (the
// FailedScheduling event of a repeated failure is only counted in its
// series for a while), says "0/<nodes> nodes". Only pods the new node woke
// are tried again, so it does not wait for the others.
func waitRetried(ctx context.Context, c kubernetes.Interface, app string, nodes int) error {
	want := fmt.Sprintf("0/%d nodes", nodes)
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, retryWait, true, func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: appLabel + "=" + app})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" && !strings.HasPrefix(unschedulableMessage(&p), want) {
				return false, nil
			}
		}
		return true, nil
	})
	if timedOut(ctx, err) {
		return nil // the reasons printed are older; nothing more is wrong
	}
	return err
}

// unschedulableMessage is the message of a pod's PodScheduled condition
// when it is False, else "".
func unschedulableMessage(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}

// timedOut reports whether err ended a wait.PollUntilContextTimeout on
// ctx by its timeout: the poll's own context error, or a client's
// rate limiter refusing to wait past that deadline.
func timedOut(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && (wait.Interrupted(err) || strings.Contains(err.Error(), "would exceed context deadline"))
}

// eventTime is when an event was last seen, whichever API wrote it.
func eventTime(ev *v1.Event) time.Time {
	t := ev.LastTimestamp.Time
	if ev.EventTime.After(t) {
		t = ev.EventTime.Time
	}
	if ev.Series != nil && ev.Series.LastObservedTime.After(t) {
		t = ev.Series.LastObservedTime.Time
	}
	return t
}

// waitRunning waits until the workload app has n pods Running.
func waitRunning(ctx context.Context, c kubernetes.Interface, app string, n int) error {
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: appLabel + "=" + app})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running >= n, nil
	})
	if timedOut(ctx, err) {
		return fmt.Errorf("%s: fewer than %d pods Running after %s; see the yardmaster log", app, n, settleTimeout)
	}
	return err
}

// waitJob waits until the Job has completed.
func waitJob(ctx context.Context, c kubernetes.Interface, name string) error {
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		j, err := c.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range j.Status.Conditions {
			if cond.Type == batchv1.JobComplete && cond.Status == v1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if timedOut(ctx, err) {
		return fmt.Errorf("job %q not complete after %s", name, settleTimeout)
	}
	return err
}

// printWorkloads prints each workload's pods as its controller counts them.
func printWorkloads(ctx context.Context, c kubernetes.Interface) error {
	deps, err := c.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	sets, err := c.AppsV1().StatefulSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	jobs, err := c.BatchV1().Jobs(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	step("Workloads, as their controllers count their pods")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   WORKLOAD\tPRIORITY CLASS\tREADY/DESIRED\tSUCCEEDED")
	for _, d := range deps.Items {
		fmt.Fprintf(tw, "   Deployment %s\t%s\t%d/%d\t\n", d.Name, orDash(d.Spec.Template.Spec.PriorityClassName), d.Status.ReadyReplicas, *d.Spec.Replicas)
	}
	for _, s := range sets.Items {
		fmt.Fprintf(tw, "   StatefulSet %s\t%s\t%d/%d\t\n", s.Name, orDash(s.Spec.Template.Spec.PriorityClassName), s.Status.ReadyReplicas, *s.Spec.Replicas)
	}
	for _, j := range jobs.Items {
		fmt.Fprintf(tw, "   Job %s\t%s\t%d/%d\t%d/%d\n", j.Name, orDash(j.Spec.Template.Spec.PriorityClassName), ptr.Deref(j.Status.Ready, 0), *j.Spec.Parallelism, j.Status.Succeeded, *j.Spec.Completions)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
