package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework"

	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/scheduler"
)

// maxCapacity bounds --capacity's count: a pod that requests nothing fits
// until each node's pod limit, which can be a lot of cycles.
const maxCapacity = 100000

// simulateFlags are the flags of `yardmaster simulate`.
type simulateFlags struct {
	// registry holds the plugins --config may name.
	registry                        framework.Registry
	kubeconfig, configFile, cluster string
	add                             []string
	capacity, drain                 string
	output                          string
	explainAll                      bool
}

// newSimulateCommand returns `yardmaster simulate`.
func newSimulateCommand(reg framework.Registry) *cobra.Command {
	f := simulateFlags{registry: reg}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Place pods in memory with the full pipeline and say where each would go",
		Long: "Read a cluster (the live one through a client that can only read, or --cluster, a file of\n" +
			"Nodes and Pods as `kubectl get -o yaml` writes them: a List or several documents), then\n" +
			"place the pods of --add (Pods, Deployments, ReplicaSets, StatefulSets, Jobs: expanded to\n" +
			"their pods) one after the other with the pipeline of --config, each assumed before the\n" +
			"next, and print where each would go and why the others stay Pending. Nothing is written.\n\n" +
			"--capacity FILE: how many more replicas of that pod (or workload's pod) fit, and what\n" +
			"runs out first. --drain NODE: where the pods of that node would go if it were drained.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			return runSimulate(ctx, cmd.OutOrStdout(), f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.cluster, "cluster", "", "file of Nodes and Pods (and PVs, PVCs, StorageClasses, ...) to simulate on, instead of the live cluster")
	fs.StringSliceVar(&f.add, "add", nil, "manifest file of Pods or workloads to place (repeatable)")
	fs.StringVar(&f.capacity, "capacity", "", "manifest of one pod or workload: how many more replicas of its pod fit")
	fs.StringVar(&f.drain, "drain", "", "node to drain: where its pods would go")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig, for the live cluster (default $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.configFile, "config", "", "KubeSchedulerConfiguration file the scheduler runs with (default: the defaults)")
	fs.StringVarP(&f.output, "output", "o", explain.FormatTable, "table, json or yaml")
	fs.BoolVar(&f.explainAll, "explain", false, "print the explanation of every pod, not only a line each")
	return cmd
}

// Placement is where simulate put one pod, or why it could not.
type Placement struct {
	Pod         string               `json:"pod"`
	Node        string               `json:"node,omitempty"`
	Explanation *explain.Explanation `json:"explanation,omitempty"`
}

// SimulationResult is simulate's answer.
type SimulationResult struct {
	Placements []Placement `json:"placements,omitempty"`
	// Capacity is how many more replicas fit (--capacity); Limit is the
	// explanation of the first that did not.
	Capacity *int                 `json:"capacity,omitempty"`
	Limit    *explain.Explanation `json:"limit,omitempty"`
}

func runSimulate(ctx context.Context, w io.Writer, f simulateFlags) error {
	c, err := loadConfigOrDefault(f.configFile, f.registry)
	if err != nil {
		return err
	}
	var s *scheduler.Scheduler
	var stop func()
	if f.cluster != "" {
		objs, err := readObjects(f.cluster)
		if err != nil {
			return err
		}
		s, stop, err = startScheduler(ctx, c, fake.NewClientset(clusterObjects(objs)...), nil)
		if err != nil {
			return err
		}
	} else {
		cfg, err := clientConfig(f.kubeconfig)
		if err != nil {
			return err
		}
		if s, stop, err = startSnapshotScheduler(ctx, c, cfg); err != nil {
			return err
		}
	}
	defer stop()
	sim := &simulation{s: s, defaultProfile: c.Profiles[0].SchedulerName}
	res, err := sim.run(ctx, f)
	if err != nil {
		return err
	}
	return printSimulation(w, res, f)
}

// simulation places pods on one in-memory scheduler.
type simulation struct {
	s              *scheduler.Scheduler
	defaultProfile string
	n              int
}

func (sim *simulation) run(ctx context.Context, f simulateFlags) (*SimulationResult, error) {
	res := &SimulationResult{}
	if f.drain != "" {
		pods, err := sim.s.Drain(f.drain)
		if err != nil {
			return nil, err
		}
		for _, p := range pods {
			pl, err := sim.place(ctx, p)
			if err != nil {
				return nil, err
			}
			res.Placements = append(res.Placements, pl)
		}
	}
	for _, path := range f.add {
		objs, err := readObjects(path)
		if err != nil {
			return nil, err
		}
		for _, p := range expandPods(objs) {
			pl, err := sim.place(ctx, p)
			if err != nil {
				return nil, err
			}
			res.Placements = append(res.Placements, pl)
		}
	}
	if f.capacity != "" {
		objs, err := readObjects(f.capacity)
		if err != nil {
			return nil, err
		}
		pods := expandPods(objs)
		if len(pods) == 0 {
			return nil, fmt.Errorf("%s: no pod or workload", f.capacity)
		}
		n, limit, err := sim.capacity(ctx, pods[0])
		if err != nil {
			return nil, err
		}
		res.Capacity, res.Limit = &n, limit
	}
	return res, nil
}

// SimulateCapacity is `yardmaster simulate --capacity` on the cluster cfg
// reaches (read only): how many more replicas of pod fit, and the
// explanation of the first that does not.
func SimulateCapacity(ctx context.Context, cfg *rest.Config, c *config.Config, pod *v1.Pod) (int, *explain.Explanation, error) {
	s, stop, err := startSnapshotScheduler(ctx, c, cfg)
	if err != nil {
		return 0, nil, err
	}
	defer stop()
	sim := &simulation{s: s, defaultProfile: c.Profiles[0].SchedulerName}
	return sim.capacity(ctx, pod)
}

// place places a copy of p with a UID of its own.
func (sim *simulation) place(ctx context.Context, p *v1.Pod) (Placement, error) {
	pod := sim.prepare(p)
	e, err := sim.s.Place(ctx, pod)
	if err != nil {
		return Placement{}, err
	}
	e.Source = explain.SourceSimulation
	return Placement{Pod: pod.Namespace + "/" + pod.Name, Node: e.Selected, Explanation: e}, nil
}

// prepare returns a pending copy of p for this simulation: its own UID,
// unbound, and on a profile of the configuration (the first one when
// its schedulerName names none).
func (sim *simulation) prepare(p *v1.Pod) *v1.Pod {
	sim.n++
	pod := p.DeepCopy()
	pod.UID = types.UID(fmt.Sprintf("simulated-%d", sim.n))
	pod.Spec.NodeName = ""
	pod.Status = v1.PodStatus{Phase: v1.PodPending}
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	if !slices.Contains(sim.s.ProfileNames(), pod.Spec.SchedulerName) {
		pod.Spec.SchedulerName = sim.defaultProfile
	}
	return pod
}

// capacity places replicas of p until one does not fit and returns how
// many did, with the explanation of the one that did not.
func (sim *simulation) capacity(ctx context.Context, p *v1.Pod) (int, *explain.Explanation, error) {
	for n := 0; n < maxCapacity; n++ {
		replica := p.DeepCopy()
		replica.Name = fmt.Sprintf("%s-%d", strings.TrimSuffix(p.Name, "-"), n)
		pl, err := sim.place(ctx, replica)
		if err != nil {
			return 0, nil, err
		}
		if pl.Node == "" {
			return n, pl.Explanation, nil
		}
	}
	return maxCapacity, nil, nil
}

// readObjects decodes every object of a file: YAML documents or JSON,
// Lists flattened.
func readObjects(path string) ([]runtime.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	decoder := scheme.Codecs.UniversalDeserializer()
	var out []runtime.Object
	for {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		raw.Raw = bytes.TrimSpace(raw.Raw)
		if len(raw.Raw) == 0 || string(raw.Raw) == "null" {
			continue
		}
		obj, _, err := decoder.Decode(raw.Raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objs, err := flatten(obj, decoder)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, objs...)
	}
}

// flatten returns a List's items decoded, or obj.
func flatten(obj runtime.Object, decoder runtime.Decoder) ([]runtime.Object, error) {
	list, ok := obj.(*v1.List)
	if !ok {
		return []runtime.Object{obj}, nil
	}
	var out []runtime.Object
	for _, item := range list.Items {
		o, _, err := decoder.Decode(item.Raw, nil, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// clusterObjects returns the objects of a cluster file to seed the
// in-memory API with: everything, minus the pods that have finished.
func clusterObjects(objs []runtime.Object) []runtime.Object {
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*v1.Pod); ok && (p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// expandPods returns the pods objs stand for: Pods as they are, a
// workload's template once per replica (a Job's parallelism), named as
// its controller would.
func expandPods(objs []runtime.Object) []*v1.Pod {
	var out []*v1.Pod
	fromTemplate := func(meta metav1.ObjectMeta, kind string, t v1.PodTemplateSpec, replicas *int32, name func(i int) string) {
		n := int32(1)
		if replicas != nil {
			n = *replicas
		}
		for i := range int(n) {
			p := &v1.Pod{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
			p.Namespace = cmpOr(meta.Namespace, metav1.NamespaceDefault)
			p.Name = name(i)
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: meta.Name, Controller: ptrTo(true)}}
			out = append(out, p)
		}
	}
	for _, o := range objs {
		switch x := o.(type) {
		case *v1.Pod:
			out = append(out, x)
		case *appsv1.Deployment:
			fromTemplate(x.ObjectMeta, "ReplicaSet", x.Spec.Template, x.Spec.Replicas, func(i int) string { return fmt.Sprintf("%s-sim-%d", x.Name, i) })
		case *appsv1.ReplicaSet:
			fromTemplate(x.ObjectMeta, "ReplicaSet", x.Spec.Template, x.Spec.Replicas, func(i int) string { return fmt.Sprintf("%s-sim-%d", x.Name, i) })
		case *appsv1.StatefulSet:
			fromTemplate(x.ObjectMeta, "StatefulSet", x.Spec.Template, x.Spec.Replicas, func(i int) string { return fmt.Sprintf("%s-%d", x.Name, i) })
		case *batchv1.Job:
			fromTemplate(x.ObjectMeta, "Job", x.Spec.Template, x.Spec.Parallelism, func(i int) string { return fmt.Sprintf("%s-sim-%d", x.Name, i) })
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func ptrTo[T any](v T) *T { return &v }

func printSimulation(w io.Writer, res *SimulationResult, f simulateFlags) error {
	if f.output != "" && f.output != explain.FormatTable {
		if !f.explainAll {
			for i := range res.Placements {
				if res.Placements[i].Node != "" {
					res.Placements[i].Explanation = nil
				}
			}
		}
		return explain.Marshal(w, res, f.output)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(res.Placements) > 0 {
		placed := 0
		fmt.Fprintln(tw, "POD\tNODE\tWHY")
		for _, p := range res.Placements {
			if p.Node != "" {
				placed++
				fmt.Fprintf(tw, "%s\t%s\tbest of %d feasible nodes, score %d\n", p.Pod, p.Node, p.Explanation.Feasible(), p.Explanation.Verdicts[0].Total)
				continue
			}
			fmt.Fprintf(tw, "%s\tPending\t%s\n", p.Pod, p.Explanation.Message)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%d placed, %d Pending.\n", placed, len(res.Placements)-placed)
		if f.explainAll {
			for _, p := range res.Placements {
				fmt.Fprintln(w)
				if err := explain.Print(w, p.Explanation, explain.PrintOptions{}); err != nil {
					return err
				}
			}
		}
	}
	if res.Capacity != nil {
		fmt.Fprintf(w, "\nCapacity: %d more replicas fit.\n", *res.Capacity)
		if res.Limit != nil {
			fmt.Fprintf(w, "The next one does not: %s\n", res.Limit.Summary)
			if g := res.Limit.Groups(); len(g) > 0 {
				fmt.Fprintf(w, "Runs out first: %s (%d of %d nodes).\n", strings.Join(g[0].Reasons, "; "), len(g[0].Nodes), res.Limit.Nodes)
			}
		}
	}
	return nil
}
