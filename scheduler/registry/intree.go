package registry

import (
	"fmt"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates"
	"github.com/yardmaster-io/yardmaster/predicates/dynamicresources"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
	"github.com/yardmaster-io/yardmaster/priorities"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
	"github.com/yardmaster-io/yardmaster/priorities/prioritysort"
	"github.com/yardmaster-io/yardmaster/priorities/prommetric"
)

// Names of plugins that only switch on behaviour built into the scheduler:
// they are accepted in configuration files, where kube-scheduler users
// write them, and cannot be replaced.
const (
	SchedulingGatesName = "SchedulingGates"
	PrioritySortName    = prioritysort.Name
	DefaultBinderName   = "DefaultBinder"
	// DefaultPreemptionName switches on preemption (scheduler/preemption.go)
	// for pods that fit nowhere.
	DefaultPreemptionName = "DefaultPreemption"
	// NodeResourcesFitName is NodeResourcesFit's, for the scheduler,
	// which reaches the plugins only through the registry.
	NodeResourcesFitName = predicates.FitName
	// TaintTolerationName is TaintToleration's, whose rejections explain
	// completes with the taint.
	TaintTolerationName = predicates.TaintTolerationName
)

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
		{Name: predicates.NodeNameName},
		{Name: predicates.NodeUnschedulableName},
		{Name: predicates.TaintTolerationName, Weight: 3},
		{Name: predicates.NodeAffinityName, Weight: 2},
		{Name: predicates.NodePortsName},
		{Name: predicates.FitName, Weight: 1},
		{Name: volumes.RestrictionsName},
		{Name: volumes.NodeLimitsName},
		{Name: volumes.BindingName},
		{Name: volumes.ZoneName},
		{Name: predicates.PodTopologySpreadName, Weight: 2},
		{Name: predicates.InterPodAffinityName, Weight: 2},
		// kube-scheduler puts it before DefaultPreemption: deallocating
		// an idle claim beats evicting a pod.
		{Name: dynamicresources.Name, Weight: 2},
		{Name: DefaultPreemptionName},
		{Name: priorities.BalancedAllocationName, Weight: 1},
		{Name: priorities.ImageLocalityName, Weight: 1},
		{Name: DefaultBinderName},
		// Appended by kube-scheduler while its feature gate
		// NodeDeclaredFeatures (GA and locked on in v1.37) is on: its
		// filter runs last.
		{Name: predicates.NodeDeclaredFeaturesName},
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

// NewInTree returns the registry of built-in plugins.
func NewInTree() framework.Registry {
	reg := framework.Registry{}
	// One pool of Prometheus queries for every metric plugin of every
	// profile built from this registry: a query runs once per refresh.
	pool := prommetric.NewPool()
	for _, group := range [][]framework.Registration{
		coreRegistrations(), spreadRegistrations(), affinityRegistrations(), {networktraffic.Registration(pool)}, loadaware.Registrations(pool), {dynamicresources.Registration()},
		explainRegistrations(),
	} {
		for _, r := range group {
			if err := reg.Register(r); err != nil {
				panic(err) // a programming error in the lists
			}
		}
	}
	return reg
}

// coreRegistrations are the built-in behaviours and the node-local plugins.
func coreRegistrations() []framework.Registration {
	return []framework.Registration{
		{Name: SchedulingGatesName, Points: []string{framework.PointPreEnqueue}},
		prioritysort.Registration(),
		{Name: DefaultBinderName, Points: []string{framework.PointBind}},
		{
			Name: DefaultPreemptionName,
			// kube-scheduler v1.37's DefaultPreemption is also a PreEnqueue
			// plugin: it holds back a pod whose evictions are still being
			// requested. Listed there, it changes nothing in yardmaster,
			// which holds that pod back from preempting again in PostFilter
			// (Scheduler.eligibleToPreempt) with the same message.
			Points:  []string{framework.PointPreEnqueue, framework.PointPostFilter},
			NewArgs: func() any { return &framework.DefaultPreemptionArgs{} },
			ValidateArgs: func(a any) error {
				args, ok := a.(*framework.DefaultPreemptionArgs)
				if !ok {
					return fmt.Errorf("internal error: %T is not DefaultPreemption's args", a)
				}
				return framework.ValidateDefaultPreemptionArgs(args)
			},
		},
		{
			// kube-scheduler v1.37's NodeUnschedulable, NodeName and
			// TaintToleration are PreFilter plugins too.
			Name:   predicates.NodeUnschedulableName,
			Points: []string{framework.PointPreFilter, framework.PointFilter},
			New:    noArgs(func() framework.Plugin { return predicates.NewNodeUnschedulable() }),
		},
		{
			Name:   predicates.NodeNameName,
			Points: []string{framework.PointPreFilter, framework.PointFilter},
			New:    noArgs(func() framework.Plugin { return predicates.NewNodeName() }),
		},
		{
			Name:   predicates.TaintTolerationName,
			Points: []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
			New: func(any, framework.Handle) ([]framework.Plugin, error) {
				return []framework.Plugin{predicates.NewTaintToleration(), priorities.NewTaintToleration()}, nil
			},
		},
		{
			Name:    predicates.NodeAffinityName,
			Points:  []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
			NewArgs: func() any { return &framework.NodeAffinityArgs{} },
			ValidateArgs: func(a any) error {
				args, ok := a.(*framework.NodeAffinityArgs)
				if !ok {
					return fmt.Errorf("args of type %T, want NodeAffinityArgs", a)
				}
				return framework.ValidateNodeAffinityArgs(args)
			},
			New: func(a any, _ framework.Handle) ([]framework.Plugin, error) {
				args, ok := a.(*framework.NodeAffinityArgs)
				if !ok {
					return nil, fmt.Errorf("args of type %T, want NodeAffinityArgs", a)
				}
				if err := framework.ValidateNodeAffinityArgs(args); err != nil {
					return nil, err
				}
				scorer, err := priorities.NewNodeAffinity(args)
				if err != nil {
					return nil, err
				}
				return []framework.Plugin{predicates.NewNodeAffinity(args), scorer}, nil
			},
		},
		{
			Name:   predicates.NodeDeclaredFeaturesName,
			Points: []string{framework.PointPreFilter, framework.PointFilter},
			New:    noArgs(func() framework.Plugin { return predicates.NewNodeDeclaredFeatures() }),
		},
		{
			Name:   predicates.NodePortsName,
			Points: []string{framework.PointPreFilter, framework.PointFilter},
			New:    noArgs(func() framework.Plugin { return predicates.NewNodePorts() }),
		},
		{
			Name:         predicates.FitName,
			Points:       []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore},
			NewArgs:      func() any { return framework.DefaultNodeResourcesFitArgs() },
			ValidateArgs: func(a any) error { _, err := priorities.NewFit(a.(*framework.NodeResourcesFitArgs)); return err },
			New: func(a any, h framework.Handle) ([]framework.Plugin, error) {
				args, ok := a.(*framework.NodeResourcesFitArgs)
				if !ok {
					return nil, fmt.Errorf("args of type %T, want NodeResourcesFitArgs", a)
				}
				scorer, err := priorities.NewFit(args)
				if err != nil {
					return nil, err
				}
				fit := predicates.NewFit(args)
				if h != nil && h.SharedDRAManager() != nil {
					fit.UseDeviceClasses(h.SharedDRAManager())
				}
				if h != nil && h.SharedInformerFactory() != nil {
					fit.UseNodeLister(h.SharedInformerFactory().Core().V1().Nodes().Lister())
				}
				if h != nil {
					fit.UseNodeInfoReader(h.ReadNodeInfo, h.NominatedPodsForNode)
				}
				return []framework.Plugin{fit, scorer}, nil
			},
		},
		{
			Name:    priorities.BalancedAllocationName,
			Points:  []string{framework.PointPreScore, framework.PointScore},
			NewArgs: func() any { return framework.DefaultNodeResourcesBalancedAllocationArgs() },
			ValidateArgs: func(a any) error {
				_, err := priorities.NewBalancedAllocation(a.(*framework.NodeResourcesBalancedAllocationArgs))
				return err
			},
			New: func(a any, _ framework.Handle) ([]framework.Plugin, error) {
				args, ok := a.(*framework.NodeResourcesBalancedAllocationArgs)
				if !ok {
					return nil, fmt.Errorf("args of type %T, want NodeResourcesBalancedAllocationArgs", a)
				}
				p, err := priorities.NewBalancedAllocation(args)
				if err != nil {
					return nil, err
				}
				return []framework.Plugin{p}, nil
			},
		},
	}
}

func noArgs(build func() framework.Plugin) framework.Factory {
	return func(any, framework.Handle) ([]framework.Plugin, error) {
		return []framework.Plugin{build()}, nil
	}
}
