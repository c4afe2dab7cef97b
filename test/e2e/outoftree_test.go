package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// outOfTreeDir is the example module of docs/plugins.md: yardmaster built
// by an outside module with its NodePool plugin.
var outOfTreeDir = filepath.Join("..", "..", "examples", "out-of-tree")

// The labels the example's scheduler-config.yaml gives NodePool.
const (
	poolLabel = "example.com/pool"
	costLabel = "example.com/hourly-cost"
)

// TestOutOfTree builds the example module's binary, as its authors would,
// and runs it: its configuration file enables and configures NodePool
// like a built-in plugin, `config validate` refuses a bad argument by its
// field, yardmaster without the plugin refuses the file, and the running
// binary places pods by pool and cost, leaves a pod whose pool has no
// node Pending with NodePool's reason, and binds it once a node joins
// that pool.
func TestOutOfTree(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "yardmaster-nodepool")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = outOfTreeDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", outOfTreeDir, err, out)
	}
	config, err := filepath.Abs(filepath.Join(outOfTreeDir, "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ConfigValidate", func(t *testing.T) { testOutOfTreeConfig(t, bin, config) })
	t.Run("PlacesByPool", func(t *testing.T) { testOutOfTreePlacement(t, bin, config) })
}

// testOutOfTreeConfig checks the example's file against the example's
// binary and yardmaster's.
func testOutOfTreeConfig(t *testing.T, bin, config string) {
	if out, code := runCommand(t, bin, "config", "validate", config); code != 0 || !strings.Contains(out, "name: NodePool") {
		t.Errorf("%s config validate %s: exit %d, want 0 and NodePool in the effective configuration:\n%s", filepath.Base(bin), config, code, out)
	}

	good, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(good, []byte("poolLabel: "+poolLabel), []byte("poolLabel: "+poolLabel+"/team"), 1)
	if bytes.Equal(bad, good) {
		t.Fatalf("%s does not set poolLabel: %s", config, poolLabel)
	}
	badPath := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(badPath, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	const field = "profiles[0].pluginConfig[0].args.poolLabel: Invalid value"
	if out, code := runCommand(t, bin, "config", "validate", badPath); code == 0 || !strings.Contains(out, field) {
		t.Errorf("config validate with poolLabel %s/team: exit %d, want 1 and %q:\n%s", poolLabel, code, field, out)
	}

	const unknown = `unknown plugin "NodePool"`
	if out, code := runCommand(t, yardmasterBinary(t), "config", "validate", config); code == 0 || !strings.Contains(out, unknown) {
		t.Errorf("yardmaster config validate %s: exit %d, want 1 and %q:\n%s", config, code, unknown, out)
	}
}

// runCommand runs bin with args and returns its combined output and exit
// code.
func runCommand(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return string(out), 0
}

// testOutOfTreePlacement runs the binary on two pools and a spare node:
// team-a's pods go to team-a's cheaper node, a pod without a pool to the
// general pool, and a team-c pod waits until the spare node joins team-c.
func testOutOfTreePlacement(t *testing.T, bin, config string) {
	e := newEnv(t)
	node := func(name string, labels ...string) {
		n := e.node(name).Capacity("4", "8Gi", 110)
		for i := 0; i+1 < len(labels); i += 2 {
			n = n.Label(labels[i], labels[i+1])
		}
		e.addNode(n)
	}
	node("a-dear", poolLabel, "team-a", costLabel, "30")
	node("a-cheap", poolLabel, "team-a", costLabel, "10")
	node("general", poolLabel, "general", costLabel, "20")
	node("spare") // in no pool: no pod goes there until it joins one

	timing := leaseTiming{lease: 4 * time.Second, renew: 3 * time.Second, retry: 500 * time.Millisecond}
	r := e.startReplica(bin, "yardmaster-nodepool", timing, "--config", config)
	r.waitReady()

	// The configured weight (5 × 100 for the cheaper node) outweighs how
	// full the nodes are: 3 × 100m of 4 cpu moves NodeResourcesFit's
	// score by a few points.
	var teamA []string
	for i := range 3 {
		name := fmt.Sprintf("a-%d", i)
		e.createPod(e.pod(name).Label(poolLabel, "team-a").Req("100m", "128Mi"))
		teamA = append(teamA, name)
	}
	e.createPod(e.pod("plain").Req("100m", "128Mi"))
	e.createPod(e.pod("c-0").Label(poolLabel, "team-c").Req("100m", "128Mi"))

	got := e.waitBound(30*time.Second, append(teamA, "plain")...)
	for _, name := range teamA {
		if want := e.ns + "-a-cheap"; got[name] != want {
			t.Errorf("pod %s of team-a bound to %s, want %s, the cheaper node of its pool", name, got[name], want)
		}
	}
	if want := e.ns + "-general"; got["plain"] != want {
		t.Errorf("pod plain, without a pool, bound to %s, want %s (defaultPool general)", got["plain"], want)
	}

	e.waitFailedScheduling("c-0", "node(s) not in the pod's pool")
	e.expectPending("c-0", time.Second)

	// The spare node joins team-c: NodePool's hint queues c-0 at once,
	// long before the unschedulable pods' periodic flush.
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"team-c"}}}`, poolLabel)
	if _, err := e.client.CoreV1().Nodes().Patch(e.ctx, e.ns+"-spare", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("label the spare node: %v", err)
	}
	if got := e.waitBound(15*time.Second, "c-0"); got["c-0"] != e.ns+"-spare" {
		t.Errorf("pod c-0 bound to %s, want %s-spare, the only node of team-c", got["c-0"], e.ns)
	}
}
