package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/config"
)

// profilesFile is config/testdata/packer-spreader.yaml with scheduler names
// of this test's own, so that no other test's pods match them.
const profilesFile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
- schedulerName: %s
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
`

// Two profiles from one configuration file, in one process: pods that name
// the packer pile onto one node, pods that name the spreader take a node
// each. One queue and one cache serve both profiles, so each sees the
// other's pods on the nodes.
func TestProfilesPackAndSpread(t *testing.T) {
	e := newEnv(t)
	packer, spreader := e.ns+"-packer", e.ns+"-spreader"
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, profilesFile, packer, spreader), 0o600); err != nil {
		t.Fatal(err)
	}
	// The file must load on its own; a failure past this point is in the
	// scheduler, not in the file.
	if _, err := config.Load(path); err != nil {
		t.Fatalf("load %s: %v", path, err)
	}

	nodes := []string{"a", "b", "c", "d"}
	for _, n := range nodes {
		e.addNode(e.node(n).Capacity("4", "8Gi", 110))
	}
	e.startScheduler(func(o *app.Options) {
		o.ConfigFile = path
		// The harness names a single profile after the namespace; here the
		// file names the profiles, and a --scheduler-name would be refused
		// for a file with two.
		o.Overrides.SchedulerName = nil
	})
	// Pods stay on this test's nodes. Requests are in the nodes' cpu:memory
	// ratio, so NodeResourcesBalancedAllocation scores every node alike and
	// the scoring strategy alone decides.
	own := map[string]string{testLabel: e.ns}

	// Spread first: on empty nodes LeastAllocated gives each pod a node of
	// its own (an emptier node always scores higher).
	var spread []string
	for i := range len(nodes) {
		name := fmt.Sprintf("spread-%d", i)
		e.createPod(e.pod(name).SchedulerName(spreader).Req("500m", "1Gi").NodeSelector(own))
		spread = append(spread, name)
	}
	got := e.waitBound(60*time.Second, spread...)
	perNode := map[string]int{}
	for _, n := range got {
		perNode[n]++
	}
	if len(perNode) != len(nodes) {
		t.Errorf("spreader pods on %d nodes, want one on each of %d: %v", len(perNode), len(nodes), got)
	}

	// Then pack: the first packer pod breaks a tie among equal nodes, and
	// MostAllocated sends every later one to the same, fullest node:
	// 6 × (500m, 1Gi) beside the spreader pod is 3.5 cpu and 7Gi of 4 and 8Gi.
	var packed []string
	for i := range 6 {
		name := fmt.Sprintf("pack-%d", i)
		e.createPod(e.pod(name).SchedulerName(packer).Req("500m", "1Gi").NodeSelector(own))
		packed = append(packed, name)
	}
	got = e.waitBound(60*time.Second, packed...)
	onto := map[string]bool{}
	for _, n := range got {
		onto[n] = true
	}
	if len(onto) != 1 {
		t.Errorf("packer pods on %d nodes, want all on one: %v", len(onto), got)
	}
	e.assertNoOvercommit()
}
