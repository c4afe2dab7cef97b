// Command soak runs yardmaster for a long while against a cluster that
// never stops changing, and checks that it neither leaks nor loses work:
//
//	make soak                      # 30 minutes, 500 nodes
//	go run ./hack/soak -duration 5m -nodes 100
//
// On a local control plane (etcd + kube-apiserver), with the yardmaster
// binary: pods are created at a steady rate and deleted a while after they
// are bound (they "complete"; there is no kubelet), a pool of pods that fit
// nowhere waits the whole time, and every interval a node is added and
// another removed with its pods. Every sample interval it reads
// yardmaster's goroutines, heap and RSS from its /metrics and writes them,
// with the pods bound and pending, to -out. At the end, after the churn has
// stopped and the queue has drained:
//
//   - no node holds more cpu than it has (every bound pod counted once);
//   - every pod that fits is bound;
//   - goroutines and heap are flat after warm-up: the mean of the last
//     third of the samples is at most -max-growth above the first sample
//     after warm-up (a quarter of the run).
//
// It exits 1 when a check fails. Everything it starts stops when it
// returns, also on SIGINT.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/internal/procgroup"
)

const (
	namespace     = "soak"
	schedulerName = "yardmaster"
	// nodeCPU is each node's cpu, in millicores.
	nodeCPU = 4000
)

type options struct {
	duration, sample, nodeChurn time.Duration
	nodes, rate, unfit          int
	lifetime                    time.Duration
	binary, out                 string
	maxGrowth                   float64
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 30*time.Minute, "how long the churn runs")
	flag.DurationVar(&o.sample, "sample", 30*time.Second, "how often yardmaster's goroutines and heap are read")
	flag.DurationVar(&o.nodeChurn, "node-churn", 30*time.Second, "how often a node is added and another removed")
	flag.IntVar(&o.nodes, "nodes", 500, "nodes in the cluster")
	flag.IntVar(&o.rate, "rate", 20, "pods created per second")
	flag.DurationVar(&o.lifetime, "lifetime", 40*time.Second, "mean time a pod runs after it is bound before it is deleted")
	flag.IntVar(&o.unfit, "unfit", 200, "pods that fit nowhere, waiting the whole run")
	flag.StringVar(&o.binary, "binary", "bin/yardmaster", "the yardmaster binary")
	flag.StringVar(&o.out, "out", "_output/soak/results.txt", "where the samples and the verdict are written")
	flag.Float64Var(&o.maxGrowth, "max-growth", 0.25, "how much goroutines and heap may grow after warm-up (0.25 = 25%)")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		cancel()
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	outFile, err := os.Create(o.out)
	if err != nil {
		return err
	}
	defer outFile.Close()
	report := io.MultiWriter(os.Stdout, outFile)
	fmt.Fprintf(report, "soak: %s, %d nodes, %d pods/s living ~%s, %d that fit nowhere, a node replaced every %s\n",
		o.duration, o.nodes, o.rate, o.lifetime, o.unfit, o.nodeChurn)

	cp, err := controlplane.Start(ctx, controlplane.Options{LogDir: filepath.Join(filepath.Dir(o.out), "logs")})
	if err != nil {
		return err
	}
	defer func() { _ = cp.Stop() }()
	// The admin client's default rate limit would throttle the churn.
	restConfig := cp.RESTConfig(cp.AdminToken)
	restConfig.QPS, restConfig.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(cp.Dir, "soak.kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, cp.AdminToken); err != nil {
		return err
	}
	ns, err := controlplane.CreateNamespace(ctx, client, namespace)
	if err != nil {
		return err
	}

	port, err := procgroup.FreePort()
	if err != nil {
		return err
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	sched, err := procgroup.Start("yardmaster", o.binary, []string{"run", "--kubeconfig", kubeconfig,
		"--leader-elect=false", "--http-bind-address", fmt.Sprintf("127.0.0.1:%d", port),
		"--kube-api-qps", "200", "--kube-api-burst", "400"}, filepath.Join(filepath.Dir(o.out), "logs", "yardmaster.log"))
	if err != nil {
		return err
	}
	defer func() { _ = sched.Stop(10 * time.Second) }()

	d := &driver{o: o, client: client, ns: ns, rng: rand.New(rand.NewPCG(1, 2))}
	for i := range o.nodes {
		if err := d.addNode(ctx, i); err != nil {
			return err
		}
	}
	d.nextNode = o.nodes
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	d.pods = factory.Core().V1().Pods().Lister()
	nodeFactory := informers.NewSharedInformerFactory(client, 0)
	d.nodes = nodeFactory.Core().V1().Nodes().Lister()
	informerCtx, stopInformers := context.WithCancel(ctx)
	factory.Start(informerCtx.Done())
	nodeFactory.Start(informerCtx.Done())
	defer func() {
		stopInformers()
		factory.Shutdown()
		nodeFactory.Shutdown()
	}()
	factory.WaitForCacheSync(informerCtx.Done())
	nodeFactory.WaitForCacheSync(informerCtx.Done())

	for i := range o.unfit {
		if err := d.createPod(ctx, fmt.Sprintf("unfit-%d", i), "64"); err != nil {
			return err
		}
	}

	// The churn, and the samples beside it.
	churnCtx, stopChurn := context.WithTimeout(ctx, o.duration)
	defer stopChurn()
	var wg sync.WaitGroup
	churnErr := make(chan error, 3)
	// An error as the churn ends (a request cut short by its deadline, or
	// refused by the rate limiter for it) is not a failure.
	deadline, _ := churnCtx.Deadline()
	churn := func(f func(context.Context) error) {
		if err := f(churnCtx); time.Until(deadline) > time.Second {
			churnErr <- err
		}
	}
	wg.Go(func() { churn(d.createPods) })
	wg.Go(func() { churn(d.completePods) })
	wg.Go(func() { churn(d.replaceNodes) })
	var samples []sample
	fmt.Fprintf(report, "%8s %10s %10s %10s %8s %8s\n", "elapsed", "goroutines", "heap MiB", "RSS MiB", "bound", "pending")
	start := time.Now()
	tick := time.NewTicker(o.sample)
	for churnCtx.Err() == nil {
		select {
		case <-churnCtx.Done():
		case <-tick.C:
			s, err := scrape(ctx, metricsURL)
			if err != nil {
				fmt.Fprintf(report, "sample: %v\n", err)
				continue
			}
			s.elapsed = time.Since(start)
			s.bound, s.pending = d.counts()
			samples = append(samples, s)
			fmt.Fprintf(report, "%8s %10.0f %10.1f %10.1f %8d %8d\n", s.elapsed.Round(time.Second), s.goroutines, s.heap/(1<<20), s.rss/(1<<20), s.bound, s.pending)
		}
	}
	tick.Stop()
	wg.Wait()
	close(churnErr)
	for err := range churnErr {
		if err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if exited, err := sched.Exited(); exited {
		return fmt.Errorf("yardmaster exited during the soak: %v; log: %s", err, sched.LogTail(2000))
	}

	// Settle, then judge.
	var failures []string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(context.Context) (bool, error) {
		return len(d.fittingPending()) == 0, nil
	})
	if pending := d.fittingPending(); err != nil {
		failures = append(failures, fmt.Sprintf("%d pods that fit are still pending after 2 minutes: %v", len(pending), first(pending, 10)))
	}
	failures = append(failures, d.overcommitted()...)
	failures = append(failures, flatness(samples, o.maxGrowth)...)
	if len(failures) == 0 {
		fmt.Fprintln(report, "PASS: no overcommit, every pod that fits bound, goroutines and heap flat after warm-up")
		return nil
	}
	for _, f := range failures {
		fmt.Fprintln(report, "FAIL:", f)
	}
	return errors.New("soak failed; see " + o.out)
}

type driver struct {
	o      options
	client kubernetes.Interface
	ns     string
	pods   corelisters.PodLister
	nodes  corelisters.NodeLister

	mu       sync.Mutex
	rng      *rand.Rand
	nextNode int
	nextPod  int
}

func (d *driver) intN(n int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rng.IntN(n)
}

func (d *driver) addNode(ctx context.Context, i int) error {
	n := frameworktest.MakeNode().Name(fmt.Sprintf("soak-%05d", i)).
		Capacity(strconv.Itoa(nodeCPU/1000), "16Gi", 110).
		Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3))
	_, err := controlplane.CreateReadyNode(ctx, d.client, n.Obj())
	return err
}

func (d *driver) createPod(ctx context.Context, name, cpu string) error {
	p := frameworktest.MakePod().Namespace(d.ns).Name(name).SchedulerName(schedulerName).Req(cpu, "128Mi").Obj()
	p.UID = ""
	_, err := d.client.CoreV1().Pods(d.ns).Create(ctx, p, metav1.CreateOptions{})
	return err
}

// createPods creates rate pods a second, of 100m to 500m cpu.
func (d *driver) createPods(ctx context.Context) error {
	t := time.NewTicker(time.Second / time.Duration(d.o.rate))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		d.mu.Lock()
		d.nextPod++
		name := fmt.Sprintf("p-%07d", d.nextPod)
		d.mu.Unlock()
		cpu := fmt.Sprintf("%dm", 100*(1+d.intN(5)))
		if err := d.createPod(ctx, name, cpu); err != nil && ctx.Err() == nil {
			return err
		}
	}
}

// completePods deletes bound pods once they have run for their lifetime
// (uniform in [lifetime/2, 3·lifetime/2], from their creation).
func (d *driver) completePods(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	zero := int64(0)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		pods, err := d.pods.Pods(d.ns).List(labels.Everything())
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
				continue
			}
			life := d.o.lifetime/2 + time.Duration(hash(p.Name)%1000)*d.o.lifetime/1000
			if time.Since(p.CreationTimestamp.Time) < life {
				continue
			}
			err := d.client.CoreV1().Pods(d.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
}

// replaceNodes adds a node and removes a random other one with its pods
// (as the node lifecycle controller would evict them), every nodeChurn.
func (d *driver) replaceNodes(ctx context.Context) error {
	t := time.NewTicker(d.o.nodeChurn)
	defer t.Stop()
	zero := int64(0)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		d.mu.Lock()
		i := d.nextNode
		d.nextNode++
		d.mu.Unlock()
		if err := d.addNode(ctx, i); err != nil {
			return err
		}
		nodes, err := d.nodes.List(labels.Everything())
		if err != nil || len(nodes) == 0 {
			return err
		}
		victim := nodes[d.intN(len(nodes))].Name
		if err := d.client.CoreV1().Nodes().Delete(ctx, victim, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		pods, err := d.pods.Pods(d.ns).List(labels.Everything())
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Spec.NodeName == victim {
				if err := d.client.CoreV1().Pods(d.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
		}
	}
}

func (d *driver) counts() (bound, pending int) {
	pods, _ := d.pods.Pods(d.ns).List(labels.Everything())
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound++
		} else {
			pending++
		}
	}
	return bound, pending
}

// fittingPending are the pending pods other than the ones that fit
// nowhere.
func (d *driver) fittingPending() []string {
	pods, _ := d.pods.Pods(d.ns).List(labels.Everything())
	var out []string
	for _, p := range pods {
		if p.Spec.NodeName == "" && !strings.HasPrefix(p.Name, "unfit-") {
			out = append(out, p.Name)
		}
	}
	return out
}

// overcommitted lists the nodes whose bound pods ask for more cpu than
// the node has, and unfit pods that were bound.
func (d *driver) overcommitted() []string {
	pods, _ := d.pods.Pods(d.ns).List(labels.Everything())
	perNode := map[string]int64{}
	var out []string
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if strings.HasPrefix(p.Name, "unfit-") {
			out = append(out, fmt.Sprintf("pod %s, which fits nowhere, is bound to %s", p.Name, p.Spec.NodeName))
		}
		for _, c := range p.Spec.Containers {
			perNode[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	for node, cpu := range perNode {
		if cpu > nodeCPU {
			out = append(out, fmt.Sprintf("node %s holds %dm cpu of %dm", node, cpu, nodeCPU))
		}
	}
	return out
}

// sample is one reading of yardmaster's /metrics.
type sample struct {
	elapsed               time.Duration
	goroutines, heap, rss float64
	bound, pending        int
}

func scrape(ctx context.Context, url string) (sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return sample{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	var s sample
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_goroutines":
			s.goroutines = v
		case "go_memstats_heap_inuse_bytes":
			s.heap = v
		case "process_resident_memory_bytes":
			s.rss = v
		}
	}
	return s, sc.Err()
}

// flatness compares the mean of the last third of the samples with the
// first sample after warm-up (a quarter of the run): goroutines and heap
// may grow by at most maxGrowth.
func flatness(samples []sample, maxGrowth float64) []string {
	if len(samples) < 4 {
		return []string{fmt.Sprintf("only %d samples: run longer or sample more often", len(samples))}
	}
	base := samples[len(samples)/4]
	tail := samples[len(samples)-len(samples)/3:]
	var g, h float64
	for _, s := range tail {
		g += s.goroutines
		h += s.heap
	}
	g /= float64(len(tail))
	h /= float64(len(tail))
	var out []string
	if g > base.goroutines*(1+maxGrowth) {
		out = append(out, fmt.Sprintf("goroutines grew from %.0f after warm-up to %.0f (mean of the last third)", base.goroutines, g))
	}
	if h > base.heap*(1+maxGrowth) {
		out = append(out, fmt.Sprintf("heap grew from %.1f MiB after warm-up to %.1f MiB (mean of the last third)", base.heap/(1<<20), h/(1<<20)))
	}
	return out
}

func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := range len(s) {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
