package controlplane

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithFlags(t *testing.T) {
	defaults := []string{"--authorization-mode=Node,RBAC", "--secure-port=6443", "-v=1"}
	tests := []struct {
		name  string
		extra []string
		want  []string
	}{
		{"none", nil, defaults},
		{"new flag appended", []string{"--runtime-config=resource.k8s.io/v1=false"},
			[]string{"--authorization-mode=Node,RBAC", "--secure-port=6443", "-v=1", "--runtime-config=resource.k8s.io/v1=false"}},
		{"list flag replaced, not added to", []string{"--authorization-mode=RBAC"},
			[]string{"--secure-port=6443", "-v=1", "--authorization-mode=RBAC"}},
		{"single-dash flag replaced", []string{"-v=4"},
			[]string{"--authorization-mode=Node,RBAC", "--secure-port=6443", "-v=4"}},
		{"flag and value as two arguments", []string{"--secure-port", "7443"},
			[]string{"--authorization-mode=Node,RBAC", "-v=1", "--secure-port", "7443"}},
		{"list flag given twice in extra: both kept, to add up",
			append(GenericWorkloadAPIServerFlags(), "--runtime-config=resource.k8s.io/v1=false", "--feature-gates=DRAConsumableCapacity=true"),
			[]string{"--authorization-mode=Node,RBAC", "--secure-port=6443", "-v=1",
				"--runtime-config=scheduling.k8s.io/v1beta1=true",
				"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
				"--runtime-config=resource.k8s.io/v1=false",
				"--feature-gates=DRAConsumableCapacity=true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, withFlags(defaults, tc.extra)); diff != "" {
				t.Errorf("withFlags (-want +got):\n%s", diff)
			}
		})
	}
}
