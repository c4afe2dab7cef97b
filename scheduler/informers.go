package scheduler

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
)

// NewInformerFactory returns the shared informer factory yardmaster uses:
// no periodic resync; managedFields dropped from every object before it is
// cached (they are large and nothing here reads them); and a pod informer
// that leaves out finished pods, which hold no resources. A pod that
// finishes therefore looks deleted to the handlers, which is what frees its
// capacity.
//
// Every optional resource apis does not serve gets an informer that lists
// nothing and never asks the server, so that what reads it (a lister, a
// handler) finds an empty store that has synced, where an informer of the
// resource would retry its list forever.
func NewInformerFactory(client kubernetes.Interface, apis ServedAPIs) informers.SharedInformerFactory {
	f := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTransform(func(obj any) (any, error) {
			if m, ok := obj.(metav1.Object); ok {
				m.SetManagedFields(nil)
			}
			return obj, nil
		}))
	f.InformerFor(&v1.Pod{}, func(c kubernetes.Interface, resync time.Duration) toolscache.SharedIndexInformer {
		selector := fields.AndSelectors(
			fields.OneTermNotEqualSelector("status.phase", string(v1.PodSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(v1.PodFailed)),
		).String()
		return coreinformers.NewFilteredPodInformer(c, metav1.NamespaceAll, resync,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc},
			func(o *metav1.ListOptions) { o.FieldSelector = selector })
	})
	for gvr, r := range optionalResources {
		if apis.Serves(gvr) {
			continue
		}
		f.InformerFor(r.obj, func(kubernetes.Interface, time.Duration) toolscache.SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(notServed{list: r.list}, r.obj, 0,
				toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
		})
	}
	return f
}
