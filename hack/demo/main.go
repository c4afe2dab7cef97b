// Command demo shows yardmaster working on a local control plane: it starts
// etcd, kube-apiserver and kube-controller-manager (its volume and
// ResourceClaim controllers), runs the yardmaster binary against them,
// creates a small simulated cluster with local volumes and GPUs published
// through DRA, and a few workloads, and prints where every pod went, which
// volume and which device each claim got, and why the pending pods are
// pending (see claims.go). When a prometheus binary is
// installed (make prometheus), it also shows NetworkTraffic placing pods by
// the traffic Prometheus measures (see bandwidth.go). It stops everything it
// started unless DEMO_KEEP=1, in which case it waits for Ctrl-C.
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
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/internal/promtest"
	"github.com/yardmaster-io/yardmaster/internal/schedtest"
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

	step("Starting a local control plane (etcd, kube-apiserver, kube-controller-manager's volume and ResourceClaim controllers; loopback only)")
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Controllers: append(controlplane.StorageControllers(), controlplane.DRAControllers()...),
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
	logPath := filepath.Join(outDir, "yardmaster.log")
	step("Starting yardmaster (log: " + logPath + ")")
	sched, err := startYardmaster(binary, kubeconfig, configPath, logPath)
	if err != nil {
		return err
	}
	defer stopYardmaster(sched)

	step(fmt.Sprintf("Creating %d nodes in 3 zones (2 tainted for GPUs, 6 with SSDs, 3 with 10G uplinks)", numNodes))
	if err := createNodes(ctx, client); err != nil {
		return err
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
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
	pods, err := workloads(ctx, client)
	if err != nil {
		return err
	}
	for _, w := range pods {
		fmt.Printf("   %-12s %s\n", w.name, w.what)
		for _, p := range w.pods {
			if _, err := client.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create pod %s: %w", p.Name, err)
			}
		}
	}

	step("Waiting for every pod to be bound or reported unschedulable")
	if err := waitSettled(ctx, client); err != nil {
		return err
	}
	if err := printSummary(ctx, client); err != nil {
		return err
	}
	if err := printClaims(ctx, client); err != nil {
		return err
	}

	if bw == nil {
		step("Bandwidth scoring skipped: no prometheus binary (`make prometheus` installs it, or set " + promtest.BinaryEnv + ")")
	} else if err := bw.show(ctx, client); err != nil {
		return err
	}

	if os.Getenv("DEMO_KEEP") == "1" {
		fmt.Printf("\nDEMO_KEEP=1: everything keeps running. Try:\n   kubectl --kubeconfig %s get pods -n %s -o wide\n", kubeconfig, namespace)
		if bw != nil {
			fmt.Printf("   %s explain-bandwidth --config %s --profile %s\n", binary, configPath, quietProfile)
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
		n := schedtest.MakeNode().Name(nodeName(i)).
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
		if _, err := controlplane.CreateReadyNode(ctx, client, n.Obj()); err != nil {
			return err
		}
	}
	return nil
}

type workload struct {
	name string
	what string
	pods []*v1.Pod
}

func workloads(ctx context.Context, client kubernetes.Interface) ([]workload, error) {
	var web, batch, gpu, ssd []*v1.Pod
	for i := range 12 {
		p := schedtest.MakePod().Namespace(namespace).Name(fmt.Sprintf("web-%02d", i)).
			Label("app", "web").Req("500m", "512Mi").Obj()
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		}}
		web = append(web, p)
	}
	for i := range 8 {
		batch = append(batch, schedtest.MakePod().Namespace(namespace).Name(fmt.Sprintf("batch-%02d", i)).
			SchedulerName("yardmaster-packer").Label("app", "batch").Req("1", "1Gi").Obj())
	}
	for i := range 2 {
		gpu = append(gpu, schedtest.MakePod().Namespace(namespace).Name(fmt.Sprintf("train-%d", i)).
			NodeSelector(map[string]string{"accelerator": "gpu"}).
			Toleration("dedicated", v1.TolerationOpEqual, "gpu", v1.TaintEffectNoSchedule).Req("2", "4Gi").Obj())
	}
	for i := range 3 {
		ssd = append(ssd, schedtest.MakePod().Namespace(namespace).Name(fmt.Sprintf("db-%d", i)).
			NodeSelector(map[string]string{"disk": "ssd"}).Req("1", "2Gi").HostPort(5432, v1.ProtocolTCP, "").Obj())
	}
	huge := schedtest.MakePod().Namespace(namespace).Name("too-big").Req("64", "1Gi").Obj()
	untolerated := schedtest.MakePod().Namespace(namespace).Name("no-toleration").
		NodeSelector(map[string]string{"accelerator": "gpu"}).Req("100m", "").Obj()
	store, err := storePods(ctx, client)
	if err != nil {
		return nil, err
	}
	// The claim that needs the 80Gi GPU goes first, so the template
	// claims after it do not take that GPU.
	devices := []*v1.Pod{gpuPod("finetune", "big-gpu", "")}
	for i := range 3 {
		devices = append(devices, gpuPod(fmt.Sprintf("infer-%d", i), "", gpuTemplate))
	}
	return []workload{
		{"web", "12 × 500m/512Mi, zone spread maxSkew 1 (DoNotSchedule), default profile", web},
		{"batch", "8 × 1 cpu on profile yardmaster-packer (MostAllocated: pack)", batch},
		{"train", "2 GPU pods: tolerate dedicated=gpu, select accelerator=gpu", gpu},
		{"db", "3 pods on ssd nodes, each binding host port 5432", ssd},
		{"too-big", "asks for 64 cpu: fits nowhere", []*v1.Pod{huge}},
		{"no-toleration", "selects the GPU nodes without tolerating their taint", []*v1.Pod{untolerated}},
		{"store", "4 StatefulSet-shaped pods, each with a WaitForFirstConsumer claim: 3 × 15Gi, 1 × 50Gi", store},
		{"gpu", "finetune claims a GPU of at least 80Gi (CEL); infer-0..2 each get a claim for any GPU from a template; no node selector", devices},
	}, nil
}

// waitSettled waits until every pod is bound or has a FailedScheduling event.
func waitSettled(ctx context.Context, client kubernetes.Interface) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		reasons, err := failureReasons(ctx, client)
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" && reasons[p.Name] == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("pods did not settle within 60s; see the yardmaster log")
	}
	return err
}

func failureReasons(ctx context.Context, client kubernetes.Interface) (map[string]string, error) {
	evs, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, ev := range evs.Items {
		out[ev.InvolvedObject.Name] = ev.Message
	}
	return out, nil
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
	byNode := map[string][]string{}
	cpu := map[string]int64{}
	var pending []v1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			pending = append(pending, p)
			continue
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
		for _, c := range p.Spec.Containers {
			cpu[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })

	step("Placement")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   NODE\tZONE\tLABELS/TAINTS\tCPU REQ\tPODS")
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
		for _, t := range n.Spec.Taints {
			notes = append(notes, fmt.Sprintf("taint %s=%s:%s", t.Key, t.Value, t.Effect))
		}
		sort.Strings(byNode[n.Name])
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%dm/%dm\t%s\n", n.Name, n.Labels[v1.LabelTopologyZone],
			strings.Join(notes, ","), cpu[n.Name], n.Status.Allocatable.Cpu().MilliValue(), strings.Join(byNode[n.Name], " "))
	}
	_ = tw.Flush()

	step(fmt.Sprintf("Pending pods (%d), with the reason yardmaster gave", len(pending)))
	for _, p := range pending {
		fmt.Printf("   %-14s %s\n", p.Name, reasons[p.Name])
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
