package framework

// MatchNodeLabels reports whether a node with the given labels matches any
// term, looking at labels only: matchFields are ignored, as for a node
// without a name. This is how kube-scheduler checks a PersistentVolume's
// spec.nodeAffinity (component-helpers' CheckNodeAffinity builds a node
// from the labels alone), so a PV pinned with matchFields metadata.name
// accepts every node whose labels match the rest of the term.
func (s *NodeSelector) MatchNodeLabels(nodeLabels map[string]string) bool {
	for i := range s.terms {
		t := &s.terms[i]
		if t.empty || t.err != nil {
			continue
		}
		ok := true
		for j := range t.exprs {
			if !t.exprs[j].matches(nodeLabels) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
