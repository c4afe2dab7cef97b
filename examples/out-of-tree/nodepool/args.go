package nodepool

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Args are NodePool's arguments, the args of its pluginConfig entry. The
// configuration loader decodes the file's args over NewArgs, strictly (an
// unknown field is an error with its line), then calls ValidateArgs.
type Args struct {
	// PoolLabel is the label that names a node's pool, and a pod's.
	PoolLabel string `json:"poolLabel"`
	// DefaultPool is the pool of a pod without PoolLabel. Empty lets such
	// pods run in any pool, or on nodes in none.
	DefaultPool string `json:"defaultPool"`
	// CostLabel is the node label that holds what the node costs, a
	// whole number (cents an hour, say): Score prefers the cheapest node
	// of the pool.
	CostLabel string `json:"costLabel"`
}

// Defaults of Args.
const (
	DefaultPoolLabel   = "example.com/pool"
	DefaultDefaultPool = "general"
	DefaultCostLabel   = "example.com/hourly-cost"
)

// NewArgs returns the default arguments.
func NewArgs() *Args {
	return &Args{PoolLabel: DefaultPoolLabel, DefaultPool: DefaultDefaultPool, CostLabel: DefaultCostLabel}
}

// ValidateArgs checks decoded arguments. Its errors are field.Errors with
// paths relative to the args, so that `config validate` and the daemon
// name the field and its line in the file.
func ValidateArgs(a *Args) error {
	var errs field.ErrorList
	for _, l := range []struct {
		path  *field.Path
		value string
	}{{field.NewPath("poolLabel"), a.PoolLabel}, {field.NewPath("costLabel"), a.CostLabel}} {
		if l.value == "" {
			errs = append(errs, field.Required(l.path, "a label key, such as example.com/pool"))
			continue
		}
		for _, msg := range validation.IsQualifiedName(l.value) {
			errs = append(errs, field.Invalid(l.path, l.value, msg))
		}
	}
	if a.CostLabel != "" && a.CostLabel == a.PoolLabel {
		errs = append(errs, field.Invalid(field.NewPath("costLabel"), a.CostLabel, "must differ from poolLabel"))
	}
	for _, msg := range validation.IsValidLabelValue(a.DefaultPool) {
		errs = append(errs, field.Invalid(field.NewPath("defaultPool"), a.DefaultPool, msg))
	}
	return errs.ToAggregate()
}
