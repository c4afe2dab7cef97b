package deploy_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// dashboard is the Grafana dashboard shipped in deploy/.
const dashboard = "grafana/yardmaster-dashboard.json"

// Every metric the dashboard queries is one the daemon exports: a renamed
// or removed metric fails here, not as an empty panel in someone's Grafana.
func TestDashboardMetricsExist(t *testing.T) {
	exported := exportedMetrics(t)
	queries := dashboardQueries(t)
	if len(queries) == 0 {
		t.Fatalf("%s has no PromQL queries", dashboard)
	}
	used := map[string]bool{}
	for _, q := range queries {
		names := metricNames(q)
		if len(names) == 0 {
			t.Errorf("query %q names no metric", q)
		}
		for _, n := range names {
			used[n] = true
			if !exported[n] {
				t.Errorf("query %q uses %s, which yardmaster does not export", q, n)
			}
		}
	}
	// Every family the daemon exports has a panel, unless notOnDashboard
	// names it: a new metric gets a panel with it.
	for n := range exported {
		if seriesOf(n, exported) != n || onDashboard(n, used) {
			continue
		}
		if notOnDashboard(n) == "" {
			t.Errorf("%s has no panel over %s, which yardmaster exports; add one (or, if it makes no sense on a dashboard, name it in notOnDashboardNames with why)", dashboard, n)
		}
	}
	// An entry of the allow-list that matches no exported family, or
	// one the dashboard shows after all, is stale.
	for _, e := range notOnDashboardNames {
		matched := false
		for n := range exported {
			if seriesOf(n, exported) == n && matches(e.name, n) {
				matched = true
				if onDashboard(n, used) && !strings.HasSuffix(e.name, "*") {
					t.Errorf("notOnDashboardNames names %s, which the dashboard shows: remove it", n)
				}
			}
		}
		if !matched {
			t.Errorf("notOnDashboardNames names %s, which yardmaster does not export: remove it", e.name)
		}
	}
}

// notOnDashboardNames are the families the daemon exports that no panel
// needs to show, each with why; a name ending in * is a prefix.
var notOnDashboardNames = []struct{ name, why string }{
	{"go_info", "the Go version: a constant, in the build, not a time series"},
	{"go_memstats_*", "the Go allocator's own accounts; the Memory and Allocation panels show the heap in use, the next collection's goal and the allocation rate"},
	{"process_virtual_memory_bytes", "address space reserved, not used: the Memory panel shows the resident set"},
	{"process_virtual_memory_max_bytes", "the address-space limit, unlimited in a container"},
}

// notOnDashboard returns why family n has no panel, or "".
func notOnDashboard(n string) string {
	for _, e := range notOnDashboardNames {
		if matches(e.name, n) {
			return e.why
		}
	}
	return ""
}

func matches(pattern, n string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(n, p)
	}
	return pattern == n
}

// seriesOf returns the family a series name of exported belongs to: n
// without its _bucket, _sum or _count when that family is exported too.
func seriesOf(n string, exported map[string]bool) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := strings.CutSuffix(n, suffix); ok && exported[f] {
			return f
		}
	}
	return n
}

// onDashboard reports whether a query uses family n or one of its series.
func onDashboard(n string, used map[string]bool) bool {
	return used[n] || used[n+"_bucket"] || used[n+"_sum"] || used[n+"_count"]
}

// kubectl apply (client-side) keeps the whole object in the
// last-applied-configuration annotation, and the API server refuses
// annotations over 256 KiB in all: a dashboard over that cannot be
// applied with `kubectl apply -k` (nor loaded by a ConfigMap over 1 MiB).
func TestDashboardFitsAnAnnotation(t *testing.T) {
	const limit = 256 << 10
	fi, err := os.Stat(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	// Room for the rest of the ConfigMap and the JSON escaping of the
	// file inside the annotation (quotes and newlines, about a tenth).
	if max := limit * 3 / 4; fi.Size() > int64(max) {
		t.Errorf("%s is %d bytes, over %d: kubectl apply -k could not apply its ConfigMap; split the dashboard", dashboard, fi.Size(), max)
	}
}

// dashboardQueries returns the PromQL of every panel target, rows' nested
// panels included, and of every templating variable.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		Expr string `json:"expr"`
	}
	type panel struct {
		Title   string   `json:"title"`
		Targets []target `json:"targets"`
		Panels  []panel  `json:"panels"`
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboard, err)
	}
	var out []string
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("panel %q has a target without expr", p.Title)
					continue
				}
				out = append(out, tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// Grafana writes a query variable's query as a string or as
		// {"query": "..."}, depending on its version.
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q.Query); err != nil {
			if err := json.Unmarshal(v.Query, &q); err != nil {
				t.Fatalf("templating query %s: %v", v.Query, err)
			}
		}
		out = append(out, templateExpr(q.Query))
	}
	return out
}

// labelValues is Grafana's label_values(expr, label) and label_values(label).
var labelValues = regexp.MustCompile(`^\s*label_values\((?:(.*),)?\s*[a-zA-Z_]\w*\s*\)\s*$`)

// templateExpr returns the PromQL inside a Grafana variable's query.
func templateExpr(q string) string {
	if m := labelValues.FindStringSubmatch(q); m != nil {
		return m[1]
	}
	return q
}

// exportedMetrics builds the daemon as `yardmaster run` does, with the
// configuration deploy/ ships plus the NetworkTraffic plugin (whose metrics
// the dashboard shows), and returns the names a scrape of it can show:
// every family its registry describes, and for histograms and summaries
// the _bucket, _sum and _count series.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	base, err := os.ReadFile("base/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(base) + `
  plugins:
    multiPoint:
      enabled:
      - name: NetworkTraffic
  pluginConfig:
  - name: NetworkTraffic
    args:
      prometheusAddress: http://127.0.0.1:1
`
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := app.NewDaemon(app.Options{
		ConfigFile: file,
		RESTConfig: &rest.Config{Host: "https://127.0.0.1:1"},
	}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}

	// A vector shows in Gather only once a series of it exists, so the
	// names come from Describe and a family's type from Gather, where it
	// has a series. The histograms whose series appear only with events
	// (a label value taken from the event) are named in
	// histogramsWithoutSeries; any other family without a series is
	// allowed under its own name only.
	types := map[string]dto.MetricType{}
	families, err := d.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		types[f.GetName()] = f.GetType()
	}
	for _, n := range histogramsWithoutSeries {
		if typ, ok := types[n]; ok && typ != dto.MetricType_HISTOGRAM {
			t.Errorf("%s is a %s, not a histogram", n, typ)
		}
		types[n] = dto.MetricType_HISTOGRAM
	}
	ch := make(chan *prometheus.Desc)
	go func() {
		d.Metrics.Describe(ch)
		close(ch)
	}()
	out := map[string]bool{}
	for desc := range ch {
		name := descName(t, desc)
		out[name] = true
		switch types[name] {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			out[name+"_bucket"] = true
			fallthrough
		case dto.MetricType_SUMMARY:
			out[name+"_sum"], out[name+"_count"] = true, true
		}
	}
	for _, n := range histogramsWithoutSeries {
		if !out[n] {
			t.Errorf("histogramsWithoutSeries names %s, which the daemon does not register", n)
		}
	}
	// Sanity: the wiring registered what the dashboard is about.
	for _, n := range []string{"scheduler_schedule_attempts_total", "leader_election_master_status", "yardmaster_prometheus_query_duration_seconds"} {
		if !out[n] {
			t.Fatalf("the daemon's registry has no %s; names: %v", n, slices.Sorted(maps.Keys(out)))
		}
	}
	return out
}

// histogramsWithoutSeries are the daemon's histograms that have no series
// until something happens (metrics/metrics.go), so that Gather cannot tell
// their type.
var histogramsWithoutSeries = []string{
	"scheduler_pod_scheduling_sli_duration_seconds",
	"scheduler_framework_extension_point_duration_seconds",
	"scheduler_plugin_execution_duration_seconds",
	"scheduler_permit_wait_duration_seconds",
	"scheduler_podgroup_scheduling_attempt_duration_seconds",
}

// fqName is in Desc's String, the only place client_golang shows it.
var fqName = regexp.MustCompile(`^Desc\{fqName: "([^"]+)"`)

func descName(t *testing.T, d *prometheus.Desc) string {
	t.Helper()
	m := fqName.FindStringSubmatch(d.String())
	if m == nil {
		t.Fatalf("no fqName in %s", d)
	}
	return m[1]
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`rate(a_total{job=~"$job", x="y}"}[$__rate_interval])`, []string{"a_total"}},
		{`histogram_quantile(0.99, sum by (le, result) (rate(h_bucket{a="b"}[5m])))`, []string{"h_bucket"}},
		{`sum(rate(x[1m])) by (le) / on (instance) group_left (name) y offset 5m`, []string{"x", "y"}},
		{`sum without (instance) (a) and ignoring (b) c unless d or e > bool 1e3`, []string{"a", "c", "d", "e"}},
		{`max(leader_election_master_status{job=~"$job"}) @ end()`, []string{"leader_election_master_status"}},
		{`{__name__="named"}`, nil},
		{`ns:rule:rate5m * -Inf + NaN`, []string{"ns:rule:rate5m"}},
		{`x[5m:30s] # a comment naming y`, []string{"x"}},
		{`'single' + "double\"" + ` + "`raw`", nil},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, metricNames(tc.expr)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// metricNames returns the metric names a PromQL expression selects, in
// order. It is a tokenizer, not a parser (Prometheus's parser would pull
// all of Prometheus into the module): an identifier is a metric unless it
// is a function or aggregation (followed by "("), a keyword, a number, or
// a label name (inside {...}, or in the list after by, without, on,
// ignoring, group_left, group_right). Strings, label matchers, ranges and
// comments are skipped. A selector by {__name__=...} alone is not seen.
func metricNames(expr string) []string {
	var out []string
	s := expr
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == '"' || c == '\'' || c == '`':
			s = skipString(s)
		case c == '{':
			s = skipGroup(s, '{', '}')
		case c == '[':
			s = skipGroup(s, '[', ']')
		case c == '#':
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i:]
			} else {
				s = ""
			}
		case c == '$':
			// A Grafana variable: $name or ${name}.
			s = s[1:]
			if strings.HasPrefix(s, "{") {
				s = skipGroup(s, '{', '}')
			} else {
				_, s = ident(s)
			}
		case c >= '0' && c <= '9' || c == '.':
			// A number or a duration: 0.99, 1e3, 5m, 0x1f.
			i := 1
			for i < len(s) && (isIdent(s[i]) || s[i] == '.' || (s[i] == '+' || s[i] == '-') && (s[i-1] == 'e' || s[i-1] == 'E')) {
				i++
			}
			s = s[i:]
		case isIdentStart(c):
			var id string
			id, s = ident(s)
			rest := strings.TrimLeft(s, " \t\r\n")
			switch {
			case labelLists[strings.ToLower(id)]:
				if strings.HasPrefix(rest, "(") {
					s = skipGroup(rest, '(', ')')
				}
			case keywords[strings.ToLower(id)]:
			case strings.HasPrefix(rest, "("):
				// A function or an aggregation.
			case aggregations[id] && modifier.MatchString(rest):
				// An aggregation with its by or without first.
			default:
				out = append(out, id)
			}
		default:
			s = s[1:]
		}
	}
	return out
}

// labelLists are the keywords followed by a list of label names.
var labelLists = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true,
}

// aggregations are PromQL's aggregation operators, which may take their
// by or without clause before their arguments.
var aggregations = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true,
	"stddev": true, "stdvar": true, "count": true, "count_values": true,
	"bottomk": true, "topk": true, "quantile": true, "limitk": true,
	"limit_ratio": true,
}

// modifier is the start of an aggregation's by or without clause.
var modifier = regexp.MustCompile(`^(?i:by|without)\s*\(`)

// keywords are PromQL's other reserved words and literals.
var keywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"inf": true, "nan": true, "atan2": true,
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func ident(s string) (id, rest string) {
	i := 0
	for i < len(s) && isIdent(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// skipString skips a quoted string at the start of s.
func skipString(s string) string {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q != '`':
			i++
		case s[i] == q:
			return s[i+1:]
		}
	}
	return ""
}

// skipGroup skips a bracketed group at the start of s, strings and nested
// groups included.
func skipGroup(s string, open, close byte) string {
	depth := 0
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '"' || c == '\'' || c == '`':
			rest := skipString(s[i:])
			i = len(s) - len(rest)
			continue
		case c == open:
			depth++
		case c == close:
			depth--
			if depth == 0 {
				return s[i+1:]
			}
		}
		i++
	}
	return ""
}
