package defaultpreemption

import "k8s.io/apimachinery/pkg/util/validation/field"

// Args are DefaultPreemption's arguments: how many nodes preemption looks
// for victims on, at least, as a percentage of the cluster and as a
// number; the larger wins.
type Args struct {
	MinCandidateNodesPercentage *int32 `json:"minCandidateNodesPercentage,omitempty"`
	MinCandidateNodesAbsolute   *int32 `json:"minCandidateNodesAbsolute,omitempty"`
}

// kube-scheduler's defaults.
const (
	defaultCandidatePercentage int32 = 10
	defaultCandidateAbsolute   int32 = 100
)

// SetDefaults fills in kube-scheduler's defaults (10% and 100) for the
// fields left out.
func (a *Args) SetDefaults() {
	if a.MinCandidateNodesPercentage == nil {
		a.MinCandidateNodesPercentage = new(defaultCandidatePercentage)
	}
	if a.MinCandidateNodesAbsolute == nil {
		a.MinCandidateNodesAbsolute = new(defaultCandidateAbsolute)
	}
}

// CandidateNodes returns the arguments with the defaults filled in.
func (a *Args) CandidateNodes() (percentage, absolute int32) {
	percentage, absolute = defaultCandidatePercentage, defaultCandidateAbsolute
	if a == nil {
		return percentage, absolute
	}
	if a.MinCandidateNodesPercentage != nil {
		percentage = *a.MinCandidateNodesPercentage
	}
	if a.MinCandidateNodesAbsolute != nil {
		absolute = *a.MinCandidateNodesAbsolute
	}
	return percentage, absolute
}

// ValidateArgs checks the arguments as kube-scheduler does: a percentage
// within [0, 100], a number not negative, and not both zero.
func ValidateArgs(args *Args) error {
	pct, abs := args.CandidateNodes()
	pctPath, absPath := field.NewPath("minCandidateNodesPercentage"), field.NewPath("minCandidateNodesAbsolute")
	var errs field.ErrorList
	if pct < 0 || pct > 100 {
		errs = append(errs, field.Invalid(pctPath, pct, "not in valid range [0, 100]"))
	}
	if abs < 0 {
		errs = append(errs, field.Invalid(absPath, abs, "not in valid range [0, inf)"))
	}
	if pct == 0 && abs == 0 {
		errs = append(errs,
			field.Invalid(pctPath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(absPath, abs, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs.ToAggregate()
}
