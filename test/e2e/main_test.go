// Package e2e tests yardmaster against a real local control plane: etcd,
// kube-apiserver and kube-controller-manager built from their Go modules
// (make control-plane), started once for the package. The controller
// manager runs the storage and DRA controllers
// (controlplane.StorageControllers and DRAControllers), so claims get bound
// to volumes, protection finalizers are removed, and ResourceClaims are
// made from templates and released when their pods go, as in a cluster.
// It serves Workloads and PodGroups (scheduling.k8s.io/v1beta1, with the
// GenericWorkload and TopologyAwareWorkloadScheduling gates:
// controlplane.GenericWorkloadAPIServerFlags) and runs the PodGroup
// protection controller (controlplane.GangControllers), so a deleted
// PodGroup goes once no pod names it.
// The tests of cluster_test.go run on a second control plane, started by
// the first of them, where KWOK plays the kubelet of every node and the
// workload controllers run (Deployments, StatefulSets, Jobs).
// Each test gets its own namespace, its own nodes and its own scheduler (a
// profile named after the namespace), so tests never see each other's pods.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// cp is the control plane shared by every test of the package.
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	// Run as kubectl-yardmaster (a symlink to this binary that
	// kubectlPlugin makes), the binary is the kubectl plugin, as
	// yardmaster's main is: no control plane, no tests.
	if filepath.Base(os.Args[0]) == app.KubectlPluginName {
		os.Exit(app.ExecuteArgv(os.Args))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	cp, err = controlplane.Start(context.Background(), controlplane.Options{
		Tokens:                      identities(),
		Controllers:                 slices.Concat(controlplane.StorageControllers(), controlplane.DRAControllers(), controlplane.GangControllers()),
		ExtraAPIServerFlags:         controlplane.GenericWorkloadAPIServerFlags(),
		ExtraControllerManagerFlags: controlplane.GenericWorkloadControllerManagerFlags(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start control plane:", err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stop control plane:", err)
		}
		if err := stopClusterPlane(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stop the cluster control plane:", err)
		}
	}()
	return m.Run()
}
