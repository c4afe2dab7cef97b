package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// TestVolumeLayout checks the volumes workload's storage: every pod's claim
// fits every volume, the volumes are spread evenly, each pinned by hostname
// to a node that carries that hostname, and the layout is the same every
// time.
func TestVolumeLayout(t *testing.T) {
	const nodes, perNode = 30, 2
	w, _ := workloadByName("volumes")
	if count := w.count(sizes{pods: 5000, nodes: nodes}); count != nodes {
		t.Errorf("count without -volume-pods = %d, want one pod per node, %d", count, nodes)
	}
	count := w.count(sizes{pods: 5000, volumePods: nodes * perNode, nodes: nodes})
	if count != nodes*perNode {
		t.Fatalf("count with -volume-pods %d = %d", nodes*perNode, count)
	}
	if c := benchClass(); c.Provisioner != "kubernetes.io/no-provisioner" || c.VolumeBindingMode == nil || *c.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Errorf("class %+v, want WaitForFirstConsumer without a provisioner", c)
	}

	onNode := map[string]int{}
	for i := range count {
		pv, claim := benchVolume(i, nodes), benchClaim(i, "ns")
		if diff := cmp.Diff(pv, benchVolume(i, nodes)); diff != "" {
			t.Fatalf("volume %d differs between two calls (-first +second):\n%s", i, diff)
		}
		pod := w.pod(i, nodes)
		if got := pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName; got != claim.Name {
			t.Errorf("pod %d mounts claim %q, want %q", i, got, claim.Name)
		}
		size, want := pv.Spec.Capacity[v1.ResourceStorage], claim.Spec.Resources.Requests[v1.ResourceStorage]
		if size.Cmp(want) < 0 || pv.Spec.StorageClassName != *claim.Spec.StorageClassName || pv.Spec.AccessModes[0] != claim.Spec.AccessModes[0] {
			t.Errorf("volume %d (%s, class %q, %v) does not fit claim %d (%s, class %q, %v)", i, size.String(), pv.Spec.StorageClassName, pv.Spec.AccessModes, i, want.String(), *claim.Spec.StorageClassName, claim.Spec.AccessModes)
		}
		expr := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
		if expr.Key != v1.LabelHostname || len(expr.Values) != 1 {
			t.Fatalf("volume %d node affinity %+v, want one hostname", i, expr)
		}
		host := expr.Values[0]
		if got := benchNode(i % nodes).Labels[v1.LabelHostname]; got != host {
			t.Errorf("volume %d pinned to hostname %q; node %d's hostname label is %q", i, host, i%nodes, got)
		}
		onNode[host]++
	}
	if len(onNode) != nodes {
		t.Errorf("volumes on %d nodes, want all %d", len(onNode), nodes)
	}
	for host, n := range onNode {
		if n != perNode {
			t.Errorf("%d volumes on %s, want %d", n, host, perNode)
		}
	}
}
