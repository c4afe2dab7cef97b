package priorities

import (
	"bytes"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// The scorers that sign must sign everything they read of a pod, and only
// that: see framework.PodSigner.
func TestScorersSignWhatTheyRead(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi")
	}
	// Another replica: a different name, labels and image, nothing else.
	replica := base().Name("b").Label("pod-template-hash", "x").Obj()
	replica.Spec.Containers[0].Image = "web:2"
	fit, ba := newResourceScorers(t)
	requests := []frameworktest.SignCase{
		{Name: "replica", A: base().Obj(), B: replica, Same: true},
		{Name: "cpu", A: base().Obj(), B: base().Req("600m", "1Gi").Obj()},
		{Name: "memory", A: base().Obj(), B: base().Req("500m", "2Gi").Obj()},
		{Name: "second container", A: base().Obj(), B: base().Container("100m", "").Obj()},
	}
	zone := func(weight int32, zone string) *v1.Pod {
		return base().PreferredNodeAffinity(weight, frameworktest.MakeNodeSelectorTerm().In("zone", zone).Obj()).Obj()
	}
	cases := map[framework.PodSigner][]frameworktest.SignCase{
		fit: requests,
		ba:  requests,
		NewTaintToleration(): {
			{Name: "replica", A: base().Obj(), B: replica, Same: true},
			{Name: "toleration", A: base().Obj(), B: base().Toleration("spot", v1.TolerationOpExists, "", v1.TaintEffectPreferNoSchedule).Obj()},
		},
		mustNodeAffinity(t): {
			{Name: "replica", A: zone(10, "a"), B: func() *v1.Pod { p := zone(10, "a"); p.Name = "b"; return p }(), Same: true},
			{Name: "weight", A: zone(10, "a"), B: zone(20, "a")},
			{Name: "term", A: zone(10, "a"), B: zone(10, "b")},
			{Name: "nodeSelector is the filter's", A: zone(10, "a"), B: func() *v1.Pod { p := zone(10, "a"); p.Spec.NodeSelector = map[string]string{"disk": "ssd"}; return p }(), Same: true},
		},
	}
	images := func(names ...string) *v1.Pod { return base().ContainerImages(names...).Obj() }
	il := newImageLocality(t, 3)
	cases[il] = []frameworktest.SignCase{
		{Name: "replica", A: images("web:1"), B: func() *v1.Pod { p := images("web:1"); p.Name = "b"; return p }(), Same: true},
		{Name: "image", A: images("web:1"), B: images("web:2")},
		{Name: "containers", A: images("web:1"), B: images("web:1", "web:1")},
		// An image volume widens the score's range, wherever its image is.
		{Name: "image volume", A: images("web:1"), B: base().ContainerImages("web:1").ImageVolume("data:1").Obj()},
	}
	nodes := keptAnswersSnapshot()
	for pl, cs := range cases {
		frameworktest.CheckSigning(t, pl, cs)
		// What the signatures are for: pods signed alike get the same
		// scores, on nodes that score the pods of the cases apart.
		var pods []*v1.Pod
		for _, c := range cs {
			pods = append(pods, c.A, c.B)
		}
		frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
	}
	// ImageLocality scales by the number of nodes: it signs it.
	a, _ := frameworktest.SignPod(t, il, images("web:1"))
	b, _ := frameworktest.SignPod(t, newImageLocality(t, 4), images("web:1"))
	if bytes.Equal(a, b) {
		t.Error("ImageLocality signs alike on 3 and 4 nodes")
	}
}

// keptAnswersSnapshot is nodes that score apart the pods of
// TestScorersSignWhatTheyRead: of different sizes and use, tainted,
// labelled, holding images.
func keptAnswersSnapshot() framework.NodeInfoLister {
	return frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Label("zone", "a").Capacity("4", "8Gi", 110).Image(500<<20, "web:1").Obj(),
		frameworktest.MakeNode().Name("n2").Label("zone", "b").Capacity("2", "16Gi", 110).Image(300<<20, "web:2", "data:1").Obj(),
		frameworktest.MakeNode().Name("spot").Capacity("8", "8Gi", 110).Taint("spot", "", v1.TaintEffectPreferNoSchedule).Obj(),
	}, []*v1.Pod{
		frameworktest.MakePod().Name("busy").Node("n1").Req("1500m", "2Gi").Obj(),
	})
}

func newImageLocality(t *testing.T, nodes int) *ImageLocality {
	t.Helper()
	var ns []*v1.Node
	for i := range nodes {
		ns = append(ns, frameworktest.MakeNode().Name(fmt.Sprint("n", i)).Obj())
	}
	pl, err := NewImageLocality(frameworktest.NewHandle(frameworktest.NewSnapshot(ns, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func mustNodeAffinity(t *testing.T) *NodeAffinity {
	t.Helper()
	pl, err := NewNodeAffinity(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}
