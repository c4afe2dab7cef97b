package frameworktest

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SpreadConstraint appends a topology spread constraint.
func (p *PodWrapper) SpreadConstraint(c v1.TopologySpreadConstraint) *PodWrapper {
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	return p
}

// ControlledBy sets a controller owner reference.
func (p *PodWrapper) ControlledBy(apiVersion, kind, name string) *PodWrapper {
	yes := true
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(kind + "-" + name), Controller: &yes,
	})
	return p
}

// SpreadConstraintWrapper builds a topology spread constraint:
//
//	frameworktest.MakeSpreadConstraint(1, "zone", v1.DoNotSchedule).MatchLabels("app", "web").Obj()
type SpreadConstraintWrapper struct{ v1.TopologySpreadConstraint }

// MakeSpreadConstraint returns a constraint without a label selector.
func MakeSpreadConstraint(maxSkew int32, topologyKey string, when v1.UnsatisfiableConstraintAction) *SpreadConstraintWrapper {
	return &SpreadConstraintWrapper{v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: topologyKey, WhenUnsatisfiable: when}}
}

// Obj returns the constraint.
func (w *SpreadConstraintWrapper) Obj() v1.TopologySpreadConstraint {
	return w.TopologySpreadConstraint
}

// MatchLabels adds matchLabels pairs (key, value, key, value, …) to the
// selector, creating it.
func (w *SpreadConstraintWrapper) MatchLabels(kv ...string) *SpreadConstraintWrapper {
	if w.LabelSelector == nil {
		w.LabelSelector = &metav1.LabelSelector{}
	}
	if w.LabelSelector.MatchLabels == nil {
		w.LabelSelector.MatchLabels = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		w.LabelSelector.MatchLabels[kv[i]] = kv[i+1]
	}
	return w
}

// Selector sets the label selector.
func (w *SpreadConstraintWrapper) Selector(s *metav1.LabelSelector) *SpreadConstraintWrapper {
	w.LabelSelector = s
	return w
}

// MinDomains sets minDomains.
func (w *SpreadConstraintWrapper) MinDomains(n int32) *SpreadConstraintWrapper {
	w.TopologySpreadConstraint.MinDomains = &n
	return w
}

// NodeAffinityPolicy sets nodeAffinityPolicy.
func (w *SpreadConstraintWrapper) NodeAffinityPolicy(p v1.NodeInclusionPolicy) *SpreadConstraintWrapper {
	w.TopologySpreadConstraint.NodeAffinityPolicy = &p
	return w
}

// NodeTaintsPolicy sets nodeTaintsPolicy.
func (w *SpreadConstraintWrapper) NodeTaintsPolicy(p v1.NodeInclusionPolicy) *SpreadConstraintWrapper {
	w.TopologySpreadConstraint.NodeTaintsPolicy = &p
	return w
}

// MatchLabelKeys sets matchLabelKeys.
func (w *SpreadConstraintWrapper) MatchLabelKeys(keys ...string) *SpreadConstraintWrapper {
	w.TopologySpreadConstraint.MatchLabelKeys = keys
	return w
}
