package framework

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

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

// PinningLabel returns a label key and the values one of which a node must
// carry under it to match the selector: every valid term requires the key
// to be In some values, and values is their union. The volume binder files
// PersistentVolumes by it (a local volume names its node's hostname), so
// that a node is checked only against the volumes it may match. It prefers
// key when every term requires it; ok is false when no key is required by
// every term, and also for a selector with no valid term, which matches
// nothing (MatchesNothing tells those apart).
func (s *NodeSelector) PinningLabel(key string) (pinKey string, values []string, ok bool) {
	var candidates []string
	for i := range s.terms {
		t := &s.terms[i]
		if t.err != nil || t.empty {
			continue
		}
		var keys []string
		for j := range t.exprs {
			if t.exprs[j].op == v1.NodeSelectorOpIn {
				keys = append(keys, t.exprs[j].key)
			}
		}
		if candidates == nil {
			candidates = keys
		} else {
			candidates = slices.DeleteFunc(candidates, func(k string) bool { return !slices.Contains(keys, k) })
		}
		if len(candidates) == 0 {
			return "", nil, false
		}
	}
	if len(candidates) == 0 {
		return "", nil, false
	}
	pinKey = candidates[0]
	if slices.Contains(candidates, key) {
		pinKey = key
	}
	for i := range s.terms {
		t := &s.terms[i]
		if t.err != nil || t.empty {
			continue
		}
		for j := range t.exprs {
			if e := &t.exprs[j]; e.op == v1.NodeSelectorOpIn && e.key == pinKey {
				for _, v := range e.values {
					if !slices.Contains(values, v) {
						values = append(values, v)
					}
				}
			}
		}
	}
	return pinKey, values, true
}

// MatchesNothing reports whether no node can match: the selector has no
// valid term.
func (s *NodeSelector) MatchesNothing() bool {
	for i := range s.terms {
		if s.terms[i].err == nil && !s.terms[i].empty {
			return false
		}
	}
	return true
}
