package framework

import (
	"fmt"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The tests of nodeselector.go that read its unexported parts; the others
// are in nodeselector_test.go, an external test, which builds its pods and
// nodes with framework/frameworktest (an import this package cannot make).

// TestLabelRequirementAgreesWithLabels checks the compiled label requirements
// against k8s.io/apimachinery's labels.Requirement, which kube-scheduler
// matches node labels with: same validity, same verdict on every label set.
func TestLabelRequirementAgreesWithLabels(t *testing.T) {
	ops := map[v1.NodeSelectorOperator]selection.Operator{
		v1.NodeSelectorOpIn: selection.In, v1.NodeSelectorOpNotIn: selection.NotIn,
		v1.NodeSelectorOpExists: selection.Exists, v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
		v1.NodeSelectorOpGt: selection.GreaterThan, v1.NodeSelectorOpLt: selection.LessThan,
	}
	keys := []string{"k", "example.com/k", "bad key", ""}
	valueSets := [][]string{nil, {""}, {"a"}, {"a", "b"}, {"5"}, {"-5"}, {"05"}, {"x5"}, {"9223372036854775808"}, {"1", "2"}}
	labelSets := []map[string]string{
		nil, {"k": ""}, {"k": "a"}, {"k": "b"}, {"k": "4"}, {"k": "5"}, {"k": "6"}, {"k": "-7"}, {"k": "+6"}, {"k": "x"},
		{"example.com/k": "a"}, {"example.com/k": "6"},
	}
	for op, sop := range ops {
		for _, key := range keys {
			for _, vals := range valueSets {
				t.Run(fmt.Sprintf("%s %q %q", op, key, vals), func(t *testing.T) {
					r := v1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
					c, errs := compileLabelRequirement(&r, func() *field.Path { return nil })
					ref, err := labels.NewRequirement(key, sop, vals)
					if (errs != nil) != (err != nil) {
						t.Fatalf("compiled error %v, labels.NewRequirement error %v", errs, err)
					}
					if err != nil {
						return
					}
					for _, ls := range labelSets {
						if got, want := c.matches(ls), ref.Matches(labels.Set(ls)); got != want {
							t.Errorf("labels %v: matches = %v, labels.Requirement says %v", ls, got, want)
						}
					}
				})
			}
		}
	}
}

func TestParseInt64(t *testing.T) {
	for _, s := range []string{
		"", "0", "7", "-7", "+7", "-", "+", "007", "-0", "1_000", "0x10", " 1", "1 ", "1.5", "1e3",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551616", "99999999999999999999",
	} {
		t.Run(strconv.Quote(s), func(t *testing.T) { checkParseInt64(t, s) })
	}
}

func FuzzParseInt64(f *testing.F) {
	for _, s := range []string{"", "1", "-1", "+1", "9223372036854775807", "-9223372036854775808", "x"} {
		f.Add(s)
	}
	f.Fuzz(checkParseInt64)
}

func checkParseInt64(t *testing.T, s string) {
	want, err := strconv.ParseInt(s, 10, 64)
	got, ok := parseInt64(s)
	if ok != (err == nil) || (ok && got != want) {
		t.Errorf("parseInt64(%q) = %d, %v; strconv.ParseInt = %d, %v", s, got, ok, want, err)
	}
}
