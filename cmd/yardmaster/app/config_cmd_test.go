package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardmaster-io/yardmaster/config"
)

// runConfigCmd runs yardmaster's command line in-process with stdout and
// stderr apart.
func runConfigCmd(args ...string) (stdout, stderr string, err error) {
	cmd := NewCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func writeConfigCmdFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const goodConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: packer
  pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo]
  - name: NotAPlugin
`

const badConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 0
profiles:
- schedulerName: packer
  plugins:
    score:
      enabled:
      - name: ImageLocality
        weight: -1
`

// validationDoc is what -o json prints, as a script reads it.
type validationDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	File       string `json:"file"`
	Valid      bool   `json:"valid"`
	Problems   []struct {
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Field    string `json:"field"`
		Message  string `json:"message"`
		Severity string `json:"severity"`
	} `json:"problems"`
	Effective *struct {
		APIVersion string `json:"apiVersion"`
		Profiles   []struct {
			SchedulerName string `json:"schedulerName"`
		} `json:"profiles"`
	} `json:"effective"`
}

func TestConfigValidateOutput(t *testing.T) {
	good := writeConfigCmdFile(t, "good.yaml", goodConfig)
	bad := writeConfigCmdFile(t, "bad.yaml", badConfig)

	t.Run("default", func(t *testing.T) {
		out, errOut, err := runConfigCmd("config", "validate", good)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := config.Decode([]byte(out)); err != nil {
			t.Errorf("stdout is not the effective configuration: %v\n%s", err, out)
		}
		if !strings.Contains(errOut, good+": valid") || !strings.Contains(errOut, "warning: ") {
			t.Errorf("stderr %q, want the warning and %q", errOut, good+": valid")
		}
	})
	t.Run("yaml", func(t *testing.T) {
		out, errOut, err := runConfigCmd("config", "validate", "-o", "yaml", good)
		if err != nil {
			t.Fatal(err)
		}
		c, err := config.Decode([]byte(out))
		if err != nil || c.Profiles[0].SchedulerName != "packer" {
			t.Errorf("stdout is not the effective configuration: %v\n%s", err, out)
		}
		if strings.Contains(errOut, "valid") || !strings.Contains(errOut, "NotAPlugin") {
			t.Errorf("stderr %q, want only the warning", errOut)
		}
	})
	t.Run("json valid", func(t *testing.T) {
		out, _, err := runConfigCmd("config", "validate", "-o", "json", good)
		if err != nil {
			t.Fatal(err)
		}
		var doc validationDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("not one JSON document: %v\n%s", err, out)
		}
		validate(t, compileSchema(t), []byte(out))
		if doc.APIVersion != "yardmaster.io/v1alpha1" || doc.Kind != "ConfigValidation" || doc.File != good || !doc.Valid {
			t.Errorf("header %+v", doc)
		}
		// The warning: pluginConfig[1] names no plugin yardmaster has.
		if len(doc.Problems) != 1 || doc.Problems[0].Severity != "warning" || doc.Problems[0].Line != 9 ||
			doc.Problems[0].Field != "profiles[0].pluginConfig[1].name" {
			t.Errorf("problems %+v, want the one warning at line 9", doc.Problems)
		}
		if doc.Effective == nil || doc.Effective.APIVersion != "kubescheduler.config.k8s.io/v1" ||
			len(doc.Effective.Profiles) != 1 || doc.Effective.Profiles[0].SchedulerName != "packer" {
			t.Errorf("effective %+v", doc.Effective)
		}
	})
	t.Run("json invalid", func(t *testing.T) {
		out, _, err := runConfigCmd("config", "validate", "-o", "json", bad)
		if err == nil {
			t.Fatal("exit status 0 for a bad file")
		}
		var doc validationDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("not one JSON document: %v\n%s", err, out)
		}
		validate(t, compileSchema(t), []byte(out))
		if doc.Valid || doc.Effective != nil {
			t.Errorf("valid %v, effective %+v: want invalid, none", doc.Valid, doc.Effective)
		}
		want := []struct {
			line  int
			field string
		}{{3, "parallelism"}, {10, "profiles[0].plugins.score.enabled[0].weight"}}
		if len(doc.Problems) != len(want) {
			t.Fatalf("problems %+v, want %d", doc.Problems, len(want))
		}
		for i, w := range want {
			if p := doc.Problems[i]; p.Line != w.line || p.Field != w.field || p.Severity != "error" || p.Message == "" {
				t.Errorf("problem %d is %+v, want line %d field %s", i, p, w.line, w.field)
			}
		}
	})
	t.Run("json unreadable", func(t *testing.T) {
		out, _, err := runConfigCmd("config", "validate", "-o", "json", filepath.Join(t.TempDir(), "missing.yaml"))
		if err == nil || !errors.Is(err, os.ErrNotExist) || out != "" {
			t.Errorf("err %v, stdout %q: want the read error and no document", err, out)
		}
	})
	t.Run("unknown format", func(t *testing.T) {
		if _, _, err := runConfigCmd("config", "validate", "-o", "toml", good); err == nil || !strings.Contains(err.Error(), `--output "toml"`) {
			t.Errorf("err %v", err)
		}
	})
}

func TestConfigPrintDefaultsOutput(t *testing.T) {
	yamlOut, _, err := runConfigCmd("config", "print-defaults", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := runConfigCmd("config", "print-defaults")
	if err != nil {
		t.Fatal(err)
	}
	if yamlOut != plain {
		t.Errorf("-o yaml differs from the default output")
	}
	jsonOut, _, err := runConfigCmd("config", "print-defaults", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(jsonOut)) {
		t.Fatalf("not JSON:\n%s", jsonOut)
	}
	// Both read back to the defaults.
	for name, out := range map[string]string{"yaml": yamlOut, "json": jsonOut} {
		c, err := config.Decode([]byte(out))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		again, err := c.Marshal()
		if err != nil || string(again) != yamlOut {
			t.Errorf("%s does not read back to the defaults (err %v)", name, err)
		}
	}
}

func TestConfigMigrateCommand(t *testing.T) {
	legacy := filepath.Join("..", "..", "..", "config", "testdata", "legacy", "v1beta1-mostallocated.yaml")

	t.Run("stdout", func(t *testing.T) {
		out, errOut, err := runConfigCmd("config", "migrate", legacy)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := config.Decode([]byte(out)); err != nil {
			t.Errorf("the output does not validate: %v\n%s", err, out)
		}
		if !strings.Contains(errOut, legacy+":5:1: note: healthzBindAddress: deleted") {
			t.Errorf("stderr %q lacks the note at line 5", errOut)
		}
	})
	t.Run("--output-file, then validate", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "v1.yaml")
		out, _, err := runConfigCmd("config", "migrate", legacy, "--output-file", dst)
		if err != nil || out != "" {
			t.Fatalf("err %v, stdout %q", err, out)
		}
		if _, _, err := runConfigCmd("config", "validate", dst); err != nil {
			t.Errorf("config validate of the migrated file: %v", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		src := writeConfigCmdFile(t, "old.yaml", "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      enabled:\n      - name: ServiceAffinity\n")
		dst := filepath.Join(t.TempDir(), "v1.yaml")
		_, _, err := runConfigCmd("config", "migrate", src, "--output-file", dst)
		if err == nil || !strings.Contains(err.Error(), src+`:7:15: plugin "ServiceAffinity" has no v1 equivalent`) {
			t.Errorf("err %v", err)
		}
		if _, statErr := os.Stat(dst); !errors.Is(statErr, os.ErrNotExist) {
			t.Errorf("a refused migration wrote %s", dst)
		}
	})
	t.Run("-o json", func(t *testing.T) {
		out, _, err := runConfigCmd("config", "migrate", legacy, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := config.Decode([]byte(out)); err != nil || !strings.HasPrefix(out, "{") {
			t.Errorf("the JSON output does not validate: %v\n%s", err, out)
		}
	})
	t.Run("-o is the format, not the file", func(t *testing.T) {
		dir := t.TempDir()
		_, _, err := runConfigCmd("config", "migrate", legacy, "-o", filepath.Join(dir, "v1.yaml"))
		if err == nil || !strings.Contains(err.Error(), "--output-file") {
			t.Errorf("err %v, want a refusal naming --output-file", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("a refused -o wrote %v", entries)
		}
	})
	t.Run("already v1", func(t *testing.T) {
		src := writeConfigCmdFile(t, "v1.yaml", goodConfig)
		out, errOut, err := runConfigCmd("config", "migrate", src)
		if err != nil || out != goodConfig || !strings.Contains(errOut, "already kubescheduler.config.k8s.io/v1") {
			t.Errorf("err %v, stdout %q, stderr %q", err, out, errOut)
		}
	})
}
