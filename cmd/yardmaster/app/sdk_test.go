package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// fewestPods scores nodes by how few pods they run.
type fewestPods struct{ bias int64 }

func (fewestPods) Name() string { return "FewestPods" }

func (f fewestPods) Score(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	return max(framework.MinNodeScore, framework.MaxNodeScore-int64(len(ni.Pods))-f.bias), nil
}

func (fewestPods) ScoreExtensions() framework.ScoreExtensions { return nil }

type fewestPodsArgs struct {
	Bias int64 `json:"bias"`
}

func fewestPodsRegistration() framework.Registration {
	return framework.Registration{
		Name:    "FewestPods",
		Points:  []string{framework.PointScore},
		NewArgs: func() any { return &fewestPodsArgs{} },
		ValidateArgs: func(a any) error {
			if a.(*fewestPodsArgs).Bias < 0 {
				return errors.New("bias: must not be negative")
			}
			return nil
		},
		New: func(a any, _ framework.Handle) ([]framework.Plugin, error) {
			return []framework.Plugin{fewestPods{bias: a.(*fewestPodsArgs).Bias}}, nil
		},
	}
}

// A plugin added with WithPlugin is known to `config validate` (and so
// to every command that reads the file) by its name, with its args;
// without it, the same file is refused.
func TestWithPlugin(t *testing.T) {
	file := func(args string) string {
		p := filepath.Join(t.TempDir(), "config.yaml")
		data := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: yardmaster\n" +
			"  plugins:\n    multiPoint:\n      enabled:\n      - name: FewestPods\n        weight: 3\n" +
			"  pluginConfig:\n  - name: FewestPods\n    args:\n" + args
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(opts []Option, args ...string) (string, error) { return execute(NewCommand(opts...), args...) }
	with := []Option{WithPlugin(fewestPodsRegistration())}

	out, err := run(with, "config", "validate", file("      bias: 2\n"))
	if err != nil {
		t.Fatalf("config validate with the plugin: %v\n%s", err, out)
	}
	for _, want := range []string{"name: FewestPods", "weight: 3", "bias: 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("effective configuration lacks %q:\n%s", want, out)
		}
	}
	if _, err := run(with, "config", "validate", file("      bias: -1\n")); err == nil || !strings.Contains(err.Error(), "bias") {
		t.Errorf("bad args: %v, want an error naming bias", err)
	}
	if _, err := run(with, "config", "validate", file("      bais: 1\n")); err == nil || !strings.Contains(err.Error(), "bais") {
		t.Errorf("unknown field: %v, want an error naming it", err)
	}
	if _, err := run(nil, "config", "validate", file("      bias: 2\n")); err == nil || !strings.Contains(err.Error(), `"FewestPods"`) {
		t.Errorf("without the plugin: %v, want unknown plugin", err)
	}
	dup := framework.Registration{Name: "NodeName", Points: []string{framework.PointFilter}}
	if _, err := run([]Option{WithPlugin(dup)}, "version"); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("a built-in name again: %v, want it refused", err)
	}
}
