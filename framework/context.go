package framework

import "context"

// bindingCycleKey marks a context as a binding cycle's.
type bindingCycleKey struct{}

// WithBindingCycle returns ctx marked as the context of a binding cycle,
// which runs on a bind worker: a plugin called with it (Unreserve, say)
// may wait on the API, since no scheduling cycle waits for it.
func WithBindingCycle(ctx context.Context) context.Context {
	return context.WithValue(ctx, bindingCycleKey{}, true)
}

// InBindingCycle reports whether ctx is a binding cycle's (see
// WithBindingCycle); false in the scheduling cycle, where a plugin must
// not wait on the API.
func InBindingCycle(ctx context.Context) bool {
	v, _ := ctx.Value(bindingCycleKey{}).(bool)
	return v
}
