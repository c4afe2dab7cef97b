package scheduler

import (
	"time"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/metrics"
)

// profileMetrics records one profile's cycles: attempts and extension
// points always, each plugin's own duration in sampled cycles only. The
// timer slices are parallel to the profile's plugin lists (prof.preFilter,
// prof.filter, ...), so a sampled cycle finds a plugin's timer by index,
// with no lookup.
type profileMetrics struct {
	*metrics.Profile
	preFilter, filter, preScore []*metrics.PluginTimer
	// score and normalize are parallel to prof.score.
	score, normalize []*metrics.PluginTimer
	// reserve and unreserve are parallel to prof.reserve, and so on for
	// the binding cycle's other points.
	reserve, unreserve, permit []*metrics.PluginTimer
	preBindPreFlight, preBind  []*metrics.PluginTimer
	postBind                   []*metrics.PluginTimer
}

// instrumentProfile resolves everything prof's cycles record.
func instrumentProfile(m *metrics.Metrics, prof *profile) *profileMetrics {
	pm := &profileMetrics{Profile: m.Profile(prof.name)}
	for _, pl := range prof.preFilter {
		pm.preFilter = append(pm.preFilter, m.PluginTimer(pl.Name(), metrics.PreFilter))
	}
	for _, pl := range prof.filter {
		pm.filter = append(pm.filter, m.PluginTimer(pl.Name(), metrics.Filter))
	}
	for _, pl := range prof.preScore {
		pm.preScore = append(pm.preScore, m.PluginTimer(pl.Name(), metrics.PreScore))
	}
	for _, sc := range prof.score {
		pm.score = append(pm.score, m.PluginTimer(sc.Name(), metrics.Score))
		pm.normalize = append(pm.normalize, m.PluginTimer(sc.Name(), metrics.ScoreExtensionNormalize))
	}
	for _, pl := range prof.reserve {
		pm.reserve = append(pm.reserve, m.PluginTimer(pl.Name(), metrics.Reserve))
		pm.unreserve = append(pm.unreserve, m.PluginTimer(pl.Name(), metrics.Unreserve))
	}
	for _, pl := range prof.permit {
		pm.permit = append(pm.permit, m.PluginTimer(pl.Name(), metrics.Permit))
	}
	for _, pl := range prof.preBind {
		pm.preBindPreFlight = append(pm.preBindPreFlight, m.PluginTimer(pl.Name(), metrics.PreBindPreFlight))
		pm.preBind = append(pm.preBind, m.PluginTimer(pl.Name(), metrics.PreBind))
	}
	for _, pl := range prof.postBind {
		pm.postBind = append(pm.postBind, m.PluginTimer(pl.Name(), metrics.PostBind))
	}
	return pm
}

// timers returns the timers of point when the cycle is sampled, else nil:
// callers time a plugin only when handed a non-nil slice.
func (pm *profileMetrics) timers(sampled bool, point metrics.ExtensionPoint) []*metrics.PluginTimer {
	if pm == nil || !sampled {
		return nil
	}
	switch point {
	case metrics.PreFilter:
		return pm.preFilter
	case metrics.Filter:
		return pm.filter
	case metrics.PreScore:
		return pm.preScore
	case metrics.Score:
		return pm.score
	case metrics.ScoreExtensionNormalize:
		return pm.normalize
	case metrics.Reserve:
		return pm.reserve
	case metrics.Unreserve:
		return pm.unreserve
	case metrics.Permit:
		return pm.permit
	case metrics.PreBindPreFlight:
		return pm.preBindPreFlight
	case metrics.PreBind:
		return pm.preBind
	case metrics.PostBind:
		return pm.postBind
	}
	return nil
}

// observe records one extension point of a cycle of prof, which may be a
// profile built without metrics (tests build bare profiles).
func (prof *profile) observe(point metrics.ExtensionPoint, code framework.Code, start time.Time) {
	if prof.metrics != nil {
		prof.metrics.ExtensionPoint(point, code, time.Since(start))
	}
}

// startPlugin returns when a plugin call starts if timers (the sampled
// cycle's, else nil) are given; an unsampled cycle does not read the clock.
func startPlugin(timers []*metrics.PluginTimer) time.Time {
	if timers == nil {
		return time.Time{}
	}
	return time.Now()
}

// endPlugin records the call of plugin i that began at start and returns
// when it ended, which is when the next plugin in a row starts: chaining
// the calls halves the clock reads, which are most of a sampled cycle's
// cost.
func endPlugin(timers []*metrics.PluginTimer, i int, code framework.Code, start time.Time) time.Time {
	if timers == nil {
		return start
	}
	now := time.Now()
	timers[i].Observe(code, now.Sub(start))
	return now
}
