package frameworktest

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Handle is a framework.Handle for plugin tests: a snapshot (NewSnapshot)
// and an informer factory over a fake clientset whose namespace lister
// already holds the given namespaces. Nothing is started: the listers read
// indexers filled here (NewHandle, AddObjects), so tests need no goroutine
// and no cache sync. The fields are what the methods return; a test may
// set them.
type Handle struct {
	// Lister is the snapshot SnapshotSharedLister returns.
	Lister framework.NodeInfoLister
	// Factory is the informer factory over Clientset.
	Factory informers.SharedInformerFactory
	// Registry is the private registry MetricsRegisterer returns.
	Registry *prometheus.Registry
	// Log is the logger Logger returns, a no-op one.
	Log *zap.Logger
	// Clientset is the fake clientset ClientSet returns; nothing in it
	// reaches the listers unless a test starts Factory.
	Clientset *fake.Clientset
	// Dynamic is what DynamicInformerFactory returns; nil unless a test
	// sets it.
	Dynamic dynamicinformer.DynamicSharedInformerFactory
	// Config is what KubeConfig returns; nil unless a test sets it.
	Config *rest.Config
	// DRA is what SharedDRAManager returns; nil unless a test sets it.
	DRA framework.SharedDRAManager
	// Recorder is what EventRecorder returns; nil unless a test sets it.
	Recorder events.EventRecorder
	// Nominated is what NominatedPodsForNode returns, by node.
	Nominated map[string][]*framework.PodInfo
	// Filters are the filters of the profile a preempting PostFilter
	// plugin asks "what if" (see preemption.go).
	Filters []framework.FilterPlugin
	// Nominations is what NominationOf returns, by pod.
	Nominations map[types.UID]framework.Nomination

	mu        sync.Mutex
	raised    []framework.ClusterEvent
	preempted []Preemption
	cleared   []*v1.Pod
}

var _ framework.Handle = &Handle{}

// NewHandle returns a handle over lister that knows namespaces:
//
//	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, pods), frameworktest.Namespace("team-a", "env", "prod"))
func NewHandle(lister framework.NodeInfoLister, namespaces ...*v1.Namespace) *Handle {
	cs := fake.NewClientset()
	f := informers.NewSharedInformerFactory(cs, 0)
	idx := f.Core().V1().Namespaces().Informer().GetIndexer()
	for _, ns := range namespaces {
		if err := idx.Add(ns); err != nil {
			panic(err) // only a namespace without a name fails
		}
	}
	return &Handle{Lister: lister, Factory: f, Registry: prometheus.NewRegistry(), Log: zap.NewNop(), Clientset: cs}
}

// SnapshotSharedLister returns the snapshot.
func (h *Handle) SnapshotSharedLister() framework.NodeInfoLister { return h.Lister }

// DynamicInformerFactory returns Dynamic, nil unless a test sets it.
func (h *Handle) DynamicInformerFactory() dynamicinformer.DynamicSharedInformerFactory {
	return h.Dynamic
}

// SharedInformerFactory returns the informer factory.
func (h *Handle) SharedInformerFactory() informers.SharedInformerFactory { return h.Factory }

// ClientSet returns the fake clientset.
func (h *Handle) ClientSet() kubernetes.Interface { return h.Clientset }

// KubeConfig returns Config.
func (h *Handle) KubeConfig() *rest.Config { return h.Config }

// Parallelizer returns a parallelizer of 16 workers, kube-scheduler's
// default parallelism.
func (h *Handle) Parallelizer() framework.Parallelizer { return framework.NewParallelizer(16) }

// IterateOverWaitingPods calls nothing: no pod waits in a plugin test.
func (h *Handle) IterateOverWaitingPods(func(framework.WaitingPod)) {}

// EventRecorder returns Recorder, which tests may set.
func (h *Handle) EventRecorder() events.EventRecorder { return h.Recorder }

// SharedDRAManager returns DRA, which tests may set.
func (h *Handle) SharedDRAManager() framework.SharedDRAManager { return h.DRA }

// GetWaitingPod returns nil.
func (h *Handle) GetWaitingPod(types.UID) framework.WaitingPod { return nil }

// MetricsRegisterer returns a private registry.
func (h *Handle) MetricsRegisterer() prometheus.Registerer { return h.Registry }

// Logger returns a no-op logger.
func (h *Handle) Logger() *zap.Logger { return h.Log }

// NominatedPodsForNode returns Nominated[name], which tests may set.
func (h *Handle) NominatedPodsForNode(name string) []*framework.PodInfo {
	return append([]*framework.PodInfo(nil), h.Nominated[name]...)
}

// ReadNodeInfo calls f with the snapshot's NodeInfo of the node.
func (h *Handle) ReadNodeInfo(name string, f func(*framework.NodeInfo)) bool {
	if h.Lister == nil {
		return false
	}
	ni, err := h.Lister.Get(name)
	if err != nil || ni == nil {
		return false
	}
	f(ni)
	return true
}

// RaiseEvent records ev; Raised returns what was recorded.
func (h *Handle) RaiseEvent(ev framework.ClusterEvent, _, _ any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.raised = append(h.raised, ev)
}

// Raised returns the events raised through RaiseEvent, oldest first.
func (h *Handle) Raised() []framework.ClusterEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]framework.ClusterEvent(nil), h.raised...)
}

// Namespace returns a namespace with the given labels (k1, v1, k2, v2...).
func Namespace(name string, kv ...string) *v1.Namespace {
	ns := &v1.Namespace{}
	ns.Name = name
	if len(kv) > 0 {
		ns.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			ns.Labels[kv[i]] = kv[i+1]
		}
	}
	return ns
}
