package scheduler

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
	"github.com/yardmaster-io/yardmaster/queue"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// profile is a built scheduling profile: the plugin instances at each
// extension point, in configured order.
type profile struct {
	name                     string
	percentageOfNodesToScore *int32
	preFilter                []framework.PreFilterPlugin
	filter                   []framework.FilterPlugin
	// slotFilter is parallel to filter: the plugin as a SlotFilter, or nil.
	slotFilter []framework.SlotFilter
	preScore   []framework.PreScorePlugin
	score      []weightedScorer
	// The binding cycle's plugins (binding_cycle.go).
	reserve    []framework.ReservePlugin
	permit     []framework.PermitPlugin
	preBind    []framework.PreBindPlugin
	postBind   []framework.PostBindPlugin
	background []framework.BackgroundPlugin
	// preFilterExt are the PreFilter plugins whose state preemption can
	// ask "what if" (see framework.PreFilterExtensions).
	preFilterExt []preFilterExtension
	// postFilter are the PostFilter plugins in configured order.
	postFilter []framework.PostFilterPlugin
	// planner is the first PostFilter plugin that preempts, nil when the
	// profile does not preempt: explain asks it for a dry run.
	planner framework.PreemptionPlanner
	// queueSort is the queue-sort plugin, nil when the profile names none.
	queueSort framework.QueueSortPlugin
	// bind are the Bind plugins in configured order. None (a profile
	// built in a test) means the scheduler's own Binding, DefaultBinder's.
	bind []framework.BindPlugin
	// preEnqueue are the PreEnqueue plugins (SchedulingGates is the
	// queue's own).
	preEnqueue []framework.PreEnqueuePlugin
	// podGroupFeasible judge a group cycle's progress: the plugins
	// enabled at preEnqueue or permit that implement it (GangScheduling).
	podGroupFeasible []framework.PodGroupFeasiblePlugin
	// metrics records the profile's cycles (metrics.go); counters are
	// the scheduler's metrics the runtime counts in (preemption attempts).
	metrics  *profileMetrics
	counters *metrics.Metrics
	// logger logs the panics of plugins that must not stop the others.
	logger *zap.Logger
	// signatures keeps signing plugins' answers across cycles
	// (signatures.go).
	signatures signatures
	// funcs name the plugins by their methods, to blame a panic on one
	// (panics.go).
	funcs []pluginFunc
	// hints are the events each plugin registered, for the queue.
	hints map[string][]framework.ClusterEventWithHint
	// watched are the resources whose events the plugins that can reject
	// a pod registered (framework.WildCard: all of them): the informers
	// the scheduler handles events of.
	watched map[framework.EventResource]bool
	// annotate writes kube-scheduler-simulator's annotations on every
	// pod tried (Explain's simulatorAnnotations, annotations.go).
	annotate bool
}

// preFilterExtension is a PreFilter plugin's AddPod and RemovePod.
type preFilterExtension struct {
	name string
	framework.PreFilterExtensions
}

type weightedScorer struct {
	framework.ScorePlugin
	weight int64
}

// newProfile instantiates every plugin the profile names once and places
// its parts at the points the profile lists it under, and at its steps
// (framework.Registry.RunAt).
func newProfile(reg framework.Registry, p framework.Profile, sh handle) (*profile, error) {
	prof := &profile{name: p.SchedulerName, percentageOfNodesToScore: p.PercentageOfNodesToScore, counters: sh.s.metrics, logger: sh.s.logger}
	h := &profileHandle{handle: sh, prof: prof}
	if a, ok := p.Args[registry.ExplainName].(*framework.ExplainArgs); ok {
		prof.annotate = a.SimulatorAnnotations
	}
	parts := map[string][]framework.Plugin{}
	for _, name := range p.Plugins() {
		ps, err := buildPlugin(reg, &p, name, h)
		if err != nil {
			return nil, err
		}
		if ps != nil {
			parts[name] = ps
		}
	}
	hints, err := queue.ProfileHints(context.Background(), parts)
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", p.SchedulerName, err)
	}
	prof.hints = hints
	prof.watched = watchedResources(parts, hints)
	for _, name := range p.Plugins() {
		for _, pl := range parts[name] {
			if bp, ok := pl.(framework.BackgroundPlugin); ok {
				prof.background = append(prof.background, bp)
			}
			prof.funcs = append(prof.funcs, pluginFuncs(name, pl)...)
		}
	}

	if p.QueueSort != "" {
		for _, pl := range parts[p.QueueSort] {
			if qs, ok := pl.(framework.QueueSortPlugin); ok {
				prof.queueSort = qs
			}
		}
		if prof.queueSort == nil {
			return nil, fmt.Errorf("profile %q: plugin %q is not a QueueSortPlugin", p.SchedulerName, p.QueueSort)
		}
	}
	prof.bind = pluginsAt[framework.BindPlugin](p.Bind, parts)
	for _, name := range reg.RunAt(&p, framework.PointPreFilter) {
		for _, pl := range parts[name] {
			if x, ok := pl.(framework.PreFilterPlugin); ok {
				prof.preFilter = append(prof.preFilter, x)
				if ext, ok := pl.(framework.PreFilterExtensions); ok {
					prof.preFilterExt = append(prof.preFilterExt, preFilterExtension{name: name, PreFilterExtensions: ext})
				}
			}
		}
	}
	for _, name := range p.Filter {
		for _, pl := range parts[name] {
			if x, ok := pl.(framework.FilterPlugin); ok {
				prof.filter = append(prof.filter, x)
				sf, _ := pl.(framework.SlotFilter)
				prof.slotFilter = append(prof.slotFilter, sf)
			}
		}
	}
	for _, name := range reg.RunAt(&p, framework.PointPreScore) {
		for _, pl := range parts[name] {
			if x, ok := pl.(framework.PreScorePlugin); ok {
				prof.preScore = append(prof.preScore, x)
			}
		}
	}
	for _, w := range p.Score {
		for _, pl := range parts[w.Name] {
			if x, ok := pl.(framework.ScorePlugin); ok {
				prof.score = append(prof.score, weightedScorer{ScorePlugin: x, weight: w.Weight})
			}
		}
	}
	prof.postFilter = pluginsAt[framework.PostFilterPlugin](p.PostFilter, parts)
	for _, pl := range prof.postFilter {
		if x, ok := pl.(framework.PreemptionPlanner); ok {
			prof.planner = x
			break
		}
	}
	prof.preEnqueue = pluginsAt[framework.PreEnqueuePlugin](p.PreEnqueue, parts)
	prof.reserve = pluginsAt[framework.ReservePlugin](p.Reserve, parts)
	prof.permit = pluginsAt[framework.PermitPlugin](p.Permit, parts)
	for _, pl := range pluginsAt[framework.PodGroupFeasiblePlugin](append(slices.Clone(p.PreEnqueue), p.Permit...), parts) {
		if !slices.ContainsFunc(prof.podGroupFeasible, func(x framework.PodGroupFeasiblePlugin) bool { return x.Name() == pl.Name() }) {
			prof.podGroupFeasible = append(prof.podGroupFeasible, pl)
		}
	}
	prof.preBind = pluginsAt[framework.PreBindPlugin](p.PreBind, parts)
	prof.postBind = pluginsAt[framework.PostBindPlugin](p.PostBind, parts)
	return prof, nil
}

// pluginsAt returns, in the order of names, the parts of those plugins
// that implement T: one extension point's plugins.
func pluginsAt[T framework.Plugin](names []string, parts map[string][]framework.Plugin) []T {
	var out []T
	for _, name := range names {
		for _, pl := range parts[name] {
			if x, ok := pl.(T); ok {
				out = append(out, x)
			}
		}
	}
	return out
}

// filterByName returns the profile's filter plugin named name, or nil.
func (p *profile) filterByName(name string) framework.FilterPlugin {
	for _, f := range p.filter {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// buildPlugin builds the parts of the plugin p names name, with p's args
// for it or its defaults; none for a name whose behaviour is built into
// the scheduler (New is nil).
func buildPlugin(reg framework.Registry, p *framework.Profile, name string, h framework.Handle) ([]framework.Plugin, error) {
	r, ok := reg[name]
	if !ok {
		return nil, fmt.Errorf("profile %q: unknown plugin %q", p.SchedulerName, name)
	}
	if r.New == nil {
		return nil, nil
	}
	args := p.Args[name]
	if args == nil && r.NewArgs != nil {
		args = r.NewArgs()
	}
	ps, err := r.New(args, h)
	if err != nil {
		return nil, fmt.Errorf("profile %q: plugin %q: %w", p.SchedulerName, name, err)
	}
	return ps, nil
}

// watchedResources returns the resources whose events the plugins that
// can reject a pod registered: as in kube-scheduler, only those events
// can make a rejected pod schedulable, so only their informers need
// handlers. A plugin without EnqueueExtensions registered every event.
func watchedResources(parts map[string][]framework.Plugin, hints map[string][]framework.ClusterEventWithHint) map[framework.EventResource]bool {
	out := map[framework.EventResource]bool{}
	for name, ps := range parts {
		if !slices.ContainsFunc(ps, canReject) {
			continue
		}
		for _, h := range hints[name] {
			out[h.Event.Resource] = true
		}
	}
	return out
}

// canReject reports whether p implements an extension point that can
// leave a pod unscheduled. A PostFilter plugin cannot: the filters
// rejected the pod before it runs, and their events wake the pod.
func canReject(p framework.Plugin) bool {
	switch p.(type) {
	case framework.PreEnqueuePlugin, framework.PreFilterPlugin, framework.FilterPlugin,
		framework.ReservePlugin, framework.PermitPlugin, framework.PreBindPlugin:
		return true
	}
	return false
}
