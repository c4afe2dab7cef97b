package defaultpreemption

import (
	"slices"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// SplitByPDB charges a pod against the budgets it falls under, in order,
// until one goes below zero (kube-scheduler v1.37's
// FilterVictimsWithPDBViolation).
func TestSplitByPDB(t *testing.T) {
	pdb := func(name string, allowed int32, key, value string) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
		}
	}
	pod := func(name string, kv ...string) *framework.PodInfo {
		w := frameworktest.MakePod().Name(name)
		for i := 0; i+1 < len(kv); i += 2 {
			w = w.Label(kv[i], kv[i+1])
		}
		return framework.NewPodInfo(w.Obj())
	}
	app := pdb("app", 0, "app", "low")  // allows no disruption
	tier := pdb("tier", 1, "tier", "x") // allows one
	both := pod("both", "app", "low", "tier", "x")
	tierOnly := pod("tier-only", "tier", "x")
	tests := []struct {
		name          string
		pods          []*framework.PodInfo
		pdbs          []*policyv1.PodDisruptionBudget
		wantViolating []string
	}{{
		// both: app 0-1 = -1, violating; tier is not charged (v1.36
		// charged it, 1-1 = 0, and tier-only then violated too).
		// tier-only: tier 1-1 = 0.
		name:          "a pod stops at the first budget it breaks",
		pods:          []*framework.PodInfo{both, tierOnly},
		pdbs:          []*policyv1.PodDisruptionBudget{app, tier},
		wantViolating: []string{"both"},
	}, {
		// In the other order both is charged to tier first (1-1 = 0),
		// then breaks app; tier-only finds tier used up: 0-1 = -1.
		name:          "budgets are charged in their order",
		pods:          []*framework.PodInfo{both, tierOnly},
		pdbs:          []*policyv1.PodDisruptionBudget{tier, app},
		wantViolating: []string{"both", "tier-only"},
	}, {
		// tier allows one: the first pod under it uses it up.
		name:          "one disruption allowed: the second pod violates",
		pods:          []*framework.PodInfo{tierOnly, pod("tier-2", "tier", "x")},
		pdbs:          []*policyv1.PodDisruptionBudget{tier},
		wantViolating: []string{"tier-2"},
	}, {
		name: "a pod the budget counts as disrupted already does not use it up",
		pods: []*framework.PodInfo{pod("gone", "app", "low")},
		pdbs: func() []*policyv1.PodDisruptionBudget {
			p := app.DeepCopy()
			p.Status.DisruptedPods = map[string]metav1.Time{"gone": {}}
			return []*policyv1.PodDisruptionBudget{p}
		}(),
		wantViolating: nil,
	}, {
		name:          "an unlabelled pod falls under no budget",
		pods:          []*framework.PodInfo{pod("bare")},
		pdbs:          []*policyv1.PodDisruptionBudget{app, tier},
		wantViolating: nil,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			violating, nonViolating := SplitByPDB(tt.pods, tt.pdbs)
			var got []string
			for _, pi := range violating {
				got = append(got, pi.Pod.Name)
			}
			if !slices.Equal(got, tt.wantViolating) {
				t.Errorf("violating %v, want %v", got, tt.wantViolating)
			}
			if n := len(violating) + len(nonViolating); n != len(tt.pods) {
				t.Errorf("%d pods split, want %d", n, len(tt.pods))
			}
		})
	}
}
