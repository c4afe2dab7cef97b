package controlplane

import (
	"slices"
	"testing"
)

// Each controller set, alone and with the others, is a list Start takes:
// a name that kube-controller-manager would not build fails Start only
// after its readiness timeout, so the sets are checked here.
func TestControllerSetsAreValid(t *testing.T) {
	sets := []struct {
		name        string
		controllers []string
	}{
		{"StorageControllers", StorageControllers()},
		{"DRAControllers", DRAControllers()},
		{"GangControllers", GangControllers()},
		{"WorkloadControllers", WorkloadControllers()},
		{"storage, DRA and gang (the e2e package's)", slices.Concat(StorageControllers(), DRAControllers(), GangControllers())},
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			if len(s.controllers) == 0 {
				t.Fatal("no controllers")
			}
			if err := validateControllers(s.controllers); err != nil {
				t.Errorf("validateControllers(%q): %v", s.controllers, err)
			}
		})
	}
}
