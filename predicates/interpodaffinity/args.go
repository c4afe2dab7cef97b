package interpodaffinity

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The bounds of Args.HardPodAffinityWeight, kube-scheduler's.
const (
	MinHardPodAffinityWeight int32 = 0
	MaxHardPodAffinityWeight int32 = 100
	// DefaultHardPodAffinityWeight is the weight when none is configured.
	DefaultHardPodAffinityWeight int32 = 1
)

// Args are the arguments of InterPodAffinity, with kube-scheduler's field
// names.
type Args struct {
	// HardPodAffinityWeight is the score an existing pod adds to its
	// topology domain when the incoming pod matches one of the existing
	// pod's required affinity terms: a pod that others must be near
	// attracts them before they require it. 0 turns this off; nil means
	// DefaultHardPodAffinityWeight.
	HardPodAffinityWeight *int32 `json:"hardPodAffinityWeight,omitempty"`
	// IgnorePreferredTermsOfExistingPods skips scoring altogether for a pod
	// without preferred inter-pod affinity terms of its own, instead of
	// weighing the existing pods' terms against it.
	IgnorePreferredTermsOfExistingPods bool `json:"ignorePreferredTermsOfExistingPods,omitempty"`
}

// DefaultArgs returns kube-scheduler's defaults: hard pod affinity weight
// 1, existing pods' preferred terms counted.
func DefaultArgs() *Args {
	w := DefaultHardPodAffinityWeight
	return &Args{HardPodAffinityWeight: &w}
}

// SetDefaults fills in the weight when the configuration left it out.
func (a *Args) SetDefaults() {
	if a.HardPodAffinityWeight == nil {
		w := DefaultHardPodAffinityWeight
		a.HardPodAffinityWeight = &w
	}
}

// Weight returns HardPodAffinityWeight, or the default when it is nil.
func (a *Args) Weight() int32 {
	if a == nil || a.HardPodAffinityWeight == nil {
		return DefaultHardPodAffinityWeight
	}
	return *a.HardPodAffinityWeight
}

// ValidateArgs checks args as kube-scheduler does: the weight must lie in
// [0, 100]. The error is a field.Error on "hardPodAffinityWeight".
func ValidateArgs(args *Args) error {
	if args == nil {
		return nil
	}
	if w := args.Weight(); w < MinHardPodAffinityWeight || w > MaxHardPodAffinityWeight {
		return field.Invalid(field.NewPath("hardPodAffinityWeight"), w,
			fmt.Sprintf("not in valid range [%d, %d]", MinHardPodAffinityWeight, MaxHardPodAffinityWeight))
	}
	return nil
}
