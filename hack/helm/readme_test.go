package helm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/yardmaster-io/yardmaster/hack/helm"
)

// The chart's README.md has the values table values.yaml makes: a value
// added, removed, or with a new default or description fails here until
// `make helm-docs` is run; and every value has a description.
func TestReadmeValuesTable(t *testing.T) {
	values, err := os.ReadFile(filepath.Join(helm.Chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := helm.ValuesTable(values)
	if err != nil {
		t.Fatalf("values.yaml: %v\nevery value needs a description: a \"# --\" comment right above it (or above the mapping holding it)", err)
	}
	path := filepath.Join(helm.Chart, "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := helm.UpdateReadme(readme, table)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(readme)); diff != "" {
		t.Errorf("%s: the values table is out of date; run `make helm-docs` (-want +got):\n%s", path, diff)
	}
}

func TestValuesTable(t *testing.T) {
	const header = "| Key | Type | Default | Description |\n|-----|------|---------|-------------|\n"
	for _, tc := range []struct {
		name, values string
		want         string // the rows, or the error's text
		wantErr      bool
	}{{
		name: "scalars",
		values: `
# -- The replicas.
replicas: 2
# -- A name; empty: the chart's.
name: ""
# -- On or off.
on: false
`,
		want: "| `replicas` | int | `2` | The replicas. |\n" +
			"| `name` | string | `\"\"` | A name; empty: the chart's. |\n" +
			"| `on` | bool | `false` | On or off. |\n",
	}, {
		name: "a mapping described key by key, or whole",
		values: `
image:
  # -- The repository.
  repository: yardmaster
# -- The resources,
# on two lines.
resources:
  limits: {cpu: "2"}
`,
		want: "| `image.repository` | string | `\"yardmaster\"` | The repository. |\n" +
			"| `resources` | object | `{\"limits\":{\"cpu\":\"2\"}}` | The resources, on two lines. |\n",
	}, {
		name: "notes above the marker stay out, a | is escaped",
		values: `
# A note for the reader of values.yaml:
#   example: [a, b]
# -- Either a | b.
choice: [a]
`,
		want: "| `choice` | list | `[\"a\"]` | Either a \\| b. |\n",
	}, {
		name:   "a flag starting a line is no marker",
		values: "# -- Arguments after `run\n# --log-format json`.\nextraArgs: []\n",
		want:   "| `extraArgs` | list | `[]` | Arguments after `run --log-format json`. |\n",
	}, {
		name:    "a value without a description",
		values:  "# -- Documented.\na: 1\n# Not a description.\nb: 2\n",
		want:    "b has no",
		wantErr: true,
	}, {
		name:    "an empty mapping without a description",
		values:  "labels: {}\n",
		want:    "labels has no",
		wantErr: true,
	}, {
		name:    "a key in a mapping without a description",
		values:  "image:\n  # -- Documented.\n  repository: x\n  tag: v1\n",
		want:    "image.tag has no",
		wantErr: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := helm.ValuesTable([]byte(tc.values))
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want one saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(header+tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdateReadme(t *testing.T) {
	readme := "# Chart\n\nBy hand.\n\n" + helm.TableBegin + "\nold table\n" + helm.TableEnd + "\n\nAfter.\n"
	got, err := helm.UpdateReadme([]byte(readme), "| new |\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Chart\n\nBy hand.\n\n" + helm.TableBegin + "\n\n| new |\n\n" + helm.TableEnd + "\n\nAfter.\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := helm.UpdateReadme([]byte("no markers\n"), "| new |\n"); err == nil {
		t.Error("UpdateReadme without the markers: no error")
	}
}
