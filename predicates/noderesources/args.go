package noderesources

import (
	"fmt"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The scoring strategy types (framework.ScoringStrategy, ResourceSpec,
// UtilizationShapePoint, RequestedToCapacityRatioParam) stay in framework:
// VolumeBinding's args use them too.

// FitArgs are the arguments of NodeResourcesFit.
type FitArgs struct {
	// IgnoredResources are resources the filter does not check.
	IgnoredResources []string `json:"ignoredResources,omitempty"`
	// IgnoredResourceGroups are prefixes ("example.com" for
	// "example.com/foo") of resources the filter does not check.
	IgnoredResourceGroups []string                   `json:"ignoredResourceGroups,omitempty"`
	ScoringStrategy       *framework.ScoringStrategy `json:"scoringStrategy,omitempty"`
}

// DefaultFitArgs returns kube-scheduler's defaults: LeastAllocated over
// cpu and memory, weight 1 each.
func DefaultFitArgs() *FitArgs {
	return &FitArgs{
		ScoringStrategy: &framework.ScoringStrategy{Type: framework.LeastAllocated, Resources: framework.DefaultResourceSpecs()},
	}
}

// SetDefaults applies kube-scheduler's defaulting after decoding, so that
// the effective configuration shows every value in use: LeastAllocated
// when no strategy is given, cpu and memory when it lists no resources,
// weight 1 where a weight is 0. The strategy is replaced by a defaulted
// copy; what a left untouched is not changed.
func (a *FitArgs) SetDefaults() {
	s := framework.ScoringStrategy{Type: framework.LeastAllocated}
	if a.ScoringStrategy != nil {
		s = *a.ScoringStrategy
	}
	s.Resources = defaultedResources(s.Resources)
	a.ScoringStrategy = &s
}

// ValidateFitArgs checks args as kube-scheduler validates
// NodeResourcesFitArgs, ignored resources included, on their defaulted
// strategy (nil args are the defaults), and names every invalid field in
// the error.
func ValidateFitArgs(args *FitArgs) error {
	_, err := fitStrategy(args)
	return err
}

// fitStrategy returns args' scoring strategy, defaulted, or the error of
// invalid args.
func fitStrategy(args *FitArgs) (framework.ScoringStrategy, error) {
	if args == nil {
		args = DefaultFitArgs()
	}
	strategy := framework.ScoringStrategy{Type: framework.LeastAllocated}
	if args.ScoringStrategy != nil {
		strategy = *args.ScoringStrategy
	}
	strategy.Resources = defaultedResources(strategy.Resources)
	if err := validateFitArgs(args, &strategy); err != nil {
		return strategy, fmt.Errorf("invalid %s args: %w", FitName, err)
	}
	return strategy, nil
}

// BalancedAllocationArgs are the arguments of
// NodeResourcesBalancedAllocation.
type BalancedAllocationArgs struct {
	Resources []framework.ResourceSpec `json:"resources,omitempty"`
}

// DefaultBalancedAllocationArgs returns kube-scheduler's defaults: cpu and
// memory, weight 1 each.
func DefaultBalancedAllocationArgs() *BalancedAllocationArgs {
	return &BalancedAllocationArgs{Resources: framework.DefaultResourceSpecs()}
}

// SetDefaults applies kube-scheduler's defaulting after decoding: cpu and
// memory when no resources are listed, weight 1 where a weight is 0.
func (a *BalancedAllocationArgs) SetDefaults() {
	a.Resources = defaultedResources(a.Resources)
}

// ValidateBalancedAllocationArgs checks args as kube-scheduler does, on
// their defaulted resources (nil args are the defaults): every weight must
// be 1 and no resource may be listed twice.
func ValidateBalancedAllocationArgs(args *BalancedAllocationArgs) error {
	_, err := balancedResources(args)
	return err
}

// balancedResources returns args' resources, defaulted, or the error of
// invalid args.
func balancedResources(args *BalancedAllocationArgs) ([]framework.ResourceSpec, error) {
	if args == nil {
		args = DefaultBalancedAllocationArgs()
	}
	resources := defaultedResources(args.Resources)
	p := field.NewPath("resources")
	errs := validateUniqueNames(resources, p)
	errs = append(errs, validateWeights(resources, p, 1, 1)...)
	if err := errs.ToAggregate(); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", BalancedAllocationName, err)
	}
	return resources, nil
}

// maxResourceWeight is the largest weight NodeResourcesFit accepts for a
// resource.
const maxResourceWeight = 100

// defaultedResources applies kube-scheduler's defaulting to a resource list
// without touching the caller's: cpu and memory when empty, weight 1 where
// unset.
func defaultedResources(specs []framework.ResourceSpec) []framework.ResourceSpec {
	if len(specs) == 0 {
		return framework.DefaultResourceSpecs()
	}
	out := make([]framework.ResourceSpec, len(specs))
	for i, s := range specs {
		if s.Weight == 0 {
			s.Weight = 1
		}
		out[i] = s
	}
	return out
}

// validateFitArgs checks args as kube-scheduler does; strategy is the
// defaulted args.ScoringStrategy.
func validateFitArgs(args *FitArgs, strategy *framework.ScoringStrategy) error {
	var errs field.ErrorList
	for i, r := range args.IgnoredResources {
		errs = append(errs, metav1validation.ValidateLabelName(r, field.NewPath("ignoredResources").Index(i))...)
	}
	for i, g := range args.IgnoredResourceGroups {
		p := field.NewPath("ignoredResourceGroups").Index(i)
		if strings.Contains(g, "/") {
			errs = append(errs, field.Invalid(p, g, "resource group name can't contain '/'"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(g, p)...)
	}

	p := field.NewPath("scoringStrategy")
	if _, ok := strategyScorers[strategy.Type]; !ok {
		errs = append(errs, field.NotSupported(p.Child("type"), strategy.Type, []framework.ScoringStrategyType{
			framework.LeastAllocated, framework.MostAllocated, framework.RequestedToCapacityRatio,
		}))
	}
	errs = append(errs, validateWeights(strategy.Resources, p.Child("resources"), 1, maxResourceWeight)...)
	switch {
	case strategy.Type == framework.RequestedToCapacityRatio && strategy.RequestedToCapacityRatio == nil:
		errs = append(errs, field.Required(p.Child("requestedToCapacityRatio"), "must be specified when type is RequestedToCapacityRatio"))
	case strategy.Type == framework.RequestedToCapacityRatio:
		errs = append(errs, framework.ValidateShape(strategy.RequestedToCapacityRatio.Shape, p.Child("requestedToCapacityRatio", "shape"))...)
	case strategy.RequestedToCapacityRatio != nil:
		errs = append(errs, field.Forbidden(p.Child("requestedToCapacityRatio"), "must be nil when type is not RequestedToCapacityRatio"))
	}
	return errs.ToAggregate()
}

// validateWeights checks every weight lies in [lo, hi].
func validateWeights(specs []framework.ResourceSpec, p *field.Path, lo, hi int64) field.ErrorList {
	var errs field.ErrorList
	for i, s := range specs {
		if s.Weight >= lo && s.Weight <= hi {
			continue
		}
		msg := fmt.Sprintf("weight of resource %q not in range [%d, %d]", s.Name, lo, hi)
		if lo == hi {
			msg = fmt.Sprintf("weight of resource %q must be %d", s.Name, lo)
		}
		errs = append(errs, field.Invalid(p.Index(i).Child("weight"), s.Weight, msg))
	}
	return errs
}

// validateUniqueNames reports resources named twice.
func validateUniqueNames(specs []framework.ResourceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, s := range specs {
		if seen.Has(s.Name) {
			errs = append(errs, field.Duplicate(p.Index(i).Child("name"), s.Name))
		}
		seen.Insert(s.Name)
	}
	return errs
}
