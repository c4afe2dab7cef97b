// The code of docs/plugins.md: a filter (NodePool) and a scorer
// (FewestPods) written as the walk-through says, registered, and run by
// the scheduler. TestWalkThroughIsThisFile keeps the document's code
// blocks identical to excerpts of this file, so neither can drift.
package docs_test

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	// Named schedtest, as docs/plugins.md's excerpts of this file still
	// call the builders.
	schedtest "github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities"
	"github.com/yardmaster-io/yardmaster/scheduler"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// --- predicates/node_pool.go ---

// NodePoolName is the name of the NodePool plugin.
const NodePoolName = "NodePool"

// ReasonNodePool is the reason NodePool rejects a node.
const ReasonNodePool = "node(s) not in the pod's pool"

// statusNodePool is NodePool's only rejection, made once: the scheduler
// never changes a status a filter returns, so sharing it costs the
// per-node loop no allocation. Unresolvable: evicting pods cannot move a
// node into another pool, so preemption does not try.
var statusNodePool = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodePool)

// NodePoolArgs are NodePool's arguments (its pluginConfig args).
type NodePoolArgs struct {
	// LabelKey is the label that names a pod's pool, and a node's.
	LabelKey string `json:"labelKey,omitempty"`
}

// NodePool is the filter that keeps a pod labelled LabelKey=pool on
// nodes labelled LabelKey=pool. A pod without the label fits anywhere.
type NodePool struct {
	key string
}

var (
	_ framework.PreFilterPlugin = &NodePool{}
	_ framework.FilterPlugin    = &NodePool{}
	_ framework.PodSigner       = &NodePool{}
)

// NewNodePool returns the filter.
func NewNodePool(args *NodePoolArgs) *NodePool { return &NodePool{key: args.LabelKey} }

// Name returns NodePoolName.
func (*NodePool) Name() string { return NodePoolName }

// PreFilter returns Skip for a pod without the label: the scheduler then
// never calls Filter for it, on any node.
func (pl *NodePool) PreFilter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if _, ok := pod.Labels[pl.key]; !ok {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, nil
}

// Filter rejects a node whose pool is not the pod's.
func (pl *NodePool) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if nodeInfo.Labels()[pl.key] != pod.Labels[pl.key] {
		return statusNodePool
	}
	return nil
}

// SignPod signs the pod's pool, all that PreFilter and Filter read of it.
func (pl *NodePool) SignPod(_ *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	return framework.SignString(sig, pod.Labels[pl.key]), true
}

// --- priorities/fewest_pods.go ---

// FewestPodsName is the name of the FewestPods plugin.
const FewestPodsName = "FewestPods"

// FewestPods is the scorer that prefers nodes running fewer pods: a
// node's raw score is its number of pods, and NormalizeScore reverses it
// so that the emptiest node gets MaxNodeScore.
type FewestPods struct{}

var (
	_ framework.ScorePlugin     = &FewestPods{}
	_ framework.ScoreExtensions = &FewestPods{}
	_ framework.PodSigner       = &FewestPods{}
)

// NewFewestPods returns the scorer.
func NewFewestPods() *FewestPods { return &FewestPods{} }

// Name returns FewestPodsName.
func (*FewestPods) Name() string { return FewestPodsName }

// Score returns the number of pods on the node, assumed pods included.
func (*FewestPods) Score(_ context.Context, _ *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	return int64(len(nodeInfo.Pods)), nil
}

// ScoreExtensions returns the scorer itself: raw counts need normalizing.
func (pl *FewestPods) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps the counts, reversed, to [0, MaxNodeScore].
func (*FewestPods) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	priorities.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
	return nil
}

// SignPod reads nothing of the pod: every pod gets the same score on a
// node until the node changes.
func (*FewestPods) SignPod(_ *framework.CycleState, _ *v1.Pod, sig []byte) ([]byte, bool) {
	return sig, true
}

// --- scheduler/registry/intree.go ---

// walkThroughRegistrations are the two Registrations, as they would stand
// in coreRegistrations.
func walkThroughRegistrations() []framework.Registration {
	return []framework.Registration{
		{
			Name:   NodePoolName,
			Points: []string{framework.PointPreFilter, framework.PointFilter},
			NewArgs: func() any {
				return &NodePoolArgs{LabelKey: "example.com/pool"}
			},
			ValidateArgs: func(a any) error {
				if errs := validation.IsQualifiedName(a.(*NodePoolArgs).LabelKey); len(errs) > 0 {
					return errors.New("labelKey: " + strings.Join(errs, "; "))
				}
				return nil
			},
			New: func(a any, _ framework.Handle) ([]framework.Plugin, error) {
				return []framework.Plugin{NewNodePool(a.(*NodePoolArgs))}, nil
			},
		},
		{
			Name:   FewestPodsName,
			Points: []string{framework.PointScore},
			New: func(any, framework.Handle) ([]framework.Plugin, error) {
				return []framework.Plugin{NewFewestPods()}, nil
			},
		},
	}
}

// --- predicates/node_pool_test.go ---

func TestNodePoolFilter(t *testing.T) {
	const key = "example.com/pool"
	pl := NewNodePool(&NodePoolArgs{LabelKey: key})
	nodeA := schedtest.MakeNode().Name("a").Label(key, "a").Obj()
	nodeB := schedtest.MakeNode().Name("b").Label(key, "b").Obj()
	plain := schedtest.MakeNode().Name("plain").Obj()
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want *framework.Status
	}{
		{"same pool", schedtest.MakePod().Label(key, "a").Obj(), nodeA, nil},
		{"other pool", schedtest.MakePod().Label(key, "a").Obj(), nodeB, statusNodePool},
		{"node in no pool", schedtest.MakePod().Label(key, "a").Obj(), plain, statusNodePool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ni := framework.NewNodeInfo()
			ni.SetNode(tc.node)
			got := pl.Filter(context.Background(), framework.NewCycleState(), tc.pod, ni)
			if diff := cmp.Diff(tc.want.Reasons(), got.Reasons()); diff != "" || got.Code() != tc.want.Code() {
				t.Errorf("Filter: %v, want %v (-want +got reasons):\n%s", got, tc.want, diff)
			}
		})
	}
	// A pod in no pool is never filtered: PreFilter skips it.
	_, s := pl.PreFilter(context.Background(), framework.NewCycleState(), schedtest.MakePod().Obj(), nil)
	if !s.IsSkip() {
		t.Errorf("PreFilter for a pod in no pool: %v, want Skip", s)
	}
}

// --- priorities/fewest_pods_test.go ---

func TestFewestPodsNormalize(t *testing.T) {
	// Raw scores are pod counts 0, 2 and 4; reversed, MaxNodeScore × count
	// / 4 from 100: 100 − 0 = 100, 100 − 50 = 50, 100 − 100 = 0.
	scores := framework.NodeScoreList{{Name: "empty", Score: 0}, {Name: "half", Score: 2}, {Name: "full", Score: 4}}
	NewFewestPods().NormalizeScore(context.Background(), nil, nil, scores)
	want := framework.NodeScoreList{{Name: "empty", Score: 100}, {Name: "half", Score: 50}, {Name: "full", Score: 0}}
	if diff := cmp.Diff(want, scores); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// --- end of the walk-through's code ---

// The scheduler runs both: of three nodes, the one in another pool is
// filtered out and the emptier of the two left wins.
func TestWalkThroughSchedules(t *testing.T) {
	const key = "example.com/pool"
	reg := registry.NewInTree()
	for _, r := range walkThroughRegistrations() {
		if err := reg.Register(r); err != nil {
			t.Fatal(err)
		}
	}
	prof := registry.ExpandMultiPoint(reg, "yardmaster", []framework.WeightedPlugin{
		{Name: registry.PrioritySortName},
		{Name: NodePoolName},
		{Name: FewestPodsName, Weight: 1},
		{Name: registry.DefaultBinderName},
	})
	if diff := cmp.Diff([]string{NodePoolName}, prof.Filter); diff != "" {
		t.Errorf("filters (-want +got):\n%s", diff)
	}
	prof.Args[NodePoolName] = &NodePoolArgs{LabelKey: key}

	client := fake.NewClientset()
	var mu sync.Mutex
	boundTo := map[string]string{}
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := action.(k8stesting.CreateAction).GetObject().(*v1.Binding)
		mu.Lock()
		defer mu.Unlock()
		boundTo[b.Name] = b.Target.Name
		return true, nil, nil
	})
	s, err := scheduler.New(scheduler.Options{
		Client:   client,
		Binder:   binder.New(client, nil, nil),
		Registry: reg,
		Profiles: []framework.Profile{prof},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Cache.AddNode(schedtest.MakeNode().Name("busy").Label(key, "a").Capacity("8", "8Gi", 110).Obj())
	s.Cache.AddNode(schedtest.MakeNode().Name("idle").Label(key, "a").Capacity("8", "8Gi", 110).Obj())
	s.Cache.AddNode(schedtest.MakeNode().Name("elsewhere").Label(key, "b").Capacity("8", "8Gi", 110).Obj())
	for _, name := range []string{"x", "y"} {
		s.Cache.AddPod(schedtest.MakePod().Namespace("default").Name(name).UID(name).Node("busy").Obj())
	}
	s.Queue.Add(schedtest.MakePod().Namespace("default").Name("web").UID("web").SchedulerName("yardmaster").Label(key, "a").Obj())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return boundTo["web"] != "", nil
	}); err != nil {
		t.Fatalf("web was not bound: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if boundTo["web"] != "idle" {
		t.Errorf("web bound to %q, want idle", boundTo["web"])
	}
}

// goBlock is a fenced Go block of a Markdown file.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// Every Go block of plugins.md is an excerpt of this file, so the
// document shows code that compiles and passes the tests above.
func TestWalkThroughIsThisFile(t *testing.T) {
	doc, err := os.ReadFile("plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("plugins_test.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 4 {
		t.Fatalf("plugins.md has %d Go blocks, want the filter, the scorer, their registration and tests", len(blocks))
	}
	for _, b := range blocks {
		if !strings.Contains(string(src), b[1]) {
			t.Errorf("plugins.md shows code that is not in plugins_test.go:\n%s", b[1])
		}
	}
}
