package configparity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// The files `yardmaster config migrate` writes are v1 files to
// kube-scheduler v1.37 too: it loads each migration of the legacy corpus
// (config/testdata/legacy) and resolves it to the configuration yardmaster
// resolves it to. config's TestMigrateLegacyFiles checks that this
// configuration is what the old file meant.
func TestMigratedFilesParity(t *testing.T) {
	bin, err := controlplane.BinaryPath("kube-scheduler")
	if err != nil {
		t.Skipf("skipping: kube-scheduler is not built (%v); run make control-plane or set %s", err, controlplane.BinDirEnv)
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "config", "testdata", "legacy", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no legacy files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m, err := config.Migrate(data, registry.NewInTree())
			if err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			dir := t.TempDir()
			// The tutorials' kubeconfig path, made one that exists:
			// kube-scheduler reads it.
			kubeconfig := filepath.Join(dir, "kubeconfig")
			if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
				t.Fatal(err)
			}
			out := strings.ReplaceAll(string(m.Output), "/etc/kubernetes/scheduler.conf", kubeconfig)
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			kubeOut, err := runKubeScheduler(t, bin, path)
			if err != nil {
				t.Fatalf("kube-scheduler refuses the migrated file: %v\n%s", err, m.Output)
			}
			ym, err := config.Load(path)
			if err != nil {
				t.Fatalf("yardmaster refuses the migrated file: %v", err)
			}
			ymOut, err := ym.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			want, err := kubeEffective(kubeOut)
			if err != nil {
				t.Fatalf("kube-scheduler's configuration: %v\n%s", err, kubeOut)
			}
			got, err := yardmasterEffective(ymOut)
			if err != nil {
				t.Fatalf("yardmaster's configuration: %v\n%s", err, ymOut)
			}
			allowDocumentedDifferences(want, got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("effective configuration (-kube-scheduler +yardmaster):\n%s", diff)
			}
		})
	}
}
