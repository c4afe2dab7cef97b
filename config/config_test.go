package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/defaultpreemption"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/noderesources"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// header starts every test file.
const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// ignoreInternal leaves out what a comparison of two Configs must not
// look at: unexported fields, and the registry (functions compare unequal).
var ignoreInternal = cmp.Options{cmpopts.IgnoreUnexported(Config{}), cmpopts.IgnoreFields(Config{}, "Registry")}

// The expectations below are written relative to the registry's default
// profile, so that they hold whatever plugins the registry grows.

// defaultProfile is what a profile that configures nothing resolves to.
func defaultProfile() framework.Profile { return registry.DefaultProfile(DefaultSchedulerName) }

// without returns names without the given ones.
func without(names []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
}

// scoreWithout returns the default score plugins without the given ones.
func scoreWithout(drop ...string) []framework.WeightedPlugin {
	return slices.DeleteFunc(slices.Clone(defaultProfile().Score), func(w framework.WeightedPlugin) bool {
		return slices.Contains(drop, w.Name)
	})
}

func mustDecode(t *testing.T, data string) *Config {
	t.Helper()
	c, err := Decode([]byte(data))
	if err != nil {
		t.Fatalf("Decode: %v\n--- file:\n%s", err, data)
	}
	return c
}

func TestDefault(t *testing.T) {
	c := Default()
	want := &Config{
		Parallelism:       16,
		PodInitialBackoff: time.Second,
		PodMaxBackoff:     10 * time.Second,
		ClientConnection: ClientConnection{
			QPS: 50, Burst: 100, ContentType: "application/vnd.kubernetes.protobuf",
		},
		LeaderElection: LeaderElection{
			LeaderElect:   true,
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			ResourceLock: "leases", ResourceName: "yardmaster", ResourceNamespace: "kube-system",
		},
		EnableProfiling:           true,
		EnableContentionProfiling: true,
	}
	if diff := cmp.Diff(want, c, ignoreInternal, cmpopts.IgnoreFields(Config{}, "Profiles")); diff != "" {
		t.Errorf("Default() settings (-want +got):\n%s", diff)
	}
	if len(c.Profiles) != 1 {
		t.Fatalf("Default() has %d profiles, want 1", len(c.Profiles))
	}
	got := c.Profiles[0]
	if diff := cmp.Diff(defaultProfile(), got, cmpopts.IgnoreFields(framework.Profile{}, "Args")); diff != "" {
		t.Errorf("default profile differs from registry.DefaultProfile (-want +got):\n%s", diff)
	}
	// kube-scheduler v1's default weights, for the plugins this build has.
	kubeWeights := map[string]int64{
		"TaintToleration": 3, "NodeAffinity": 2, "PodTopologySpread": 2, "InterPodAffinity": 2,
		"NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1,
	}
	for _, w := range got.Score {
		if kw, ok := kubeWeights[w.Name]; ok && w.Weight != kw {
			t.Errorf("default weight of %s = %d, kube-scheduler's is %d", w.Name, w.Weight, kw)
		}
	}
	// Every plugin with arguments has its defaults in Args.
	reg := registry.NewInTree()
	for _, name := range got.Plugins() {
		if reg[name].NewArgs == nil {
			continue
		}
		want := reg[name].NewArgs()
		defaultArgs(want)
		if diff := cmp.Diff(want, got.Args[name]); diff != "" {
			t.Errorf("default args of %s (-want +got):\n%s", name, diff)
		}
	}
	// An empty file means the defaults, too.
	if diff := cmp.Diff(c, mustDecode(t, header), ignoreInternal); diff != "" {
		t.Errorf("Decode(header only) differs from Default() (-want +got):\n%s", diff)
	}
}

// Every example in testdata loads and means what its comment says.
func TestExamples(t *testing.T) {
	load := func(t *testing.T, name string) *Config {
		t.Helper()
		c, err := Load(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("binpacking", func(t *testing.T) {
		c := load(t, "binpacking.yaml")
		if len(c.Profiles) != 1 || c.Profiles[0].SchedulerName != "custom-k8s-scheduler" {
			t.Fatalf("profiles = %+v", c.Profiles)
		}
		if c.ClientConnection.QPS != 100 || c.ClientConnection.Burst != 200 {
			t.Errorf("client connection = %+v, want qps 100 burst 200", c.ClientConnection)
		}
		want := LeaderElection{
			LeaderElect: true, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			ResourceLock: "leases", ResourceName: "custom-k8s-scheduler", ResourceNamespace: "kube-system",
		}
		if diff := cmp.Diff(want, c.LeaderElection); diff != "" {
			t.Errorf("leader election (-want +got):\n%s", diff)
		}
		wantArgs := &noderesources.FitArgs{ScoringStrategy: &framework.ScoringStrategy{
			Type: framework.MostAllocated, Resources: []framework.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}},
		}}
		if diff := cmp.Diff(wantArgs, c.Profiles[0].Args[noderesources.FitName]); diff != "" {
			t.Errorf("NodeResourcesFit args (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(defaultProfile().Score, c.Profiles[0].Score); diff != "" {
			t.Errorf("score plugins (-want +got):\n%s", diff)
		}
		full, empty := fitScores(t, c.Profiles[0])
		if full <= empty {
			t.Errorf("MostAllocated: half-full node scores %d, empty node %d; want the half-full one higher", full, empty)
		}
	})
	t.Run("packer and spreader", func(t *testing.T) {
		c := load(t, "packer-spreader.yaml")
		var names []string
		for _, p := range c.Profiles {
			names = append(names, p.SchedulerName)
		}
		if !slices.Equal(names, []string{"packer", "spreader"}) {
			t.Fatalf("profiles = %v, want [packer spreader]", names)
		}
		if c.LeaderElection.ResourceName != "packer" {
			t.Errorf("lease name = %q, want the first profile's name", c.LeaderElection.ResourceName)
		}
		full, empty := fitScores(t, c.Profiles[0])
		if full <= empty {
			t.Errorf("packer: half-full node scores %d, empty node %d; want the half-full one higher", full, empty)
		}
		full, empty = fitScores(t, c.Profiles[1])
		if full >= empty {
			t.Errorf("spreader: half-full node scores %d, empty node %d; want the empty one higher", full, empty)
		}
	})
	t.Run("network traffic", func(t *testing.T) {
		if _, ok := registry.NewInTree()["NetworkTraffic"]; !ok {
			t.Skip("NetworkTraffic is not in the registry yet (a later issue adds it); TestNewRegistrationIsAllItTakes loads this example with a stand-in registration")
		}
		c := load(t, "network-traffic.yaml")
		p := c.Profiles[0]
		if p.SchedulerName != "custom-scheduler" {
			t.Errorf("schedulerName = %q", p.SchedulerName)
		}
		if diff := cmp.Diff([]framework.WeightedPlugin{{Name: "NetworkTraffic", Weight: 1}}, p.Score); diff != "" {
			t.Errorf("score plugins (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(defaultProfile().Filter, p.Filter); diff != "" {
			t.Errorf("filters (-want +got):\n%s", diff)
		}
		if p.Args["NetworkTraffic"] == nil {
			t.Errorf("no NetworkTraffic args")
		}
	})
}

// fitScores scores a pod of 1 cpu, 2Gi with the profile's NodeResourcesFit
// on a 4 cpu, 8Gi node that already runs 2 cpu, 4Gi and on an empty one.
func fitScores(t *testing.T, prof framework.Profile) (halfFull, empty int64) {
	t.Helper()
	r := registry.NewInTree()[noderesources.FitName]
	parts, err := r.New(prof.Args[noderesources.FitName], nil)
	if err != nil {
		t.Fatal(err)
	}
	var scorer interface {
		framework.PreScorePlugin
		framework.ScorePlugin
	}
	for _, p := range parts {
		if s, ok := p.(*noderesources.FitScorer); ok {
			scorer = s
		}
	}
	if scorer == nil {
		t.Fatal("NodeResourcesFit has no score part")
	}
	pod := frameworktest.MakePod().Name("p").Req("1", "2Gi").Obj()
	score := func(running ...*frameworktest.PodWrapper) int64 {
		var pods = make([]*framework.PodInfo, 0, len(running))
		ni := framework.NewNodeInfo()
		ni.SetNode(frameworktest.MakeNode().Name("n").Capacity("4", "8Gi", 110).Obj())
		for _, r := range running {
			pods = append(pods, framework.NewPodInfo(r.Obj()))
		}
		for _, pi := range pods {
			ni.AddPodInfo(pi)
		}
		state := framework.NewCycleState()
		ctx := context.Background()
		if s := scorer.PreScore(ctx, state, pod, []*framework.NodeInfo{ni}); !s.IsSuccess() {
			t.Fatalf("PreScore: %v", s)
		}
		v, s := scorer.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v", s)
		}
		return v
	}
	return score(frameworktest.MakePod().Name("running").Node("n").Req("2", "4Gi")), score()
}

// Adding a Registration with NewArgs and ValidateArgs is all a plugin needs
// to be configurable: example 2 loads against a registry with a stand-in
// NetworkTraffic, its args typed, defaulted and validated.
func TestNewRegistrationIsAllItTakes(t *testing.T) {
	type networkTrafficArgs struct {
		PrometheusAddress  string `json:"prometheusAddress,omitempty"`
		NetworkInterface   string `json:"networkInterface,omitempty"`
		TimeRangeInSeconds *int64 `json:"timeRangeInSeconds,omitempty"`
	}
	reg := registry.NewInTree()
	if err := reg.Register(framework.Registration{
		Name:   "NetworkTraffic",
		Points: []string{framework.PointScore},
		NewArgs: func() any {
			return &networkTrafficArgs{NetworkInterface: "eth0", TimeRangeInSeconds: new(int64(60))}
		},
		ValidateArgs: func(a any) error {
			if r := *a.(*networkTrafficArgs).TimeRangeInSeconds; r <= 0 {
				return errors.New("timeRangeInSeconds must be > 0")
			}
			return nil
		},
	}); err != nil {
		t.Skipf("the registry has NetworkTraffic now: %v (TestExamples covers it)", err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "network-traffic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := decode(data, reg, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Profiles[0]
	if diff := cmp.Diff([]framework.WeightedPlugin{{Name: "NetworkTraffic", Weight: 1}}, p.Score); diff != "" {
		t.Errorf("score plugins (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(defaultProfile().Filter, p.Filter); diff != "" {
		t.Errorf("filters (-want +got):\n%s", diff)
	}
	wantArgs := &networkTrafficArgs{PrometheusAddress: "http://prometheus-k8s.monitoring:9090", NetworkInterface: "ens192", TimeRangeInSeconds: new(int64(60))}
	if diff := cmp.Diff(wantArgs, p.Args["NetworkTraffic"]); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}

	bad := strings.Replace(string(data), "timeRangeInSeconds: 60", "timeRangeInSeconds: -1", 1)
	_, err = decode([]byte(bad), reg, Overrides{})
	checkProblem(t, err, "profiles[0].pluginConfig[0].args", 18, "timeRangeInSeconds must be > 0")
	typo := strings.Replace(string(data), "networkInterface:", "networkInterfce:", 1)
	_, err = decode([]byte(typo), reg, Overrides{})
	checkProblem(t, err, "profiles[0].pluginConfig[0].args.networkInterfce", 20, `unknown field (did you mean "networkInterface"?)`)
}

// checkProblem fails unless err is an *Error with a problem at path, on
// line (0: any), whose message contains msg.
func checkProblem(t *testing.T, err error, path string, line int, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want an *Error", err)
	}
	for _, p := range e.Problems {
		if p.Path == path && (line == 0 || p.Line == line) && strings.Contains(p.Message, msg) {
			return
		}
	}
	t.Errorf("no problem at %s line %d containing %q in:\n%v", path, line, msg, err)
}

// The plugin sets mean what they mean to kube-scheduler: merging with the
// defaults, multiPoint expansion, order, and weights.
func TestPluginResolution(t *testing.T) {
	dp := defaultProfile()
	na, tt, fit, ba := "NodeAffinity", "TaintToleration", noderesources.FitName, noderesources.BalancedAllocationName
	tests := []struct {
		name    string
		plugins string // YAML under profiles[0].plugins, indented 4
		check   func(t *testing.T, p framework.Profile)
	}{{
		name: "disabling every default scorer leaves the filters",
		plugins: `
    score:
      disabled: [{name: "*"}]
      enabled: [{name: NodeAffinity}]`,
		check: func(t *testing.T, p framework.Profile) {
			want := []framework.WeightedPlugin{{Name: na, Weight: 1}}
			if diff := cmp.Diff(want, p.Score); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(dp.Filter, p.Filter); diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(dp.PreScore, p.PreScore); diff != "" {
				t.Errorf("preScore (-want +got):\n%s", diff)
			}
		},
	}, {
		// expandMultiPointPlugins: a plugin enabled at the point comes
		// first, then multiPoint's others, then the point's remaining ones.
		name: "re-enabling a default at score moves it first, with the new weight",
		plugins: `
    score:
      enabled: [{name: NodeAffinity, weight: 5}]`,
		check: func(t *testing.T, p framework.Profile) {
			want := append([]framework.WeightedPlugin{{Name: na, Weight: 5}}, scoreWithout(na)...)
			if diff := cmp.Diff(want, p.Score); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		},
	}, {
		// getScoreWeights: score.enabled wins over multiPoint, unset is 1.
		name: "a default enabled at score without a weight gets 1, not its default weight",
		plugins: `
    score:
      enabled: [{name: NodeAffinity}]`,
		check: func(t *testing.T, p framework.Profile) {
			want := append([]framework.WeightedPlugin{{Name: na, Weight: 1}}, scoreWithout(na)...)
			if diff := cmp.Diff(want, p.Score); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		},
	}, {
		// mergePluginSet: a custom multiPoint entry replaces the default in
		// place, weight included.
		name: "multiPoint re-enabling keeps the order and takes the weight",
		plugins: `
    multiPoint:
      enabled: [{name: TaintToleration, weight: 7}, {name: NodeAffinity}]`,
		check: func(t *testing.T, p framework.Profile) {
			want := slices.Clone(dp.Score)
			for i := range want {
				switch want[i].Name {
				case tt:
					want[i].Weight = 7
				case na:
					want[i].Weight = 1
				}
			}
			if diff := cmp.Diff(want, p.Score); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "disabled at one point only",
		plugins: `
    filter:
      disabled: [{name: NodePorts}]`,
		check: func(t *testing.T, p framework.Profile) {
			if diff := cmp.Diff(without(dp.Filter, "NodePorts"), p.Filter); diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(dp.PreFilter, p.PreFilter); diff != "" {
				t.Errorf("preFilter (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "disabled under multiPoint: gone from every point",
		plugins: `
    multiPoint:
      disabled: [{name: NodeResourcesBalancedAllocation}]`,
		check: func(t *testing.T, p framework.Profile) {
			if diff := cmp.Diff(scoreWithout(ba), p.Score); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(without(dp.PreScore, ba), p.PreScore); diff != "" {
				t.Errorf("preScore (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "multiPoint from scratch",
		plugins: `
    multiPoint:
      disabled: [{name: "*"}]
      enabled:
      - name: PrioritySort
      - name: NodeResourcesFit
        weight: 4
      - name: DefaultBinder`,
		check: func(t *testing.T, p framework.Profile) {
			want := framework.Profile{
				QueueSort: "PrioritySort",
				Bind:      []string{"DefaultBinder"},
				PreFilter: []string{fit}, Filter: []string{fit}, PreScore: []string{fit},
				Score: []framework.WeightedPlugin{{Name: fit, Weight: 4}},
			}
			if diff := cmp.Diff(want, p, cmpopts.IgnoreFields(framework.Profile{}, "SchedulerName", "Args"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		},
	}, {
		name: `"*" at one point keeps multiPoint out of it`,
		plugins: `
    preScore:
      disabled: [{name: "*"}]`,
		check: func(t *testing.T, p framework.Profile) {
			if len(p.PreScore) != 0 {
				t.Errorf("preScore = %v, want none", p.PreScore)
			}
			if diff := cmp.Diff(dp.Score, p.Score); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "enabled at a point, not a default: appended after multiPoint's",
		plugins: `
    filter:
      disabled: [{name: NodeName}]
      enabled: [{name: NodeName}]`,
		check: func(t *testing.T, p framework.Profile) {
			want := append(without(dp.Filter, "NodeName"), "NodeName")
			if diff := cmp.Diff(want, p.Filter); diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
		},
	}, {
		// kube-scheduler v1.37's NodeName, NodeUnschedulable and
		// TaintToleration are PreFilter plugins: a file may list them
		// there, in its own order.
		name: "the node-local filters at preFilter",
		plugins: `
    preFilter:
      disabled: [{name: "*"}]
      enabled: [{name: TaintToleration}, {name: NodeName}, {name: NodeUnschedulable}]`,
		check: func(t *testing.T, p framework.Profile) {
			if diff := cmp.Diff([]string{"TaintToleration", "NodeName", "NodeUnschedulable"}, p.PreFilter); diff != "" {
				t.Errorf("preFilter (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "kube-scheduler plugins yardmaster lacks may be disabled; DefaultPreemption is accepted",
		plugins: `
    multiPoint:
      disabled: [{name: DeferredPodScheduling}, {name: SelectorSpread}]
    postFilter:
      enabled: [{name: DefaultPreemption}]
    preEnqueue:
      disabled: [{name: SchedulingGates}]`,
		check: func(t *testing.T, p framework.Profile) {
			// Enabled at postFilter and by multiPoint, DefaultPreemption
			// moves ahead of the other multiPoint plugins there, as in
			// kube-scheduler.
			want := dp
			want.PostFilter = []string{registry.DefaultPreemptionName, "DynamicResources"}
			if diff := cmp.Diff(want, p, cmpopts.IgnoreFields(framework.Profile{}, "SchedulerName", "Args")); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		},
	}, {
		// kube-scheduler v1.37's DefaultPreemption is a PreEnqueue plugin
		// too; enabled there, it comes before multiPoint's others.
		name: "DefaultPreemption at preEnqueue",
		plugins: `
    preEnqueue:
      enabled: [{name: DefaultPreemption}]`,
		check: func(t *testing.T, p framework.Profile) {
			want := dp
			want.PreEnqueue = []string{registry.DefaultPreemptionName, "DynamicResources", registry.GangSchedulingName}
			if diff := cmp.Diff(want, p, cmpopts.IgnoreFields(framework.Profile{}, "SchedulerName", "Args")); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		},
	}, {
		// multiPoint places a plugin where kube-scheduler's implements it:
		// DefaultPreemption at preEnqueue, NodeName at preFilter (since
		// v1.37), ImageLocality not at preScore (its step runs without
		// being listed: framework.Registry.RunAt).
		name: "multiPoint expands to kube-scheduler's points",
		plugins: `
    multiPoint:
      disabled: [{name: "*"}]
      enabled:
      - name: PrioritySort
      - name: NodeName
      - name: DefaultPreemption
      - name: ImageLocality
      - name: DefaultBinder`,
		check: func(t *testing.T, p framework.Profile) {
			want := framework.Profile{
				QueueSort:  "PrioritySort",
				Bind:       []string{"DefaultBinder"},
				PreEnqueue: []string{registry.DefaultPreemptionName},
				PreFilter:  []string{"NodeName"},
				Filter:     []string{"NodeName"},
				PostFilter: []string{registry.DefaultPreemptionName},
				Score:      []framework.WeightedPlugin{{Name: "ImageLocality", Weight: 1}},
			}
			if diff := cmp.Diff(want, p, cmpopts.IgnoreFields(framework.Profile{}, "SchedulerName", "Args"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "built-in points may restate their plugin",
		plugins: `
    queueSort:
      disabled: [{name: "*"}]
      enabled: [{name: PrioritySort}]
    bind:
      enabled: [{name: DefaultBinder}]`,
		check: func(t *testing.T, p framework.Profile) {
			if diff := cmp.Diff(dp, p, cmpopts.IgnoreFields(framework.Profile{}, "SchedulerName", "Args")); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustDecode(t, header+"profiles:\n- schedulerName: s\n  plugins:"+tc.plugins+"\n")
			tc.check(t, c.Profiles[0])
		})
	}
}

// Valid files: what each field means after defaulting.
func TestDecode(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		check func(t *testing.T, c *Config)
	}{{
		name: "JSON",
		file: `{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{"schedulerName": "j"}]}`,
		check: func(t *testing.T, c *Config) {
			if c.Profiles[0].SchedulerName != "j" {
				t.Errorf("schedulerName = %q", c.Profiles[0].SchedulerName)
			}
		},
	}, {
		name: "every global setting",
		file: header + `
parallelism: 8
percentageOfNodesToScore: 30
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
enableProfiling: false
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
  acceptContentTypes: application/json
  contentType: application/json
  qps: 10.5
  burst: 20
leaderElection:
  leaderElect: false
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 5s
  resourceLock: leases
  resourceName: my-lease
  resourceNamespace: schedulers
`,
		check: func(t *testing.T, c *Config) {
			want := &Config{
				Profiles:                 []framework.Profile{defaultProfile()},
				Parallelism:              8,
				PercentageOfNodesToScore: 30,
				PodInitialBackoff:        2 * time.Second,
				PodMaxBackoff:            20 * time.Second,
				ClientConnection: ClientConnection{
					Kubeconfig: "/etc/kubernetes/scheduler.conf", AcceptContentTypes: "application/json",
					ContentType: "application/json", QPS: 10.5, Burst: 20,
				},
				LeaderElection: LeaderElection{
					LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 5 * time.Second,
					ResourceLock: "leases", ResourceName: "my-lease", ResourceNamespace: "schedulers",
				},
				// enableContentionProfiling follows enableProfiling.
			}
			if diff := cmp.Diff(want, c, ignoreInternal, cmpopts.IgnoreFields(framework.Profile{}, "Args")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name: "zero qps and burst take the defaults, as in kube-scheduler; negative qps is unlimited",
		file: header + "clientConnection: {qps: 0, burst: 0}\n",
		check: func(t *testing.T, c *Config) {
			if c.ClientConnection.QPS != 50 || c.ClientConnection.Burst != 100 {
				t.Errorf("client connection = %+v", c.ClientConnection)
			}
		},
	}, {
		name: "YAML 1.1 booleans, as kube-scheduler's parser reads them",
		file: header + "leaderElection: {leaderElect: no}\nenableProfiling: yes\nenableContentionProfiling: off\n",
		check: func(t *testing.T, c *Config) {
			if c.LeaderElection.LeaderElect || !c.EnableProfiling || c.EnableContentionProfiling {
				t.Errorf("leaderElect %v, enableProfiling %v, enableContentionProfiling %v", c.LeaderElection.LeaderElect, c.EnableProfiling, c.EnableContentionProfiling)
			}
		},
	}, {
		name: "whole numbers written as floats, as kube-scheduler's YAML parser reads them",
		file: header + "parallelism: 8.0\npodMaxBackoffSeconds: 1e2\nprofiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, weight: 2.0}]\n" +
			"  pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 5.0}\n",
		check: func(t *testing.T, c *Config) {
			if c.Parallelism != 8 || c.PodMaxBackoff != 100*time.Second {
				t.Errorf("parallelism %d, podMaxBackoff %v; want 8, 100s", c.Parallelism, c.PodMaxBackoff)
			}
			if w := scoreWeightOf(c.Profiles[0], "ImageLocality"); w != 2 {
				t.Errorf("ImageLocality weight = %d, want 2", w)
			}
			if a := c.Profiles[0].Args["InterPodAffinity"].(*interpodaffinity.Args); a.HardPodAffinityWeight == nil || *a.HardPodAffinityWeight != 5 {
				t.Errorf("hardPodAffinityWeight = %v, want 5", a.HardPodAffinityWeight)
			}
		},
	}, {
		name: "a string that YAML 1.2 reads as a date, as kube-scheduler's parser reads it: a string",
		file: header + "leaderElection: {resourceName: lease}\nprofiles:\n- schedulerName: 2024-01-01\n",
		check: func(t *testing.T, c *Config) {
			if c.Profiles[0].SchedulerName != "2024-01-01" {
				t.Errorf("schedulerName = %q", c.Profiles[0].SchedulerName)
			}
		},
	}, {
		name: "YAML merge keys, as kube-scheduler's YAML 1.1 parser reads them",
		file: header + "<<: {parallelism: 3}\nprofiles:\n- schedulerName: a\n  plugins: &pl\n    score: {disabled: [{name: ImageLocality}]}\n" +
			"- schedulerName: b\n  plugins:\n    <<: [*pl, {postFilter: {disabled: [{name: DefaultPreemption}]}}]\n    filter: {disabled: [{name: NodePorts}]}\n",
		check: func(t *testing.T, c *Config) {
			if c.Parallelism != 3 {
				t.Errorf("parallelism = %d, want 3", c.Parallelism)
			}
			b := c.Profiles[1]
			if scoreWeightOf(b, "ImageLocality") != 0 || slices.Contains(b.Filter, "NodePorts") || slices.Contains(b.PostFilter, "DefaultPreemption") {
				t.Errorf("profile b: score %v, filter %v, postFilter %v; want ImageLocality, NodePorts and DefaultPreemption disabled", b.Score, b.Filter, b.PostFilter)
			}
		},
	}, {
		name: "per-profile percentage",
		file: header + "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 70\n",
		check: func(t *testing.T, c *Config) {
			if p := c.Profiles[0].PercentageOfNodesToScore; p == nil || *p != 70 {
				t.Errorf("percentageOfNodesToScore = %v", p)
			}
		},
	}, {
		name: "accepted no-ops",
		file: header + "extenders: []\ndelayCacheUntilActive: false\n",
		check: func(t *testing.T, c *Config) {
			if diff := cmp.Diff(Default(), c, ignoreInternal); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name: "delayCacheUntilActive",
		file: header + "delayCacheUntilActive: true\nleaderElection: {leaderElect: true}\n",
		check: func(t *testing.T, c *Config) {
			if !c.DelayCacheUntilActive {
				t.Error("DelayCacheUntilActive = false")
			}
		},
	}, {
		name: "args: kube-scheduler's apiVersion and kind are accepted; a written field replaces its default",
		file: header + `
profiles:
- schedulerName: a
  pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      ignoredResources: [example.com/foo]
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
  - name: NodeResourcesBalancedAllocation
    args:
      resources: [{name: cpu}, {name: nvidia.com/gpu, weight: 1}]
  - name: NodeAffinity
    args: {kind: NodeAffinityArgs}
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 10}
`,
		check: func(t *testing.T, c *Config) {
			args := c.Profiles[0].Args
			wantFit := &noderesources.FitArgs{
				IgnoredResources: []string{"example.com/foo"},
				ScoringStrategy: &framework.ScoringStrategy{
					Type:      framework.RequestedToCapacityRatio,
					Resources: framework.DefaultResourceSpecs(),
					RequestedToCapacityRatio: &framework.RequestedToCapacityRatioParam{
						Shape: []framework.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}},
					},
				},
			}
			if diff := cmp.Diff(wantFit, args[noderesources.FitName]); diff != "" {
				t.Errorf("NodeResourcesFit args (-want +got):\n%s", diff)
			}
			wantBA := &noderesources.BalancedAllocationArgs{
				Resources: []framework.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "nvidia.com/gpu", Weight: 1}},
			}
			if diff := cmp.Diff(wantBA, args[noderesources.BalancedAllocationName]); diff != "" {
				t.Errorf("BalancedAllocation args (-want +got):\n%s", diff)
			}
			wantDP := &defaultpreemption.Args{MinCandidateNodesPercentage: new(int32(0)), MinCandidateNodesAbsolute: new(int32(10))}
			if diff := cmp.Diff(wantDP, args["DefaultPreemption"]); diff != "" {
				t.Errorf("DefaultPreemption args (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "NodeAffinity addedAffinity",
		file: header + `
profiles:
- schedulerName: a
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: pool, operator: In, values: [batch]}]
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 5
          preference:
            matchExpressions: [{key: zone, operator: In, values: [a]}]
`,
		check: func(t *testing.T, c *Config) {
			want := &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"batch"}}},
				}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 5, Preference: v1.NodeSelectorTerm{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}},
				}}},
			}}
			if diff := cmp.Diff(want, c.Profiles[0].Args["NodeAffinity"]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
	}, {
		name: "scoringStrategy given without resources: cpu and memory, as kube-scheduler defaults",
		file: header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated}}\n",
		check: func(t *testing.T, c *Config) {
			want := &noderesources.FitArgs{ScoringStrategy: &framework.ScoringStrategy{
				Type: framework.MostAllocated, Resources: framework.DefaultResourceSpecs(),
			}}
			if diff := cmp.Diff(want, c.Profiles[0].Args[noderesources.FitName]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if c.Profiles[0].SchedulerName != DefaultSchedulerName {
				t.Errorf("a lone unnamed profile is %q, want %q", c.Profiles[0].SchedulerName, DefaultSchedulerName)
			}
		},
	}, {
		name: "anchors and aliases",
		file: header + `
profiles:
- schedulerName: a
  pluginConfig: &pc
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
- schedulerName: b
  pluginConfig: *pc
`,
		check: func(t *testing.T, c *Config) {
			if diff := cmp.Diff(c.Profiles[0].Args, c.Profiles[1].Args); diff != "" {
				t.Errorf("aliased pluginConfig differs (-a +b):\n%s", diff)
			}
		},
	}, {
		// kube-scheduler's leader election durations are plain
		// metav1.Durations: 0 is unset and takes the default.
		name: "a zero lease duration is the default",
		file: header + "leaderElection: {leaseDuration: 0s, renewDeadline: 0s, retryPeriod: 0s}\n",
		check: func(t *testing.T, c *Config) {
			le := c.LeaderElection
			if le.LeaseDuration != DefaultLeaseDuration || le.RenewDeadline != DefaultRenewDeadline || le.RetryPeriod != DefaultRetryPeriod {
				t.Errorf("durations = %v, %v, %v, want the defaults", le.LeaseDuration, le.RenewDeadline, le.RetryPeriod)
			}
		},
	}, {
		// kube-scheduler checks leaderElection only when leaderElect is on.
		name: "leader election off: its settings are not checked",
		file: header + "leaderElection:\n  leaderElect: false\n  leaseDuration: 5s\n  renewDeadline: 10s\n  resourceLock: endpoints\n",
		check: func(t *testing.T, c *Config) {
			if c.LeaderElection.LeaderElect || c.LeaderElection.ResourceLock != "endpoints" {
				t.Errorf("leaderElection = %+v", c.LeaderElection)
			}
		},
	}, {
		name: "the same queueSort in every profile",
		file: header + "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort}]\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort, weight: 0}]\n      disabled: []\n",
		check: func(t *testing.T, c *Config) {
			if len(c.Profiles) != 2 {
				t.Errorf("%d profiles", len(c.Profiles))
			}
		},
	}, {
		name: "lease name follows the first profile",
		file: header + "profiles:\n- schedulerName: first\n- schedulerName: second\n",
		check: func(t *testing.T, c *Config) {
			if c.LeaderElection.ResourceName != "first" {
				t.Errorf("lease name = %q", c.LeaderElection.ResourceName)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, mustDecode(t, tc.file))
		})
	}
}

// Bad input is refused with the field path, the line where the decoder
// knows it, and what to do.
func TestDecodeErrors(t *testing.T) {
	prof := func(plugins string) string {
		return header + "profiles:\n- schedulerName: s\n  plugins:\n" + plugins
	}
	pc := func(name, args string) string {
		return header + "profiles:\n- schedulerName: s\n  pluginConfig:\n  - name: " + name + "\n    args: " + args + "\n"
	}
	tests := []struct {
		name string
		file string
		path string
		line int // 0: no line expected or not checked
		msg  string
	}{
		// Not a configuration at all.
		{"empty file", "", "", 0, "the file is empty"},
		{"blank file", "\n  \n", "", 0, "the file is empty"},
		{"not YAML", "apiVersion: [a\n", "", 1, "not valid YAML"},
		{"binary", "\x00\x01\x02\xff", "", 0, "not valid YAML"},
		{"tab indentation", header + "profiles:\n\t- schedulerName: a\n", "", 4, "not valid YAML"},
		{"a list", "- a\n- b\n", "", 1, "holds a list, not a KubeSchedulerConfiguration"},
		{"a string", "just some text\n", "", 1, `holds the string "just some text"`},
		{"JSON with something after it", `{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}00`, "", 1, "read as JSON"},
		{"JSON then a YAML document", "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\", \"kind\": \"KubeSchedulerConfiguration\"}\n---\n", "", 2, "read as JSON"},
		{"a YAML flow mapping is not JSON", "\n{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}\n", "", 2, "is not valid JSON"},
		{"missing apiVersion", "kind: KubeSchedulerConfiguration\n", "apiVersion", 1, "required"},
		{"missing kind", "apiVersion: kubescheduler.config.k8s.io/v1\n", "kind", 1, "required"},
		{"wrong kind", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeletConfiguration\n", "kind", 2, "must be KubeSchedulerConfiguration"},
		{"unknown apiVersion", "apiVersion: kubescheduler.config.k8s.io/v2\nkind: KubeSchedulerConfiguration\n", "apiVersion", 1, "unsupported"},

		// Strict decoding.
		{"unknown field", header + "paralelism: 3\n", "paralelism", 3, `unknown field (did you mean "parallelism"?)`},
		{"field in the wrong case", header + "Parallelism: 3\n", "Parallelism", 3, `did you mean "parallelism"?`},
		{"unknown nested field", header + "leaderElection:\n  leaseDurationn: 15s\n", "leaderElection.leaseDurationn", 4, "unknown field"},
		{"unknown profile field", header + "profiles:\n- schedulerName: a\n  plugin: {}\n", "profiles[0].plugin", 5, `did you mean "plugins"?`},
		{"unknown extension point", prof("    scores: {}\n"), "profiles[0].plugins.scores", 6, `did you mean "score"?`},
		{"unknown args field", pc("NodeResourcesFit", "{scoringStrategy: {typ: MostAllocated}}"), "profiles[0].pluginConfig[0].args.scoringStrategy.typ", 7, "unknown field"},
		// kube-scheduler builds every plugin an enabled list names, here
		// multiPoint's, though each of its points disables it; building
		// NodeResourcesFit checks its args.
		{"NodeResourcesFit args of a plugin multiPoint enables and every point disables",
			header + "profiles:\n- schedulerName: s\n  plugins:\n    preFilter: {disabled: [{name: NodeResourcesFit}]}\n    filter: {disabled: [{name: NodeResourcesFit}]}\n" +
				"    preScore: {disabled: [{name: NodeResourcesFit}]}\n    score: {disabled: [{name: NodeResourcesFit}]}\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Packed}}\n",
			"profiles[0].pluginConfig[0].args.scoringStrategy.type", 12, "Unsupported value"},
		{"field given twice", header + "parallelism: 3\nparallelism: 4\n", "parallelism", 4, "given twice (first on line 3)"},
		{"merge key", header + "base: &b {parallelism: 3}\n<<: *b\n", "base", 3, "unknown field"},
		// kube-scheduler's parser refuses a key that a merge also sets.
		{"merge key overridden", header + "profiles:\n- &p {schedulerName: a, percentageOfNodesToScore: 20}\n- <<: *p\n  schedulerName: b\n", "profiles[1].schedulerName", 6, "given twice (first on line 4)"},
		{"merge of a scalar", header + "<<: 3\n", "<<", 3, "merges a mapping or a list of mappings"},
		{"merge that includes itself", header + "profiles: &x\n- <<: *x\n", "profiles[0].<<", 4, "merges a mapping or a list of mappings"},
		{"merge bomb", header + mergeBomb(), "", 0, "too large"},
		{"a string for a number", prof("    score:\n      enabled: [{name: NodeAffinity, weight: high}]\n"), "profiles[0].plugins.score.enabled[0].weight", 7, `expected an integer, got the string "high"`},
		{"a number for a string", header + "profiles:\n- schedulerName: 123\n", "profiles[0].schedulerName", 4, "expected a string, got the integer 123"},
		{"a quoted boolean", header + "leaderElection: {leaderElect: \"true\"}\n", "leaderElection.leaderElect", 3, "expected true or false"},
		{"a list for an object", header + "leaderElection: [a]\n", "leaderElection", 3, "expected an object, got a list"},
		{"out of int32", header + "parallelism: 3000000000\n", "parallelism", 3, "out of range"},
		// kube-scheduler's YAML 1.1 parser reads these as booleans, which no
		// string field takes.
		{"a YAML 1.1 boolean for a string", header + "profiles:\n- schedulerName: on\n", "profiles[0].schedulerName", 4, `expected a string, got the YAML 1.1 boolean on (quote it: "on")`},
		{"a YAML 1.1 boolean in a list of strings", pc("NodeResourcesFit", "{ignoredResources: [a, y]}"), "profiles[0].pluginConfig[0].args.ignoredResources[1]", 7, "YAML 1.1 boolean y"},
		{"a fraction for an integer", header + "parallelism: 8.5\n", "parallelism", 3, "expected an integer, got the number 8.5"},
		{"a whole float out of int32", header + "parallelism: 1e10\n", "parallelism", 3, "out of range"},
		// JSON is decoded as JSON, where 8.0 is no integer.
		{"a JSON float for an integer", `{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 8.0}`, "parallelism", 1, "expected an integer, got the number 8.0"},
		{"a duration without unit", header + "leaderElection: {leaseDuration: 15}\n", "leaderElection.leaseDuration", 3, "invalid value"},
		{"a bad duration", header + "leaderElection: {leaseDuration: soon}\n", "leaderElection.leaseDuration", 3, "invalid duration"},
		{"infinite qps", header + "clientConnection: {qps: .inf}\n", "clientConnection.qps", 3, "finite"},
		{"alias bomb", header + aliasBomb(), "leaderElection.leaseDuration", 0, "too large"},

		// Settings.
		{"parallelism 0", header + "parallelism: 0\n", "parallelism", 3, "must be > 0"},
		{"parallelism < 0", header + "parallelism: -4\n", "parallelism", 3, "must be > 0"},
		{"percentage > 100", header + "percentageOfNodesToScore: 101\n", "percentageOfNodesToScore", 3, "within 0..100"},
		{"percentage < 0", header + "percentageOfNodesToScore: -1\n", "percentageOfNodesToScore", 3, "within 0..100"},
		{"profile percentage", header + "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 200\n", "profiles[0].percentageOfNodesToScore", 5, "within 0..100"},
		{"initial backoff 0", header + "podInitialBackoffSeconds: 0\n", "podInitialBackoffSeconds", 3, "must be > 0"},
		{"max backoff < initial", header + "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n", "podMaxBackoffSeconds", 4, "must be ≥ podInitialBackoffSeconds"},
		{"backoff overflows", header + "podMaxBackoffSeconds: 9223372036854775807\n", "podMaxBackoffSeconds", 3, "must be within"},
		{"negative burst", header + "clientConnection: {burst: -1}\n", "clientConnection.burst", 3, "must be ≥ 0"},
		{"content type", header + "clientConnection: {contentType: application/xml}\n", "clientConnection.contentType", 3, "unsupported"},
		{"negative lease duration", header + "leaderElection: {leaseDuration: -5s}\n", "leaderElection.leaseDuration", 3, "must be > 0"},
		{"negative renew deadline", header + "leaderElection: {renewDeadline: -1s}\n", "leaderElection.renewDeadline", 3, "must be > 0"},
		{"negative retry period", header + "leaderElection: {retryPeriod: -1s}\n", "leaderElection.retryPeriod", 3, "must be > 0"},
		// kube-scheduler names leaseDuration (component-base's check), so
		// yardmaster does.
		{"renewDeadline = leaseDuration", header + "leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n", "leaderElection.leaseDuration", 3, "must be greater than renewDeadline (10s), got 10s"},
		{"renewDeadline > leaseDuration", header + "leaderElection:\n  leaseDuration: 5s\n", "leaderElection.leaseDuration", 4, "must be greater than renewDeadline (10s), got 5s"},
		{"renewDeadline within retry jitter", header + "leaderElection: {renewDeadline: 3s, retryPeriod: 3s}\n", "leaderElection.renewDeadline", 3, "greater than retryPeriod × 1.2"},
		{"resource lock", header + "leaderElection: {resourceLock: endpoints}\n", "leaderElection.resourceLock", 3, `must be "leases"`},
		{"lease namespace", header + "leaderElection: {resourceNamespace: Bad_NS}\n", "leaderElection.resourceNamespace", 3, "not a valid namespace"},
		{"extender weight", header + "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: p\n", "extenders[0].weight", 4, "must have a positive weight"},
		{"extender managed resource", header + "extenders:\n- urlPrefix: http://x\n  managedResources: [{name: cpu}]\n", "extenders[0].managedResources[0].name", 5, "invalid extended resource name"},
		{"extender managed resource twice", header + "extenders:\n- urlPrefix: http://x\n  managedResources: [{name: example.com/gpu}]\n- urlPrefix: http://y\n  managedResources: [{name: example.com/gpu}]\n", "extenders[1].managedResources[0].name", 7, "duplicate extender managed resource name"},
		{"two binders", header + "extenders:\n- {urlPrefix: http://x, bindVerb: bind}\n- {urlPrefix: http://y, bindVerb: bind}\n", "extenders", 3, "only one extender can implement bind"},
		{"extender tls data", header + "extenders:\n- urlPrefix: https://x\n  tlsConfig: {caData: \"not base64!\"}\n", "extenders[0].tlsConfig.caData", 5, "not base64"},
		{"extender CA not PEM", header + "extenders:\n- urlPrefix: https://x\n  tlsConfig: {caData: aGVsbG8=}\n", "extenders[0].tlsConfig", 5, "unable to load root certificates"},
		{"extender without URL", header + "extenders: [{filterVerb: f}]\n", "extenders[0].urlPrefix", 3, "required"},
		{"extender negative timeout", header + "extenders:\n- {urlPrefix: http://x, httpTimeout: -1s}\n", "extenders[0].httpTimeout", 4, "must not be negative"},
		// Not in kube-scheduler v1.37.2's schema (later pod-group fields).
		{"placements", header + "percentageOfPlacementsToScore: 10\n", "percentageOfPlacementsToScore", 3, "unknown field"},
		{"profile placements", header + "profiles:\n- schedulerName: a\n  percentageOfPlacementsToScore: 10\n", "profiles[0].percentageOfPlacementsToScore", 5, "unknown field"},
		{"placementFeasible", header + "profiles:\n- schedulerName: a\n  plugins:\n    placementFeasible: {}\n", "profiles[0].plugins.placementFeasible", 6, "unknown field"},

		// Profiles.
		{"empty schedulerName", header + "profiles:\n- schedulerName: \"\"\n", "profiles[0].schedulerName", 4, "required"},
		{"unnamed profile among several", header + "profiles:\n- schedulerName: a\n- plugins: {}\n", "profiles[1].schedulerName", 5, "required"},
		{"duplicate schedulerName", header + "profiles:\n- schedulerName: a\n- schedulerName: a\n", "profiles[1].schedulerName", 5, `duplicate schedulerName "a" (also profiles[0])`},
		{"lease named after a schedulerName that is no name", header + "profiles:\n- schedulerName: My Scheduler\n", "leaderElection.resourceName", 0, "defaults to the first profile's schedulerName"},
		{"queueSort differs between profiles", header + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort}]\n",
			"profiles[1].plugins.queueSort", 7, "must be the same for all profiles"},
		{"queueSort weight differs between profiles", header + "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort, weight: 0}]\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort, weight: 2}]\n",
			"profiles[1].plugins.queueSort", 10, "must be the same for all profiles"},
		// kube-scheduler compares the args of the queue-sort plugin each
		// profile resolves to, written or not.
		{"queue-sort args differ, queueSort not written", header + "profiles:\n- schedulerName: a\n- schedulerName: b\n  pluginConfig:\n  - name: PrioritySort\n    args: {a: 1}\n",
			"profiles[1].pluginConfig", 6, `the args of queue-sort plugin "PrioritySort" must be the same for all profiles`},
		{"queue-sort args in the first profile only", header + "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: PrioritySort\n    args: {a: 1}\n- schedulerName: b\n",
			"profiles[1]", 8, `the args of queue-sort plugin "PrioritySort" must be the same for all profiles`},
		{"queueSort disabled in one profile only", header + "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      disabled: [{name: \"*\"}]\n      enabled: [{name: PrioritySort}]\n- schedulerName: b\n",
			"profiles[1].plugins.queueSort", 9, "must be the same for all profiles"},

		// Plugins.
		{"unknown plugin", prof("    filter:\n      enabled: [{name: NodeResourceFit}]\n"), "profiles[0].plugins.filter.enabled[0].name", 7, `unknown plugin "NodeResourceFit" (did you mean "NodeResourcesFit"?)`},
		{"kube-scheduler plugin yardmaster lacks", prof("    multiPoint:\n      enabled: [{name: DeferredPodScheduling}]\n"), "profiles[0].plugins.multiPoint.enabled[0].name", 7, "does not implement"},
		{"removed plugin", prof("    score:\n      enabled: [{name: NodeResourcesLeastAllocated, weight: 2}]\n"), "profiles[0].plugins.score.enabled[0].name", 7, "scoringStrategy: {type: LeastAllocated"},
		{"plugin at a point it does not implement", prof("    score:\n      enabled: [{name: NodeUnschedulable}]\n"), "profiles[0].plugins.score.enabled[0].name", 7, `"NodeUnschedulable" does not implement score (it implements preFilter, filter)`},
		{"another queueSort", prof("    queueSort:\n      enabled: [{name: NodeResourcesFit}]\n"), "profiles[0].plugins.queueSort.enabled[0].name", 7, `plugin "NodeResourcesFit" does not implement queueSort`},
		{"another bind", prof("    bind:\n      enabled: [{name: NodeName}]\n"), "profiles[0].plugins.bind.enabled[0].name", 7, `plugin "NodeName" does not implement bind`},
		{"a reserve plugin", prof("    reserve:\n      enabled: [{name: NodeResourcesFit}]\n"), "profiles[0].plugins.reserve.enabled[0].name", 7, "does not implement reserve"},
		// kube-scheduler's ImageLocality is a scorer only: yardmaster's
		// step at preScore cannot be named, nor a point no plugin of the
		// name has.
		{"a scorer at preFilter, as kube-scheduler refuses it", prof("    preFilter:\n      enabled: [{name: NodeResourcesBalancedAllocation}]\n"), "profiles[0].plugins.preFilter.enabled[0].name", 7, `plugin "NodeResourcesBalancedAllocation" does not implement preFilter (it implements preScore, score)`},
		{"ImageLocality at preScore, as kube-scheduler refuses it", prof("    multiPoint:\n      enabled: [{name: ImageLocality}]\n    preScore:\n      enabled: [{name: ImageLocality}]\n"), "profiles[0].plugins.preScore.enabled[0].name", 9, `plugin "ImageLocality" does not implement preScore (it implements score)`},
		{"a filter at preEnqueue", prof("    preEnqueue:\n      enabled: [{name: NodeUnschedulable}]\n"), "profiles[0].plugins.preEnqueue.enabled[0].name", 7, `plugin "NodeUnschedulable" does not implement preEnqueue (it implements preFilter, filter)`},
		{"a plugin at podGroupPostFilter", prof("    podGroupPostFilter:\n      enabled: [{name: DefaultPreemption}]\n"), "profiles[0].plugins.podGroupPostFilter.enabled[0].name", 7, `plugin "DefaultPreemption" cannot run at podGroupPostFilter: yardmaster does not implement pod-group scheduling`},
		{"queueSort disabled", prof("    queueSort:\n      disabled: [{name: \"*\"}]\n"), "profiles[0].plugins.queueSort", 6, "no queue-sort plugin is enabled"},
		{"multiPoint emptied", prof("    multiPoint:\n      disabled: [{name: \"*\"}]\n"), "profiles[0].plugins.bind", 5, "no bind plugin is enabled"},
		{"enabled twice", prof("    filter:\n      enabled: [{name: NodeName}, {name: NodeName}]\n"), "profiles[0].plugins.filter.enabled[1].name", 7, "enabled twice"},
		{"wildcard enabled", prof("    filter:\n      enabled: [{name: \"*\"}]\n"), "profiles[0].plugins.filter.enabled[0].name", 7, "only means something under disabled"},
		{"negative weight", prof("    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: -3\n"), "profiles[0].plugins.multiPoint.enabled[0].weight", 9, "must be > 0"},
		{"weight beyond int32, where the total could overflow", prof("    score:\n      enabled: [{name: NodeAffinity, weight: 9223372036854775807}]\n"), "profiles[0].plugins.score.enabled[0].weight", 7, "must be at most 2147483647"},
		{"nameless plugin", prof("    score:\n      enabled: [{weight: 2}]\n"), "profiles[0].plugins.score.enabled[0].name", 7, "required"},

		// pluginConfig.
		{"pluginConfig twice", header + "profiles:\n- schedulerName: s\n  pluginConfig:\n  - name: NodeResourcesFit\n  - name: NodeResourcesFit\n", "profiles[0].pluginConfig[1]", 7, "configured twice"},
		{"pluginConfig for a plugin kube-scheduler's v1 refuses by name", pc("EBSLimits", "{}"), "profiles[0].pluginConfig[0].name", 6, "NodeVolumeLimits"},
		{"second YAML document when the first is bad", header + "parallelism: 0\n---\n" + header, "parallelism", 3, "must be > 0"},
		{"addedAffinity term that does not parse", pc("NodeAffinity", "{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: cores, operator: Gt, values: [many]}]}]}}}"),
			"profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]", 7, `Invalid value: "many": for 'Gt', 'Lt' operators, the value must be an integer`},
		{"addedAffinity unknown field", pc("NodeAffinity", "{addedAffinity: {required: {}}}"), "profiles[0].pluginConfig[0].args.addedAffinity.required", 7, "unknown field"},
		{"args of another kind", pc("NodeResourcesFit", "{kind: NodeAffinityArgs}"), "profiles[0].pluginConfig[0].args.kind", 7, `must be "NodeResourcesFitArgs"`},
		{"args of another group", pc("NodeResourcesFit", "{apiVersion: v1}"), "profiles[0].pluginConfig[0].args.apiVersion", 7, `must be "kubescheduler.config.k8s.io/v1"`},
		{"args not an object", pc("NodeResourcesFit", "[1]"), "profiles[0].pluginConfig[0].args", 7, "expected an object"},
		{"unknown scoring strategy", pc("NodeResourcesFit", "{scoringStrategy: {type: Packed}}"), "profiles[0].pluginConfig[0].args.scoringStrategy.type", 7, `Unsupported value: "Packed"`},
		{"scoring strategy without type", pc("NodeResourcesFit", "{scoringStrategy: {resources: [{name: cpu}]}}"), "profiles[0].pluginConfig[0].args.scoringStrategy.type", 7, `Unsupported value: ""`},
		{"resource weight out of range", pc("NodeResourcesFit", "{scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 300}]}}"), "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight", 7, "300"},
		{"shape without its strategy", pc("NodeResourcesFit", "{scoringStrategy: {type: MostAllocated, requestedToCapacityRatio: {shape: []}}}"), "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio", 7, "must be nil"},
		{"balanced allocation weights must be 1, as in kube-scheduler", pc("NodeResourcesBalancedAllocation", "{resources: [{name: cpu, weight: 2}]}"), "profiles[0].pluginConfig[0].args.resources[0].weight", 7, "must be 1"},
		{"an enabled plugin whose defaults are not enough", prof("    score:\n      enabled:\n      - name: NetworkTraffic\n"), "profiles[0].pluginConfig", 4, `plugin "NetworkTraffic" is enabled but has no pluginConfig entry, and the default of args.prometheusAddress is not valid: Required value`},
		{"DefaultPreemption args", pc("DefaultPreemption", "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}"), "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage", 7, "cannot be zero"},

		// Older versions: refused with what to change.
		{"v1beta3, which kube-scheduler v1.37 does not read", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", "apiVersion", 1, "not read by kube-scheduler v1.37, nor by yardmaster: change it to kubescheduler.config.k8s.io/v1"},
		{"v1beta3 removed plugin", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n", "profiles[0].plugins.filter.enabled[0].name", 7, "NodeVolumeLimits"},
		{"v1beta3 args", pc("InterPodAffinity", "{apiVersion: kubescheduler.config.k8s.io/v1beta3, kind: InterPodAffinityArgs}"), "profiles[0].pluginConfig[0].args.apiVersion", 7, `must be "kubescheduler.config.k8s.io/v1"`},
		{"v1beta2", "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n", "apiVersion", 1, "change it to kubescheduler.config.k8s.io/v1"},
		{"v1beta2 removed field", "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nmetricsBindAddress: 0.0.0.0:10251\n", "metricsBindAddress", 3, "delete it"},
		{"v1beta1 renamed plugin", "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeResourcesMostAllocated\n", "profiles[0].plugins.score.enabled[0].name", 7, "scoringStrategy: {type: MostAllocated"},
		{"v1beta1 renamed plugin args", "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: RequestedToCapacityRatio\n", "profiles[0].pluginConfig[0].name", 5, "type: RequestedToCapacityRatio"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Decode([]byte(tc.file))
			if err == nil {
				t.Fatalf("Decode accepted it: %+v\n--- file:\n%s", c, tc.file)
			}
			checkProblem(t, err, tc.path, tc.line, tc.msg)
		})
	}
}

// What kube-scheduler v1.37 accepts and ignores is accepted with the same
// meaning, and each such setting gets a warning at its place.
func TestKubeSchedulerIgnores(t *testing.T) {
	prof := func(plugins string) string {
		return header + "profiles:\n- schedulerName: s\n  plugins:\n" + plugins
	}
	dp := defaultProfile()
	tests := []struct {
		name  string
		file  string
		check func(t *testing.T, p framework.Profile) // nil: the default profile
		warn  string                                  // path of the one warning
		line  int                                     // its line; 0: no warning
	}{{
		name: "score weight 0 is 1",
		file: prof("    score:\n      enabled: [{name: NodeAffinity, weight: 0}]\n"),
		check: func(t *testing.T, p framework.Profile) {
			if w := scoreWeightOf(p, "NodeAffinity"); w != 1 {
				t.Errorf("NodeAffinity weight = %d, want 1", w)
			}
		},
	}, {
		name: "multiPoint weight 0 is 1",
		file: prof("    multiPoint:\n      enabled: [{name: TaintToleration, weight: 0}]\n"),
		check: func(t *testing.T, p framework.Profile) {
			if w := scoreWeightOf(p, "TaintToleration"); w != 1 {
				t.Errorf("TaintToleration weight = %d, want 1", w)
			}
		},
	}, {
		name: "score weight 0 still wins over multiPoint's",
		file: prof("    score:\n      enabled: [{name: ImageLocality, weight: 0}]\n    multiPoint:\n      enabled: [{name: ImageLocality, weight: 5}]\n"),
		check: func(t *testing.T, p framework.Profile) {
			if w := scoreWeightOf(p, "ImageLocality"); w != 1 {
				t.Errorf("ImageLocality weight = %d, want 1", w)
			}
		},
	}, {
		name: "weight on a filter",
		file: prof("    filter:\n      enabled: [{name: NodeName, weight: -2}]\n"),
		check: func(t *testing.T, p framework.Profile) {
			// Enabled at filter and by multiPoint: it runs first there.
			if want := append([]string{"NodeName"}, without(dp.Filter, "NodeName")...); !slices.Equal(want, p.Filter) {
				t.Errorf("filter = %v, want %v", p.Filter, want)
			}
		},
		warn: "profiles[0].plugins.filter.enabled[0].weight", line: 7,
	}, {
		name: "weight on a plugin that does not score",
		file: prof("    multiPoint:\n      enabled: [{name: NodePorts, weight: 2}]\n"),
		warn: "profiles[0].plugins.multiPoint.enabled[0].weight", line: 7,
	}, {
		name: "a second YAML document",
		file: header + "---\n" + header + "parallelism: 0\n",
		warn: "", line: 4,
	}, {
		name: "a second YAML document that is not YAML",
		file: header + "---\nfoo: [\n",
		warn: "", line: 4,
	}, {
		name: "schedulerName no pod can have",
		file: header + "leaderElection: {resourceName: lease}\nprofiles:\n- schedulerName: My Scheduler\n",
		check: func(t *testing.T, p framework.Profile) {
			if p.SchedulerName != "My Scheduler" {
				t.Errorf("schedulerName = %q", p.SchedulerName)
			}
		},
		warn: "profiles[0].schedulerName", line: 5,
	}, {
		name: "unknown plugin disabled",
		file: prof("    score:\n      disabled: [{name: Nope}]\n"),
		check: func(t *testing.T, p framework.Profile) {
			if diff := cmp.Diff(dp.Score, p.Score); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		},
		warn: "profiles[0].plugins.score.disabled[0].name", line: 7,
	}, {
		name: "disabled entry without a name",
		file: prof("    filter:\n      disabled: [{name: \"\"}]\n"),
		warn: "profiles[0].plugins.filter.disabled[0].name", line: 7,
	}, {
		name: "disabled entry that is null",
		file: prof("    score:\n      disabled: [null]\n"),
		warn: "profiles[0].plugins.score.disabled[0].name", line: 7,
	}, {
		name: "pluginConfig for an unknown plugin",
		file: header + "profiles:\n- schedulerName: s\n  pluginConfig:\n  - name: Coscheduling\n    args: {permitWaitingTimeSeconds: 10}\n",
		check: func(t *testing.T, p framework.Profile) {
			if _, ok := p.Args["Coscheduling"]; ok {
				t.Errorf("args kept for Coscheduling")
			}
		},
		warn: "profiles[0].pluginConfig[0].name", line: 6,
	}, {
		name: "pluginConfig for a plugin kube-scheduler removed before v1",
		file: header + "profiles:\n- schedulerName: s\n  pluginConfig:\n  - name: NodeLabel\n",
		warn: "profiles[0].pluginConfig[0].name", line: 6,
	}, {
		name: "pluginConfig without a name",
		file: header + "profiles:\n- schedulerName: s\n  pluginConfig:\n  - args: {}\n",
		warn: "profiles[0].pluginConfig[0].name", line: 6,
	}, {
		name: "args for a plugin without args",
		file: header + "profiles:\n- schedulerName: s\n  pluginConfig:\n  - name: TaintToleration\n    args: {addedAffinity: {}}\n",
		warn: "profiles[0].pluginConfig[0].args", line: 7,
	}, {
		name: "NodeResourcesFit args, not enabled, are not checked",
		file: header + "profiles:\n- schedulerName: s\n  plugins:\n    multiPoint:\n      disabled: [{name: NodeResourcesFit}]\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Packed}}\n",
		check: func(t *testing.T, p framework.Profile) {
			if slices.Contains(p.Filter, "NodeResourcesFit") {
				t.Errorf("NodeResourcesFit runs: %v", p.Filter)
			}
		},
		warn: "profiles[0].pluginConfig[0].args", line: 10,
	}, {
		// kube-scheduler ignores a plugin disabled where it never is
		// (and it does not stop ImageLocality's own PreScore step).
		name: "ImageLocality disabled at preScore",
		file: prof("    preScore:\n      disabled: [{name: ImageLocality}]\n"),
		warn: "profiles[0].plugins.preScore.disabled[0].name", line: 7,
	}, {
		name: "weight under disabled",
		file: prof("    score:\n      disabled: [{name: NodeAffinity, weight: 2}]\n"),
		check: func(t *testing.T, p framework.Profile) {
			if diff := cmp.Diff(scoreWithout("NodeAffinity"), p.Score); diff != "" {
				t.Errorf("score (-want +got):\n%s", diff)
			}
		},
		warn: "profiles[0].plugins.score.disabled[0].weight", line: 7,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustDecode(t, tc.file)
			if tc.check != nil {
				tc.check(t, c.Profiles[0])
			} else if diff := cmp.Diff(dp.Filter, c.Profiles[0].Filter); diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
			var want []string
			if tc.line != 0 {
				want = []string{fmt.Sprintf("%d %s", tc.line, tc.warn)}
			}
			var got []string
			for _, w := range c.Warnings {
				got = append(got, fmt.Sprintf("%d %s", w.Line, w.Path))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%v", diff, c.Warnings)
			}
		})
	}
}

// scoreWeightOf returns the weight of score plugin name in p, 0 if absent.
func scoreWeightOf(p framework.Profile, name string) int64 {
	for _, w := range p.Score {
		if w.Name == name {
			return w.Weight
		}
	}
	return 0
}

// aliasBomb is a few lines whose last value expands to 10^9 strings.
// mergeBomb is aliasBomb with merge keys: each level merges the one before
// twice (under different keys it would be a valid document).
func mergeBomb() string {
	var b strings.Builder
	b.WriteString("x0: &x0 {a: 1}\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "x%d: &x%d {<<: [*x%d, *x%d]}\n", i, i, i-1, i-1)
	}
	return b.String()
}

func aliasBomb() string {
	var b strings.Builder
	b.WriteString("extenders:\n- &x0 [a, a, a, a, a, a, a, a, a, a]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "- &x%d [", i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*x%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String() + "leaderElection: {leaseDuration: *x9}\n"
}

// The total-overflow check kube-scheduler makes. Weights are capped at
// int32, so no file reaches it; this pins the arithmetic.
func TestScoreOverflow(t *testing.T) {
	const maxInt64 = int64(^uint64(0) >> 1)
	if got := scoreOverflowAt([]int64{3, 2, 1}); got != -1 {
		t.Errorf("small weights: overflow at %d", got)
	}
	if got := scoreOverflowAt([]int64{maxInt64 / framework.MaxNodeScore}); got != -1 {
		t.Errorf("one weight at the bound: overflow at %d", got)
	}
	if got := scoreOverflowAt([]int64{maxInt64 / framework.MaxNodeScore, 1}); got != 1 {
		t.Errorf("bound + 1: overflow at %d, want 1", got)
	}
	if got := scoreOverflowAt([]int64{maxInt64/framework.MaxNodeScore + 1}); got != 0 {
		t.Errorf("one weight over the bound: overflow at %d, want 0", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error %v, want fs.ErrNotExist", err)
	}
	path := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(path, []byte(header+"profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled: [{name: NodeAffinity, weight: -2}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	want := path + ":7:38: profiles[0].plugins.score.enabled[0].weight: must be > 0 (got -2)"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v, want it to start with %q", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.File != path {
		t.Errorf("error %v is not an *Error naming the file", err)
	}
}

// Marshal's output loads back to the same configuration, and is stable.
func TestRoundTrip(t *testing.T) {
	files := map[string]string{
		"defaults":                     header,
		"delayCacheUntilActive":        header + "delayCacheUntilActive: true\n",
		"extenders":                    header + "extenders:\n- urlPrefix: https://ext.example:8443/scheduler\n  filterVerb: filter\n  prioritizeVerb: prioritize\n  preemptVerb: preempt\n  bindVerb: bind\n  weight: 3\n  enableHTTPS: true\n  tlsConfig: {serverName: ext}\n  httpTimeout: 2s\n  nodeCacheCapable: true\n  ignorable: true\n  managedResources: [{name: example.com/gpu, ignoredByScheduler: true}]\n",
		"two profiles":                 header + "leaderElection: {leaderElect: false}\nprofiles:\n- schedulerName: a\n  percentageOfNodesToScore: 20\n  plugins:\n    score:\n      disabled: [{name: \"*\"}]\n      enabled: [{name: NodeResourcesFit, weight: 9}]\n    filter:\n      disabled: [{name: NodePorts}]\n- schedulerName: b\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {ignoredResourceGroups: [example.com], scoringStrategy: {type: MostAllocated}}\n",
		"args of a plugin not enabled": header + "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: NodeResourcesBalancedAllocation}]\n  pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu}, {name: memory}, {name: example.com/gpu}]}\n",
	}
	examples, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, ex := range examples {
		data, err := os.ReadFile(ex)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(ex)] = string(data)
	}
	for name, file := range files {
		t.Run(name, func(t *testing.T) {
			c1, err := Decode([]byte(file))
			if err != nil {
				if strings.Contains(err.Error(), "NetworkTraffic") {
					t.Skip("NetworkTraffic is not in the registry yet")
				}
				t.Fatal(err)
			}
			out1, err := c1.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			c2, err := Decode(out1)
			if err != nil {
				t.Fatalf("Decode(Marshal()): %v\n--- output:\n%s", err, out1)
			}
			if diff := cmp.Diff(c1, c2, ignoreInternal); diff != "" {
				t.Errorf("round trip changed the configuration (-before +after):\n%s\n--- output:\n%s", diff, out1)
			}
			out2, err := c2.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(out1), string(out2)); diff != "" {
				t.Errorf("Marshal is not stable (-first +second):\n%s", diff)
			}
		})
	}
}

func TestMarshalDefaults(t *testing.T) {
	out, err := Default().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
		"  leaderElect: true\n", "  leaseDuration: 15s\n", "  resourceName: yardmaster\n",
		"  contentType: application/vnd.kubernetes.protobuf\n", "  qps: 50\n", "  burst: 100\n",
		"parallelism: 16\n", "podInitialBackoffSeconds: 1\n", "podMaxBackoffSeconds: 10\n",
		"- schedulerName: yardmaster\n", "      - name: TaintToleration\n        weight: 3\n",
		"    multiPoint:\n      disabled:\n      - name: '*'\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("print-defaults output lacks %q:\n%s", want, out)
		}
	}
	c := Default()
	c.PodInitialBackoff = 1500 * time.Millisecond
	if _, err := c.Marshal(); err == nil || !strings.Contains(err.Error(), "whole number of seconds") {
		t.Errorf("sub-second backoff: error %v", err)
	}
}

// Flags explicitly set on the command line > config file > defaults.
func TestApply(t *testing.T) {
	c := mustDecode(t, header+"clientConnection: {qps: 100}\nparallelism: 4\nprofiles:\n- schedulerName: from-file\n")
	if err := c.Apply(Overrides{
		Kubeconfig:    new("/k"),
		QPS:           new(float32(7)),
		SchedulerName: new("from-flag"),
		LeaderElect:   new(false),
	}); err != nil {
		t.Fatal(err)
	}
	if c.ClientConnection.QPS != 7 || c.ClientConnection.Kubeconfig != "/k" || c.Parallelism != 4 || c.ClientConnection.Burst != 100 {
		t.Errorf("flag, file and default not layered: %+v, parallelism %d", c.ClientConnection, c.Parallelism)
	}
	if c.Profiles[0].SchedulerName != "from-flag" || c.LeaderElection.ResourceName != "from-flag" || c.LeaderElection.LeaderElect {
		t.Errorf("profile %q, lease %q, leaderElect %v", c.Profiles[0].SchedulerName, c.LeaderElection.ResourceName, c.LeaderElection.LeaderElect)
	}

	// A lease named in the file stays.
	c = mustDecode(t, header+"leaderElection: {resourceName: mine}\n")
	if err := c.Apply(Overrides{SchedulerName: new("other")}); err != nil {
		t.Fatal(err)
	}
	if c.LeaderElection.ResourceName != "mine" {
		t.Errorf("lease name = %q, want the file's", c.LeaderElection.ResourceName)
	}

	// --scheduler-name cannot pick among several profiles.
	c = mustDecode(t, header+"profiles:\n- schedulerName: a\n- schedulerName: b\n")
	if err := c.Apply(Overrides{SchedulerName: new("x")}); err == nil || !strings.Contains(err.Error(), "2 profiles") {
		t.Errorf("error = %v", err)
	}

	// A bad flag value is refused and changes nothing.
	c = Default()
	err := c.Apply(Overrides{RenewDeadline: new(20 * time.Second), Parallelism: new(8)})
	if err == nil || !strings.Contains(err.Error(), "leaderElection.leaseDuration: must be greater than renewDeadline (20s), got 15s") {
		t.Errorf("error = %v", err)
	}
	if diff := cmp.Diff(Default(), c, ignoreInternal); diff != "" {
		t.Errorf("a refused Apply changed the configuration (-want +got):\n%s", diff)
	}
}

// Run as kube-scheduler, yardmaster takes its default profile and Lease
// names; names the file gives stay.
func TestKubeSchedulerDefaults(t *testing.T) {
	tests := []struct {
		name, file           string
		wantProfiles         []string
		wantLease            string
		schedulerNameFlagSet bool
	}{
		{name: "no file", wantProfiles: []string{"default-scheduler"}, wantLease: "kube-scheduler"},
		{name: "a lone profile the file does not name", file: header + "profiles:\n- plugins: {score: {disabled: [{name: ImageLocality}]}}\n",
			wantProfiles: []string{"default-scheduler"}, wantLease: "kube-scheduler"},
		{name: "a profile the file names keeps its name; the Lease is kube-scheduler's", file: header + "profiles:\n- schedulerName: my-scheduler\n",
			wantProfiles: []string{"my-scheduler"}, wantLease: "kube-scheduler"},
		{name: "a Lease the file names stays", file: header + "leaderElection: {resourceName: mine}\n",
			wantProfiles: []string{"default-scheduler"}, wantLease: "mine"},
		{name: "two profiles", file: header + "profiles:\n- schedulerName: a\n- schedulerName: b\n",
			wantProfiles: []string{"a", "b"}, wantLease: "kube-scheduler"},
		{name: "--scheduler-name still renames the profile", schedulerNameFlagSet: true,
			wantProfiles: []string{"flag"}, wantLease: "kube-scheduler"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Overrides{KubeSchedulerDefaults: true}
			if tc.schedulerNameFlagSet {
				o.SchedulerName = new("flag")
			}
			var c *Config
			if tc.file == "" {
				c = Default()
				if err := c.Apply(o); err != nil {
					t.Fatal(err)
				}
			} else {
				path := filepath.Join(t.TempDir(), "c.yaml")
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
				var err error
				if c, err = LoadWithOverrides(path, o); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			for _, p := range c.Profiles {
				names = append(names, p.SchedulerName)
			}
			if diff := cmp.Diff(tc.wantProfiles, names); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
			if c.LeaderElection.ResourceName != tc.wantLease {
				t.Errorf("lease = %q, want %q", c.LeaderElection.ResourceName, tc.wantLease)
			}
		})
	}
	// Without the setting, yardmaster's own names.
	if c := Default(); c.Profiles[0].SchedulerName != DefaultSchedulerName || c.LeaderElection.ResourceName != DefaultSchedulerName {
		t.Errorf("defaults: profile %q, lease %q", c.Profiles[0].SchedulerName, c.LeaderElection.ResourceName)
	}
}

// Flags are applied before the file is validated, as kube-scheduler
// applies its --leader-elect-* flags: they can make a file valid or not.
func TestLoadWithOverrides(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		o       Overrides
		wantErr string // empty: loads
	}{{
		name: "--leader-elect=false: the file's leaderElection is not checked",
		file: header + "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n",
		o:    Overrides{LeaderElect: new(false)},
	}, {
		name:    "--leader-elect=true checks the file's leaderElection",
		file:    header + "leaderElection: {leaderElect: false, resourceLock: endpoints}\n",
		o:       Overrides{LeaderElect: new(true)},
		wantErr: `c.yaml:3:38: leaderElection.resourceLock: must be "leases"`,
	}, {
		name: "a flag mends the file",
		file: header + "leaderElection: {leaseDuration: 5s}\n",
		o:    Overrides{RenewDeadline: new(3 * time.Second)},
	}, {
		name:    "a flag's value that the file's clashes with: the file's field",
		file:    header + "leaderElection: {leaseDuration: 20s}\n",
		o:       Overrides{RenewDeadline: new(30 * time.Second)},
		wantErr: "c.yaml:3:18: leaderElection.leaseDuration: must be greater than renewDeadline (30s), got 20s",
	}, {
		name:    "a problem with a flag's value names the flag",
		file:    header + "leaderElection: {renewDeadline: 20s}\n",
		o:       Overrides{LeaseDuration: new(15 * time.Second)},
		wantErr: "c.yaml: leaderElection.leaseDuration: must be greater than renewDeadline (20s), got 15s (value from --leader-elect-lease-duration)",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadWithOverrides(path, tc.o)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{File: "c.yaml", Problems: []FieldError{
		{Path: "parallelism", Line: 3, Column: 14, Message: "must be > 0 (got 0)"},
		{Path: "leaderElection.renewDeadline", Message: "must be less than leaseDuration (5s), got 10s"},
		{Message: "the file is empty"},
	}}
	want := "c.yaml:3:14: parallelism: must be > 0 (got 0)\n" +
		"c.yaml: leaderElection.renewDeadline: must be less than leaseDuration (5s), got 10s\n" +
		"c.yaml: the file is empty"
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e.File = ""
	if got := e.Error(); !strings.HasPrefix(got, "line 3:14: parallelism: ") {
		t.Errorf("without a file: %q", got)
	}
}
