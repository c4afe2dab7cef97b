package frameworktest

import (
	v1 "k8s.io/api/core/v1"
)

// AffinityCluster is the small cluster the inter-pod affinity tests share:
// n1 and n2 in zone z1, n3 in z2, n4 in no zone; every node has its
// hostname label.
func AffinityCluster() []*v1.Node {
	return []*v1.Node{
		MakeNode().Name("n1").Label(v1.LabelTopologyZone, "z1").Obj(),
		MakeNode().Name("n2").Label(v1.LabelTopologyZone, "z1").Obj(),
		MakeNode().Name("n3").Label(v1.LabelTopologyZone, "z2").Obj(),
		MakeNode().Name("n4").Obj(),
	}
}

// PodOn returns a pod named name in namespace ns, bound to node, with the
// labels kv (key, value, key, value, ...).
func PodOn(node, ns, name string, kv ...string) *PodWrapper {
	return labelled(MakePod().Namespace(ns).Name(name).Node(node), kv)
}

// IncomingPod returns the pod to schedule, named "incoming", in namespace
// ns, with the labels kv.
func IncomingPod(ns string, kv ...string) *PodWrapper {
	return labelled(MakePod().Namespace(ns).Name("incoming"), kv)
}

func labelled(p *PodWrapper, kv []string) *PodWrapper {
	for i := 0; i+1 < len(kv); i += 2 {
		p.Label(kv[i], kv[i+1])
	}
	return p
}
