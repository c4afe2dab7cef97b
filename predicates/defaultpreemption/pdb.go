package defaultpreemption

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/yardmaster-io/yardmaster/framework"
)

// SplitByPDB splits pods (most important first) into those whose eviction
// some PodDisruptionBudget does not allow and the others, as kube-scheduler
// v1.37's FilterVictimsWithPDBViolation: each eviction is counted against
// the budgets it falls under, in the order of pdbs, until one of them goes
// below zero; the pod then violates, and the budgets after that one are
// not charged for it (v1.36 charged them all, so a pod already violating
// one budget used up another and made the next pod under it violate too).
// A pod the budget already counts as disrupted does not use it up again.
func SplitByPDB(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			selectors[i] = sel
		}
	}
	for _, pi := range pods {
		p := pi.Pod
		violated := false
		if len(p.Labels) > 0 {
			for i, pdb := range pdbs {
				sel := selectors[i]
				// A budget with no (or an empty) selector covers nothing.
				if pdb.Namespace != p.Namespace || sel == nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
					continue
				}
				if _, done := pdb.Status.DisruptedPods[p.Name]; done {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violated = true
					break
				}
			}
		}
		if violated {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}
