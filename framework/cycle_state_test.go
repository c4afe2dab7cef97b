package framework

import (
	"errors"
	"testing"
)

type intState int

func (s intState) Clone() StateData { return s }

type stringState string

func (s stringState) Clone() StateData { return s }

func TestCycleStateReadWrite(t *testing.T) {
	c := NewCycleState()
	if _, err := c.Read("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read of an empty state: got %v, want ErrNotFound", err)
	}
	// More keys than the initial capacity, and one written twice.
	keys := []StateKey{"a", "bb", "PreFilterA", "PreFilterB", "PreScoreA", "PreScoreB", "x", "y", "z", "zz"}
	for i, k := range keys {
		c.Write(k, intState(i))
	}
	c.Write("PreFilterB", intState(42))
	for i, k := range keys {
		want := intState(i)
		if k == "PreFilterB" {
			want = 42
		}
		got, err := ReadAs[intState](c, k)
		if err != nil || got != want {
			t.Errorf("ReadAs(%q) = %v, %v; want %v", k, got, err, want)
		}
	}
	// A key built at run time finds the entry a constant wrote.
	if got, err := ReadAs[intState](c, StateKey("PreFilter"+"A")); err != nil || got != 2 {
		t.Errorf("ReadAs of a built key = %v, %v; want 2", got, err)
	}
	if _, err := ReadAs[stringState](c, "a"); err == nil {
		t.Error("ReadAs with the wrong type: no error")
	}
	if len(c.storage) != len(keys) {
		t.Errorf("%d entries, want %d: a rewrite must replace", len(c.storage), len(keys))
	}
}
