package framework

import (
	"testing"
	"unsafe"
)

// NodeInfo stays at 256 bytes on 64-bit platforms: see the padding at its
// end.
func TestNodeInfoSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are for 64-bit platforms")
	}
	if got := unsafe.Sizeof(NodeInfo{}); got != 256 {
		t.Errorf("NodeInfo is %d bytes, want 256: add or remove padding at its end", got)
	}
}
