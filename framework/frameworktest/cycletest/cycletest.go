// Package cycletest runs yardmaster's scheduling cycle in a test: the
// scheduler's own pipeline (PreFilter, Filter, PreScore, Score,
// NormalizeScore, the weighted sum, the choice among the best nodes,
// Reserve) over a profile that holds the plugins under test beside the
// built-in ones, on a cluster kept in memory by a fake clientset. It is
// `yardmaster simulate --cluster` as a function: pods are placed one
// after the other, each assumed on its node before the next, and nothing
// is bound.
//
//	results := cycletest.Schedule(t, cycletest.Options{
//		Plugins: []framework.Registration{nodepool.Registration()},
//		Nodes:   nodes, // node a in pool team-a, b in team-b
//	}, frameworktest.MakePod().Name("web").Label(nodepool.DefaultPoolLabel, "team-a").Obj())
//	if got := results[0].Node; got != "a" {
//		t.Errorf("web went to %q (%s), want a", got, results[0].Message)
//	}
//
// A plugin's unit tests (package frameworktest) show that it answers
// right; this shows that a profile running it places pods where it
// should: its points, its weight against the built-in scorers, its
// arguments as a configuration file gives them.
//
// It is a package apart from frameworktest because it imports the
// scheduler, and through it the built-in plugins, whose own tests use
// frameworktest: an in-tree plugin's test imports cycletest from an
// external test package (package predicates_test), where an outside
// module's test imports it from anywhere.
package cycletest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// syncTimeout bounds the wait for the informers to list the fake
// clientset's objects, which takes milliseconds: a test that waits longer
// is stuck, and fails rather than hangs.
const syncTimeout = time.Minute

// Options are the cluster and the scheduler configuration Schedule runs
// with.
type Options struct {
	// Plugins are registered beside yardmaster's built-in plugins, as
	// app.WithPlugin registers them.
	Plugins []framework.Registration
	// Config is a KubeSchedulerConfiguration file's content, resolved
	// against the built-in plugins and Plugins. Empty means the default
	// profile with every plugin of Plugins enabled under multiPoint: at
	// each point its Registration implements, after the built-in plugins,
	// with its default arguments and score weight 1. A profile that runs
	// only the plugins under test disables "*" under multiPoint.
	Config string
	// Nodes are the cluster's nodes.
	Nodes []*v1.Node
	// Pods are the pods already in the cluster: those bound to a node
	// take room there; pending ones are not scheduled.
	Pods []*v1.Pod
	// Objects are the cluster's other objects (namespaces, claims,
	// volumes, storage classes, ...), which plugins read through the
	// handle's informers.
	Objects []runtime.Object
}

// Result is the outcome of one pod's cycle.
type Result struct {
	// Pod is namespace/name.
	Pod string
	// Node is the node the cycle chose, on which the pod is assumed for
	// the pods after it; empty when it fits nowhere.
	Node string
	// Message is, when the pod fits nowhere, the message of its
	// FailedScheduling event: "0/3 nodes are available: ...".
	Message string
	// Rejected holds, by node name, the filter that rejected each node
	// it did reject (filters run in the profile's order and stop at the
	// first rejection).
	Rejected map[string]explain.Rejection
	// Explanation is the whole cycle as `yardmaster explain` prints it:
	// every node's verdict, raw and normalized scores by plugin, the
	// preemption a pod that fits nowhere would make.
	Explanation *explain.Explanation
}

// Schedule places pods one after the other on the cluster of opts with
// the real scheduling cycle and returns where each went, in order. Every
// node is filtered and every feasible node scored (a cluster of a test
// is below the hundred nodes where the scheduler would stop searching
// early); the chosen node is one of the best at random, as the
// scheduler's. A pod placed is assumed on its node and its Reserve
// plugins run, so that the next pod sees it there; Permit, PreBind and
// the binding do not run, and preemption is only planned.
//
// A pod is copied first: without a UID it gets one, without a namespace
// "default", and on a profile of the configuration (the first one when
// its schedulerName names none). A configuration that does not load, or
// a plugin that fails to build, fails the test.
func Schedule(t testing.TB, opts Options, pods ...*v1.Pod) []Result {
	t.Helper()
	reg := registry.NewInTree()
	for _, r := range opts.Plugins {
		if err := reg.Register(r); err != nil {
			t.Fatalf("cycletest: %v", err)
		}
	}
	file := opts.Config
	if file == "" {
		file = multiPointConfig(opts.Plugins)
	}
	c, err := config.DecodeWith([]byte(file), reg)
	if err != nil {
		t.Fatalf("cycletest: configuration: %v", err)
	}

	objects := make([]runtime.Object, 0, len(opts.Nodes)+len(opts.Pods)+len(opts.Objects))
	for _, n := range opts.Nodes {
		objects = append(objects, n.DeepCopy())
	}
	for _, p := range opts.Pods {
		objects = append(objects, p.DeepCopy())
	}
	for _, o := range opts.Objects {
		objects = append(objects, o.DeepCopyObject())
	}
	client := fake.NewClientset(objects...)
	// nil: every API is served, as the fake clientset serves every type.
	factory := scheduler.NewInformerFactory(client, nil)
	s, err := scheduler.New(scheduler.Options{
		Client:                   client,
		InformerFactory:          factory,
		Registry:                 c.Registry,
		Profiles:                 c.Profiles,
		PercentageOfNodesToScore: c.PercentageOfNodesToScore,
		Parallelism:              c.Parallelism,
	})
	if err != nil {
		t.Fatalf("cycletest: scheduler: %v", err)
	}
	stopCh := make(chan struct{})
	defer func() { close(stopCh); factory.Shutdown(); s.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	factory.Start(stopCh)
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("cycletest: the informer of %v did not sync", typ)
		}
	}
	if !s.WaitForHandlersSync(ctx) {
		t.Fatalf("cycletest: the scheduler's event handlers did not sync")
	}

	profiles := s.ProfileNames()
	results := make([]Result, 0, len(pods))
	for i, p := range pods {
		pod := p.DeepCopy()
		if pod.Namespace == "" {
			pod.Namespace = metav1.NamespaceDefault
		}
		if pod.UID == "" {
			pod.UID = types.UID(fmt.Sprintf("cycletest-%d", i))
		}
		if !slices.Contains(profiles, pod.Spec.SchedulerName) {
			pod.Spec.SchedulerName = c.Profiles[0].SchedulerName
		}
		e, err := s.Place(ctx, pod)
		if err != nil {
			t.Fatalf("cycletest: %s/%s: %v", pod.Namespace, pod.Name, err)
		}
		results = append(results, resultOf(e))
	}
	return results
}

// resultOf sums an explanation up.
func resultOf(e *explain.Explanation) Result {
	r := Result{Pod: e.Pod, Node: e.Selected, Explanation: e}
	if r.Node == "" {
		r.Message = e.Message
	}
	for _, v := range e.Verdicts {
		if v.Rejected == nil {
			continue
		}
		if r.Rejected == nil {
			r.Rejected = map[string]explain.Rejection{}
		}
		r.Rejected[v.Node] = *v.Rejected
	}
	return r
}

// multiPointConfig is the configuration file of one default profile with
// plugins enabled under multiPoint.
func multiPointConfig(plugins []framework.Registration) string {
	var b strings.Builder
	b.WriteString("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
	if len(plugins) == 0 {
		return b.String()
	}
	b.WriteString("profiles:\n- plugins:\n    multiPoint:\n      enabled:\n")
	for _, r := range plugins {
		fmt.Fprintf(&b, "      - name: %q\n", r.Name)
	}
	return b.String()
}
