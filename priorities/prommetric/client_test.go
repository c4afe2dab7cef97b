package prommetric

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestResponseSizeLimit(t *testing.T) {
	body := &limitedBody{rc: io.NopCloser(strings.NewReader(strings.Repeat("x", 10))), left: 10}
	if b, err := io.ReadAll(body); err != nil || len(b) != 10 {
		t.Errorf("body of exactly the limit: %d bytes, %v", len(b), err)
	}
	body = &limitedBody{rc: io.NopCloser(strings.NewReader(strings.Repeat("x", 11))), left: 10}
	if _, err := io.ReadAll(body); !errors.Is(err, errResponseTooLarge) {
		t.Errorf("body over the limit: error %v, want %v", err, errResponseTooLarge)
	}
}
