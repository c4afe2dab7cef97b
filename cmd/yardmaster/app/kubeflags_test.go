package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/yardmaster-io/yardmaster/config"
)

// execute runs cmd with args in-process and returns what it printed and
// its error.
func execute(cmd *cobra.Command, args ...string) (string, error) {
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// runCommand runs yardmaster's command line in-process.
func runCommand(args ...string) (string, error) { return execute(NewCommand(), args...) }

// kube-scheduler's flags that yardmaster refuses fail by name, with why,
// with or without `run`, before anything starts.
func TestRefusedKubeSchedulerFlags(t *testing.T) {
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"feature-gates", []string{"--feature-gates=SchedulerQueueingHints=true"}},
		{"master", []string{"run", "--master=https://127.0.0.1:6443"}},
		{"vmodule", []string{"--vmodule=schedule_one=4", "--leader-elect=false"}},
		{"log-json-split-stream", []string{"--log-json-split-stream"}},
	} {
		_, err := runCommand(tc.args...)
		if err == nil || !strings.Contains(err.Error(), "--"+tc.flag+" is kube-scheduler's and yardmaster does not take it: ") {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}

// --write-config-to writes the effective configuration, overrides and
// defaults included, and exits, as kube-scheduler does; the file loads.
func TestWriteConfigTo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "effective.yaml")
	if _, err := runCommand("--scheduler-name=packer", "--parallelism=4", "--write-config-to="+path); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatalf("the written file does not load: %v", err)
	}
	if c.Profiles[0].SchedulerName != "packer" || c.Parallelism != 4 {
		t.Errorf("written: scheduler %q, parallelism %d; want packer, 4", c.Profiles[0].SchedulerName, c.Parallelism)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "kind: KubeSchedulerConfiguration") {
		t.Errorf("written:\n%s (%v)", b, err)
	}
}

// Run as kube-scheduler (the image's symlink), the scheduler takes
// kube-scheduler's default profile and Lease names; under its own name,
// its own.
func TestKubeSchedulerProgramName(t *testing.T) {
	for _, tc := range []struct {
		argv0, profile, lease string
	}{
		{"/usr/local/bin/kube-scheduler", "default-scheduler", "kube-scheduler"},
		{"kube-scheduler", "default-scheduler", "kube-scheduler"},
		{"/usr/local/bin/yardmaster", "yardmaster", "yardmaster"},
	} {
		t.Run(tc.argv0, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "effective.yaml")
			if code := ExecuteArgv([]string{tc.argv0, "--write-config-to=" + path}); code != 0 {
				t.Fatalf("exit code %d", code)
			}
			c, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.Profiles[0].SchedulerName != tc.profile || c.LeaderElection.ResourceName != tc.lease {
				t.Errorf("profile %q, lease %q; want %q, %q", c.Profiles[0].SchedulerName, c.LeaderElection.ResourceName, tc.profile, tc.lease)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	out, err := runCommand("--version")
	if err != nil || !strings.HasPrefix(out, "yardmaster ") {
		t.Errorf("--version: %q, %v", out, err)
	}
}
