package scheduler

import (
	"fmt"

	"go.uber.org/zap"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
)

// watchCustomResources watches the resources of framework.ResourceOf that
// the profiles' rejecting plugins registered events for, each with an
// informer of the dynamic factory, as kube-scheduler watches the
// resources its plugins name: an object added, updated or deleted asks
// the hints of the plugins that registered it about the pods they
// rejected. The handlers are not among those WaitForHandlersSync waits
// for: a custom resource may not be served yet (its CRD not installed),
// and scheduling must not wait for it.
func (s *Scheduler) watchCustomResources() error {
	seen := map[framework.EventResource]bool{}
	for _, prof := range s.profiles {
		for r := range prof.watched {
			gvr, ok := r.GroupVersionResource()
			if !ok || seen[r] {
				continue
			}
			seen[r] = true
			if s.dynamicFactory == nil {
				s.logger.Warn("no dynamic informer factory: the plugins' events of this resource are not watched",
					zap.String("resource", r.String()))
				continue
			}
			add := framework.ClusterEvent{Resource: r, ActionType: framework.Add}
			update := framework.ClusterEvent{Resource: r, ActionType: framework.Update}
			del := framework.ClusterEvent{Resource: r, ActionType: framework.Delete}
			_, err := s.dynamicFactory.ForResource(gvr).Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { s.Queue.MoveAllToActiveOrBackoff(add, nil, obj) },
				UpdateFunc: func(oldObj, newObj any) { s.Queue.MoveAllToActiveOrBackoff(update, oldObj, newObj) },
				DeleteFunc: func(obj any) {
					if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
						obj = d.Obj
					}
					s.Queue.MoveAllToActiveOrBackoff(del, obj, nil)
				},
			})
			if err != nil {
				return fmt.Errorf("watch %s: %w", r, err)
			}
		}
	}
	return nil
}
