package controlplane

// Names of the kube-controller-manager v1.37 controllers that make
// workloads behave as in a cluster, as its --controllers flag and its
// /healthz checks spell them.
const (
	// DeploymentController creates and scales a Deployment's ReplicaSets
	// and rolls them out.
	DeploymentController = "deployment-controller"
	// ReplicaSetController creates and deletes a ReplicaSet's pods.
	ReplicaSetController = "replicaset-controller"
	// StatefulSetController creates a StatefulSet's pods in order, and
	// the claims of its volumeClaimTemplates.
	StatefulSetController = "statefulset-controller"
	// JobController creates a Job's pods and counts the ones that finish;
	// it tracks them with the batch.kubernetes.io/job-tracking finalizer.
	JobController = "job-controller"
	// GarbageCollectorController deletes objects whose owners are gone: a
	// deleted Deployment's ReplicaSets and their pods, a deleted Job's pods.
	GarbageCollectorController = "garbage-collector-controller"
	// NamespaceController empties and finalizes deleted namespaces.
	NamespaceController = "namespace-controller"
	// NodeLifecycleController watches node Leases and Ready conditions:
	// it marks a node whose Lease is not renewed for its
	// --node-monitor-grace-period (50s) Unknown and taints it
	// unreachable (NoSchedule and NoExecute), and removes the not-ready
	// taint that admission puts on a new node once it is Ready.
	NodeLifecycleController = "node-lifecycle-controller"
	// TaintEvictionController evicts pods from nodes with NoExecute taints
	// they do not tolerate, after their tolerationSeconds (300s for the
	// not-ready and unreachable taints, which admission adds to every
	// pod). It used to run inside NodeLifecycleController; since v1.36 it is
	// a controller of its own (feature SeparateTaintEvictionController).
	TaintEvictionController = "taint-eviction-controller"
	// PodGarbageCollectorController deletes pods bound to nodes that no
	// longer exist, and terminated pods past --terminated-pod-gc-threshold.
	PodGarbageCollectorController = "pod-garbage-collector-controller"
)

// WorkloadControllers returns the controllers that make the objects users
// create behave as in a cluster, beside KWOK (Options.KWOK) as the nodes'
// kubelet: Deployments, ReplicaSets, StatefulSets and Jobs get their pods;
// what is deleted takes its dependents and namespaces with it; a node
// whose Lease stops is marked Unknown, tainted, and its pods are evicted;
// pods of deleted nodes are removed.
//
// They run as the admin user (kube-controller-manager runs with
// --use-service-account-credentials=false), so no per-controller service
// account, token or RBAC binding is needed; the ServiceAccount admission
// plugin is off, so their pods need no ServiceAccount either.
func WorkloadControllers() []string {
	return []string{
		DeploymentController,
		ReplicaSetController,
		StatefulSetController,
		JobController,
		GarbageCollectorController,
		NamespaceController,
		NodeLifecycleController,
		TaintEvictionController,
		PodGarbageCollectorController,
	}
}
