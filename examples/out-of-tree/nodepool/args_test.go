package nodepool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

func TestValidateArgs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Args)
		// want are the fields the errors name.
		want []string
	}{
		{"defaults", func(*Args) {}, nil},
		{"no default pool", func(a *Args) { a.DefaultPool = "" }, nil},
		{"no pool label", func(a *Args) { a.PoolLabel = "" }, []string{"poolLabel"}},
		{"pool label with two slashes", func(a *Args) { a.PoolLabel = "example.com/pool/team" }, []string{"poolLabel"}},
		{"cost label with a space", func(a *Args) { a.CostLabel = "hourly cost" }, []string{"costLabel"}},
		{"cost label is the pool label", func(a *Args) { a.CostLabel = a.PoolLabel }, []string{"costLabel"}},
		{"default pool not a label value", func(a *Args) { a.DefaultPool = "team a" }, []string{"defaultPool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewArgs()
			tc.change(a)
			if diff := cmp.Diff(tc.want, errorFields(ValidateArgs(a))); diff != "" {
				t.Errorf("fields in error (-want +got):\n%s", diff)
			}
		})
	}
}

// errorFields returns the fields the field.Errors in err name.
func errorFields(err error) []string {
	if err == nil {
		return nil
	}
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return []string{"not an aggregate: " + err.Error()}
	}
	var fields []string
	for _, e := range agg.Errors() {
		var fe *field.Error
		if !errors.As(e, &fe) {
			return []string{"not a field.Error: " + e.Error()}
		}
		fields = append(fields, fe.Field)
	}
	return fields
}

// The registration as yardmaster's configuration loader uses it, through
// `config validate` of a command built with WithPlugin: the example's
// file is valid, and a bad argument or a misspelt one is refused with its
// line and field.
func TestRegistrationInConfig(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("..", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		old, new string
		// want is in the error, after the file's name and the line of
		// new; "" means the file is valid.
		want string
	}{
		{"the example's file", "", "", ""},
		{"a bad pool label", "poolLabel: example.com/pool", "poolLabel: example.com/pool/team",
			`profiles[0].pluginConfig[0].args.poolLabel: Invalid value: "example.com/pool/team"`},
		{"a misspelt field", "costLabel:", "costlabel:",
			`profiles[0].pluginConfig[0].args.costlabel: unknown field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(string(file), tc.old, tc.new, 1)
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := app.NewCommand(app.WithPlugin(Registration()))
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs([]string{"config", "validate", path})
			err := cmd.Execute()
			if tc.want == "" {
				if err != nil {
					t.Errorf("config validate: %v\n%s", err, &out)
				}
				return
			}
			line := strings.Count(text[:strings.Index(text, tc.new)], "\n") + 1
			if want := fmt.Sprintf("%s:%d:", path, line); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("config validate: %v, want an error at %s with %q", err, want, tc.want)
			}
		})
	}
}
