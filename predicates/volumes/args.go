package volumes

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/yardmaster-io/yardmaster/framework"
)

// BindingArgs are the arguments of VolumeBinding (kube-scheduler's
// VolumeBindingArgs).
type BindingArgs struct {
	// BindTimeoutSeconds bounds PreBind's wait for the PV controller (and
	// a provisioner) to bind the claims it wrote; nil means 600.
	BindTimeoutSeconds *int64 `json:"bindTimeoutSeconds,omitempty"`
	// Shape scores nodes by how full the volumes a pod would get there
	// are: utilization (requested over capacity, per storage class) maps
	// to a score. Left empty it is DefaultBindingShape, which prefers the
	// node with the most room, as kube-scheduler v1.37 defaults it with
	// its StorageCapacityScoring gate (beta, on by default). To keep
	// VolumeBinding from scoring, disable it at score.
	Shape []framework.UtilizationShapePoint `json:"shape,omitempty"`
}

// defaultBindTimeoutSeconds is kube-scheduler's VolumeBinding default.
const defaultBindTimeoutSeconds = 600

// DefaultBindingShape returns kube-scheduler v1.37's default shape of
// VolumeBinding's score (pkg/scheduler/apis/config/v1, defaults.go,
// SetDefaults_VolumeBindingArgs): empty volumes score MaxShapeScore, full
// ones 0, so a pod's volumes go where there is the most room.
func DefaultBindingShape() []framework.UtilizationShapePoint {
	return []framework.UtilizationShapePoint{
		{Utilization: 0, Score: framework.MaxShapeScore},
		{Utilization: framework.MaxShapeUtilization, Score: 0},
	}
}

// DefaultBindingArgs returns kube-scheduler's defaults.
func DefaultBindingArgs() *BindingArgs {
	a := &BindingArgs{}
	a.SetDefaults()
	return a
}

// SetDefaults fills an unset BindTimeoutSeconds with 600, and an empty
// Shape (unset, null or []) with DefaultBindingShape, as kube-scheduler
// v1.37 does.
func (a *BindingArgs) SetDefaults() {
	if a.BindTimeoutSeconds == nil {
		t := int64(defaultBindTimeoutSeconds)
		a.BindTimeoutSeconds = &t
	}
	if len(a.Shape) == 0 {
		a.Shape = DefaultBindingShape()
	}
}

// ValidateBindingArgs checks args as kube-scheduler v1.37 does with its
// StorageCapacityScoring gate on (the default): a non-negative timeout,
// and a valid shape. A nil Shape is not checked: it stands for the
// default (SetDefaults), as a nil BindTimeoutSeconds does; an empty one,
// which defaulting would have filled, is refused.
func ValidateBindingArgs(args *BindingArgs) error {
	var errs field.ErrorList
	if t := args.BindTimeoutSeconds; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(field.NewPath("bindTimeoutSeconds"), *t, "invalid BindTimeoutSeconds, should not be a negative value"))
	}
	if args.Shape != nil {
		errs = append(errs, framework.ValidateShape(args.Shape, field.NewPath("shape"))...)
	}
	return errs.ToAggregate()
}
