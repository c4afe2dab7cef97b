package framework

import "k8s.io/apimachinery/pkg/util/validation/field"

// Argument types shared by more than one plugin, as written under
// pluginConfig[].args in a KubeSchedulerConfiguration file: the scoring
// strategy of NodeResourcesFit (predicates/noderesources), whose
// utilization shape VolumeBinding's args use too, and
// DefaultPreemption's, whose preemption is built into the scheduler. A
// plugin's own args type lives in its folder.

// ScoringStrategyType names how NodeResourcesFit scores a node.
type ScoringStrategyType string

// The scoring strategies of NodeResourcesFit.
const (
	LeastAllocated           ScoringStrategyType = "LeastAllocated"
	MostAllocated            ScoringStrategyType = "MostAllocated"
	RequestedToCapacityRatio ScoringStrategyType = "RequestedToCapacityRatio"
)

// ResourceSpec names a resource and its weight in a score.
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// UtilizationShapePoint is one point of the RequestedToCapacityRatio curve:
// utilization in percent (0..100) maps to score (0..10).
type UtilizationShapePoint struct {
	Utilization int32 `json:"utilization"`
	Score       int32 `json:"score"`
}

// RequestedToCapacityRatioParam holds the curve of the
// RequestedToCapacityRatio strategy.
type RequestedToCapacityRatioParam struct {
	Shape []UtilizationShapePoint `json:"shape,omitempty"`
}

// ScoringStrategy configures NodeResourcesFit scoring.
type ScoringStrategy struct {
	Type                     ScoringStrategyType            `json:"type,omitempty"`
	Resources                []ResourceSpec                 `json:"resources,omitempty"`
	RequestedToCapacityRatio *RequestedToCapacityRatioParam `json:"requestedToCapacityRatio,omitempty"`
}

// DefaultResourceSpecs are the resources scored when none are configured.
func DefaultResourceSpecs() []ResourceSpec {
	return []ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
}

// DefaultPreemptionArgs are the arguments of DefaultPreemption: how many
// nodes preemption looks for victims on, at least, as a percentage of the
// cluster and as a number; the larger wins.
type DefaultPreemptionArgs struct {
	MinCandidateNodesPercentage *int32 `json:"minCandidateNodesPercentage,omitempty"`
	MinCandidateNodesAbsolute   *int32 `json:"minCandidateNodesAbsolute,omitempty"`
}

// CandidateNodes returns the arguments with kube-scheduler's defaults (10%
// and 100) filled in.
func (a *DefaultPreemptionArgs) CandidateNodes() (percentage, absolute int32) {
	percentage, absolute = 10, 100
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

// ValidateDefaultPreemptionArgs checks the arguments as kube-scheduler
// does: a percentage within [0, 100], a number not negative, and not both
// zero.
func ValidateDefaultPreemptionArgs(args *DefaultPreemptionArgs) error {
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
