package framework

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned by CycleState.Read for a key nobody wrote.
var ErrNotFound = errors.New("not found in cycle state")

// StateKey names one entry of a CycleState; plugins use their own name or a
// name derived from it.
type StateKey string

// StateData is what a plugin keeps in the CycleState.
type StateData interface {
	// Clone returns a copy for a what-if evaluation; data that is never
	// mutated after PreFilter may return itself.
	Clone() StateData
}

// CycleState carries per-pod data from the pre-steps to Filter and Score
// within one scheduling cycle.
//
// Concurrency contract: Write is only called from PreFilter and PreScore,
// which run one at a time; Read is called concurrently from Filter and Score
// afterwards. Hence no lock: a write never overlaps a read.
type CycleState struct {
	storage map[StateKey]StateData
	// SkipFilterPlugins are the plugins whose PreFilter returned Skip.
	SkipFilterPlugins map[string]struct{}
	// SkipScorePlugins are the plugins whose PreScore returned Skip.
	SkipScorePlugins map[string]struct{}
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{storage: make(map[StateKey]StateData)}
}

// Write stores data under key.
func (c *CycleState) Write(key StateKey, data StateData) {
	c.storage[key] = data
}

// Read returns the data stored under key, or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if d, ok := c.storage[key]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%q: %w", key, ErrNotFound)
}

// ReadAs reads key and asserts its type.
func ReadAs[T StateData](c *CycleState, key StateKey) (T, error) {
	var zero T
	d, err := c.Read(key)
	if err != nil {
		return zero, err
	}
	t, ok := d.(T)
	if !ok {
		return zero, fmt.Errorf("%q holds %T, not %T", key, d, zero)
	}
	return t, nil
}
