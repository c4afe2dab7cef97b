package dynamicresources

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateArgs(t *testing.T) {
	d := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	for _, tc := range []struct {
		name    string
		args    Args
		wantErr string
	}{
		{name: "defaults", args: *DefaultArgs()},
		{name: "unset", args: Args{}},
		{name: "no filter timeout", args: Args{FilterTimeout: d(0), BindingTimeout: d(time.Second)}},
		{name: "negative filter timeout", args: Args{FilterTimeout: d(-time.Second)}, wantErr: "filterTimeout: Invalid value: \"-1s\": must be zero or positive"},
		{name: "short binding timeout", args: Args{BindingTimeout: d(time.Second - 1)}, wantErr: "bindingTimeout: Invalid value: \"999.999999ms\": must be at least 1 second"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateArgs(&tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ValidateArgs: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("ValidateArgs = %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

func TestDefaultArgs(t *testing.T) {
	a := DefaultArgs()
	if a.FilterTimeout.Duration != 10*time.Second || a.BindingTimeout.Duration != 600*time.Second {
		t.Errorf("DefaultArgs = {%v, %v}, want {10s, 10m0s}", a.FilterTimeout, a.BindingTimeout)
	}
	given := Args{FilterTimeout: &metav1.Duration{}}
	given.SetDefaults()
	if given.FilterTimeout.Duration != 0 || given.BindingTimeout.Duration != DefaultBindingTimeout {
		t.Errorf("SetDefaults over filterTimeout 0 = {%v, %v}, want {0s, 10m0s}", given.FilterTimeout, given.BindingTimeout)
	}
}
