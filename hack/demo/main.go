// Command demo shows yardmaster scheduling a small simulated cluster on a
// local control plane: etcd, kube-apiserver, KWOK as the kubelet of every
// node (pods go Running, Jobs' pods complete) and kube-controller-manager
// with its workload, volume and ResourceClaim controllers. It runs the
// yardmaster binary against them, creates 20 nodes with local volumes and
// GPUs published through DRA, and workloads as users create them
// (cluster.go): Deployments, a StatefulSet with a volumeClaimTemplate, a
// Job, Deployments whose pods claim GPUs (claims.go), and high-priority
// pods that fit only by preempting backfill pods. Then it scales a
// Deployment up, drains a node and adds one, and runs two training jobs
// whose workers are gangs (PodGroups, gangs.go): the first is placed
// whole, the second waits whole until the first is deleted. It prints
// which pods run on each node, why the pending ones wait, and which
// volume and device each claim got. With a prometheus binary (make demo installs one), it
// also shows NetworkTraffic placing pods by the traffic Prometheus
// measures (see bandwidth.go). It stops everything it started unless
// DEMO_KEEP=1, in which case it waits for Ctrl-C.
//
//	make demo
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/internal/promtest"
)

const namespace = "demo"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	// kube-apiserver v1.37 warns on every PodGroup request that
	// scheduling.k8s.io/v1beta1 goes away in v1.43: once is enough.
	rest.SetDefaultWarningHandler(rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true}))

	outDir, err := filepath.Abs(envOr("DEMO_DIR", "_output/demo"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	binary := envOr("YARDMASTER_BINARY", "bin/yardmaster")

	// Prometheus first: it scrapes its targets only a few seconds after it
	// starts, and rate() needs a full timeRange of samples, so the sooner
	// the better.
	var nodes []string
	for i := range numNodes {
		nodes = append(nodes, nodeName(i))
	}
	bw, err := startBandwidth(ctx, nodes)
	switch {
	case errors.Is(err, promtest.ErrNotInstalled):
		bw = nil
	case err != nil:
		return fmt.Errorf("start Prometheus for the bandwidth part (%s=/nonexistent skips it): %w", promtest.BinaryEnv, err)
	default:
		defer bw.stop()
		step("Started Prometheus (" + bw.prom.URL + "), scraping a node_exporter stand-in for each node every second")
	}

	ld, err := startLoad(ctx)
	if err != nil && !errors.Is(err, promtest.ErrNotInstalled) {
		return fmt.Errorf("start Prometheus for the load part: %w", err)
	}
	if ld != nil {
		defer ld.stop()
	}

	step("Starting a local control plane (etcd, kube-apiserver serving PodGroups, KWOK as the kubelet of every node, kube-controller-manager's workload, volume, ResourceClaim and PodGroup protection controllers; loopback only)")
	cp, err := controlplane.Start(ctx, controlplane.Options{
		KWOK: true,
		Controllers: slices.Concat(controlplane.WorkloadControllers(), controlplane.StorageControllers(),
			controlplane.DRAControllers(), controlplane.GangControllers()),
		ExtraAPIServerFlags:         controlplane.GenericWorkloadAPIServerFlags(),
		ExtraControllerManagerFlags: controlplane.GenericWorkloadControllerManagerFlags(),
	})
	if err != nil {
		return err
	}
	defer func() { _ = cp.Stop() }()
	kubeconfig := filepath.Join(outDir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, cp.AdminToken); err != nil {
		return err
	}
	fmt.Printf("   kubeconfig: %s\n", kubeconfig)
	client := cp.AdminClient()

	configText := demoConfig
	if bw != nil {
		configText += bw.profile()
	}
	if ld != nil {
		configText += ld.profile()
	}
	configPath := filepath.Join(outDir, "yardmaster.yaml")
	if err := os.WriteFile(configPath, []byte(configText), 0o644); err != nil {
		return err
	}
	// The file must load; yardmaster would refuse it too, but with the
	// reason in its log rather than here.
	cfg, err := config.Load(configPath)
	if err != nil {
		return err
	}
	if bw != nil {
		if err := bw.loadArgs(cfg); err != nil {
			return err
		}
	}
	if ld != nil {
		if err := ld.loadArgs(cfg); err != nil {
			return err
		}
	}
	logPath := filepath.Join(outDir, "yardmaster.log")
	step("Starting yardmaster (log: " + logPath + ")")
	sched, err := startYardmaster(binary, kubeconfig, configPath, logPath)
	if err != nil {
		return err
	}
	defer stopYardmaster(sched)

	step(fmt.Sprintf("Creating %d KWOK nodes in 3 zones (2 tainted for GPUs, 6 with SSDs, 3 with 10G uplinks)", numNodes))
	if err := createNodes(ctx, client); err != nil {
		return err
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}

	step("Creating a WaitForFirstConsumer class with a local volume on each SSD node (10Gi, 20Gi, ...), and GPUs in ResourceSlices: node-00 a 40Gi and an 80Gi one, node-01 a 40Gi one")
	if err := createStorage(ctx, client); err != nil {
		return err
	}
	if err := createDevices(ctx, client); err != nil {
		return err
	}

	step("Creating workloads")
	start := time.Now()
	for _, w := range workloads() {
		fmt.Printf("   %s\n", w.what)
		if err := w.create(ctx, client); err != nil {
			return err
		}
	}
	step("Waiting for every pod to run or be reported unschedulable, and for Job batch to complete")
	if err := waitSettled(ctx, client, "workloads"); err != nil {
		return err
	}
	if err := waitJob(ctx, client, "batch"); err != nil {
		return err
	}
	fmt.Printf("   %.1fs\n", time.Since(start).Seconds())
	for _, f := range []func(context.Context, kubernetes.Interface) error{fillAndPreempt, scaleWeb, drain, addNode, gangs} {
		if err := f(ctx, client); err != nil {
			return err
		}
	}
	if err := printWorkloads(ctx, client); err != nil {
		return err
	}
	if err := printSummary(ctx, client); err != nil {
		return err
	}
	if err := printClaims(ctx, client); err != nil {
		return err
	}

	if bw == nil {
		step("Bandwidth scoring skipped: no prometheus binary (`make demo` installs it as root with apt-get; or put one on PATH, or set " + promtest.BinaryEnv + ")")
	} else if err := bw.show(ctx, client); err != nil {
		return err
	}
	if ld != nil {
		if err := ld.show(ctx, client); err != nil {
			return err
		}
	}
	if err := explainPending(ctx, client, binary, outDir, kubeconfig, configPath); err != nil {
		return err
	}

	if os.Getenv("DEMO_KEEP") == "1" {
		fmt.Printf("\nDEMO_KEEP=1: everything keeps running. Try:\n   kubectl --kubeconfig %s get pods -n %s -o wide\n", kubeconfig, namespace)
		if bw != nil {
			fmt.Printf("   %s explain bandwidth --config %s --profile %s\n", binary, configPath, quietProfile)
		}
		fmt.Println("Ctrl-C stops it all.")
		<-ctx.Done()
	}
	if bw != nil {
		step("Stopping yardmaster, Prometheus and the control plane")
	} else {
		step("Stopping yardmaster and the control plane")
	}
	return nil
}

// demoConfig has two profiles: the default spreads pods, "yardmaster-packer"
// packs batch pods onto as few nodes as possible. The profiles list comes
// last, so that the bandwidth part can append its profile.
const demoConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  qps: 200
  burst: 400
profiles:
- schedulerName: yardmaster
- schedulerName: yardmaster-packer
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
`

func startYardmaster(binary, kubeconfig, config, logPath string) (*exec.Cmd, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, "run", "--kubeconfig", kubeconfig, "--config", config, "--log-format", "console",
		"--http-bind-address", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w (run `make build` first)", binary, err)
	}
	return cmd, nil
}

func stopYardmaster(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// numNodes is the size of the demo cluster; the nodes from firstSSD on
// have SSDs.
const (
	numNodes = 20
	firstSSD = 14
)

func nodeName(i int) string { return fmt.Sprintf("node-%02d", i) }

func createNodes(ctx context.Context, client kubernetes.Interface) error {
	zones := []string{"zone-a", "zone-b", "zone-c"}
	for i := range numNodes {
		zone := zones[i%3]
		n := frameworktest.MakeNode().Name(nodeName(i)).
			Capacity("4", "16Gi", 110).
			Label(v1.LabelHostname, nodeName(i)).
			Label(v1.LabelTopologyZone, zone).
			Label(v1.LabelTopologyRegion, "demo")
		if i < 2 {
			n.Label("accelerator", "gpu").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule)
		}
		if i >= firstSSD {
			n.Label("disk", "ssd")
		}
		if isUplink(nodeName(i)) {
			n.Label(uplinkLabel, uplinkValue)
		}
		if _, err := controlplane.CreateKWOKNode(ctx, client, n.Obj()); err != nil {
			return err
		}
	}
	return nil
}

// waitSettled waits until the controllers have made the pods their
// Deployments and StatefulSets ask for, no pod is terminating, and every
// pod is running (or finished) on a node, or unbound with a FailedScheduling
// event and not nominated to a node where victims are being evicted.
func waitSettled(ctx context.Context, client kubernetes.Interface, what string) error {
	var waiting string
	err := wait.PollUntilContextTimeout(ctx, settlePollRate, settleTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		waiting, err = unsettled(ctx, client)
		return waiting == "", err
	})
	if timedOut(ctx, err) {
		return fmt.Errorf("%s: pods did not settle within %s (%s); see the yardmaster log", what, settleTimeout, waiting)
	}
	return err
}

// unsettled says what is still under way, or "" when nothing is.
func unsettled(ctx context.Context, client kubernetes.Interface) (string, error) {
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	reasons, err := failureReasons(ctx, client)
	if err != nil {
		return "", err
	}
	live := map[string]int32{}
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
			return "pod " + p.Name + " terminating", nil
		case p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
			continue
		case p.Spec.NodeName != "" && p.Status.Phase != v1.PodRunning:
			return "pod " + p.Name + " bound, not yet running", nil
		case p.Spec.NodeName == "" && (reasons[p.UID] == "" || p.Status.NominatedNodeName != ""):
			return "pod " + p.Name + " not yet scheduled", nil
		}
		live[p.Labels[appLabel]]++
	}
	deps, err := client.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, d := range deps.Items {
		if live[d.Name] != *d.Spec.Replicas {
			return fmt.Sprintf("deployment %s: %d of %d pods", d.Name, live[d.Name], *d.Spec.Replicas), nil
		}
	}
	sets, err := client.AppsV1().StatefulSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, s := range sets.Items {
		if live[s.Name] != *s.Spec.Replicas {
			return fmt.Sprintf("statefulset %s: %d of %d pods", s.Name, live[s.Name], *s.Spec.Replicas), nil
		}
	}
	return "", nil
}

// failureReasons returns the message of each pod's latest FailedScheduling
// event.
func failureReasons(ctx context.Context, client kubernetes.Interface) (map[types.UID]string, error) {
	evs, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
	if err != nil {
		return nil, err
	}
	out := map[types.UID]string{}
	latest := map[types.UID]time.Time{}
	for _, ev := range evs.Items {
		t := eventTime(&ev)
		if uid := ev.InvolvedObject.UID; !t.Before(latest[uid]) {
			out[uid], latest[uid] = ev.Message, t
		}
	}
	return out, nil
}

// workloadOf names the workload a pod belongs to: a StatefulSet's pods by
// their own (ordinal) names, the others by their app label.
func workloadOf(p *v1.Pod) string {
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "StatefulSet" {
		return p.Name
	}
	if app := p.Labels[appLabel]; app != "" {
		return app
	}
	return p.Name
}

// counted writes names as "web×2 store-0", in order.
func counted(names []string) string {
	n := map[string]int{}
	for _, s := range names {
		n[s]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if n[k] == 1 {
			out = append(out, k)
		} else {
			out = append(out, fmt.Sprintf("%s×%d", k, n[k]))
		}
	}
	return strings.Join(out, " ")
}

func printSummary(ctx context.Context, client kubernetes.Interface) error {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	reasons, err := failureReasons(ctx, client)
	if err != nil {
		return err
	}
	running, finished := map[string][]string{}, map[string][]string{}
	cpu := map[string]int64{}
	type group struct{ workload, reason string }
	pending := map[group]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.Spec.NodeName == "":
			reason := unschedulableMessage(p)
			if reason == "" {
				reason = reasons[p.UID]
			}
			pending[group{workloadOf(p), reason}]++
		case p.Status.Phase == v1.PodRunning:
			running[p.Spec.NodeName] = append(running[p.Spec.NodeName], workloadOf(p))
			for _, c := range p.Spec.Containers {
				cpu[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
			}
		case p.Status.Phase == v1.PodSucceeded:
			finished[p.Spec.NodeName] = append(finished[p.Spec.NodeName], workloadOf(p))
		}
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })

	step("Placement: pods in phase Running on each node (KWOK runs them), and those that ran to completion")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   NODE\tZONE\tLABELS/TAINTS\tCPU REQ\tRUNNING\tSUCCEEDED")
	for _, n := range nodes.Items {
		var notes []string
		if n.Labels["accelerator"] != "" {
			notes = append(notes, "gpu")
		}
		if n.Labels["disk"] != "" {
			notes = append(notes, "ssd")
		}
		if v := n.Labels[uplinkLabel]; v != "" {
			notes = append(notes, v)
		}
		if n.Spec.Unschedulable {
			notes = append(notes, "cordoned")
		}
		for _, t := range n.Spec.Taints {
			if t.Key != v1.TaintNodeUnschedulable {
				notes = append(notes, fmt.Sprintf("taint %s=%s:%s", t.Key, t.Value, t.Effect))
			}
		}
		if len(notes) == 0 {
			notes = []string{"-"}
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%dm/%dm\t%s\t%s\n", n.Name, n.Labels[v1.LabelTopologyZone],
			strings.Join(notes, ","), cpu[n.Name], n.Status.Allocatable.Cpu().MilliValue(),
			counted(running[n.Name]), counted(finished[n.Name]))
	}
	_ = tw.Flush()

	groups := make([]group, 0, len(pending))
	total := 0
	for g, n := range pending {
		groups = append(groups, g)
		total += n
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].workload < groups[j].workload })
	step(fmt.Sprintf("Pending pods (%d), with the reason yardmaster gave (FailedScheduling, as in their PodScheduled condition)", total))
	for _, g := range groups {
		name := g.workload
		if n := pending[g]; n > 1 {
			name = fmt.Sprintf("%s×%d", name, n)
		}
		fmt.Printf("   %-14s %s\n", name, g.reason)
	}
	return nil
}

func step(s string) { fmt.Printf("\n==> %s\n", s) }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
