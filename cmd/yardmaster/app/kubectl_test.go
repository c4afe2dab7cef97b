package app

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/yardmaster-io/yardmaster/docs/schemas"
	"github.com/yardmaster-io/yardmaster/explain"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

func TestParsePodArgs(t *testing.T) {
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{args: []string{"web-1"}, want: "web-1"},
		{args: []string{"pod/web-1"}, want: "web-1"},
		{args: []string{"pods/web-1"}, want: "web-1"},
		{args: []string{"po/web-1"}, want: "web-1"},
		{args: []string{"Pod/web-1"}, want: "web-1"},
		{args: []string{"pod/bandwidth"}, want: "bandwidth"},
		{args: []string{"pod", "web-1"}, want: "web-1"},
		{args: []string{"po", "web-1"}, want: "web-1"},
		// kubectl reads no NAMESPACE/NAME: the namespace is -n's.
		{args: []string{"shop/web-1"}, wantErr: `explain takes a pod, not "shop"`},
		{args: []string{"deployment/web"}, wantErr: `explain takes a pod, not "deployment"`},
		{args: []string{"deploy", "web"}, wantErr: `explain takes a pod, not "deploy"`},
		{args: []string{"pod", "pod/web-1"}, wantErr: "no need to specify a resource type"},
		{args: []string{"pod/"}, wantErr: `"" is not a pod name`},
		{args: []string{"pod/a/b"}, wantErr: `"a/b" is not a pod name`},
		{args: []string{"a", "b", "c"}, wantErr: "got 3 arguments"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parsePodArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("%q %v, want %q", got, err, tc.want)
			}
		})
	}
}

func TestParseExplainArgs(t *testing.T) {
	tests := []struct {
		args    []string
		want    explainTarget
		wantErr string
	}{
		{args: []string{"web-1"}, want: explainTarget{name: "web-1"}},
		{args: []string{"podgroup/train"}, want: explainTarget{name: "train", podGroup: true}},
		{args: []string{"podgroups/train"}, want: explainTarget{name: "train", podGroup: true}},
		{args: []string{"pg/train"}, want: explainTarget{name: "train", podGroup: true}},
		{args: []string{"PodGroup", "train"}, want: explainTarget{name: "train", podGroup: true}},
		{args: []string{"podgroups.scheduling.k8s.io/train"}, want: explainTarget{name: "train", podGroup: true, api: "scheduling.k8s.io"}},
		{args: []string{"podgroup.scheduling.x-k8s.io/train"}, want: explainTarget{name: "train", podGroup: true, api: "scheduling.x-k8s.io"}},
		{args: []string{"podgroups.example.com/train"}, wantErr: `not "podgroups.example.com"`},
		{args: []string{"pods.scheduling.k8s.io/web"}, wantErr: `not "pods.scheduling.k8s.io"`},
		{args: []string{"pg/"}, wantErr: `"" is not a pod group name`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parseExplainArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("%+v %v, want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := parsePodArgs([]string{"pg/train"}); err == nil {
		t.Error("parsePodArgs took a pod group")
	}
}

func TestParseNodeArgs(t *testing.T) {
	got, err := parseNodeArgs([]string{"n1", "node/n2", "nodes/n3", "no/n4", "Node/n5"})
	if diff := cmp.Diff([]string{"n1", "n2", "n3", "n4", "n5"}, got); diff != "" || err != nil {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
	for _, arg := range []string{"pod/n1", "node/", "node/a/b"} {
		if _, err := parseNodeArgs([]string{arg}); err == nil {
			t.Errorf("%s: no error", arg)
		}
	}
}

func TestCheckOutput(t *testing.T) {
	for o, want := range map[string]string{"": "", "wide": "wide", "json": "json", "yaml": "yaml", "name": "name",
		"table": "", "jsonpath={.pod}": "error", "xml": "error", "JSON": "error"} {
		got := o
		if err := checkOutput(&got); err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("-o %q: %q, want %q", o, got, want)
		}
	}
}

// twoContexts is a kubeconfig of one cluster (nobody listens there), two
// users and two contexts with their own namespaces; the current one is a.
const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: alice
  user: {token: alice-token}
- name: bob
  user: {token: bob-token}
- name: carol-as-admin
  user: {token: carol-token, as: admin}
contexts:
- name: a
  context: {cluster: c, user: alice, namespace: ns-a}
- name: b
  context: {cluster: c, user: bob, namespace: ns-b}
- name: none
  context: {cluster: c, user: alice}
current-context: a
`

// kubectl's flags mean what they mean in kubectl: the namespace is -n's,
// else the context's, else default; --context and --user switch; --as,
// --token and --request-timeout reach the client configuration.
func TestConfigFlags(t *testing.T) {
	kubeconfig := writeFile(t, "kubeconfig", twoContexts)
	tests := []struct {
		args      []string
		wantNS    string
		wantToken string
		wantAs    string
		wantTO    time.Duration
		wantErr   string
	}{
		{args: nil, wantNS: "ns-a", wantToken: "alice-token"},
		{args: []string{"--context", "b"}, wantNS: "ns-b", wantToken: "bob-token"},
		{args: []string{"--context=b", "-n", "shop"}, wantNS: "shop", wantToken: "bob-token"},
		{args: []string{"--context=none"}, wantNS: "default", wantToken: "alice-token"},
		{args: []string{"--user=bob"}, wantNS: "ns-a", wantToken: "bob-token"},
		{args: []string{"--token=t"}, wantNS: "ns-a", wantToken: "t"},
		{args: []string{"--as=carol", "--as-group=g"}, wantNS: "ns-a", wantToken: "alice-token", wantAs: "carol"},
		{args: []string{"--request-timeout=5s"}, wantNS: "ns-a", wantToken: "alice-token", wantTO: 5 * time.Second},
		{args: []string{"--request-timeout=7"}, wantNS: "ns-a", wantToken: "alice-token", wantTO: 7 * time.Second},
		{args: []string{"--request-timeout=soon"}, wantNS: "ns-a", wantErr: "Invalid timeout value"},
		{args: []string{"--context=nope"}, wantErr: `context "nope" does not exist`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cf := newConfigFlags()
			cmd := &cobra.Command{}
			cf.AddFlags(cmd.Flags())
			if err := cmd.ParseFlags(append([]string{"--kubeconfig", kubeconfig}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			ns, nsErr := namespace(cf)
			cfg, err := restConfig(cf)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if nsErr != nil || err != nil {
				t.Fatal(nsErr, err)
			}
			if ns != tc.wantNS || cfg.BearerToken != tc.wantToken || cfg.Impersonate.UserName != tc.wantAs || cfg.Timeout != tc.wantTO {
				t.Errorf("namespace %q token %q as %q timeout %v, want %q %q %q %v", ns, cfg.BearerToken, cfg.Impersonate.UserName, cfg.Timeout,
					tc.wantNS, tc.wantToken, tc.wantAs, tc.wantTO)
			}
		})
	}
}

// runPlugin runs `kubectl yardmaster args...` in-process and returns its
// stdout, stderr and exit code.
func runPlugin(args ...string) (stdout, stderr string, code int) {
	root := kubectlPluginCommand(registry.NewInTree())
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	code = runRoot(root, args, &errOut, "kubectl yardmaster")
	return out.String(), errOut.String(), code
}

// The exit code says whether pods fit: 0 all placed, 2 one stays Pending,
// 1 an error, whatever the output format.
func TestExitCodes(t *testing.T) {
	cluster := writeFile(t, "cluster.yaml", clusterFile)
	volumes := writeFile(t, "volumes.yaml", volumeClusterFile)
	web := writeFile(t, "web.yaml", webFile)
	pods := writeFile(t, "pods.yaml", volumePodsFile)
	kubeconfig := writeFile(t, "kubeconfig", twoContexts)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "all placed", args: []string{"simulate", "--cluster-file", cluster, "--add", web}, wantCode: ExitPlaced, wantStdout: "4 placed, 0 Pending."},
		{name: "all placed, -o name prints no pod", args: []string{"simulate", "--cluster-file", cluster, "--add", web, "-o", "name"}, wantCode: ExitPlaced},
		{name: "one Pending", args: []string{"simulate", "--cluster-file", volumes, "--add", pods}, wantCode: ExitPending,
			wantStdout: "1 placed, 1 Pending.", wantStderr: "kubectl yardmaster: 1 of 2 pods would stay Pending"},
		{name: "one Pending, -o name", args: []string{"simulate", "--cluster-file", volumes, "--add", pods, "-o", "name"}, wantCode: ExitPending,
			wantStdout: "pod/b\n"},
		{name: "one Pending, -o wide", args: []string{"simulate", "--cluster-file", volumes, "--add", pods, "-o", "wide"}, wantCode: ExitPending,
			wantStdout: "default/b  Pending  0/2       yardmaster"},
		{name: "capacity alone is a number", args: []string{"simulate", "--cluster-file", cluster, "--capacity", web}, wantCode: ExitPlaced,
			wantStdout: "Capacity: 6 more replicas fit."},
		{name: "drained pod Pending", args: []string{"simulate", "--cluster-file", cluster, "--drain", "n2", "-o", "json"}, wantCode: ExitPending,
			wantStdout: `"kind": "SimulationResult"`},
		{name: "unknown output", args: []string{"simulate", "--cluster-file", cluster, "-o", "xml"}, wantCode: ExitError,
			wantStderr: `output format "xml"`},
		{name: "unreadable file", args: []string{"simulate", "--cluster-file", cluster, "--add", "/nonexistent"}, wantCode: ExitError},
		{name: "--cluster is kubectl's", args: []string{"simulate", "--kubeconfig", kubeconfig, "--cluster", cluster}, wantCode: ExitError,
			wantStderr: "the file to simulate on is --cluster-file"},
		{name: "unknown TYPE", args: []string{"explain", "deploy/web"}, wantCode: ExitError, wantStderr: `explain takes a pod, not "deploy"`},
		{name: "kept without scheduler", args: []string{"explain", "web", "--kept"}, wantCode: ExitError, wantStderr: "--kept needs --scheduler-url"},
		{name: "impersonation at the scheduler", args: []string{"explain", "web", "--kubeconfig", kubeconfig, "--scheduler-url", "https://127.0.0.1:1", "--as", "carol"},
			wantCode: ExitError, wantStderr: "does not impersonate"},
		{name: "the kubeconfig user's impersonation at the scheduler", args: []string{"explain", "web", "--kubeconfig", kubeconfig, "--user", "carol-as-admin", "--scheduler-url", "https://127.0.0.1:1"},
			wantCode: ExitError, wantStderr: "does not impersonate"},
		{name: "API unreachable", args: []string{"explain", "web", "--kubeconfig", kubeconfig, "--request-timeout", "2s"}, wantCode: ExitError,
			wantStderr: "127.0.0.1:1"},
		{name: "unknown flag", args: []string{"explain", "web", "--nope"}, wantCode: ExitError, wantStderr: "unknown flag: --nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runPlugin(tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, stdout)
			}
			if tc.wantStdout == "" && tc.wantCode != ExitError && strings.Contains(tc.name, "-o name") && stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantStderr, stderr)
			}
		})
	}
}

// Pods of --add that name no namespace go to the namespace kubectl would
// create them in: -n's, else the context's.
func TestSimulateNamespaceFromContext(t *testing.T) {
	cluster := writeFile(t, "cluster.yaml", clusterFile)
	pod := writeFile(t, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: single}\nspec: {containers: [{name: c, image: x}]}\n")
	kubeconfig := writeFile(t, "kubeconfig", twoContexts)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "ns-a/single"},
		{[]string{"--context", "b"}, "ns-b/single"},
		{[]string{"--context", "b", "-n", "shop"}, "shop/single"},
	} {
		args := append([]string{"simulate", "--cluster-file", cluster, "--add", pod, "--kubeconfig", kubeconfig, "-o", "json"}, tc.args...)
		stdout, stderr, code := runPlugin(args...)
		if code != ExitPlaced {
			t.Fatalf("%v: exit code %d: %s", tc.args, code, stderr)
		}
		var res SimulationResult
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Placements) != 1 || res.Placements[0].Pod != tc.want {
			t.Errorf("%v: placements %+v, want %s", tc.args, res.Placements, tc.want)
		}
	}
}

// explain's subcommands are bandwidth and load; a pod of that name is
// pod/NAME. explain-bandwidth and explain-load still run, hidden, with a
// deprecation notice on stderr.
func TestExplainCommandFamily(t *testing.T) {
	for _, root := range []*cobra.Command{NewCommand(), kubectlPluginCommand(registry.NewInTree())} {
		for args, want := range map[string]string{
			"explain bandwidth --config x":        "bandwidth",
			"explain load --all":                  "load",
			"explain pod/bandwidth":               "explain",
			"explain -n shop web-1":               "explain",
			"explain --context b load node/n1":    "load",
			"explain --namespace shop pod/load":   "explain",
			"explain --kubeconfig k bandwidth -h": "bandwidth",
		} {
			cmd, _, err := root.Find(strings.Fields(args))
			if err != nil || cmd.Name() != want {
				t.Errorf("%s: %v %v, want %s", args, cmd.Name(), err, want)
			}
		}
	}

	prom := writeFile(t, "config.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
	for old, args := range map[string][]string{"explain-bandwidth": {"--config", prom}, "explain-load": {"--config", prom, "--all"}} {
		root := NewCommand()
		var stdout, stderr bytes.Buffer
		root.SetOut(&stdout)
		root.SetErr(&stderr)
		// The old command runs (and fails on a file without the plugins'
		// arguments, after the notice).
		code := runRoot(root, append([]string{old}, args...), &stderr, "yardmaster")
		if code != ExitError || !strings.Contains(stdout.String()+stderr.String(), `Command "`+old+`" is deprecated, use "yardmaster explain `+strings.TrimPrefix(old, "explain-")) ||
			!strings.Contains(stderr.String(), "no profile") {
			t.Errorf("%s: exit code %d\nstdout:\n%s\nstderr:\n%s", old, code, stdout.String(), stderr.String())
		}
	}
	help, err := runCommand("--help")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(help, "explain-bandwidth") || strings.Contains(help, "explain-load") {
		t.Errorf("the deprecated commands are listed:\n%s", help)
	}
	explainHelp, err := runCommand("explain", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bandwidth", "load", "Exit codes: 0", "--scheduler-url", "--context", "--as ", "--request-timeout"} {
		if !strings.Contains(explainHelp, want) {
			t.Errorf("explain --help lacks %q", want)
		}
	}
}

// compileSchema compiles the output schema.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := schemas.CompileOutputV1alpha1()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validate checks a JSON document against the schema.
func validate(t *testing.T, s *jsonschema.Schema, data []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("does not validate against %s: %v\n%s", schemas.OutputV1alpha1File, err, data)
	}
}

// Real output of simulate, JSON and YAML, with every pod's explanation, a
// pending pod's preemption and a capacity's limit, validates.
func TestOutputValidatesAgainstSchema(t *testing.T) {
	s := compileSchema(t)
	cluster := writeFile(t, "cluster.yaml", clusterFile)
	web := writeFile(t, "web.yaml", webFile)
	volumes := writeFile(t, "volumes.yaml", volumeClusterFile)
	pods := writeFile(t, "pods.yaml", volumePodsFile)
	gang := writeFile(t, "gang.yaml", gangFile("1"))
	for _, args := range [][]string{
		{"--cluster-file", cluster, "--add", web, "--capacity", web, "--drain", "n2", "--explain"},
		{"--cluster-file", cluster, "--capacity", gang},
		{"--cluster-file", cluster, "--add", web},
		{"--cluster-file", volumes, "--add", pods, "--explain"},
	} {
		for _, o := range []string{"json", "yaml"} {
			stdout, stderr, code := runPlugin(append([]string{"simulate", "-o", o}, args...)...)
			if code == ExitError {
				t.Fatalf("%v -o %s: %s", args, o, stderr)
			}
			data := []byte(stdout)
			if o == "yaml" {
				var err error
				if data, err = yaml.YAMLToJSON(data); err != nil {
					t.Fatal(err)
				}
			}
			validate(t, s, data)
			// One explanation of the result, printed on its own as explain
			// prints it.
			var res SimulationResult
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			if res.APIVersion != explain.APIVersion || res.Kind != KindSimulationResult {
				t.Errorf("apiVersion %q kind %q", res.APIVersion, res.Kind)
			}
			// A pod group's placement, on its own and inside an explanation.
			if g := res.CapacityPodGroup; g != nil {
				if g.Kind != "" {
					t.Errorf("a pod group inside a result has kind %q", g.Kind)
				}
				var out bytes.Buffer
				if err := explain.Marshal(&out, g.WithTypeMeta(), outputJSON); err != nil {
					t.Fatal(err)
				}
				validate(t, s, out.Bytes())
				g.TypeMeta = metav1.TypeMeta{}
				member := *res.Limit
				member.PodGroup = g
				out.Reset()
				if err := printExplanation(&out, member.WithTypeMeta(), outputJSON, false); err != nil {
					t.Fatal(err)
				}
				validate(t, s, out.Bytes())
			}
			for _, p := range res.Placements {
				if p.Explanation == nil {
					continue
				}
				if p.Explanation.Kind != "" {
					t.Errorf("an explanation inside a result has kind %q", p.Explanation.Kind)
				}
				var out bytes.Buffer
				if err := printExplanation(&out, p.Explanation.WithTypeMeta(), outputJSON, false); err != nil {
					t.Fatal(err)
				}
				validate(t, s, out.Bytes())
			}
		}
	}
	// The schema refuses what is not in it.
	for _, doc := range []string{
		`{"apiVersion":"yardmaster.io/v1alpha1","kind":"Explanation","pod":"a/b","profile":"p","nodes":1,"summary":"s","extra":1}`,
		`{"apiVersion":"yardmaster.io/v1alpha1","kind":"Explanation","pod":"a/b","profile":"p","nodes":1}`,
		`{"apiVersion":"yardmaster.io/v1","kind":"Explanation","pod":"a/b","profile":"p","nodes":1,"summary":"s"}`,
		`{"apiVersion":"yardmaster.io/v1alpha1","kind":"SimulationResult","placements":[{"node":"n"}]}`,
		`{"pod":"a/b","profile":"p","nodes":1,"summary":"s"}`,
		`{"apiVersion":"yardmaster.io/v1alpha1","kind":"LoadExplanation","profile":"p","plugins":[{"name":"x","metrics":[],"nodes":[{"node":"n","values":["NaN"],"added":[null]}]}]}`,
		`{"apiVersion":"yardmaster.io/v1alpha1","kind":"BandwidthExplanation","profile":"p","prometheus":"u","query":"q","nodeNameLabel":"l","nodes":[]}`,
		`{"apiVersion":"yardmaster.io/v1alpha1","kind":"ConfigValidation","file":"f","valid":false,"problems":[{"line":1,"column":1,"field":"x","message":"m","severity":"fatal"}]}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err := s.Validate(v); err == nil {
			t.Errorf("validates: %s", doc)
		}
	}
}

// Every object of the schema has exactly the fields of its Go type, and
// requires exactly those not omitted when empty: a field added to a type
// without the schema (or to the schema without the type) fails here.
func TestOutputSchemaMatchesTypes(t *testing.T) {
	data := schemas.OutputV1alpha1
	var schema struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	types := map[string]reflect.Type{
		"Explanation":          reflect.TypeFor[explain.Explanation](),
		"Rejection":            reflect.TypeFor[explain.Rejection](),
		"Scorer":               reflect.TypeFor[explain.Scorer](),
		"NodeVerdict":          reflect.TypeFor[explain.NodeVerdict](),
		"Preemption":           reflect.TypeFor[explain.Preemption](),
		"PreemptionCandidate":  reflect.TypeFor[explain.PreemptionCandidate](),
		"Kept":                 reflect.TypeFor[explain.Kept](),
		"ReasonCount":          reflect.TypeFor[explain.ReasonCount](),
		"SimulationResult":     reflect.TypeFor[SimulationResult](),
		"Placement":            reflect.TypeFor[Placement](),
		"LoadExplanation":      reflect.TypeFor[LoadExplanation](),
		"LoadPlugin":           reflect.TypeFor[LoadPlugin](),
		"LoadMetric":           reflect.TypeFor[LoadMetric](),
		"LoadNode":             reflect.TypeFor[LoadNode](),
		"PrometheusAnswer":     reflect.TypeFor[PrometheusAnswer](),
		"BandwidthExplanation": reflect.TypeFor[BandwidthExplanation](),
		"BandwidthNode":        reflect.TypeFor[BandwidthNode](),
		"ConfigValidation":     reflect.TypeFor[ConfigValidation](),
		"ConfigProblem":        reflect.TypeFor[ConfigProblem](),
		"PodGroupExplanation":  reflect.TypeFor[explain.PodGroupExplanation](),
		"MemberPlacement":      reflect.TypeFor[explain.MemberPlacement](),
	}
	for name, typ := range types {
		def, ok := schema.Defs[name]
		if !ok {
			t.Errorf("the schema has no $defs/%s", name)
			continue
		}
		var fields, required []string
		jsonFields(typ, &fields, &required)
		props := make([]string, 0, len(def.Properties))
		for p := range def.Properties {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		slices.Sort(required)
		slices.Sort(def.Required)
		if diff := cmp.Diff(fields, props); diff != "" {
			t.Errorf("%s: the Go type's JSON fields (-) and the schema's properties (+):\n%s", name, diff)
		}
		if diff := cmp.Diff(required, def.Required, cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); diff != "" {
			t.Errorf("%s: the fields without omitempty (-) and the schema's required (+):\n%s", name, diff)
		}
	}
	// Every type the Go types reach is described.
	var walk func(reflect.Type)
	seen := map[reflect.Type]bool{}
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		if _, ok := types[typ.Name()]; !ok && typ.Name() != "TypeMeta" {
			t.Errorf("%s is reached from the output but has no $defs entry", typ)
		}
		for f := range typ.Fields() {
			walk(f.Type)
		}
	}
	for _, root := range []reflect.Type{
		reflect.TypeFor[SimulationResult](), reflect.TypeFor[LoadExplanation](),
		reflect.TypeFor[BandwidthExplanation](), reflect.TypeFor[ConfigValidation](),
		reflect.TypeFor[explain.PodGroupExplanation](),
	} {
		walk(root)
	}
	// Every kind of the top level's oneOf has its $defs entry and a Go type.
	var top struct {
		OneOf []struct {
			Properties struct {
				Kind struct {
					Const string `json:"const"`
				} `json:"kind"`
			} `json:"properties"`
		} `json:"oneOf"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range top.OneOf {
		kinds = append(kinds, o.Properties.Kind.Const)
	}
	slices.Sort(kinds)
	wantKinds := []string{KindBandwidthExplanation, validationKind, explain.KindExplanation, KindLoadExplanation, KindSimulationResult, explain.KindPodGroupExplanation}
	slices.Sort(wantKinds)
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("the kinds of the schema's oneOf (-want +got):\n%s", diff)
	}
}

// jsonFields appends the JSON names of typ's fields (embedded structs
// flattened, as encoding/json does) to fields, and those without
// omitempty to required.
func jsonFields(typ reflect.Type, fields, required *[]string) {
	for f := range typ.Fields() {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			jsonFields(f.Type, fields, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		*fields = append(*fields, name)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") {
			*required = append(*required, name)
		}
	}
}
