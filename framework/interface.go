package framework

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

// MaxNodeScore is the highest score a Score plugin may give after
// normalization; MinNodeScore the lowest.
const (
	MaxNodeScore int64 = 100
	MinNodeScore int64 = 0
)

// Plugin is anything the scheduler runs at an extension point.
type Plugin interface {
	// Name is the plugin's name as written in the configuration file.
	Name() string
}

// PreEnqueuePlugin decides whether a pod may enter the active queue at all.
// It is asked when the pod is added or updated, and again on every cluster
// event while it waits; until it says Success the pod waits with the
// gated pods, without a scheduling attempt or an event (a pod whose
// ResourceClaims do not exist yet, say).
type PreEnqueuePlugin interface {
	Plugin
	// PreEnqueue returns Success when the pod may be scheduled, else why
	// not. It runs under the queue's lock: it must be quick and must not
	// call the queue.
	PreEnqueue(ctx context.Context, pod *v1.Pod) *Status
}

// PostFilterPlugin runs, in configured order, when a pod fits no node, to
// make room for it (DefaultPreemption, predicates/defaultpreemption, is
// one). A plugin that made room returns Success, its message saying what
// it did, and ends the chain; Unschedulable passes on to the next plugin,
// its reasons kept; UnschedulableAndUnresolvable or an Error ends the
// chain. The message of the plugin that ended the chain, or the reasons
// kept, follow the filters' in the pod's FailedScheduling event.
type PostFilterPlugin interface {
	Plugin
	// PostFilter must not wait on the API: a write it decides on goes out
	// in the background, and the event it causes requeues the pod.
	// filtered is what the filters made of the nodes; read-only.
	PostFilter(ctx context.Context, state *CycleState, pod *v1.Pod, filtered *FilteredNodes) *Status
}

// PreFilterResult narrows the nodes a pod may go to. A nil result, or nil
// NodeNames, means every node.
type PreFilterResult struct {
	NodeNames map[string]struct{}
}

// PreFilterPlugin runs once per cycle before any Filter.
type PreFilterPlugin interface {
	Plugin
	// PreFilter computes what the plugin's Filter needs for this pod and
	// stores it in state. A rejected status makes the pod unschedulable on
	// every node; Skip means Filter is not called for this pod.
	PreFilter(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) (*PreFilterResult, *Status)
}

// PreFilterExtensions let preemption ask a PreFilter's state "what if":
// what the Filter would say were a pod gone from a node (RemovePod) or
// there again (AddPod). A plugin whose state depends on the pods of nodes
// other than the one filtered implements them, and its state's Clone
// copies what they change: preemption works on a clone of the cycle's
// state.
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// FilterPlugin decides whether a pod can run on a node.
type FilterPlugin interface {
	Plugin
	// Filter returns nil when pod fits nodeInfo, or a rejected status whose
	// reasons say why not. It is called concurrently for different nodes and
	// must only read state and nodeInfo.
	Filter(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) *Status
}

// PodSigner is implemented by a Filter or Score plugin whose answer for a
// node (Filter's status, Score's raw score) is a function of the node's
// NodeInfo, the plugin's configuration and what SignPod writes out (the
// parts of the pod the plugin reads, and anything else it reads, such as
// the number of nodes), and of nothing else: not the other nodes' pods or
// labels, not other objects of the cluster, not the time.
//
// Pods in a backlog are mostly alike (the replicas of one workload), and
// a cycle asks every node the same questions the last cycle asked. For a
// pod whose signers all sign, the scheduler keeps each signer's answer per
// node under the pod's signature, and gives it again to a pod with the
// same signature while the node's NodeInfo has the same Generation,
// without calling the plugin. A signature that leaves out something the
// plugin reads would give a pod another pod's answer: sign everything the
// plugin reads of the pod, PreFilter and PreScore included.
type PodSigner interface {
	Plugin
	// SignPod appends to sig an encoding of what the plugin reads of pod
	// and returns it, or returns false when the plugin's answer for this
	// pod must not be reused. It runs after PreFilter (a filter) or
	// PreScore (a scorer) and may read what those stored in state.
	SignPod(state *CycleState, pod *v1.Pod, sig []byte) ([]byte, bool)
}

// SlotFilter is implemented by a FilterPlugin that can often decide a node
// from what it keeps by node slot (NodeSlots, NodeValues), without reading
// the node's NodeInfo: in a drain, most NodeInfos are not in the CPU's
// caches, and reading one costs more than the check.
type SlotFilter interface {
	// FilterSlot returns what Filter would for the node in slot with
	// generation gen, and true; or false when it cannot tell without the
	// NodeInfo, and the scheduler then calls Filter.
	FilterSlot(ctx context.Context, state *CycleState, pod *v1.Pod, slot int, gen int64) (*Status, bool)
}

// PreScorePlugin runs once per cycle over the feasible nodes, before Score.
type PreScorePlugin interface {
	Plugin
	// PreScore computes what Score needs and stores it in state. Skip means
	// Score is not called for this pod.
	PreScore(ctx context.Context, state *CycleState, pod *v1.Pod, feasible []*NodeInfo) *Status
}

// ScorePlugin ranks feasible nodes.
type ScorePlugin interface {
	Plugin
	// Score rates nodeInfo for pod. It is called concurrently for different
	// nodes and must only read state and nodeInfo. Without ScoreExtensions
	// the score must already lie in [MinNodeScore, MaxNodeScore].
	Score(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions returns the normalizer, or nil when scores need none.
	ScoreExtensions() ScoreExtensions
}

// ScoreExtensions maps raw scores to [MinNodeScore, MaxNodeScore].
type ScoreExtensions interface {
	// NormalizeScore rewrites scores in place, once per cycle.
	NormalizeScore(ctx context.Context, state *CycleState, pod *v1.Pod, scores NodeScoreList) *Status
}

// ReservePlugin keeps what a plugin decided for a pod (a volume, a
// device) from being given to another pod, from the moment the node is
// chosen until the pod is bound or given up.
//
// Reserve runs in the scheduling cycle, right after the pod is assumed on
// its node, in configured order; it must not call the API (a write goes in
// PreBind). If it fails, or anything after it fails (Permit, PreBind, the
// Binding), Unreserve runs on every reserve plugin of the profile, in
// reverse order, whether or not its Reserve ran: it must give back what
// its own Reserve took for this pod, and nothing when it took nothing.
// Unreserve may run on a bind worker, concurrently with other pods'
// scheduling cycles.
type ReservePlugin interface {
	Plugin
	// Reserve reserves what the plugin needs for pod on nodeName. A
	// rejected status makes the pod unschedulable on that node for this
	// attempt; an Error is retried with backoff.
	Reserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
	// Unreserve gives back what Reserve took. It cannot fail.
	Unreserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
}

// PermitPlugin approves, rejects or delays a pod's binding. Permit runs in
// the scheduling cycle after Reserve and must not block: a plugin that
// needs to wait returns Wait with a timeout, and the pod, keeping its
// reservation, waits outside the cycle until the plugin (or another, or
// the timeout) decides through WaitingPod.
type PermitPlugin interface {
	Plugin
	// Permit returns Success, a rejection, an Error, or Wait with how long
	// to wait at most (capped at MaxPermitWait).
	Permit(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) (*Status, time.Duration)
}

// MaxPermitWait caps a Permit plugin's timeout, as in kube-scheduler.
const MaxPermitWait = 15 * time.Minute

// PreBindPlugin makes the API writes a pod needs before its Binding (a
// volume bound, a claim allocated). PreBind runs on a bind worker, never
// in the scheduling cycle, and may block on the API.
type PreBindPlugin interface {
	Plugin
	// PreBindPreFlight says, cheaply and without calling the API, whether
	// PreBind has anything to do for this pod: Skip when not (PreBind is
	// then not called), Success when it has, Error when it cannot tell. It
	// runs at the end of the scheduling cycle, so the scheduler can keep
	// pods whose PreBind waits on the API from holding up plain Bindings.
	PreBindPreFlight(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
	// PreBind makes the writes. A rejected status makes the attempt
	// unschedulable, an Error retries it with backoff; either way every
	// reserve plugin's Unreserve runs.
	PreBind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// BindPlugin binds a pod to its node. The profile's bind plugins run in
// order after PreBind, on a bind worker, until one does not Skip: a
// plugin that binds only some pods (to another cluster, through a custom
// resource) returns Skip for the others. DefaultBinder, the default and
// usually the last, posts the pods/binding subresource, retrying what the
// API server may not have committed and checking what it has.
type BindPlugin interface {
	Plugin
	// Bind binds pod to nodeName, or returns Skip to leave it to the next
	// plugin. An error fails the binding cycle: every reserve plugin's
	// Unreserve runs and the pod is tried again with backoff, unless the
	// pod turns out bound to nodeName all the same, which counts as
	// bound.
	Bind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// PostBindPlugin is told that a pod was bound, for clean-up. It cannot
// fail the binding.
type PostBindPlugin interface {
	Plugin
	PostBind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
}

// WaitingPod is a pod whose Permit returned Wait: it holds its
// reservation on its node until every plugin it waits for allows it, or
// one rejects it, or a plugin's timeout runs out (a rejection).
type WaitingPod interface {
	// GetPod returns the assumed pod (spec.nodeName set).
	GetPod() *v1.Pod
	// GetPendingPlugins names the plugins it still waits for.
	GetPendingPlugins() []string
	// Allow is plugin's approval; the pod goes on once every plugin it
	// waits for has allowed it.
	Allow(plugin string)
	// Reject ends the wait with an Unschedulable status from plugin
	// saying msg. It reports false when the wait had already ended.
	Reject(plugin, msg string) bool
}

// NodeScore is one node's score from one plugin.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList holds one plugin's scores over the feasible nodes.
type NodeScoreList []NodeScore

// NodeInfoLister reads the cycle's snapshot.
type NodeInfoLister interface {
	// List returns every node.
	List() []*NodeInfo
	// HavePodsWithAffinityList returns the nodes that hold a pod with
	// inter-pod affinity or anti-affinity.
	HavePodsWithAffinityList() []*NodeInfo
	// HavePodsWithRequiredAntiAffinityList returns the nodes that hold a pod
	// with required anti-affinity.
	HavePodsWithRequiredAntiAffinityList() []*NodeInfo
	// Get returns the named node, or an error when it is not in the snapshot.
	Get(nodeName string) (*NodeInfo, error)
	// HostnamesUnique reports whether no two nodes carry the same
	// kubernetes.io/hostname label value, so that a hostname topology
	// domain is one node.
	HostnamesUnique() bool
	// Slots returns the nodes by slot, for memos that follow the snapshot
	// (see SyncTotal); empty when the lister keeps none.
	Slots() NodeSlots
}

// Handle is what a plugin may use beyond its arguments: the snapshot of the
// running cycle, the shared informers (for objects other than pods and
// nodes, read through listers, never through API calls while scheduling),
// the API client (for PreBind's writes only), the waiting pods, the
// metrics registry and the logger.
type Handle interface {
	SnapshotSharedLister() NodeInfoLister
	SharedInformerFactory() informers.SharedInformerFactory
	// DynamicInformerFactory is the scheduler's factory of informers of
	// unstructured objects, for a plugin's custom resources (see
	// ResourceOf); the scheduler starts the informers requested from it
	// when it starts, and does not wait for them to sync. Nil when the
	// scheduler runs without an API server (tests, simulate from a file).
	DynamicInformerFactory() dynamicinformer.DynamicSharedInformerFactory
	// ClientSet is the scheduler's API client. Only PreBind and background
	// work may call it: the scheduling cycle never waits on the API.
	// Nil when the scheduler runs without one (some tests).
	ClientSet() kubernetes.Interface
	// KubeConfig is the configuration the scheduler's client was built
	// from (a copy: change it freely), for a plugin's own clients, a
	// dynamic client or a clientset of its custom resources, say. Nil when
	// the scheduler runs without one (tests, simulate from a file). Under
	// explain and simulate it can only read.
	KubeConfig() *rest.Config
	// Parallelizer runs a plugin's work over many nodes with the
	// scheduler's parallelism (the configuration's parallelism).
	Parallelizer() Parallelizer
	// IterateOverWaitingPods calls f for each pod waiting on Permit.
	IterateOverWaitingPods(f func(WaitingPod))
	// GetWaitingPod returns the waiting pod with uid, or nil.
	GetWaitingPod(uid types.UID) WaitingPod
	// SharedDRAManager is the scheduler's state of dynamic resource
	// allocation, shared by its profiles; nil without informers.
	SharedDRAManager() SharedDRAManager
	// EventRecorder writes events about pods (the scheduler's own, as
	// kube-scheduler's plugins write through theirs); nil when the
	// scheduler writes none.
	EventRecorder() events.EventRecorder
	// MetricsRegisterer registers the plugin's own metrics; never nil.
	MetricsRegisterer() prometheus.Registerer
	// Logger is the process logger; never nil.
	Logger() *zap.Logger
	// RaiseEvent tells the scheduling queue of a cluster event that no
	// informer sees (a new measurement of the nodes, say): the
	// unschedulable pods whose rejectors registered it are asked, as for
	// the informers' events. It never blocks on the API.
	RaiseEvent(ev ClusterEvent, oldObj, newObj any)
	// ReadNodeInfo calls f with the node's current NodeInfo in the
	// scheduler's cache, under the cache's read lock: what the cluster
	// holds now, bound and assumed pods included, nominated ones not (a
	// queueing hint's view; a cycle reads its snapshot). f only reads: it
	// must not keep the NodeInfo or call into the scheduler. ReadNodeInfo
	// reports false, without calling f, when there is no such node.
	ReadNodeInfo(name string, f func(*NodeInfo)) bool
	// NominatedPodsForNode returns the pods nominated to the node (their
	// preemption under way), as kube-scheduler's PodNominator: a pod
	// counts them as taking room there when their priority is at least
	// its own. The slice is the caller's; the PodInfos are read-only.
	NominatedPodsForNode(name string) []*PodInfo
}

// RejectionExplainer is implemented by a FilterPlugin that can say more
// about a node it rejected than its status tells the pod's events:
// `yardmaster explain`, which reads the nodes with its caller's rights,
// asks it for every node it rejected.
type RejectionExplainer interface {
	// ExplainRejection returns the reasons to show for nodeInfo in place
	// of reasons (the Filter's; return them unchanged when there is
	// nothing to add), and how much of each resource would have to be
	// freed on the node for the pod to pass, by resource name (nil when
	// freeing room there cannot help).
	ExplainRejection(pod *v1.Pod, nodeInfo *NodeInfo, reasons []string) (shown []string, shortfall map[string]string)
}

// BackgroundPlugin is a plugin with work of its own outside scheduling
// cycles (a cache to refresh, say). The scheduler calls Run once, on its
// own goroutine, when it starts; Run returns when ctx is done.
type BackgroundPlugin interface {
	Plugin
	Run(ctx context.Context)
}

// DeviceClassResolver tells which DeviceClass serves an extended resource
// through dynamic resource allocation: the class whose
// spec.extendedResourceName it is, or the class named in an implicit
// deviceclass.resource.kubernetes.io/<class> name.
type DeviceClassResolver interface {
	// GetDeviceClass returns the class serving resourceName, or nil.
	GetDeviceClass(resourceName v1.ResourceName) *resourceapi.DeviceClass
}

// SharedDRAManager is what the plugins share of dynamic resource
// allocation (claims as the scheduler sees them, the devices allocated,
// the classes): NodeResourcesFit leaves extended resources that a
// DeviceClass serves to DynamicResources. The DynamicResources plugin
// knows the concrete type.
type SharedDRAManager interface {
	DeviceClassResolver
}

// BindingHandle is the handle's way to the scheduler's own Binding, for
// a Bind plugin that wraps DefaultBinder or stands in for it
// (binder/defaultbinder). The handle a profile gives its plugins
// implements it; assert it when the plugin is built.
type BindingHandle interface {
	Handle
	// PostBinding posts pod's Binding to nodeName through the
	// pods/binding subresource with the pod's UID as a precondition,
	// retrying what the API server did not commit, as DefaultBinder does.
	// An error that says the Binding may have been committed all the
	// same (a timeout, a lost answer) tells the scheduler to look at the
	// pod before it frees what the pod holds: return it as it is, in
	// AsStatus.
	PostBinding(ctx context.Context, pod *v1.Pod, nodeName string) error
}
