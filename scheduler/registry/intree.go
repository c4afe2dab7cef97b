package registry

import (
	"github.com/yardmaster-io/yardmaster/binder/defaultbinder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates/defaultpreemption"
	"github.com/yardmaster-io/yardmaster/predicates/dynamicresources"
	"github.com/yardmaster-io/yardmaster/predicates/gangscheduling"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/nodedeclaredfeatures"
	"github.com/yardmaster-io/yardmaster/predicates/nodename"
	"github.com/yardmaster-io/yardmaster/predicates/nodeports"
	"github.com/yardmaster-io/yardmaster/predicates/noderesources"
	"github.com/yardmaster-io/yardmaster/predicates/nodeunschedulable"
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
	"github.com/yardmaster-io/yardmaster/predicates/tainttoleration"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
	"github.com/yardmaster-io/yardmaster/priorities/imagelocality"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
	"github.com/yardmaster-io/yardmaster/priorities/prioritysort"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// Names the scheduler and the default profile refer to. SchedulingGates
// only switches on the queue's own gate check: it is accepted in
// configuration files, where kube-scheduler users write it, and cannot be
// replaced; the others are plugins.
const (
	SchedulingGatesName = "SchedulingGates"
	PrioritySortName    = prioritysort.Name
	DefaultBinderName   = defaultbinder.Name
	// DefaultPreemptionName is DefaultPreemption's, the plugin that
	// preempts for pods that fit nowhere.
	DefaultPreemptionName = defaultpreemption.Name
	// NodeResourcesFitName is NodeResourcesFit's, for the scheduler,
	// which reaches the plugins only through the registry.
	NodeResourcesFitName = noderesources.FitName
	// TaintTolerationName is TaintToleration's, whose rejections explain
	// completes with the taint.
	TaintTolerationName = tainttoleration.Name
	// GangSchedulingName is GangScheduling's: the group cycle names it
	// among a failed group's rejectors.
	GangSchedulingName = gangscheduling.Name
)

// SplitByPDB is DefaultPreemption's split of victims (most important
// first) by whether a PodDisruptionBudget forbids their eviction, which a
// group's preemption uses too.
var SplitByPDB = defaultpreemption.SplitByPDB

// PodGroupMissingMessage is why a member of a group without its
// PodGroup waits (kube-scheduler's words).
var PodGroupMissingMessage = gangscheduling.MsgWaitingForPodGroup

// DefaultPlugins is kube-scheduler v1.37's default multiPoint plugin list,
// in order, with its score weights, limited to the plugins yardmaster has
// (pkg/scheduler/apis/config/v1, default_plugins.go). Filters run in this
// order, cheapest first: a node rejected by a cheap check never reaches
// the resource arithmetic. NodeName comes before NodeUnschedulable since
// v1.37: a pod that names its node is judged there first.
func DefaultPlugins() []framework.WeightedPlugin {
	return []framework.WeightedPlugin{
		{Name: SchedulingGatesName},
		{Name: PrioritySortName},
		{Name: nodename.Name},
		{Name: nodeunschedulable.Name},
		{Name: tainttoleration.Name, Weight: 3},
		{Name: nodeaffinity.Name, Weight: 2},
		{Name: nodeports.Name},
		{Name: noderesources.FitName, Weight: 1},
		{Name: volumes.RestrictionsName},
		{Name: volumes.NodeLimitsName},
		{Name: volumes.BindingName},
		{Name: volumes.ZoneName},
		{Name: podtopologyspread.Name, Weight: 2},
		{Name: interpodaffinity.Name, Weight: 2},
		// kube-scheduler puts it before DefaultPreemption: deallocating
		// an idle claim beats evicting a pod.
		{Name: dynamicresources.Name, Weight: 2},
		{Name: DefaultPreemptionName},
		{Name: noderesources.BalancedAllocationName, Weight: 1},
		{Name: imagelocality.Name, Weight: 1},
		{Name: DefaultBinderName},
		// Appended by kube-scheduler while its feature gate
		// NodeDeclaredFeatures (GA and locked on in v1.37) is on: its
		// filter runs last.
		{Name: nodedeclaredfeatures.Name},
		// Appended by kube-scheduler v1.37 while its feature gate
		// GenericWorkload is on; yardmaster's equivalent of the gate is
		// the API server serving PodGroups, without which no pod names a
		// group and the plugin lets every pod through.
		{Name: gangscheduling.Name},
	}
}

// DefaultProfile returns the default profile under the given scheduler name.
func DefaultProfile(schedulerName string) framework.Profile {
	return ExpandMultiPoint(NewInTree(), schedulerName, DefaultPlugins())
}

// ExpandMultiPoint places each plugin at every point it implements, as
// multiPoint does in a configuration file. Score weights of 0 become 1.
func ExpandMultiPoint(reg framework.Registry, schedulerName string, plugins []framework.WeightedPlugin) framework.Profile {
	p := framework.Profile{SchedulerName: schedulerName, Args: map[string]any{}}
	for _, wp := range plugins {
		r, ok := reg[wp.Name]
		if !ok {
			continue
		}
		if r.Implements(framework.PointQueueSort) && p.QueueSort == "" {
			p.QueueSort = wp.Name
		}
		if r.Implements(framework.PointPreFilter) {
			p.PreFilter = append(p.PreFilter, wp.Name)
		}
		if r.Implements(framework.PointFilter) {
			p.Filter = append(p.Filter, wp.Name)
		}
		if r.Implements(framework.PointPreScore) {
			p.PreScore = append(p.PreScore, wp.Name)
		}
		if r.Implements(framework.PointPostFilter) {
			p.PostFilter = append(p.PostFilter, wp.Name)
		}
		if r.Implements(framework.PointPreEnqueue) && wp.Name != SchedulingGatesName {
			p.PreEnqueue = append(p.PreEnqueue, wp.Name)
		}
		if r.Implements(framework.PointReserve) {
			p.Reserve = append(p.Reserve, wp.Name)
		}
		if r.Implements(framework.PointPermit) {
			p.Permit = append(p.Permit, wp.Name)
		}
		if r.Implements(framework.PointPreBind) {
			p.PreBind = append(p.PreBind, wp.Name)
		}
		if r.Implements(framework.PointBind) {
			p.Bind = append(p.Bind, wp.Name)
		}
		if r.Implements(framework.PointPostBind) {
			p.PostBind = append(p.PostBind, wp.Name)
		}
		if r.Implements(framework.PointScore) {
			w := wp.Weight
			if w == 0 {
				w = 1
			}
			p.Score = append(p.Score, framework.WeightedPlugin{Name: wp.Name, Weight: w})
		}
	}
	return p
}

// NewInTree returns the registry of built-in plugins: the behaviours
// built into the scheduler, then each plugin folder's Registration, the
// values an outside module passes to app.WithPlugin for its own.
func NewInTree() framework.Registry {
	// One pool of Prometheus queries for every metric plugin of every
	// profile built from this registry: a query runs once per refresh.
	pool := prommetric.NewPool()
	regs := append(builtinRegistrations(),
		prioritysort.Registration(),
		nodeunschedulable.Registration(),
		nodename.Registration(),
		tainttoleration.Registration(),
		nodeaffinity.Registration(),
		nodedeclaredfeatures.Registration(),
		nodeports.Registration(),
		noderesources.FitRegistration(),
		noderesources.BalancedAllocationRegistration(),
		podtopologyspread.Registration(),
		volumes.RestrictionsRegistration(),
		volumes.NodeLimitsRegistration(),
		volumes.BindingRegistration(),
		volumes.ZoneRegistration(),
		interpodaffinity.Registration(),
		imagelocality.Registration(),
		dynamicresources.Registration(),
		defaultpreemption.Registration(),
		gangscheduling.Registration(),
		defaultbinder.Registration(),
		networktraffic.Registration(pool),
	)
	regs = append(regs, loadaware.Registrations(pool)...)
	reg := framework.Registry{}
	for _, r := range regs {
		if err := reg.Register(r); err != nil {
			panic(err) // a programming error in the list
		}
	}
	return reg
}

// builtinRegistrations are SchedulingGates, a behaviour built into the
// queue, which a file may name where kube-scheduler's plugin of that name
// serves, and Explain, which only carries args.
func builtinRegistrations() []framework.Registration {
	return []framework.Registration{
		{Name: SchedulingGatesName, Points: []string{framework.PointPreEnqueue}},
		explainRegistration(),
	}
}
