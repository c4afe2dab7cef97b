// Package configparity checks that yardmaster reads KubeSchedulerConfiguration
// files as kube-scheduler v1.37 does, against the real kube-scheduler binary
// (bin/kube-scheduler, which make builds before the e2e tests).
//
// Each file of the corpus (cases_test.go) goes to both:
//
//   - kube-scheduler --config FILE --write-config-to OUT loads the file,
//     defaults and validates it, builds every profile's framework (which
//     validates the plugin args) and writes the completed configuration, or
//     exits non-zero with its error. It needs an API server address to
//     build its clients but never contacts it, so it gets
//     --master https://127.0.0.1:1.
//   - yardmaster's config.Load, then Marshal: what `yardmaster config
//     validate FILE` prints.
//
// Both must accept the file or both refuse it, naming the same field; for an
// accepted file, the effective values of the fields they share must be equal:
// the top-level settings, and per profile its name, the plugins at each
// extension point in order, the score weights and the arguments of every
// plugin it runs. The differences yardmaster documents
// (docs/configuration.md, "Differences from kube-scheduler") are the only
// ones allowed, each named where it is allowed.
//
// It is a package of its own, beside the e2e package, because it needs no
// control plane: the e2e package's TestMain starts one.
package configparity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// header starts every file of the corpus.
const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// kubeconfigToken in a case's file is replaced by the path of a kubeconfig
// that exists (kube-scheduler reads clientConnection.kubeconfig).
const kubeconfigToken = "KUBECONFIG_PATH"

// parityCase is one file and what both schedulers must make of it.
type parityCase struct {
	name string
	// file is the file, without header unless raw.
	file string
	raw  bool
	// refused is the field path both schedulers must name when they refuse
	// the file; empty means both accept it.
	refused string
	// kubeSays is what kube-scheduler's error must contain, when it does not
	// name refused's path (decoding errors name the field alone, framework
	// errors the plugin); empty means refused itself.
	kubeSays string
	// deliberate, when set, is why yardmaster refuses a file kube-scheduler
	// accepts: a documented difference. refused is then yardmaster's path.
	deliberate string
	// kubeOnly, when set, is why yardmaster accepts a file kube-scheduler
	// refuses: a documented difference. refused is then kube-scheduler's
	// path.
	kubeOnly string
}

func TestConfigParity(t *testing.T) {
	bin, err := controlplane.BinaryPath("kube-scheduler")
	if err != nil {
		t.Skipf("skipping: kube-scheduler is not built (%v); run make control-plane or set %s", err, controlplane.BinDirEnv)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tc := range parityCases {
		if seen[tc.name] {
			t.Fatalf("two cases are named %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := tc.file
			if !tc.raw {
				data = header + data
			}
			data = strings.ReplaceAll(data, kubeconfigToken, kubeconfig)
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			kubeOut, kubeErr := runKubeScheduler(t, bin, path)
			ym, ymErr := config.Load(path)

			t.Logf("kube-scheduler: %v", kubeErr)
			t.Logf("yardmaster: %v", ymErr)
			switch {
			case tc.deliberate != "":
				if kubeErr != nil {
					t.Errorf("kube-scheduler refuses the file, want it accepted (yardmaster refuses it on purpose: %s): %v", tc.deliberate, kubeErr)
				}
				checkRefusal(t, "yardmaster", tc.refused, ymErr, "")
			case tc.kubeOnly != "":
				checkRefusal(t, "kube-scheduler", tc.refused, kubeErr, cmpOr(tc.kubeSays, tc.refused))
				if ymErr != nil {
					t.Errorf("yardmaster refuses the file, want it accepted (on purpose: %s): %v", tc.kubeOnly, ymErr)
				}
			case tc.refused != "":
				checkRefusal(t, "kube-scheduler", tc.refused, kubeErr, cmpOr(tc.kubeSays, tc.refused))
				checkRefusal(t, "yardmaster", tc.refused, ymErr, "")
			default:
				if kubeErr != nil {
					t.Errorf("kube-scheduler refuses the file: %v", kubeErr)
				}
				if ymErr != nil {
					t.Errorf("yardmaster refuses the file: %v", ymErr)
				}
				if kubeErr != nil || ymErr != nil {
					return
				}
				out, err := ym.Marshal()
				if err != nil {
					t.Fatalf("Marshal: %v", err)
				}
				want, err := kubeEffective(kubeOut)
				if err != nil {
					t.Fatalf("kube-scheduler's configuration: %v\n%s", err, kubeOut)
				}
				got, err := yardmasterEffective(out)
				if err != nil {
					t.Fatalf("yardmaster's configuration: %v\n%s", err, out)
				}
				allowDocumentedDifferences(want, got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("effective configuration (-kube-scheduler +yardmaster):\n%s", diff)
				}
			}
		})
	}
}

// checkRefusal checks that err refuses the file at path: for yardmaster,
// a problem at exactly that path; for kube-scheduler, an error containing
// says.
func checkRefusal(t *testing.T, who, path string, err error, says string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s accepts the file, want it refused at %s", who, path)
		return
	}
	if says != "" {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("%s refuses the file, but not naming %q: %v", who, says, err)
		}
		return
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Errorf("%s: %v, want a *config.Error", who, err)
		return
	}
	for _, p := range ce.Problems {
		if p.Path == path {
			return
		}
	}
	t.Errorf("%s refuses the file, but not at %s: %v", who, path, err)
}

const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: x}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`

var kubeErrRE = regexp.MustCompile(`"command failed" err=(".*")`)

// runKubeScheduler has kube-scheduler load the file and write its effective
// configuration, and returns that or its error.
func runKubeScheduler(t *testing.T, bin, path string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out := filepath.Join(filepath.Dir(path), "effective.yaml")
	cmd := exec.CommandContext(ctx, bin,
		"--config", path,
		// Clients need a server; the file is checked before any request.
		"--master", "https://127.0.0.1:1",
		// No listener: tests run in parallel.
		"--secure-port", "0",
		// yardmaster's default profile has GangScheduling, as
		// kube-scheduler's has only with this gate (beta, off by default
		// in v1.37): it appends GangScheduling to multiPoint.
		"--feature-gates=GenericWorkload=true",
		"--write-config-to", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			t.Fatalf("kube-scheduler did not finish in time: %s", stderr.String())
		}
		if m := kubeErrRE.FindSubmatch(stderr.Bytes()); m != nil {
			if msg, uerr := strconv.Unquote(string(m[1])); uerr == nil {
				return nil, errors.New(msg)
			}
		}
		// Errors before its logging starts (flag and decoding errors) are
		// printed plainly.
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("kube-scheduler exited 0 without writing its configuration: %v\n%s", err, stderr.String())
	}
	return data, nil
}

// points are the extension points whose plugin lists are compared, in
// kube-scheduler's order.
var points = []string{"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit", "preBind", "bind", "postBind"}

// kubePoints are the extension points each of kube-scheduler v1.37.2's
// plugins that both schedulers have implements: the interfaces its type
// satisfies (pkg/scheduler/framework/plugins, the `var _ fwk.XPlugin`
// checks). kube-scheduler writes the merged multiPoint list, not what it
// expands to; the test expands it with this table, as its framework does.
// The pod-group point podGroupPostFilter (DynamicResources and
// DefaultPreemption implement it) is not compared: yardmaster has none.
// GangScheduling's third interface, PlacementFeasiblePlugin, is no
// extension point of the configuration: kube-scheduler calls it on the
// GangScheduling plugin of the profile, if any.
var kubePoints = map[string][]string{
	"SchedulingGates":                 {"preEnqueue"},
	"PrioritySort":                    {"queueSort"},
	"NodeUnschedulable":               {"preFilter", "filter"},
	"NodeName":                        {"preFilter", "filter"},
	"TaintToleration":                 {"preFilter", "filter", "preScore", "score"},
	"NodeAffinity":                    {"preFilter", "filter", "preScore", "score"},
	"NodePorts":                       {"preFilter", "filter"},
	"NodeResourcesFit":                {"preFilter", "filter", "preScore", "score"},
	"VolumeRestrictions":              {"preFilter", "filter"},
	"NodeVolumeLimits":                {"preFilter", "filter"},
	"VolumeBinding":                   {"preFilter", "filter", "preScore", "score", "reserve", "preBind"},
	"VolumeZone":                      {"preFilter", "filter"},
	"PodTopologySpread":               {"preFilter", "filter", "preScore", "score"},
	"InterPodAffinity":                {"preFilter", "filter", "preScore", "score"},
	"DynamicResources":                {"preEnqueue", "preFilter", "filter", "postFilter", "score", "reserve", "preBind"},
	"DefaultPreemption":               {"preEnqueue", "postFilter"},
	"NodeResourcesBalancedAllocation": {"preScore", "score"},
	"ImageLocality":                   {"score"},
	"DefaultBinder":                   {"bind"},
	"NodeDeclaredFeatures":            {"preFilter", "filter"},
	"GangScheduling":                  {"preEnqueue", "permit"},
}

// kubeArgs are the plugins both schedulers have that take args in
// kube-scheduler v1.37.2 (its v1 *Args types).
var kubeArgs = []string{"DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity",
	"NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread", "VolumeBinding"}

// effective is what is compared of an effective configuration.
type effective struct {
	Settings map[string]any
	Profiles []profile
}

type profile struct {
	SchedulerName            string
	PercentageOfNodesToScore any
	// Points maps an extension point to its plugins, in order.
	Points map[string][]string
	// Weights maps each score plugin to its weight.
	Weights map[string]int
	// Args maps each plugin the profile runs to its arguments, without
	// apiVersion and kind, zero values dropped.
	Args map[string]any
}

type fileProfile struct {
	SchedulerName            string         `yaml:"schedulerName"`
	PercentageOfNodesToScore any            `yaml:"percentageOfNodesToScore"`
	Plugins                  map[string]set `yaml:"plugins"`
	PluginConfig             []struct {
		Name string         `yaml:"name"`
		Args map[string]any `yaml:"args"`
	} `yaml:"pluginConfig"`
}

type set struct {
	Enabled  []plugin `yaml:"enabled"`
	Disabled []plugin `yaml:"disabled"`
}

type plugin struct {
	Name   string `yaml:"name"`
	Weight int    `yaml:"weight"`
}

func (s set) names() []string {
	var out []string
	for _, p := range s.Enabled {
		out = append(out, p.Name)
	}
	return out
}

func (s set) disables(name string) bool {
	return slices.ContainsFunc(s.Disabled, func(p plugin) bool { return p.Name == name })
}

// parse splits a written configuration into its settings and profiles.
func parse(data []byte) (map[string]any, []fileProfile, error) {
	var settings map[string]any
	if err := yaml.Unmarshal(data, &settings); err != nil {
		return nil, nil, err
	}
	var f struct {
		Profiles []fileProfile `yaml:"profiles"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, nil, err
	}
	delete(settings, "profiles")
	return normalize(settings).(map[string]any), f.Profiles, nil
}

// kubeEffective reads kube-scheduler's written configuration: it expands
// each profile's multiPoint list to the extension points as its framework
// does (expandMultiPointPlugins), and weighs the score plugins as it does
// (getValidScoreWeights).
func kubeEffective(data []byte) (*effective, error) {
	settings, profiles, err := parse(data)
	if err != nil {
		return nil, err
	}
	e := &effective{Settings: settings}
	for _, fp := range profiles {
		multi := fp.Plugins["multiPoint"]
		p := profile{SchedulerName: fp.SchedulerName, PercentageOfNodesToScore: fp.PercentageOfNodesToScore, Points: map[string][]string{}, Weights: map[string]int{}, Args: map[string]any{}}
		running := map[string]bool{}
		for _, point := range points {
			own := fp.Plugins[point]
			list := own.names()
			if !own.disables("*") {
				var override, fromMulti []string
				for _, mp := range multi.Enabled {
					switch {
					case !slices.Contains(kubePoints[mp.Name], point), own.disables(mp.Name):
					case slices.Contains(list, mp.Name):
						override = append(override, mp.Name)
					default:
						fromMulti = append(fromMulti, mp.Name)
					}
				}
				var ordered []string
				for _, n := range list {
					if slices.Contains(override, n) {
						ordered = append(ordered, n)
					}
				}
				ordered = append(ordered, fromMulti...)
				for _, n := range list {
					if !slices.Contains(override, n) {
						ordered = append(ordered, n)
					}
				}
				list = ordered
			}
			if len(list) > 0 {
				p.Points[point] = list
			}
			for _, n := range list {
				running[n] = true
			}
		}
		for _, pl := range append(slices.Clone(fp.Plugins["score"].Enabled), multi.Enabled...) {
			if _, done := p.Weights[pl.Name]; done || !slices.Contains(kubePoints[pl.Name], "score") {
				continue
			}
			p.Weights[pl.Name] = max(pl.Weight, 1)
		}
		for n := range p.Weights {
			if !slices.Contains(p.Points["score"], n) {
				delete(p.Weights, n)
			}
		}
		for _, pc := range fp.PluginConfig {
			if running[pc.Name] {
				p.Args[pc.Name] = args(pc.Args)
			}
		}
		e.Profiles = append(e.Profiles, p)
	}
	return e, nil
}

// yardmasterEffective reads what `yardmaster config validate` prints: each
// point's plugins listed in order, multiPoint disabled.
func yardmasterEffective(data []byte) (*effective, error) {
	settings, profiles, err := parse(data)
	if err != nil {
		return nil, err
	}
	e := &effective{Settings: settings}
	for _, fp := range profiles {
		p := profile{SchedulerName: fp.SchedulerName, PercentageOfNodesToScore: fp.PercentageOfNodesToScore, Points: map[string][]string{}, Weights: map[string]int{}, Args: map[string]any{}}
		running := map[string]bool{}
		for _, point := range points {
			if list := fp.Plugins[point].names(); len(list) > 0 {
				p.Points[point] = list
				for _, n := range list {
					running[n] = true
				}
			}
		}
		for _, pl := range fp.Plugins["score"].Enabled {
			p.Weights[pl.Name] = pl.Weight
		}
		for _, pc := range fp.PluginConfig {
			if running[pc.Name] {
				p.Args[pc.Name] = args(pc.Args)
			}
		}
		e.Profiles = append(e.Profiles, p)
	}
	return e, nil
}

// allowDocumentedDifferences makes kube-scheduler's configuration say what
// yardmaster's does where docs/configuration.md says they differ.
func allowDocumentedDifferences(kube, ym *effective) {
	// The default profile name: yardmaster, not default-scheduler.
	if len(kube.Profiles) == 1 && len(ym.Profiles) == 1 &&
		kube.Profiles[0].SchedulerName == "default-scheduler" && ym.Profiles[0].SchedulerName == config.DefaultSchedulerName {
		kube.Profiles[0].SchedulerName = config.DefaultSchedulerName
	}
	// The default lease name: the first profile's name, not kube-scheduler.
	kle, _ := kube.Settings["leaderElection"].(map[string]any)
	yle, _ := ym.Settings["leaderElection"].(map[string]any)
	if kle != nil && yle != nil && kle["resourceName"] == "kube-scheduler" && len(ym.Profiles) > 0 && yle["resourceName"] == ym.Profiles[0].SchedulerName {
		kle["resourceName"] = yle["resourceName"]
	}
	// Args of a plugin that takes none: kube-scheduler keeps them and its
	// plugin ignores them; yardmaster drops them (with a warning).
	for _, p := range kube.Profiles {
		for name := range p.Args {
			if !slices.Contains(kubeArgs, name) {
				delete(p.Args, name)
			}
		}
	}
	// SchedulingGates is built into yardmaster's queue and always on.
	for _, e := range []*effective{kube, ym} {
		for _, p := range e.Profiles {
			if l := slices.DeleteFunc(p.Points["preEnqueue"], func(n string) bool { return n == "SchedulingGates" }); len(l) > 0 {
				p.Points["preEnqueue"] = l
			} else {
				delete(p.Points, "preEnqueue")
			}
		}
	}
}

// args drops apiVersion and kind from a plugin's args.
func args(a map[string]any) any {
	delete(a, "apiVersion")
	delete(a, "kind")
	return normalize(a)
}

// normalize drops zero values (false, 0, "", empty lists and objects, null)
// from maps, which one writer omits and the other writes, and reads
// strings that are durations as durations ("10m0s" and "10m" are equal).
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if e = normalize(e); !isZero(e) {
				out[k] = e
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	case string:
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		return v
	case float64:
		if v == float64(int64(v)) {
			return int(v)
		}
		return v
	}
	return v
}

func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case int:
		return v == 0
	case float64:
		return v == 0
	case string:
		return v == ""
	case time.Duration:
		return v == 0
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
