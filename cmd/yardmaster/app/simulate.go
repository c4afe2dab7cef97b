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
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
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
	registry framework.Registry
	// kube are kubectl's flags for the live cluster and for the namespace
	// of the pods of --add and --capacity that name none.
	kube                    *genericclioptions.ConfigFlags
	configFile, clusterFile string
	add                     []string
	capacity, drain         string
	output                  string
	explainAll              bool
}

// newSimulateCommand returns `yardmaster simulate`.
func newSimulateCommand(reg framework.Registry) *cobra.Command {
	f := simulateFlags{registry: reg, kube: newConfigFlags()}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Place pods in memory with the full pipeline and say where each would go",
		Long: "Read a cluster (the live one through a client that can only read, reached with kubectl's\n" +
			"flags: --kubeconfig, --context, --as, --server, --request-timeout, ...; or --cluster-file,\n" +
			"a file of Nodes and Pods as `kubectl get -o yaml` writes them: a List or several\n" +
			"documents), then place the pods of --add (Pods, Deployments, ReplicaSets, StatefulSets,\n" +
			"Jobs: expanded to their pods; those that name no namespace go to -n's, else the\n" +
			"context's) one after the other with the pipeline of --config, each assumed before the\n" +
			"next, and print where each would go and why the others stay Pending. Nothing is written.\n\n" +
			"--capacity FILE: how many more replicas of that pod (or workload's pod) fit, and what\n" +
			"runs out first; when FILE also holds a PodGroup (scheduling.k8s.io/v1beta1), how many\n" +
			"more copies of that group (the PodGroup and all the file's pods) the group cycle places.\n" +
			"--drain NODE: where the pods of that node would go if it were drained.\n\n" +
			"-o wide adds each pod's feasible nodes and profile; -o json and -o yaml print the\n" +
			"SimulationResult (apiVersion " + explain.APIVersion + ", docs/schemas/); -o name prints\n" +
			"pod/NAME of each pod that would stay Pending.\n\n" +
			exitCodesHelp + " --capacity alone answers a number and exits 0.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(&f.output); err != nil {
				return err
			}
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			return runSimulate(ctx, cmd.OutOrStdout(), f)
		},
	}
	fs := cmd.Flags()
	f.kube.AddFlags(fs)
	fs.StringVar(&f.clusterFile, "cluster-file", "", "file of Nodes and Pods (and PVs, PVCs, StorageClasses, ...) to simulate on, instead of the live cluster (--cluster names a kubeconfig cluster, as in kubectl)")
	fs.StringSliceVar(&f.add, "add", nil, "manifest file of Pods or workloads to place (repeatable)")
	fs.StringVar(&f.capacity, "capacity", "", "manifest of one pod or workload: how many more replicas of its pod fit; with a PodGroup in it, how many more copies of the group")
	fs.StringVar(&f.drain, "drain", "", "node to drain: where its pods would go")
	fs.StringVar(&f.configFile, "config", "", "KubeSchedulerConfiguration file the scheduler runs with (default: the defaults)")
	fs.StringVarP(&f.output, "output", "o", "", "Output format: wide, json, yaml or name (default: the table)")
	fs.BoolVar(&f.explainAll, "explain", false, "print the explanation of every pod, not only a line each")
	return cmd
}

// Placement is where simulate put one pod, or why it could not.
type Placement struct {
	Pod         string               `json:"pod"`
	Node        string               `json:"node,omitempty"`
	Explanation *explain.Explanation `json:"explanation,omitempty"`
}

// KindSimulationResult is the kind of a SimulationResult, of apiVersion
// explain.APIVersion.
const KindSimulationResult = "SimulationResult"

// SimulationResult is simulate's answer.
type SimulationResult struct {
	metav1.TypeMeta `json:",inline"`
	Placements      []Placement `json:"placements,omitempty"`
	// Capacity is how many more replicas fit (--capacity); Limit is the
	// explanation of the first that did not.
	Capacity *int                 `json:"capacity,omitempty"`
	Limit    *explain.Explanation `json:"limit,omitempty"`
	// CapacityPodGroup is, when --capacity's file holds a PodGroup, the
	// placement of the first copy of the group that did not fit (Capacity
	// counts copies of the group then, and Limit is the explanation of
	// that copy's first member that did not fit).
	CapacityPodGroup *explain.PodGroupExplanation `json:"capacityPodGroup,omitempty"`
}

// runSimulate runs the simulation of f, prints it, and returns the
// ExitPending error when a pod it placed would stay Pending.
func runSimulate(ctx context.Context, w io.Writer, f simulateFlags) error {
	c, err := loadConfigOrDefault(f.configFile, f.registry)
	if err != nil {
		return err
	}
	ns := metav1.NamespaceDefault
	if f.kube != nil {
		if ns, err = namespace(f.kube); err != nil {
			return clusterFlagHint(f.kube, err)
		}
	}
	var s *scheduler.Scheduler
	var stop func()
	if f.clusterFile != "" {
		objs, err := readObjects(f.clusterFile)
		if err != nil {
			return err
		}
		s, stop, err = startScheduler(ctx, c, fake.NewClientset(clusterObjects(objs)...), nil)
		if err != nil {
			return err
		}
	} else {
		cfg, err := restConfig(f.kube)
		if err != nil {
			return clusterFlagHint(f.kube, err)
		}
		if s, stop, err = startSnapshotScheduler(ctx, c, cfg); err != nil {
			return err
		}
	}
	defer stop()
	sim := &simulation{s: s, defaultProfile: c.Profiles[0].SchedulerName, namespace: ns}
	res, err := sim.run(ctx, f)
	if err != nil {
		return err
	}
	res.TypeMeta = metav1.TypeMeta{APIVersion: explain.APIVersion, Kind: KindSimulationResult}
	if err := printSimulation(w, res, f); err != nil {
		return err
	}
	if pending := res.pending(); pending > 0 {
		return pendingError(fmt.Sprintf("%d of %d pods", pending, len(res.Placements)))
	}
	return nil
}

// clusterFlagHint adds to err, when --cluster names a file, that
// --cluster is kubectl's now and the file is --cluster-file: simulate's
// --cluster was the file before it took kubectl's flags.
func clusterFlagHint(cf *genericclioptions.ConfigFlags, err error) error {
	if cf.ClusterName == nil || *cf.ClusterName == "" {
		return err
	}
	if _, statErr := os.Stat(*cf.ClusterName); statErr != nil {
		return err
	}
	return fmt.Errorf("%w (--cluster names a kubeconfig cluster, as in kubectl; the file to simulate on is --cluster-file)", err)
}

// pending returns how many placements found no node.
func (r *SimulationResult) pending() int {
	n := 0
	for _, p := range r.Placements {
		if p.Node == "" {
			n++
		}
	}
	return n
}

// simulation places pods on one in-memory scheduler.
type simulation struct {
	s              *scheduler.Scheduler
	defaultProfile string
	// namespace is given to the pods that name none.
	namespace string
	n         int
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
		for _, p := range expandPods(objs, sim.namespace) {
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
		pods := expandPods(objs, sim.namespace)
		if len(pods) == 0 {
			return nil, fmt.Errorf("%s: no pod or workload", f.capacity)
		}
		if pg, members, err := groupOf(objs, pods, f.capacity); err != nil || pg != nil {
			if err != nil {
				return nil, err
			}
			n, limit, err := sim.capacityGroup(ctx, pg, members)
			if err != nil {
				return nil, err
			}
			res.Capacity, res.CapacityPodGroup = &n, limit
			if limit != nil {
				res.Limit = limit.Blocker
			}
			return res, nil
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
	sim := &simulation{s: s, defaultProfile: c.Profiles[0].SchedulerName, namespace: metav1.NamespaceDefault}
	return sim.capacity(ctx, pod)
}

// SimulatePodGroupCapacity is `yardmaster simulate --capacity` of a
// file holding pg and its pods on the cluster cfg reaches (read only):
// how many more copies of the group fit, and the placement of the first
// copy that does not.
func SimulatePodGroupCapacity(ctx context.Context, cfg *rest.Config, c *config.Config, pg *schedulingv1beta1.PodGroup, pods []*v1.Pod) (int, *explain.PodGroupExplanation, error) {
	s, stop, err := startSnapshotScheduler(ctx, c, cfg)
	if err != nil {
		return 0, nil, err
	}
	defer stop()
	sim := &simulation{s: s, defaultProfile: c.Profiles[0].SchedulerName, namespace: metav1.NamespaceDefault}
	return sim.capacityGroup(ctx, pg, pods)
}

// groupOf returns the PodGroup of a --capacity file and its members
// among pods (those that name it, or no group), or nil when the file
// holds no PodGroup.
func groupOf(objs []runtime.Object, pods []*v1.Pod, path string) (*schedulingv1beta1.PodGroup, []*v1.Pod, error) {
	var pg *schedulingv1beta1.PodGroup
	for _, o := range objs {
		if g, ok := o.(*schedulingv1beta1.PodGroup); ok {
			if pg != nil {
				return nil, nil, fmt.Errorf("%s: more than one PodGroup (--capacity counts copies of one group)", path)
			}
			pg = g
		}
	}
	if pg == nil {
		return nil, nil, nil
	}
	var members []*v1.Pod
	for _, p := range pods {
		if sg := p.Spec.SchedulingGroup; sg == nil || sg.PodGroupName == nil || *sg.PodGroupName == "" || *sg.PodGroupName == pg.Name {
			members = append(members, p)
		}
	}
	if len(members) == 0 {
		return nil, nil, fmt.Errorf("%s: no pod of PodGroup %q", path, pg.Name)
	}
	return pg, members, nil
}

// capacityGroup places copies of the group pg of pods, each copy a
// PodGroup NAME-N with pods NAME-N-0, NAME-N-1, ..., until one is not
// placed, and returns how many were, with the placement of the one that
// was not.
func (sim *simulation) capacityGroup(ctx context.Context, pg *schedulingv1beta1.PodGroup, pods []*v1.Pod) (int, *explain.PodGroupExplanation, error) {
	ns := cmpOr(pg.Namespace, cmpOr(sim.namespace, metav1.NamespaceDefault))
	for n := 0; n < maxCapacity/len(pods); n++ {
		group := pg.DeepCopy()
		group.Namespace, group.Name = ns, fmt.Sprintf("%s-%d", pg.Name, n)
		members := make([]*v1.Pod, len(pods))
		for i, p := range pods {
			m := p.DeepCopy()
			m.Namespace, m.Name = ns, fmt.Sprintf("%s-%d", group.Name, i)
			m.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group.Name}
			members[i] = sim.prepare(m)
		}
		g, err := sim.s.PlaceGroup(ctx, group, members)
		if err != nil {
			return 0, nil, err
		}
		g.Source = explain.SourceSimulation
		if g.Blocker != nil {
			g.Blocker.Source = explain.SourceSimulation
		}
		if !g.Placed {
			return n, g, nil
		}
	}
	return maxCapacity / len(pods), nil, nil
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
		pod.Namespace = cmpOr(sim.namespace, metav1.NamespaceDefault)
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
// its controller would; a workload without a namespace in ns, as kubectl
// apply would create it.
func expandPods(objs []runtime.Object, ns string) []*v1.Pod {
	var out []*v1.Pod
	fromTemplate := func(meta metav1.ObjectMeta, kind string, t v1.PodTemplateSpec, replicas *int32, name func(i int) string) {
		n := int32(1)
		if replicas != nil {
			n = *replicas
		}
		for i := range int(n) {
			p := &v1.Pod{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
			p.Namespace = cmpOr(meta.Namespace, ns)
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

// either returns one when n is 1, else many.
func either(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// printSimulation writes res in the format of -o: the table (-o wide
// adds columns), the pods that would stay Pending (-o name), or the whole
// result as JSON or YAML, where the explanations of the placed pods are
// left out without --explain.
func printSimulation(w io.Writer, res *SimulationResult, f simulateFlags) error {
	switch f.output {
	case outputName:
		for _, p := range res.Placements {
			if p.Node == "" {
				_, name, _ := strings.Cut(p.Pod, "/")
				fmt.Fprintln(w, "pod/"+name)
			}
		}
		return nil
	case outputJSON, outputYAML:
		if !f.explainAll {
			for i := range res.Placements {
				if res.Placements[i].Node != "" {
					res.Placements[i].Explanation = nil
				}
			}
		}
		return explain.Marshal(w, res, f.output)
	}
	wide := f.output == outputWide
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(res.Placements) > 0 {
		placed := 0
		if wide {
			fmt.Fprintln(tw, "POD\tNODE\tFEASIBLE\tPROFILE\tWHY")
		} else {
			fmt.Fprintln(tw, "POD\tNODE\tWHY")
		}
		for _, p := range res.Placements {
			node, why := "Pending", p.Explanation.Message
			if p.Node != "" {
				placed++
				node, why = p.Node, fmt.Sprintf("best of %d feasible nodes, score %d", p.Explanation.Feasible(), p.Explanation.Verdicts[0].Total)
			}
			if wide {
				fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", p.Pod, node, p.Explanation.Feasible(), p.Explanation.Nodes, p.Explanation.Profile, why)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Pod, node, why)
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
	if g := res.CapacityPodGroup; g != nil && res.Capacity != nil {
		fmt.Fprintf(w, "\nCapacity: %d more copies of the pod group fit (%d %s each, minCount %d).\n", *res.Capacity, g.Members, either(g.Members, "pod", "pods"), g.MinCount)
		fmt.Fprintf(w, "The next one does not: %s\n", g.Summary)
		return nil
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
