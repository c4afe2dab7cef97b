package framework

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// The bounds of InterPodAffinityArgs.HardPodAffinityWeight, kube-scheduler's.
const (
	MinHardPodAffinityWeight int32 = 0
	MaxHardPodAffinityWeight int32 = 100
	// DefaultHardPodAffinityWeight is the weight when none is configured.
	DefaultHardPodAffinityWeight int32 = 1
)

// InterPodAffinityArgs are the arguments of InterPodAffinity, with
// kube-scheduler's field names.
type InterPodAffinityArgs struct {
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

// DefaultInterPodAffinityArgs returns kube-scheduler's defaults: hard pod
// affinity weight 1, existing pods' preferred terms counted.
func DefaultInterPodAffinityArgs() *InterPodAffinityArgs {
	w := DefaultHardPodAffinityWeight
	return &InterPodAffinityArgs{HardPodAffinityWeight: &w}
}

// SetDefaults fills in the weight when the configuration left it out.
func (a *InterPodAffinityArgs) SetDefaults() {
	if a.HardPodAffinityWeight == nil {
		w := DefaultHardPodAffinityWeight
		a.HardPodAffinityWeight = &w
	}
}

// Weight returns HardPodAffinityWeight, or the default when it is nil.
func (a *InterPodAffinityArgs) Weight() int32 {
	if a == nil || a.HardPodAffinityWeight == nil {
		return DefaultHardPodAffinityWeight
	}
	return *a.HardPodAffinityWeight
}

// ValidateInterPodAffinityArgs checks args as kube-scheduler does: the
// weight must lie in [0, 100]. The error is a field.Error on
// "hardPodAffinityWeight".
func ValidateInterPodAffinityArgs(args *InterPodAffinityArgs) error {
	if args == nil {
		return nil
	}
	if w := args.Weight(); w < MinHardPodAffinityWeight || w > MaxHardPodAffinityWeight {
		return field.Invalid(field.NewPath("hardPodAffinityWeight"), w,
			fmt.Sprintf("not in valid range [%d, %d]", MinHardPodAffinityWeight, MaxHardPodAffinityWeight))
	}
	return nil
}

// NodeAffinityArgs are the arguments of NodeAffinity, with kube-scheduler's
// field names.
type NodeAffinityArgs struct {
	// AddedAffinity is node affinity the profile adds to every pod it
	// schedules: its required terms are ANDed with the pod's (a node must
	// match both), its preferred terms score beside the pod's.
	AddedAffinity *v1.NodeAffinity `json:"addedAffinity,omitempty"`
}

// ValidateNodeAffinityArgs checks args as kube-scheduler does, with
// component-helpers' node selector parser: every required term and every
// preferred term of non-zero weight must parse. The errors are
// field.Errors under "addedAffinity".
func ValidateNodeAffinityArgs(args *NodeAffinityArgs) error {
	if args == nil || args.AddedAffinity == nil {
		return nil
	}
	a := args.AddedAffinity
	var errs []error
	if ns := a.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		if _, err := nodeaffinity.NewNodeSelector(ns, field.WithPath(field.NewPath("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, err)
		}
	}
	if terms := a.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		if _, err := nodeaffinity.NewPreferredSchedulingTerms(terms, field.WithPath(field.NewPath("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.Flatten(utilerrors.NewAggregate(errs))
}
