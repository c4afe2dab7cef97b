package nodeaffinity

import (
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Args are the arguments of NodeAffinity (kind NodeAffinityArgs in a
// configuration file), with kube-scheduler's field names.
type Args struct {
	// AddedAffinity is node affinity the profile adds to every pod it
	// schedules: its required terms are ANDed with the pod's (a node must
	// match both), its preferred terms score beside the pod's.
	AddedAffinity *v1.NodeAffinity `json:"addedAffinity,omitempty"`
}

// DefaultArgs returns kube-scheduler's defaults: no added affinity.
func DefaultArgs() *Args { return &Args{} }

// ValidateArgs checks args as kube-scheduler does, with component-helpers'
// node selector parser: every required term and every preferred term of
// non-zero weight must parse. The errors are field.Errors under
// "addedAffinity".
func ValidateArgs(args *Args) error {
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
