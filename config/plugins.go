package config

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// This file resolves a profile's plugins the way kube-scheduler v1 does
// (pkg/scheduler/apis/config/v1/default_plugins.go mergePluginSet, and
// the framework's expandMultiPointPlugins and getScoreWeights):
//
//  1. The default plugin set is a multiPoint list (registry.DefaultPlugins).
//     Each point's custom set is merged into its default set: a disabled
//     name (or "*", all of them) drops defaults; an enabled plugin that is
//     also a default replaces it in place (its weight included, so an
//     enabled entry without weight resets the weight to 1); other enabled
//     plugins are appended in file order. Only multiPoint has defaults.
//  2. Each extension point gets, in this order: plugins enabled at that
//     point that multiPoint also enables (in the point's order), then the
//     other multiPoint plugins that implement the point and are not
//     disabled there, then the rest of the point's own plugins. "*" under
//     a point's disabled keeps multiPoint out of that point altogether.
//  3. A score plugin's weight is the first found in score.enabled, then in
//     the merged multiPoint list; unset is 1.

// maxWeight is kube-scheduler's bound on a plugin weight (its type is int32).
const maxWeight = math.MaxInt32

// wildcard, as a disabled name, disables every default plugin of a point.
const wildcard = "*"

// kubeSchedulerPlugins are in-tree kube-scheduler v1 plugins that yardmaster
// does not have (until a Registration adds them; the registry is asked
// first). Disabling one is accepted: it is not running. Enabling one is an
// error that says it is not implemented rather than "unknown".
// DeferredPodScheduling is kube-scheduler v1.37's, for pods whose in-place
// resize is deferred (alpha gate InPlacePodVerticalScalingSchedulerPreemption,
// off by default: the plugin then does nothing).
var kubeSchedulerPlugins = []string{"DeferredPodScheduling"}

// removedPlugins are plugins kube-scheduler has removed, with what to do
// instead. Disabling one is accepted; anything else is an error carrying
// the hint.
var removedPlugins = map[string]string{
	"NodeResourcesLeastAllocated": "removed from kube-scheduler (v1beta2): delete it and configure NodeResourcesFit (enabled by default) with pluginConfig args scoringStrategy: {type: LeastAllocated, resources: <its resources>}; give its weight to NodeResourcesFit",
	"NodeResourcesMostAllocated":  "removed from kube-scheduler (v1beta2): delete it and configure NodeResourcesFit (enabled by default) with pluginConfig args scoringStrategy: {type: MostAllocated, resources: <its resources>}; give its weight to NodeResourcesFit",
	"RequestedToCapacityRatio":    "removed from kube-scheduler (v1beta2): delete it and configure NodeResourcesFit with pluginConfig args scoringStrategy: {type: RequestedToCapacityRatio, resources: <its resources>, requestedToCapacityRatio: {shape: <its shape>}}; give its weight to NodeResourcesFit",
	"NodeLabel":                   "removed from kube-scheduler (v1beta2): delete it; for required labels use the pods' nodeSelector or node affinity (NodeAffinity)",
	"ServiceAffinity":             "removed from kube-scheduler (v1beta2): delete it; use pod affinity instead",
	"NodePreferAvoidPods":         "removed from kube-scheduler (v1beta3): delete it; use taints (TaintToleration) instead",
	"SelectorSpread":              "removed from kube-scheduler (v1): delete it; kube-scheduler replaced it with PodTopologySpread's default constraints",
	"AzureDiskLimits":             "removed from kube-scheduler (v1): delete it; NodeVolumeLimits checks CSI volume limits from CSINode",
	"CinderLimits":                "removed from kube-scheduler (v1): delete it; NodeVolumeLimits checks CSI volume limits from CSINode",
	"EBSLimits":                   "removed from kube-scheduler (v1): delete it; NodeVolumeLimits checks CSI volume limits from CSINode",
	"GCEPDLimits":                 "removed from kube-scheduler (v1): delete it; NodeVolumeLimits checks CSI volume limits from CSINode",
}

// invalidInV1 are the plugins kube-scheduler's v1 validation refuses by
// name wherever they appear (enabled at a point, or in pluginConfig); the
// other removed plugins it refuses only when enabled, as unknown plugins.
var invalidInV1 = []string{"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"}

// catalog is what a file's plugin names are looked up in: the registry.
type catalog struct {
	reg framework.Registry
}

func newCatalog(reg framework.Registry) *catalog { return &catalog{reg: reg} }

func (c *catalog) lookup(name string) (framework.Registration, bool) {
	r, ok := c.reg[name]
	return r, ok
}

// unknown explains why name is not a plugin yardmaster can run.
func (c *catalog) unknown(name string) string {
	if hint, ok := removedPlugins[name]; ok {
		return fmt.Sprintf("plugin %q was %s", name, hint)
	}
	if slices.Contains(kubeSchedulerPlugins, name) {
		return fmt.Sprintf("plugin %q is a kube-scheduler plugin that yardmaster does not implement; remove it", name)
	}
	msg := fmt.Sprintf("unknown plugin %q", name)
	best, bestDist := "", 4
	for n := range c.reg {
		if d := editDistance(strings.ToLower(n), strings.ToLower(name)); d < bestDist || (d == bestDist && n < best) {
			best, bestDist = n, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg + "; yardmaster has: " + strings.Join(c.names(), ", ")
}

// disableable reports whether name may appear under disabled: anything
// yardmaster or kube-scheduler knows, running or not.
func (c *catalog) disableable(name string) bool {
	_, known := c.lookup(name)
	_, removed := removedPlugins[name]
	return known || removed || slices.Contains(kubeSchedulerPlugins, name)
}

func (c *catalog) names() []string {
	var out []string
	for n := range c.reg {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// implementedPoints lists the points a file may name r at, for messages.
func implementedPoints(r framework.Registration) string {
	return strings.Join(r.Points, ", ")
}

// entry is an enabled plugin with where it came from.
type entry struct {
	name   string
	weight *int64
	// path is the entry's field path in the file; empty for a default.
	path string
}

// pointPlugins is one point's custom set, checked.
type pointPlugins struct {
	enabled  []entry
	disabled map[string]bool
}

// resolvePlugins turns a profile's plugin sets into the plugin lists of
// the points yardmaster runs. path is the profile's path. built lists the
// plugins kube-scheduler would build for the profile: every plugin an
// enabled list names, multiPoint's merged with the defaults included, even
// one that every point it implements disables (its pluginsNeeded).
func resolvePlugins(cat *catalog, plugins *filePlugins, path string, p *problems) (prof framework.Profile, built []string, ok bool) {
	if plugins == nil {
		plugins = &filePlugins{}
	}
	before := len(p.list)
	custom := map[string]pointPlugins{}
	for _, ps := range plugins.sets() {
		custom[ps.point] = checkSet(cat, ps.point, ps.set, childPath(childPath(path, "plugins"), ps.point), p)
	}
	if len(p.list) > before {
		// Entries in error were dropped; resolving without them would only
		// add confusing follow-on problems.
		return prof, nil, false
	}

	var defaults []entry
	for _, wp := range registry.DefaultPlugins() {
		e := entry{name: wp.Name}
		if wp.Weight != 0 {
			w := wp.Weight
			e.weight = &w
		}
		defaults = append(defaults, e)
	}
	multiPoint := mergeSet(defaults, custom[framework.PointMultiPoint])
	for _, e := range multiPoint {
		built = append(built, e.name)
	}
	for _, ps := range custom {
		for _, e := range ps.enabled {
			if !slices.Contains(built, e.name) {
				built = append(built, e.name)
			}
		}
	}

	expand := func(point string) []string {
		own := custom[point]
		names := make([]string, len(own.enabled))
		for i, e := range own.enabled {
			names[i] = e.name
		}
		if own.disabled[wildcard] {
			return names
		}
		var override, fromMulti []string
		for _, e := range multiPoint {
			r, _ := cat.lookup(e.name)
			switch {
			case !r.Implements(point) || own.disabled[e.name]:
			case slices.Contains(names, e.name):
				override = append(override, e.name)
			default:
				fromMulti = append(fromMulti, e.name)
			}
		}
		out := make([]string, 0, len(names)+len(fromMulti))
		for _, n := range names {
			if slices.Contains(override, n) {
				out = append(out, n)
			}
		}
		out = append(out, fromMulti...)
		for _, n := range names {
			if !slices.Contains(override, n) {
				out = append(out, n)
			}
		}
		if len(out) == 0 {
			return nil // as registry.ExpandMultiPoint leaves a point nobody implements
		}
		return out
	}

	pluginsPath := childPath(path, "plugins")
	// As kube-scheduler's framework runtime: exactly one queue-sort
	// plugin.
	switch got := expand(framework.PointQueueSort); {
	case len(got) == 0:
		p.add(childPath(pluginsPath, framework.PointQueueSort), "no queue-sort plugin is enabled: enable one (%s is the default), e.g. under multiPoint.enabled", registry.PrioritySortName)
	case len(got) > 1:
		p.add(childPath(pluginsPath, framework.PointQueueSort), "only one queue-sort plugin can be enabled, got %s", strings.Join(got, ", "))
	default:
		prof.QueueSort = got[0]
	}
	// And at least one bind plugin.
	if prof.Bind = expand(framework.PointBind); len(prof.Bind) == 0 {
		p.add(childPath(pluginsPath, framework.PointBind), "no bind plugin is enabled: enable one (%s is the default), e.g. under multiPoint.enabled", registry.DefaultBinderName)
	}
	// preEnqueue: SchedulingGates is built into the queue and always on;
	// disabling it is accepted and changes nothing (the API server refuses
	// to bind a pod that still has scheduling gates). The other plugins
	// there (DynamicResources, DefaultPreemption) are the profile's.
	for _, n := range expand(framework.PointPreEnqueue) {
		if n != registry.SchedulingGatesName {
			prof.PreEnqueue = append(prof.PreEnqueue, n)
		}
	}

	prof.PreFilter = expand(framework.PointPreFilter)
	prof.Filter = expand(framework.PointFilter)
	prof.PreScore = expand(framework.PointPreScore)
	prof.PostFilter = expand(framework.PointPostFilter)
	prof.Reserve = expand(framework.PointReserve)
	prof.Permit = expand(framework.PointPermit)
	prof.PreBind = expand(framework.PointPreBind)
	prof.PostBind = expand(framework.PointPostBind)
	names := expand(framework.PointScore)
	weights := make([]int64, len(names))
	paths := make([]string, len(names))
	for i, name := range names {
		weights[i], paths[i] = scoreWeight(name, custom[framework.PointScore].enabled, multiPoint)
		prof.Score = append(prof.Score, framework.WeightedPlugin{Name: name, Weight: weights[i]})
	}
	if i := scoreOverflowAt(weights); i >= 0 {
		p.add(cmpOr(paths[i], childPath(pluginsPath, framework.PointScore)), "the score plugins' weights add up to more than %d: the total score could overflow", int64(math.MaxInt64)/framework.MaxNodeScore)
	}
	return prof, built, len(p.list) == before
}

// scoreOverflowAt is kube-scheduler's getScoreWeights check: the weighted
// maximum scores of all score plugins must add up without overflowing
// int64. It returns the index of the weight that overflows, or -1. With
// weights capped at maxWeight no profile reaches it; it stays as the
// guarantee the scheduler's arithmetic relies on.
func scoreOverflowAt(weights []int64) int {
	var total int64
	for i, w := range weights {
		if w > (math.MaxInt64-total)/framework.MaxNodeScore {
			return i
		}
		total += w * framework.MaxNodeScore
	}
	return -1
}

// scoreWeight returns a score plugin's weight and the path it was set at.
func scoreWeight(name string, score, multiPoint []entry) (int64, string) {
	for _, list := range [][]entry{score, multiPoint} {
		for _, e := range list {
			if e.name != name {
				continue
			}
			if e.weight == nil {
				return 1, e.path
			}
			return *e.weight, childPath(e.path, "weight")
		}
	}
	return 1, ""
}

// mergeSet is kube-scheduler's mergePluginSet: the default enabled list
// with disabled names dropped and re-enabled ones replaced in place, then
// the other custom enabled plugins in order.
func mergeSet(defaults []entry, custom pointPlugins) []entry {
	var out []entry
	replaced := map[int]bool{}
	if !custom.disabled[wildcard] {
		for _, d := range defaults {
			if custom.disabled[d.name] {
				continue
			}
			if i := slices.IndexFunc(custom.enabled, func(e entry) bool { return e.name == d.name }); i >= 0 {
				d = custom.enabled[i]
				replaced[i] = true
			}
			out = append(out, d)
		}
	}
	for i, e := range custom.enabled {
		if !replaced[i] {
			out = append(out, e)
		}
	}
	return out
}

// checkSet checks one point's set and returns its usable entries. The
// checks are kube-scheduler's (the plugin exists, implements the point and
// is enabled once there) plus yardmaster's (weights only on score plugins,
// within bounds; built-in points keep their built-in plugin).
func checkSet(cat *catalog, point string, set *pluginSet, path string, p *problems) pointPlugins {
	out := pointPlugins{disabled: map[string]bool{}}
	for i, pl := range set.Disabled {
		ep := indexPath(childPath(path, "disabled"), i)
		switch {
		case pl.Name == "":
			// kube-scheduler accepts it, and it disables nothing.
			p.warn(childPath(ep, "name"), "ignored: an entry without a name disables nothing (kube-scheduler ignores it too); name the plugin to disable, or %q for all default plugins", wildcard)
			continue
		case pl.Name != wildcard && !cat.disableable(pl.Name):
			// kube-scheduler accepts it: disabling what does not run
			// changes nothing. A typo, though, leaves the plugin meant
			// running, hence the warning.
			p.warn(childPath(ep, "name"), "ignored: %s", cat.unknown(pl.Name))
		case pl.Name != wildcard && point != framework.PointMultiPoint:
			// kube-scheduler accepts it too, and ignores it.
			if r, ok := cat.lookup(pl.Name); ok && !r.Implements(point) {
				msg := fmt.Sprintf("ignored: plugin %q does not implement %s (it implements %s): it is not there to disable", pl.Name, point, implementedPoints(r))
				if serves := r.Steps[point]; serves != "" {
					msg += fmt.Sprintf("; yardmaster's own %s step of it runs wherever its %s does", point, serves)
				}
				p.warn(childPath(ep, "name"), "%s", msg)
			}
		}
		if pl.Weight != nil {
			p.warn(childPath(ep, "weight"), "ignored: a disabled plugin has no weight (kube-scheduler ignores it too)")
		}
		out.disabled[pl.Name] = true
	}
	first := map[string]int{}
	for i, pl := range set.Enabled {
		ep := indexPath(childPath(path, "enabled"), i)
		np := childPath(ep, "name")
		if pl.Name == "" {
			p.add(np, "required")
			continue
		}
		if pl.Name == wildcard {
			p.add(np, "%q only means something under disabled", wildcard)
			continue
		}
		r, ok := cat.lookup(pl.Name)
		if !ok {
			p.add(np, "%s", cat.unknown(pl.Name))
			continue
		}
		if point != framework.PointMultiPoint && !r.Implements(point) {
			if podGroupPoints[point] {
				// kube-scheduler's DefaultPreemption, say, is a
				// podGroupPostFilter plugin; no plugin is one here.
				p.add(np, "plugin %q cannot run at %s: yardmaster does not implement pod-group scheduling", pl.Name, point)
			} else {
				p.add(np, "plugin %q does not implement %s (it implements %s)", pl.Name, point, implementedPoints(r))
			}
			continue
		}
		if j, dup := first[pl.Name]; dup {
			p.add(np, "plugin %q is enabled twice at %s (also at enabled[%d])", pl.Name, point, j)
			continue
		}
		first[pl.Name] = i
		weight := pl.Weight
		if weight != nil {
			// As kube-scheduler: a weight is read only for a score plugin
			// under score or multiPoint, and 0 there means 1, as unset.
			wp := childPath(ep, "weight")
			w := *weight
			switch {
			case point != framework.PointScore && point != framework.PointMultiPoint:
				p.warn(wp, "ignored: a weight applies only under score or multiPoint (kube-scheduler ignores it too)")
				weight = nil
			case !r.Implements(framework.PointScore):
				p.warn(wp, "ignored: plugin %q does not score, so it has no weight (kube-scheduler ignores it too)", pl.Name)
				weight = nil
			case w == 0:
				weight = nil
			case w < 0:
				// kube-scheduler refuses a negative weight through its
				// overflow check, unless no score plugin comes after it.
				p.add(wp, "must be > 0 (got %d); to turn a score plugin off, disable it under score", w)
				continue
			case w > maxWeight:
				p.add(wp, "must be at most %d (got %d)", maxWeight, w)
				continue
			}
		}
		out.enabled = append(out.enabled, entry{name: pl.Name, weight: weight, path: ep})
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
