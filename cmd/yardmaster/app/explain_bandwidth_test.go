package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

const explainFile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: plain
- schedulerName: traffic
  plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: NetworkTraffic
  pluginConfig:
  - name: NetworkTraffic
    args:
      prometheusAddress: %q
      filterAbove: 5000000
`

func TestExplainBandwidth(t *testing.T) {
	if _, ok := registry.NewInTree()[networktraffic.Name]; !ok {
		t.Skip("NetworkTraffic is not in the registry yet")
	}
	var query string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		query = r.Form.Get("query")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[`+
			`{"metric":{"nodename":"busy"},"value":[1,"10000000"]},`+
			`{"metric":{"nodename":"quiet"},"value":[1,"1000000"]},`+
			`{"metric":{"nodename":"broken"},"value":[1,"NaN"]}]}}`)
	}))
	defer prom.Close()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, explainFile, prom.URL), 0o600); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) (string, error) {
		return execute(newExplainBandwidthCommand(registry.NewInTree(), "bandwidth"), args...)
	}
	for _, args := range [][]string{{"--config", path}, {"--config", path, "--profile", "traffic"}} {
		out, err := run(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		for _, want := range []string{
			"profile:    traffic",
			"query:      " + query,
			"answer:     3 series: 2 nodes, 1 invalid values",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
		// NODE BANDWIDTH BYTES/S AGE SCORE NOTE, the age left out.
		for node, want := range map[string]string{
			"busy":  "busy 10 MB/s 10000000 0 filtered: above filterAbove", // 100 − 100×10/10
			"quiet": "quiet 1 MB/s 1000000 90",                             // 100 − 100×1/10
		} {
			if got := tableRow(out, node); got != want {
				t.Errorf("%v: row %q, want %q:\n%s", args, got, want, out)
			}
		}
	}
	// -o json and -o yaml: the BandwidthExplanation, valid against the
	// schema, with the rows of the table; -o wide is the table.
	table, err := run("--config", path)
	if err != nil {
		t.Fatal(err)
	}
	if wide, err := run("--config", path, "-o", "wide"); err != nil || tableWithoutAge(wide) != tableWithoutAge(table) {
		t.Errorf("-o wide (%v) is not the table:\n%s\n%s", err, wide, table)
	}
	schema := compileSchema(t)
	for _, o := range []string{"json", "yaml"} {
		out, err := run("--config", path, "-o", o)
		if err != nil {
			t.Fatalf("-o %s: %v\n%s", o, err, out)
		}
		data := []byte(out)
		if o == "yaml" {
			if data, err = yaml.YAMLToJSON(data); err != nil {
				t.Fatal(err)
			}
		}
		validate(t, schema, data)
		var e BandwidthExplanation
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		if e.APIVersion != explain.APIVersion || e.Kind != KindBandwidthExplanation || e.Profile != "traffic" || e.Query != query ||
			e.NodeNameLabel != "nodename" || e.FilterAbove != 5e6 || e.MaxBandwidth != 0 {
			t.Errorf("-o %s: header %+v", o, e)
		}
		if a := e.Answer; a.Series != 3 || a.Nodes != 2 || a.Invalid != 1 || a.Unlabelled != 0 || a.Duplicates != 0 {
			t.Errorf("-o %s: answer %+v", o, a)
		}
		var got []string
		for _, n := range e.Nodes {
			if n.Bandwidth == nil || n.Measured == nil || n.Recent == nil {
				t.Errorf("-o %s: %s without bandwidth: %+v", o, n.Node, n)
				continue
			}
			got = append(got, fmt.Sprintf("%s %.0f %.0f %.0f %d %v %v", n.Node, *n.Bandwidth, *n.Measured, *n.Recent, n.Score, n.Filtered, n.Stale))
		}
		want := []string{
			"busy 10000000 10000000 0 0 true false",  // 100 − 100×10/10, above filterAbove
			"quiet 1000000 1000000 0 90 false false", // 100 − 100×1/10
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-o %s: nodes (-want +got):\n%s", o, diff)
		}
	}
	if _, err := run("--config", path, "-o", "name"); err == nil || !strings.Contains(err.Error(), "allowed formats are: wide,json,yaml") {
		t.Errorf("-o name: %v", err)
	}

	if _, err := run("--config", path, "--profile", "plain"); err == nil || !strings.Contains(err.Error(), "no NetworkTraffic arguments") {
		t.Errorf("profile without the plugin: %v", err)
	}
	if _, err := run("--config", path, "--profile", "nope"); err == nil || !strings.Contains(err.Error(), `no profile "nope"`) {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := run(); err == nil {
		t.Error("ran without --config")
	}
}

// tableWithoutAge is out with the AGE column of its rows left out.
func tableWithoutAge(out string) string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			if row := tableRow(out, f[0]); row != "" {
				line = row
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// tableRow returns the row of node, its fields joined by single spaces and
// the AGE column left out.
func tableRow(out, node string) string {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[0] == node {
			return strings.Join(append(f[:4:4], f[5:]...), " ")
		}
	}
	return ""
}
