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
//
// Entries are kept in a short slice, not a map: a cycle holds one entry per
// plugin with a pre-step, and Filter and Score read one for every node they
// look at. Comparing a few keys, which are the plugins' constants and
// differ in length or share their bytes, costs less than hashing one.
type CycleState struct {
	storage []stateEntry
	// SkipFilterPlugins are the plugins whose PreFilter returned Skip.
	SkipFilterPlugins map[string]struct{}
	// SkipScorePlugins are the plugins whose PreScore returned Skip.
	SkipScorePlugins map[string]struct{}
}

// stateEntry is one key of a CycleState and its data.
type stateEntry struct {
	key  StateKey
	data StateData
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{storage: make([]stateEntry, 0, 8)}
}

// Clone returns a state whose entries are their data's Clone, for a
// what-if evaluation that must not change c.
func (c *CycleState) Clone() *CycleState {
	out := &CycleState{
		storage:           make([]stateEntry, len(c.storage)),
		SkipFilterPlugins: c.SkipFilterPlugins,
		SkipScorePlugins:  c.SkipScorePlugins,
	}
	for i, e := range c.storage {
		out.storage[i] = stateEntry{e.key, e.data.Clone()}
	}
	return out
}

// Write stores data under key, replacing what was stored there.
func (c *CycleState) Write(key StateKey, data StateData) {
	for i := range c.storage {
		if c.storage[i].key == key {
			c.storage[i].data = data
			return
		}
	}
	c.storage = append(c.storage, stateEntry{key, data})
}

// Read returns the data stored under key, or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	for i := range c.storage {
		if c.storage[i].key == key {
			return c.storage[i].data, nil
		}
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
