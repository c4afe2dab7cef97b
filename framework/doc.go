// Package framework is the plugin SDK: the leaf package every scheduling
// plugin builds on, yardmaster's own (one folder each under predicates/
// and priorities/, and binder/defaultbinder) and an outside module's
// alike.
//
// The model: a scheduling cycle places one pod. The scheduler takes a
// Snapshot of the cluster (one NodeInfo per node: the node, the pods on it and
// the resources they request), runs the PreFilter plugins once, every Filter
// plugin on each node until enough feasible nodes are found, the PreScore
// plugins once, every Score plugin on each feasible node, each plugin's
// NormalizeScore once over all feasible nodes, and then weighs and sums the
// normalized scores.
//
// Plugins are pure over the snapshot: a Filter or Score call makes no API
// request, takes no lock and should not allocate. Work that depends only on
// the pod (or on the pod and all nodes) is done in PreFilter/PreScore and kept
// in the CycleState, which lives exactly one cycle.
//
// A failed Filter returns a Status with a human reason ("Insufficient cpu");
// the scheduler counts reasons over all nodes to build the familiar
// "0/N nodes are available: ..." message.
//
// A plugin implements the interfaces of the extension points it serves
// (QueueSortPlugin, PreEnqueuePlugin, PreFilterPlugin, FilterPlugin,
// PostFilterPlugin, PreScorePlugin, ScorePlugin, ReservePlugin,
// PermitPlugin, PreBindPlugin, BindPlugin, PostBindPlugin) and, where it
// helps, the optional ones: EnqueueExtensions (the cluster events that can
// make a pod it rejected schedulable, with queueing hints), PodSigner (its
// answers may be kept for pods signed alike), SlotFilter,
// RejectionExplainer, BackgroundPlugin, PreemptionPlanner. A Registration
// names it, lists its points and builds it from its args (NewRegistration
// for typed args); the Handle gives it the snapshot, informers (typed, and
// dynamic ones for custom resources, whose events it registers with
// ResourceOf), clients, the event recorder, the parallelizer and the
// waiting pods. The handle a profile gives is also a PreemptionHandle (the
// profile's filters run on a what-if copy of a node, the nominations, the
// evictions: what DefaultPreemption, predicates/defaultpreemption, uses)
// and a BindingHandle (the scheduler's own Binding: what DefaultBinder,
// binder/defaultbinder, posts). An outside module
// passes its Registration to app.WithPlugin (cmd/yardmaster/app), tests it
// with framework/frameworktest, and a KubeSchedulerConfiguration enables,
// weighs and configures it like a built-in plugin: see docs/plugins.md,
// which also states what is kept stable.
//
// This package imports no other package of yardmaster, so the plugins and
// the scheduler can all depend on it without cycles.
package framework
