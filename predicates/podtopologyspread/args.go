package podtopologyspread

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/yardmaster-io/yardmaster/framework"
)

// The ways PodTopologySpread picks the constraints of a pod that has none
// of its own (Args.DefaultingType).
const (
	// SystemDefaulting applies SystemDefaultSpreadConstraints.
	SystemDefaulting = "System"
	// ListDefaulting applies Args.DefaultConstraints, which
	// may be empty: no default spreading at all.
	ListDefaulting = "List"
)

// Args are the arguments of PodTopologySpread.
type Args struct {
	// DefaultConstraints apply to pods without topologySpreadConstraints
	// of their own that belong to a Service, ReplicaSet, StatefulSet or
	// ReplicationController, with the owners' selectors as label selector.
	// Only read with DefaultingType List.
	DefaultConstraints []v1.TopologySpreadConstraint `json:"defaultConstraints,omitempty"`
	// DefaultingType is System or List; empty means System.
	DefaultingType string `json:"defaultingType,omitempty"`
}

// DefaultArgs returns kube-scheduler's defaults: System defaulting.
func DefaultArgs() *Args {
	return &Args{DefaultingType: SystemDefaulting}
}

// SetDefaults fills an empty DefaultingType with System, as kube-scheduler
// v1 defaulting does, whatever DefaultConstraints holds (so a file that
// lists constraints without `defaultingType: List` fails validation, as it
// does in kube-scheduler).
func (a *Args) SetDefaults() {
	if a.DefaultingType == "" {
		a.DefaultingType = SystemDefaulting
	}
}

// SystemDefaultSpreadConstraints returns the constraints System defaulting
// applies: spread over hosts with maxSkew 3 and over zones with maxSkew 5,
// both as preferences (ScheduleAnyway).
func SystemDefaultSpreadConstraints() []v1.TopologySpreadConstraint {
	return []v1.TopologySpreadConstraint{
		{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
		{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
	}
}

// ValidateArgs checks args as kube-scheduler's
// ValidatePodTopologySpreadArgs does: a known defaulting type, no
// constraints with System, and each default constraint valid as in a pod
// spec (maxSkew > 0, a valid topologyKey, a known whenUnsatisfiable, no
// repeated {topologyKey, whenUnsatisfiable}) but without a labelSelector,
// which is deduced for each pod. Errors are field.Errors with paths
// relative to the args ("defaultConstraints[0].maxSkew").
func ValidateArgs(args *Args) error {
	var errs field.ErrorList
	typePath := field.NewPath("defaultingType")
	switch args.DefaultingType {
	case SystemDefaulting:
		if len(args.DefaultConstraints) > 0 {
			errs = append(errs, field.Invalid(typePath, args.DefaultingType, "when .defaultConstraints are not empty"))
		}
	case ListDefaulting:
	default:
		errs = append(errs, field.NotSupported(typePath, args.DefaultingType, []string{SystemDefaulting, ListDefaulting}))
	}

	listPath := field.NewPath("defaultConstraints")
	for i := range args.DefaultConstraints {
		c := &args.DefaultConstraints[i]
		p := listPath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch c.WhenUnsatisfiable {
		case v1.DoNotSchedule, v1.ScheduleAnyway:
		case "":
			errs = append(errs, field.Required(p.Child("whenUnsatisfiable"), "can not be empty"))
		default:
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable,
				[]string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for j := range i {
			o := &args.DefaultConstraints[j]
			if o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable {
				// kube-scheduler reports the duplicate at the index alone.
				errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	return errs.ToAggregate()
}

// NewSpread validates args and returns the constraints' source the filter
// and the scorer share (framework.TopologySpread): the default
// constraints args give a pod without its own, taking, when there are
// any, the listers of the objects that select pods from h's informer
// factory (which registers those informers: call it before the factory
// starts).
func NewSpread(args *Args, h framework.Handle) (*framework.TopologySpread, error) {
	a := *args
	a.SetDefaults()
	if err := ValidateArgs(&a); err != nil {
		return nil, err
	}
	if a.DefaultingType == SystemDefaulting {
		return framework.NewTopologySpread(SystemDefaultSpreadConstraints(), true, h), nil
	}
	return framework.NewTopologySpread(a.DefaultConstraints, false, h), nil
}
