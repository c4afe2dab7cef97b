package e2e

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// flagRE finds the flags a --help lists.
var flagRE = regexp.MustCompile(`(?m)^\s+(?:-[a-z], )?--([a-z0-9-]+)`)

// helpFlags returns the flags bin's --help lists (yardmaster's refused
// kube-scheduler flags are hidden there: they appear in its errors).
func helpFlags(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	out, _ := exec.Command(bin, append(args, "--help")...).CombinedOutput()
	var names []string
	for _, m := range flagRE.FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestKubeSchedulerFlags: every flag of kube-scheduler v1.37's --help is
// one yardmaster takes, or one it refuses by name with its reason; none
// is an "unknown flag".
func TestKubeSchedulerFlags(t *testing.T) {
	kube, err := controlplane.BinaryPath("kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	bin := yardmasterBinary(t)
	kubeFlags := helpFlags(t, kube)
	if len(kubeFlags) < 40 {
		t.Fatalf("kube-scheduler --help lists %d flags: %v", len(kubeFlags), kubeFlags)
	}
	taken := helpFlags(t, bin, "run")
	for _, name := range kubeFlags {
		if slices.Contains(taken, name) || name == "help" {
			continue
		}
		// A refused flag fails at once, naming itself, whatever value.
		out, err := exec.Command(bin, "--"+name+"=x").CombinedOutput()
		if err == nil {
			t.Errorf("--%s: yardmaster exited 0", name)
			continue
		}
		msg := string(out)
		if strings.Contains(msg, "unknown flag") || !strings.Contains(msg, "--"+name+" is kube-scheduler's and yardmaster does not take it: ") {
			t.Errorf("--%s: %s", name, msg)
		}
	}
}
