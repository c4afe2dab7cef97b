package framework

// A Registry is how plugins reach a scheduler: yardmaster's own
// (scheduler/registry.NewInTree) and an outside module's, passed to
// app.WithPlugin. One plugin name (NodeResourcesFit, NodeAffinity) can span
// a filter and a scorer that share one set of arguments, so a Registration
// builds a list of parts; the scheduler puts each part at every extension
// point the profile lists the name at.
//
// The configuration package uses the Registry to check names, extension
// points and arguments; the scheduler uses the same Registry to build each
// profile.

import (
	"fmt"
	"slices"
)

// Extension point names, as written in a KubeSchedulerConfiguration file.
const (
	PointPreEnqueue = "preEnqueue"
	PointQueueSort  = "queueSort"
	PointPreFilter  = "preFilter"
	PointFilter     = "filter"
	PointPostFilter = "postFilter"
	PointPreScore   = "preScore"
	PointScore      = "score"
	PointReserve    = "reserve"
	PointPermit     = "permit"
	PointPreBind    = "preBind"
	PointBind       = "bind"
	PointPostBind   = "postBind"
	PointMultiPoint = "multiPoint"
)

// Factory builds a plugin's parts from its (defaulted, validated) arguments.
type Factory func(args any, h Handle) ([]Plugin, error)

// Registration describes one plugin name.
type Registration struct {
	Name string
	// Points are the extension points the plugin implements as a
	// configuration file sees it: where a file may name it, and where
	// multiPoint places it. For kube-scheduler's in-tree plugins they are
	// exactly the points kube-scheduler v1.37's plugin implements, so that
	// a file means the same to both (kube-scheduler refuses a plugin named
	// at a point it does not implement).
	Points []string
	// Steps are extension points where yardmaster runs the plugin although
	// a file cannot name it there: a step of the plugin's own, run at the
	// step's point (the key) wherever the profile runs the plugin at the
	// point it serves (the value). ImageLocality reads the pod's image
	// names once in a PreScore step of its scorer, say, where
	// kube-scheduler's ImageLocality is a Score plugin only. Only
	// preFilter and preScore take steps: their plugins prepare and add
	// nothing up.
	Steps map[string]string
	// NewArgs returns the plugin's default arguments as a pointer to its args
	// type (the decoder fills it from pluginConfig); nil for plugins without
	// arguments.
	NewArgs func() any
	// ValidateArgs checks decoded arguments; nil when there is nothing to check.
	ValidateArgs func(args any) error
	// New builds the plugin. Nil for names that only switch on behaviour
	// built into the scheduler itself (SchedulingGates, Explain).
	New Factory
}

// Implements reports whether the registration implements point.
func (r Registration) Implements(point string) bool {
	return slices.Contains(r.Points, point)
}

// Registry maps plugin names to registrations.
type Registry map[string]Registration

// Register adds r, failing on a duplicate name or a step where none may be.
func (reg Registry) Register(r Registration) error {
	if _, ok := reg[r.Name]; ok {
		return fmt.Errorf("plugin %q registered twice", r.Name)
	}
	for at, serves := range r.Steps {
		switch {
		case at != PointPreFilter && at != PointPreScore:
			return fmt.Errorf("plugin %q: a step at %s (only preFilter and preScore take steps)", r.Name, at)
		case r.Implements(at):
			return fmt.Errorf("plugin %q: a step at %s, where it is configured", r.Name, at)
		case !r.Implements(serves):
			return fmt.Errorf("plugin %q: a step at %s serves %s, which it does not implement", r.Name, at, serves)
		}
	}
	reg[r.Name] = r
	return nil
}

// WeightedPlugin is a score plugin with its weight.
type WeightedPlugin struct {
	Name   string
	Weight int64
}

// Profile is one resolved scheduling profile: which plugins it places at
// which point, in order, as a configuration file names them, with their
// arguments. The scheduler runs them there, and their steps (RunAt). The
// configuration package produces it from a KubeSchedulerConfiguration
// profile; DefaultProfile gives kube-scheduler's defaults.
type Profile struct {
	SchedulerName string
	// PercentageOfNodesToScore overrides the global setting when non-nil.
	PercentageOfNodesToScore *int32
	// Bind are the bind plugins, in order. Empty means the scheduler's
	// own Binding, DefaultBinder's, alone.
	Bind []string
	// QueueSort is the queue-sort plugin (the same in every profile: they
	// share one queue); empty orders as PrioritySort.
	QueueSort string
	PreFilter []string
	Filter    []string
	PreScore  []string
	Score     []WeightedPlugin
	// PostFilter runs, in order, when a pod fits nowhere: DefaultPreemption
	// (built in) and the plugins that make room otherwise.
	PostFilter []string
	// PreEnqueue are the plugins that may hold a pod back from the active
	// queue (SchedulingGates is built into the queue and not listed;
	// DefaultPreemption, listed, holds pods back in PostFilter instead).
	PreEnqueue []string
	// Reserve, Permit, PreBind and PostBind are the binding cycle's
	// plugins, in order (see ReservePlugin and the others).
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
	if p.QueueSort != "" {
		add(p.QueueSort)
	}
	for _, list := range [][]string{p.PreFilter, p.Filter, p.PreScore} {
		for _, n := range list {
			add(n)
		}
	}
	for _, w := range p.Score {
		add(w.Name)
	}
	for _, list := range [][]string{p.PreEnqueue, p.PostFilter, p.Reserve, p.Permit, p.PreBind, p.Bind, p.PostBind} {
		for _, n := range list {
			add(n)
		}
	}
	return names
}

// RunAt returns the plugins that run at point in profile p: first the steps
// there (Registration.Steps) of the plugins p runs at the point each step
// serves, in that point's order, then the plugins p lists at point. Steps
// come first because they only prepare their own plugin, as they did in
// the default profile when they were configured points.
func (reg Registry) RunAt(p *Profile, point string) []string {
	listed := p.at(point)
	var steps []string
	for _, served := range profilePoints {
		for _, name := range p.at(served) {
			if reg[name].Steps[point] == served && !slices.Contains(steps, name) {
				steps = append(steps, name)
			}
		}
	}
	if len(steps) == 0 {
		return listed
	}
	return append(steps, listed...)
}

// profilePoints are the points a Profile lists plugins at: the file's,
// but queueSort (one plugin, Profile.QueueSort) and multiPoint (expanded).
var profilePoints = []string{PointPreEnqueue, PointPreFilter, PointFilter, PointPostFilter, PointPreScore, PointScore, PointReserve, PointPermit, PointPreBind, PointBind, PointPostBind}

// at returns the plugins p lists at point, one of profilePoints.
func (p *Profile) at(point string) []string {
	switch point {
	case PointPreEnqueue:
		return p.PreEnqueue
	case PointPreFilter:
		return p.PreFilter
	case PointFilter:
		return p.Filter
	case PointPostFilter:
		return p.PostFilter
	case PointPreScore:
		return p.PreScore
	case PointScore:
		names := make([]string, len(p.Score))
		for i, w := range p.Score {
			names[i] = w.Name
		}
		return names
	case PointReserve:
		return p.Reserve
	case PointPermit:
		return p.Permit
	case PointPreBind:
		return p.PreBind
	case PointBind:
		return p.Bind
	case PointPostBind:
		return p.PostBind
	}
	return nil
}

// ArgsDefaulter is implemented by an args type that fills in, after a
// file's args are decoded over NewArgs' value, defaults that depend on
// what the file wrote (a list left empty, a weight left 0). Args whose
// defaults are all in NewArgs' value need not implement it.
type ArgsDefaulter interface{ SetDefaults() }

// NewRegistration returns the Registration of a plugin whose args are of
// type *A. NewArgs gives defaults() (a zero A when defaults is nil);
// ValidateArgs runs validate (when not nil) on a copy defaulted by
// SetDefaults when *A implements ArgsDefaulter; New passes the args to
// build. An args value of another type is an error, never a panic.
func NewRegistration[A any](name string, points []string, defaults func() *A, validate func(*A) error, build func(*A, Handle) ([]Plugin, error)) Registration {
	typed := func(a any) (*A, error) {
		args, ok := a.(*A)
		if !ok {
			return nil, fmt.Errorf("plugin %s: args of type %T, want %T", name, a, new(A))
		}
		return args, nil
	}
	r := Registration{
		Name:   name,
		Points: points,
		NewArgs: func() any {
			if defaults == nil {
				return new(A)
			}
			return defaults()
		},
		New: func(a any, h Handle) ([]Plugin, error) {
			args, err := typed(a)
			if err != nil {
				return nil, err
			}
			return build(args, h)
		},
	}
	if validate != nil {
		r.ValidateArgs = func(a any) error {
			args, err := typed(a)
			if err != nil {
				return err
			}
			c := new(A)
			*c = *args
			if d, ok := any(c).(ArgsDefaulter); ok {
				d.SetDefaults()
			}
			return validate(c)
		}
	}
	return r
}
