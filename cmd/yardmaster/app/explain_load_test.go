package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

const loadFile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: load
  pluginConfig:
  - name: TargetLoadPacking
    args: {prometheusAddress: %[1]q}
  - name: PrometheusScore
    args: {prometheusAddress: %[1]q, query: broken_metric}
  - name: LoadHotSpot
    args: {prometheusAddress: %[1]q, cpuUtilizationAbove: 50}
`

// explain load prints the same view as a table and as a LoadExplanation
// that validates against the schema: a node Prometheus knows has values,
// one it does not has "-" in the table and null in JSON, a failed query is
// an error without an answer, and a filter's rows carry a verdict, not a
// score.
func TestExplainLoad(t *testing.T) {
	// Every query but broken_metric answers 90 for n1 and nothing for n2.
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.Form.Get("query"), "broken_metric") {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"no such metric"}`)
			return
		}
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[`+
			`{"metric":{"nodename":"n1"},"value":[1,"90"]},`+
			`{"metric":{"instance":"x"},"value":[1,"10"]}]}}`)
	}))
	defer prom.Close()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, loadFile, prom.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.LoadWith(path, registry.NewInTree(), config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	node := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")}}}
	}
	client := fake.NewClientset(node("n1"), node("n2"))
	pod, err := hypotheticalPod("100m", "")
	if err != nil {
		t.Fatal(err)
	}
	run := func(output string) string {
		t.Helper()
		profile, plugins, err := loadPlugins(c, "")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := explainLoad(t.Context(), &out, profile, plugins, client, nil, pod, output); err != nil {
			t.Fatalf("-o %q: %v\n%s", output, err, out.String())
		}
		return out.String()
	}

	table := run(outputTable)
	if wide := run(outputWide); wide != table {
		t.Errorf("-o wide is not the table:\n%s\n%s", wide, table)
	}
	for _, want := range []string{
		"profile: load",
		"2 series: 1 nodes, 0 invalid, 1 unlabelled, 0 duplicates",
		"broken_metric",
		"ERROR",
		"memory%:        off",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	// Rows as fields: n2 has no value (-), and a filter's rows a verdict.
	for _, want := range []string{
		"n2 - - 50",
		"n1 90 0 - - filtered: node(s) had CPU utilization above the threshold",
		"n2 - - - - passes",
	} {
		if !hasRow(table, want) {
			t.Errorf("the table has no row %q:\n%s", want, table)
		}
	}

	s := compileSchema(t)
	for _, o := range []string{outputJSON, outputYAML} {
		data := []byte(run(o))
		if o == outputYAML {
			if data, err = yaml.YAMLToJSON(data); err != nil {
				t.Fatal(err)
			}
		}
		validate(t, s, data)
		var e LoadExplanation
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		if e.APIVersion != explain.APIVersion || e.Kind != KindLoadExplanation || e.Profile != "load" {
			t.Errorf("-o %s: apiVersion %q kind %q profile %q", o, e.APIVersion, e.Kind, e.Profile)
		}
		plugins := map[string]LoadPlugin{}
		for _, p := range e.Plugins {
			plugins[p.Name] = p
		}
		tlp, ps, hot := plugins["TargetLoadPacking"], plugins["PrometheusScore"], plugins["LoadHotSpot"]
		if len(tlp.Metrics) != 1 || tlp.Metrics[0].Answer == nil || tlp.Metrics[0].Answer.Series != 2 || tlp.Metrics[0].Answer.Unlabelled != 1 {
			t.Errorf("-o %s: TargetLoadPacking's metrics %+v", o, tlp.Metrics)
		}
		if len(tlp.Nodes) != 2 || tlp.Nodes[0].Node != "n1" || tlp.Nodes[0].Values[0] == nil || *tlp.Nodes[0].Values[0] != 90 ||
			tlp.Nodes[1].Values[0] != nil || tlp.Nodes[1].Added[0] != nil || tlp.Nodes[0].Score == nil {
			t.Errorf("-o %s: TargetLoadPacking's nodes %s", o, mustJSON(t, tlp.Nodes))
		}
		if len(ps.Metrics) != 1 || ps.Metrics[0].Error == "" || ps.Metrics[0].Answer != nil || ps.Metrics[0].Query == "" {
			t.Errorf("-o %s: PrometheusScore's metrics %s", o, mustJSON(t, ps.Metrics))
		}
		if len(hot.Nodes) != 2 || hot.Nodes[0].Rejected == "" || hot.Nodes[0].Score != nil || hot.Nodes[1].Rejected != "" || hot.Nodes[1].Score != nil {
			t.Errorf("-o %s: LoadHotSpot's nodes %s", o, mustJSON(t, hot.Nodes))
		}
	}

	// -o name has no meaning here and is refused before anything is read.
	_, err = execute(newExplainLoadCommand(registry.NewInTree(), "load"), "--all", "--config", path, "-o", "name")
	if err == nil || !strings.Contains(err.Error(), "unable to match a printer suitable for the output format \"name\", allowed formats are: wide,json,yaml") {
		t.Errorf("-o name: %v", err)
	}
}

// hasRow reports whether a line of out has the fields of row.
func hasRow(out, row string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == row {
			return true
		}
	}
	return false
}

// mustJSON is v in JSON, for messages.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
