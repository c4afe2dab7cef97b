package prommetric

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: `"60s"`, want: 60 * time.Second},
		{in: `"1m30s"`, want: 90 * time.Second},
		{in: `"250ms"`, want: 250 * time.Millisecond},
		{in: `60`, want: 60 * time.Second},
		{in: `"60"`, want: 60 * time.Second},
		{in: ` 0 `, want: 0},
		{in: `-5`, want: -5 * time.Second},
		{in: `1.5`, wantErr: "whole number of seconds"},
		{in: `"fast"`, wantErr: `invalid duration "fast"`},
		{in: `true`, wantErr: "invalid duration"},
		{in: `99999999999999999`, wantErr: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var d Duration
			err := json.Unmarshal([]byte(tt.in), &d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || d.Duration != tt.want {
				t.Fatalf("got %v, %v; want %v", d.Duration, err, tt.want)
			}
		})
	}

	for d, want := range map[time.Duration]string{
		60 * time.Second:        `"60s"`,
		2 * time.Minute:         `"120s"`,
		1500 * time.Millisecond: `"1.5s"`,
		0:                       `"0s"`,
	} {
		b, err := json.Marshal(Duration{d})
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", d, b, err, want)
		}
		var back Duration
		if err := json.Unmarshal(b, &back); err != nil || back.Duration != d {
			t.Errorf("%s reads back as %v, %v", b, back.Duration, err)
		}
	}
}
