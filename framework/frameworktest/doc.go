// Package frameworktest is the test kit of yardmaster's plugin SDK: what
// the tests of a plugin written on package framework need, whether the
// plugin lives in this module or in another one. yardmaster's own plugins
// are tested with it, so their tests (predicates/, priorities/) are
// examples of its use.
//
//   - Builders for the objects plugins read: MakePod and MakeNode, node
//     selector terms, pod affinity terms, topology spread constraints,
//     claims, volumes, storage classes, CSI objects. Every builder method
//     returns the builder, and Obj returns the object.
//   - NewSnapshot: the snapshot a cycle reads, built by the scheduler's
//     cache from nodes and the pods on them.
//   - NewHandle: a framework.Handle over a snapshot, with informers over
//     a fake clientset; AddObjects fills their listers, with nothing to
//     start or sync.
//   - CheckSigning and CheckKeptAnswers: the contract of a
//     framework.PodSigner, whose answers the scheduler keeps and gives to
//     pods that sign alike.
//   - CheckHints: what the queue decides, through a plugin's
//     framework.EnqueueExtensions, for a pod the plugin rejected when a
//     cluster event arrives (NodeUpdate and the other events as the
//     informer handlers raise them).
//   - RunScorer: a scorer's PreScore, Score on every node and
//     NormalizeScore, as a cycle runs them, with the raw and normalized
//     scores.
//
// The test of a filter, NodePool of examples/out-of-tree, which keeps a
// pod labelled with a pool on the nodes of that pool:
//
//	func TestNodePool(t *testing.T) {
//		nodes := []*v1.Node{
//			frameworktest.MakeNode().Name("a").Label(nodepool.DefaultPoolLabel, "team-a").Obj(),
//			frameworktest.MakeNode().Name("b").Label(nodepool.DefaultPoolLabel, "team-b").Obj(),
//		}
//		snapshot := frameworktest.NewSnapshot(nodes, nil)
//		pl := nodepool.New(nodepool.NewArgs())
//		web := frameworktest.MakePod().Name("web").Label(nodepool.DefaultPoolLabel, "team-a").Obj()
//
//		// Filter, after PreFilter as in a cycle.
//		state := framework.NewCycleState()
//		pl.PreFilter(context.Background(), state, web, snapshot.List())
//		for node, want := range map[string][]string{"a": nil, "b": {nodepool.ReasonNotInPool}} {
//			ni, _ := snapshot.Get(node)
//			if got := pl.Filter(context.Background(), state, web, ni).Reasons(); !slices.Equal(got, want) {
//				t.Errorf("node %s: Filter says %q, want %q", node, got, want)
//			}
//		}
//
//		// Pods of one pool sign alike, and must get the same answers.
//		replica := frameworktest.MakePod().Name("web-2").Label(nodepool.DefaultPoolLabel, "team-a").Req("1", "").Obj()
//		other := frameworktest.MakePod().Name("db").Label(nodepool.DefaultPoolLabel, "team-b").Obj()
//		frameworktest.CheckKeptAnswers(t, pl, snapshot, []*v1.Pod{web, replica, other})
//	}
//
// A test that runs the whole scheduling cycle over a profile, the
// plugin's with yardmaster's built-in ones, uses package
// framework/frameworktest/cycletest.
package frameworktest
