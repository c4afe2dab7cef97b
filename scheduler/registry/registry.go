// Package registry names the built-in plugins and builds them.
//
// One plugin name (NodeResourcesFit, NodeAffinity, TaintToleration) can span
// a filter in predicates/ and a scorer in priorities/ that share one set of
// arguments, so a Registration builds a list of parts; the scheduler puts
// each part at every extension point it implements.
//
// The configuration package uses Registry to check names, extension points
// and arguments; the scheduler uses it to build each profile.
package registry

import (
	"fmt"
	"slices"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Extension point names, as written in a KubeSchedulerConfiguration file.
const (
	PreEnqueue = "preEnqueue"
	QueueSort  = "queueSort"
	PreFilter  = "preFilter"
	Filter     = "filter"
	PostFilter = "postFilter"
	PreScore   = "preScore"
	Score      = "score"
	Reserve    = "reserve"
	Permit     = "permit"
	PreBind    = "preBind"
	Bind       = "bind"
	PostBind   = "postBind"
	MultiPoint = "multiPoint"
)

// Factory builds a plugin's parts from its (defaulted, validated) arguments.
type Factory func(args any, h framework.Handle) ([]framework.Plugin, error)

// Registration describes one plugin name.
type Registration struct {
	Name string
	// Points are the extension points the plugin implements.
	Points []string
	// NewArgs returns the plugin's default arguments as a pointer to its args
	// type (the decoder fills it from pluginConfig); nil for plugins without
	// arguments.
	NewArgs func() any
	// ValidateArgs checks decoded arguments; nil when there is nothing to check.
	ValidateArgs func(args any) error
	// New builds the plugin. Nil for names that only switch on behaviour
	// built into the scheduler itself (PrioritySort, DefaultBinder, ...).
	New Factory
}

// Implements reports whether the registration implements point.
func (r Registration) Implements(point string) bool {
	return slices.Contains(r.Points, point)
}

// Registry maps plugin names to registrations.
type Registry map[string]Registration

// Register adds r, failing on a duplicate name.
func (reg Registry) Register(r Registration) error {
	if _, ok := reg[r.Name]; ok {
		return fmt.Errorf("plugin %q registered twice", r.Name)
	}
	reg[r.Name] = r
	return nil
}

// WeightedPlugin is a score plugin with its weight.
type WeightedPlugin struct {
	Name   string
	Weight int64
}

// Profile is one resolved scheduling profile: which plugins run at which
// point, in order, with their arguments. The configuration package produces
// it from a KubeSchedulerConfiguration profile; DefaultProfile gives
// kube-scheduler's defaults.
type Profile struct {
	SchedulerName string
	// PercentageOfNodesToScore overrides the global setting when non-nil.
	PercentageOfNodesToScore *int32
	PreFilter                []string
	Filter                   []string
	PreScore                 []string
	Score                    []WeightedPlugin
	// PostFilter runs, in order, when a pod fits nowhere: DefaultPreemption
	// (built in) and the plugins that make room otherwise.
	PostFilter []string
	// PreEnqueue are the plugins that may hold a pod back from the active
	// queue (SchedulingGates is built into the queue and not listed).
	PreEnqueue []string
	// Reserve, Permit, PreBind and PostBind are the binding cycle's
	// plugins, in order (see framework.ReservePlugin and the others).
	Reserve  []string
	Permit   []string
	PreBind  []string
	PostBind []string
	// Args holds each plugin's arguments, of the type its NewArgs returns.
	Args map[string]any
}

// Plugins returns every plugin name the profile uses, each once, in order
// of first appearance.
func (p *Profile) Plugins() []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, list := range [][]string{p.PreFilter, p.Filter, p.PreScore} {
		for _, n := range list {
			add(n)
		}
	}
	for _, w := range p.Score {
		add(w.Name)
	}
	for _, list := range [][]string{p.PreEnqueue, p.PostFilter, p.Reserve, p.Permit, p.PreBind, p.PostBind} {
		for _, n := range list {
			add(n)
		}
	}
	return names
}
