package volumes_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
)

func TestValidateBindingArgs(t *testing.T) {
	neg := int64(-1)
	tests := []struct {
		name string
		args volumes.BindingArgs
		want string
	}{
		{name: "defaults", args: *volumes.DefaultBindingArgs()},
		{name: "negative timeout", args: volumes.BindingArgs{BindTimeoutSeconds: &neg},
			want: `bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value`},
		{name: "shape", args: volumes.BindingArgs{Shape: []framework.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}}},
		{name: "empty shape", args: volumes.BindingArgs{Shape: []framework.UtilizationShapePoint{}},
			want: `shape: Required value: at least one point must be specified`},
		{name: "shape out of order and range", args: volumes.BindingArgs{Shape: []framework.UtilizationShapePoint{{Utilization: 50, Score: 11}, {Utilization: 40, Score: 0}}},
			want: `[shape[1].utilization: Invalid value: 40: values must be sorted in strictly increasing order, shape[0].score: Invalid value: 11: not in range [0, 10]]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if err := volumes.ValidateBindingArgs(&tc.args); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if got := *volumes.DefaultBindingArgs().BindTimeoutSeconds; got != 600 {
		t.Errorf("default bindTimeoutSeconds = %d, want 600", got)
	}
}

// kube-scheduler v1.37 defaults an empty shape (unset, null or []) to
// {0: 10, 100: 0}, its StorageCapacityScoring gate being on by default;
// a shape given is kept.
func TestBindingArgsDefaults(t *testing.T) {
	def := []framework.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	packing := []framework.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}
	tests := []struct {
		name string
		args volumes.BindingArgs
		want []framework.UtilizationShapePoint
	}{
		{name: "unset", args: volumes.BindingArgs{}, want: def},
		{name: "empty", args: volumes.BindingArgs{Shape: []framework.UtilizationShapePoint{}}, want: def},
		{name: "given", args: volumes.BindingArgs{Shape: packing}, want: packing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.args.SetDefaults()
			if diff := cmp.Diff(tc.want, tc.args.Shape); diff != "" {
				t.Errorf("shape (-want +got):\n%s", diff)
			}
			if err := volumes.ValidateBindingArgs(&tc.args); err != nil {
				t.Errorf("defaulted args refused: %v", err)
			}
		})
	}
	if diff := cmp.Diff(def, volumes.DefaultBindingArgs().Shape); diff != "" {
		t.Errorf("DefaultBindingArgs' shape (-want +got):\n%s", diff)
	}
}
