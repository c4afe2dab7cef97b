package podtopologyspread_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
)

func TestValidateArgs(t *testing.T) {
	zone := func(maxSkew int32, when v1.UnsatisfiableConstraintAction) v1.TopologySpreadConstraint {
		return v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: when}
	}
	tests := []struct {
		name string
		args podtopologyspread.Args
		want string // the error, "" for none
	}{
		{name: "System", args: podtopologyspread.Args{DefaultingType: podtopologyspread.SystemDefaulting}},
		{name: "List without constraints", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting}},
		{name: "List with constraints", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{
			zone(1, v1.DoNotSchedule), zone(3, v1.ScheduleAnyway),
		}}},
		{name: "System with constraints", args: podtopologyspread.Args{DefaultingType: podtopologyspread.SystemDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{zone(1, v1.DoNotSchedule)}},
			want: `defaultingType: Invalid value: "System": when .defaultConstraints are not empty`},
		{name: "unknown defaulting type", args: podtopologyspread.Args{DefaultingType: "Sometimes"},
			want: `defaultingType: Unsupported value: "Sometimes": supported values: "System", "List"`},
		{name: "maxSkew 0", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{zone(0, v1.DoNotSchedule)}},
			want: `defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)`},
		{name: "empty topologyKey", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{
			{MaxSkew: 1, WhenUnsatisfiable: v1.DoNotSchedule},
		}}, want: `defaultConstraints[0].topologyKey: Required value: can not be empty`},
		{name: "invalid topologyKey", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "not a key", WhenUnsatisfiable: v1.DoNotSchedule},
		}}, want: `defaultConstraints[0].topologyKey: Invalid value: "not a key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{name: "empty whenUnsatisfiable", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{zone(1, "")}},
			want: `defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty`},
		{name: "unknown whenUnsatisfiable", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{zone(1, "Never")}},
			want: `defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"`},
		{name: "labelSelector", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{}},
		}}, want: `defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod`},
		{name: "repeated key and action", args: podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{
			zone(1, v1.DoNotSchedule), zone(2, v1.DoNotSchedule),
		}}, want: `defaultConstraints[1]: Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if err := podtopologyspread.ValidateArgs(&tc.args); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgsDefaults(t *testing.T) {
	a := &podtopologyspread.Args{}
	a.SetDefaults()
	if diff := cmp.Diff(podtopologyspread.DefaultArgs(), a); diff != "" {
		t.Errorf("SetDefaults (-want +got):\n%s", diff)
	}
	// A file that lists constraints without `defaultingType: List` is
	// defaulted to System and then refused, as by kube-scheduler.
	b := &podtopologyspread.Args{DefaultConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule}}}
	if _, err := podtopologyspread.NewSpread(b, nil); err == nil {
		t.Error("NewSpread accepted constraints with System defaulting")
	}
}
