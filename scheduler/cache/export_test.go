package cache

import "fmt"

// What the external tests (cache_test.go, which builds its pods and nodes
// with framework/frameworktest, an import this package cannot make) may
// check of the snapshot's insides.

// CheckNodeSets returns an error when a list of nodes with affinity pods
// and its index disagree: a node listed at one place and indexed at
// another, or more indexed than listed.
func (s *Snapshot) CheckNodeSets() error {
	for _, ns := range []nodeSet{s.withAffinity, s.withReqAnti} {
		for i, ni := range ns.list {
			if ns.index[ni] != i {
				return fmt.Errorf("%s at %d, indexed at %d", ni.Node().Name, i, ns.index[ni])
			}
		}
		if len(ns.index) != len(ns.list) {
			return fmt.Errorf("%d indexed, %d listed", len(ns.index), len(ns.list))
		}
	}
	return nil
}
