package nodeaffinity_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
)

func TestValidateNodeAffinityArgs(t *testing.T) {
	tests := []struct {
		name string
		args *nodeaffinity.Args
		want string
	}{
		{name: "none", args: &nodeaffinity.Args{}},
		{name: "valid", args: addedRequired(nsTerm().In("zone", "a").Obj())},
		{
			name: "required term does not parse",
			args: addedRequired(nsTerm().In("zone", "a").Obj(), nsTerm().Gt("cores", "many").Obj()),
			want: `addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[0].values[0]: Invalid value: "many": for 'Gt', 'Lt' operators, the value must be an integer`,
		},
		{
			name: "preferred term does not parse",
			args: &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
				{Weight: 1, Preference: nsTerm().Field("metadata.name", v1.NodeSelectorOpIn, "a", "b").Obj()},
			}}},
			want: `addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: Invalid value: ["a","b"]: must have one element`,
		},
		{
			// kube-scheduler parses no preferred term of weight 0.
			name: "preferred term of weight 0 is not parsed",
			args: &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
				{Weight: 0, Preference: nsTerm().Gt("cores", "many").Obj()},
			}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := nodeaffinity.ValidateArgs(tc.args); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultArgsAddNothing(t *testing.T) {
	if diff := cmp.Diff(&nodeaffinity.Args{}, nodeaffinity.DefaultArgs()); diff != "" {
		t.Errorf("DefaultArgs (-want +got):\n%s", diff)
	}
}
