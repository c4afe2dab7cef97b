package app

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
