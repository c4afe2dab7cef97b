package dynamicresources

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Defaults of Args, kube-scheduler v1.37's.
const (
	DefaultFilterTimeout  = 10 * time.Second
	DefaultBindingTimeout = 600 * time.Second
)

// Args are the arguments of DynamicResources (kube-scheduler's
// DynamicResourcesArgs), with kube-scheduler v1.37's meaning.
type Args struct {
	// FilterTimeout bounds the allocator's search on one node; a node
	// that takes longer fails the attempt with an error (it is retried
	// with backoff). 0 turns the bound off; nil means 10s.
	FilterTimeout *metav1.Duration `json:"filterTimeout,omitempty"`
	// BindingTimeout bounds PreBind's wait for the binding conditions of
	// devices that declare them; nil means 600s, at least 1s.
	BindingTimeout *metav1.Duration `json:"bindingTimeout,omitempty"`
}

// DefaultArgs returns kube-scheduler's defaults.
func DefaultArgs() *Args {
	a := &Args{}
	a.SetDefaults()
	return a
}

// SetDefaults fills unset timeouts.
func (a *Args) SetDefaults() {
	if a.FilterTimeout == nil {
		a.FilterTimeout = &metav1.Duration{Duration: DefaultFilterTimeout}
	}
	if a.BindingTimeout == nil {
		a.BindingTimeout = &metav1.Duration{Duration: DefaultBindingTimeout}
	}
}

// ValidateArgs checks args as kube-scheduler v1.37 does with its default
// feature gates.
func ValidateArgs(args *Args) error {
	var errs field.ErrorList
	if t := args.FilterTimeout; t != nil && t.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("filterTimeout"), t, "must be zero or positive"))
	}
	if t := args.BindingTimeout; t != nil && t.Duration < time.Second {
		errs = append(errs, field.Invalid(field.NewPath("bindingTimeout"), t, "must be at least 1 second"))
	}
	return errs.ToAggregate()
}
