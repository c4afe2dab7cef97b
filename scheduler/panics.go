package scheduler

// A plugin that panics fails the attempt of the pod it was working on,
// not the process: the pod gets an error event and backoff, and every
// other pod is scheduled as before. Each goroutine that runs plugin code
// recovers once, not once per plugin call: the scheduling cycle in
// scheduleOne (the Parallelizer raises a worker's panic again on the
// cycle's goroutine), the binding cycle in bindingCycle. Unreserve and
// PostBind, which must reach every plugin, recover per plugin. The
// plugin to blame is read from the panicking goroutine's stack, so the
// per-node loops pay nothing for it.

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
)

// pluginFunc maps the prefix of a plugin type's method names, as the
// runtime reports them ("pkg.(*T)."), to the plugin's name.
type pluginFunc struct {
	prefix, plugin string
}

// pluginFuncs returns the method name prefixes of pl's type.
func pluginFuncs(name string, pl framework.Plugin) []pluginFunc {
	t := reflect.TypeOf(pl)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	typ := t.Name()
	if typ == "" {
		return nil
	}
	if i := strings.IndexByte(typ, '['); i >= 0 {
		typ = typ[:i] + "[...]" // a generic type, as the runtime names it
	}
	pkg := t.PkgPath() + "."
	return []pluginFunc{{pkg + "(*" + typ + ").", name}, {pkg + typ + ".", name}}
}

// culprit names the plugin whose code panicked, and its method that the
// scheduler called (the outermost of the plugin's frames at the panic),
// from the panicking goroutine's stack; "" when no plugin's code was on
// it.
func (s *Scheduler) culprit(pe *framework.PanicError) (plugin, method string) {
	frames := runtime.CallersFrames(pe.Callers)
	for {
		f, more := frames.Next()
		matched := false
		for _, prof := range s.profiles {
			for _, pf := range prof.funcs {
				if strings.HasPrefix(f.Function, pf.prefix) && (plugin == "" || plugin == pf.plugin) {
					plugin, method, matched = pf.plugin, f.Function[len(pf.prefix):], true
					break
				}
			}
			if matched {
				break
			}
		}
		if (plugin != "" && !matched) || !more {
			break
		}
	}
	if i := strings.IndexByte(method, '.'); i >= 0 {
		method = method[:i] // Filter.func1 → Filter
	}
	return plugin, method
}

// panicFailure is the error a panic fails a pod's attempt with, naming
// the plugin: `running Filter plugin "X": panic: ...`.
func (s *Scheduler) panicFailure(pe *framework.PanicError) (string, error) {
	plugin, method := s.culprit(pe)
	if plugin == "" {
		return "", fmt.Errorf("scheduler: %w", pe)
	}
	return plugin, fmt.Errorf("running %s plugin %q: %w", method, plugin, pe)
}

// cyclePanicked ends a scheduling cycle in which r was raised: the pod's
// assumption, if it got that far (j), is undone, and the pod goes to
// backoff with an error event, as after any error.
func (s *Scheduler) cyclePanicked(ctx context.Context, qpi *queue.QueuedPodInfo, cycle int64, j *bindJob, r any, start time.Time) {
	pe := framework.NewPanicError(r)
	_, err := s.panicFailure(pe)
	s.logger.Error("panic in a scheduling cycle: the pod's attempt failed",
		zap.String("pod", qpi.Pod.Namespace+"/"+qpi.Pod.Name), zap.Error(err), zap.ByteString("stack", pe.Stack))
	if j != nil {
		s.unreserveAndForget(context.WithoutCancel(ctx), j)
	}
	s.handleFailure(ctx, qpi, cycle, err, start)
}

// bindingPanicked ends a binding cycle in which r was raised at point:
// before the Binding as a failure there; after it (point PostBind), the
// pod is bound, and that is all.
func (s *Scheduler) bindingPanicked(ctx context.Context, j bindJob, point string, r any) {
	pe := framework.NewPanicError(r)
	plugin, err := s.panicFailure(pe)
	s.logger.Error("panic in a binding cycle",
		zap.String("pod", j.assumed.Namespace+"/"+j.assumed.Name), zap.String("at", point),
		zap.Error(err), zap.ByteString("stack", pe.Stack))
	if point == "PostBind" {
		return
	}
	if plugin == "" && point == "Bind" {
		plugin = defaultBinderName
	}
	s.bindingFailed(ctx, j, point, framework.AsStatus(pe), plugin)
}
