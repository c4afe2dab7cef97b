package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
	"github.com/yardmaster-io/yardmaster/predicates/noderesources"
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// The expected plugin sets below are written by hand from kubernetes'
// source of the last release that read each version:
//
//   - v1beta1: v1.22.17 pkg/scheduler/apis/config/v1beta1/default_plugins.go
//     (score: NodeResourcesBalancedAllocation 1, ImageLocality 1,
//     InterPodAffinity 1, NodeResourcesLeastAllocated 1, NodeAffinity 1,
//     NodePreferAvoidPods 10000, PodTopologySpread 2, TaintToleration 1;
//     filter: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
//     NodePorts, NodeResourcesFit, VolumeRestrictions, EBSLimits,
//     GCEPDLimits, NodeVolumeLimits, AzureDiskLimits, VolumeBinding,
//     VolumeZone, PodTopologySpread, InterPodAffinity) and defaults.go
//     (LeastAllocated over cpu and memory, weight 1 each; RTCR resource
//     weight 0 means 1);
//   - v1beta2: v1.27.16 pkg/scheduler/apis/config/v1beta2/default_plugins.go
//     (score: the same with NodeResourcesFit 1 for LeastAllocated and no
//     NodePreferAvoidPods; a custom entry replaces the default in place);
//   - v1beta3: v1.28.15 pkg/scheduler/apis/config/v1beta3/default_plugins.go
//     (multiPoint: TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1,
//     PodTopologySpread 2, InterPodAffinity 2, BalancedAllocation 1,
//     ImageLocality 1; EBSLimits, GCEPDLimits and AzureDiskLimits too).
//
// What v1 adds and no old version had is expected on top, marked: the
// DynamicResources plugin (weight 2; it scores and filters only pods with
// resource claims) and NodeDeclaredFeatures (a filter on features nodes
// declare). What v1 lacks is expected gone: NodePreferAvoidPods and the
// in-tree volume limit plugins (no-ops once CSI migration is on).

// oldFilters are v1beta1's and v1beta2's default filters without the
// in-tree volume limit plugins, plus v1's additions.
var oldFilters = []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
	"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
	"PodTopologySpread", "InterPodAffinity",
	"DynamicResources", "NodeDeclaredFeatures"} // v1's additions

// profileWant is what a migrated profile must resolve to.
type profileWant struct {
	name    string
	score   map[string]int64
	filters []string
	args    map[string]any
}

func TestMigrateLegacyFiles(t *testing.T) {
	leastAllocated := &noderesources.FitArgs{ScoringStrategy: &framework.ScoringStrategy{
		Type: framework.LeastAllocated, Resources: framework.DefaultResourceSpecs()}}
	for _, tc := range []struct {
		file     string
		profiles []profileWant
		// comments must be in the output: the file's own and the
		// migration's.
		comments []string
		// notes are substrings of the notes, one each, in order.
		notes []string
		check func(t *testing.T, c *Config)
	}{{
		file: "v1beta1-mostallocated.yaml",
		profiles: []profileWant{{
			name: "bin-packing-scheduler",
			// LeastAllocated disabled, MostAllocated at 5 becomes
			// NodeResourcesFit at 5; NodePreferAvoidPods is gone.
			score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "InterPodAffinity": 1,
				"NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1, "NodeResourcesFit": 5,
				"DynamicResources": 2}, // v1's addition
			filters: oldFilters,
			args: map[string]any{"NodeResourcesFit": &noderesources.FitArgs{ScoringStrategy: &framework.ScoringStrategy{
				Type: framework.MostAllocated, Resources: []framework.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: "nvidia.com/gpu", Weight: 3}}}}},
		}},
		comments: []string{"# Bin-packing scheduler, as in the kube-scheduler v1.21 docs.", "# The scheduler's own endpoints.",
			"leaderElect: false # one replica only", "# Pack pods onto the fullest nodes.", "- name: nvidia.com/gpu # GPUs count most",
			"# healthzBindAddress: 0.0.0.0:10251 was deleted", "- name: NodeResourcesFit # was NodeResourcesMostAllocated",
			"# was kubescheduler.config.k8s.io/v1beta1"},
		notes: []string{"line 5:1: healthzBindAddress: deleted", "line 6:1: metricsBindAddress: deleted", "line 12:5: profiles[0]: deleted NodePreferAvoidPods (scoring at weight 10000 here)"},
	}, {
		file: "v1beta1-two-profiles.yaml",
		profiles: []profileWant{{
			name: "default-scheduler",
			score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "InterPodAffinity": 1,
				"NodeResourcesFit": 1, "NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1,
				"DynamicResources": 2}, // v1's addition
			filters: oldFilters,
			args:    map[string]any{"NodeResourcesFit": leastAllocated},
		}, {
			name: "rtcr-scheduler",
			score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "InterPodAffinity": 1,
				"NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1, "NodeResourcesFit": 2,
				"DynamicResources": 2}, // v1's addition
			// EBSLimits, disabled here, is gone anyway.
			filters: oldFilters,
			args: map[string]any{
				"NodeResourcesFit": &noderesources.FitArgs{
					IgnoredResources: []string{"example.com/foo"},
					ScoringStrategy: &framework.ScoringStrategy{
						Type: framework.RequestedToCapacityRatio,
						// memory's weight 0 means 1, in v1beta1 as in v1.
						Resources:                []framework.ResourceSpec{{Name: "cpu", Weight: 3}, {Name: "memory", Weight: 1}},
						RequestedToCapacityRatio: &framework.RequestedToCapacityRatioParam{Shape: []framework.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}},
					}},
				"InterPodAffinity": &interpodaffinity.Args{HardPodAffinityWeight: new(int32(5))},
			},
		}},
		comments: []string{"# Everything at kube-scheduler's defaults.", "# Scores nodes on a utilization curve", "resourceLock: leases # was endpointsleases",
			"- name: NodeResourcesFit # was RequestedToCapacityRatio", "# kubescheduler.config.k8s.io/v1beta1's default score weights"},
		notes: []string{`line 5:17: leaderElection.resourceLock: changed "endpointsleases" to "leases"`, "line 9:5: profiles[0]: deleted NodePreferAvoidPods"},
		check: func(t *testing.T, c *Config) {
			if le := c.LeaderElection; le.ResourceLock != "leases" || le.ResourceName != "my-scheduler" {
				t.Errorf("leader election %+v, want lock leases, name my-scheduler", le)
			}
		},
	}, {
		file: "v1beta2-tutorial.yaml",
		profiles: []profileWant{{
			name: "gpu-packer",
			// NodeResourcesFit's weight 3 replaces the default's in place;
			// ImageLocality disabled; multiPoint's NodeAffinity 7 was
			// never read.
			score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "InterPodAffinity": 1,
				"NodeResourcesFit": 3, "NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1,
				"DynamicResources": 2}, // v1's addition
			filters: oldFilters,
			args: map[string]any{"NodeResourcesFit": &noderesources.FitArgs{ScoringStrategy: &framework.ScoringStrategy{
				Type: framework.MostAllocated, Resources: []framework.ResourceSpec{{Name: "nvidia.com/gpu", Weight: 10}, {Name: "cpu", Weight: 1}}}}},
		}},
		comments: []string{"# From a kube-scheduler v1.23 how-to: pack GPU nodes.", "# Replaces the default entry in place: weight 3 instead of 1.",
			"# healthzBindAddress: 127.0.0.1:10251 was deleted"},
		notes: []string{"line 4:1: healthzBindAddress: deleted", "line 10:7: profiles[0].plugins.multiPoint: deleted: kube-scheduler v1.27 ignored"},
	}, {
		file: "v1beta3-tutorial.yaml",
		profiles: []profileWant{{
			name: "spread-scheduler",
			// v1beta3's weights are v1's; PodTopologySpread's 5 is the file's.
			score: map[string]int64{"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 5,
				"InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1,
				"DynamicResources": 2}, // v1's addition
			filters: oldFilters,
			args: map[string]any{
				"NodeResourcesFit": leastAllocated,
				"PodTopologySpread": &podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting,
					DefaultConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: v1.ScheduleAnyway}}},
			},
		}},
		comments: []string{"# Spread pods by zone, as in the kube-scheduler v1.25 docs.\n\n", "- schedulerName: spread-scheduler # spreads by zone first",
			"\n# The rest is at the defaults.\n"},
	}, {
		file: "v1beta1-nodelabel.yaml",
		profiles: []profileWant{{
			name: "workers-only",
			score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "InterPodAffinity": 1,
				"NodeResourcesFit": 1, "NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1,
				"DynamicResources": 2}, // v1's addition
			// NodeLabel's filter (v1.22 nodelabel.Filter: every presentLabels
			// label there, no absentLabels label) is now NodeAffinity's,
			// ANDed into the one term the file had.
			filters: oldFilters,
			args: map[string]any{"NodeAffinity": &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{
						{Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{"zone-a", "zone-b"}},
						{Key: "node-role.kubernetes.io/worker", Operator: v1.NodeSelectorOpExists},
						{Key: "example.com/maintenance", Operator: v1.NodeSelectorOpDoesNotExist},
					}}}}}}},
		}},
		comments: []string{"# NodeLabel's presentLabels/absentLabels filter, as required node affinity"},
		notes:    []string{"line 4:5: profiles[0]: deleted NodePreferAvoidPods", "line 8:19: profiles[0]: NodeLabel's filter became NodeAffinity's args addedAffinity"},
	}, {
		file: "v1beta1-no-profiles.yaml",
		profiles: []profileWant{{
			name: DefaultSchedulerName,
			score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "InterPodAffinity": 1,
				"NodeResourcesFit": 1, "NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1,
				"DynamicResources": 2}, // v1's addition
			filters: oldFilters,
			args:    map[string]any{"NodeResourcesFit": leastAllocated},
		}},
		comments: []string{"percentageOfNodesToScore: 50 # large clusters"},
		notes:    []string{"profiles[0]: deleted NodePreferAvoidPods"},
		check: func(t *testing.T, c *Config) {
			if c.PercentageOfNodesToScore != 50 {
				t.Errorf("percentageOfNodesToScore %d, want 50", c.PercentageOfNodesToScore)
			}
		},
	}} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "legacy", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			m, err := Migrate(data, registry.NewInTree())
			if err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			// (a) The output loads as `config validate` loads it.
			out := filepath.Join(t.TempDir(), "v1.yaml")
			if err := os.WriteFile(out, m.Output, 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(out)
			if err != nil {
				t.Fatalf("the migrated file does not load: %v\n%s", err, m.Output)
			}
			if len(c.Warnings) > 0 {
				t.Errorf("the migrated file has warnings: %v", c.Warnings)
			}
			// (b) It schedules as the old file did.
			if len(c.Profiles) != len(tc.profiles) {
				t.Fatalf("%d profiles, want %d", len(c.Profiles), len(tc.profiles))
			}
			for i, want := range tc.profiles {
				got := c.Profiles[i]
				if got.SchedulerName != want.name {
					t.Errorf("profiles[%d] named %q, want %q", i, got.SchedulerName, want.name)
				}
				score := map[string]int64{}
				for _, wp := range got.Score {
					score[wp.Name] = wp.Weight
				}
				if diff := cmp.Diff(want.score, score); diff != "" {
					t.Errorf("profiles[%d] score weights (-want +got):\n%s", i, diff)
				}
				if diff := cmp.Diff(sorted(want.filters), sorted(got.Filter)); diff != "" {
					t.Errorf("profiles[%d] filters (-want +got):\n%s", i, diff)
				}
				for name, a := range want.args {
					if diff := cmp.Diff(a, got.Args[name]); diff != "" {
						t.Errorf("profiles[%d] args of %s (-want +got):\n%s", i, name, diff)
					}
				}
			}
			if tc.check != nil {
				tc.check(t, c)
			}
			// (c) Comments survive, and the migration's own say why.
			for _, s := range tc.comments {
				if !strings.Contains(string(m.Output), s) {
					t.Errorf("the output lacks %q:\n%s", s, m.Output)
				}
			}
			checkNotes(t, m.Notes, tc.notes)
			// Migrating the result again changes nothing.
			again, err := Migrate(m.Output, registry.NewInTree())
			if err != nil || !again.Current || string(again.Output) != string(m.Output) {
				t.Errorf("migrating the output again: current %v, err %v", again != nil && again.Current, err)
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// A file without a v1 equivalent is refused, every reason at its line, and
// a v1 file is left as it is.
func TestMigrateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		want []string
	}{{
		name: "NodeLabel scoring",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled:
      - name: NodeLabel
  pluginConfig:
  - name: NodeLabel
    args:
      presentLabelsPreference: [fast-disk]
`,
		want: []string{`line 7:15: plugin "NodeLabel"'s score has no v1 equivalent`},
	}, {
		name: "NodeLabel filtering, NodeAffinity disabled",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter:
      enabled:
      - name: NodeLabel
      disabled:
      - name: "*"
  pluginConfig:
  - name: NodeLabel
    args:
      presentLabels: [worker]
`,
		want: []string{`line 7:15: plugin "NodeLabel"'s filter becomes NodeAffinity's args addedAffinity in v1, and this profile disables NodeAffinity at filter`},
	}, {
		name: "a policy in a v1beta1 file",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
algorithmSource:
  provider: DefaultProvider
`,
		want: []string{"line 3:1: algorithmSource: not a field of kubescheduler.config.k8s.io/v1beta1 either (kube-scheduler v1.22 refused the file): removed in v1beta1"},
	}, {
		name: "ServiceAffinity enabled",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled:
      - name: ServiceAffinity
`,
		want: []string{`line 7:15: plugin "ServiceAffinity" has no v1 equivalent`},
	}, {
		name: "two resource-scoring plugins",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled:
      - name: NodeResourcesMostAllocated
`,
		want: []string{"line 7:15: this profile scores resources with NodeResourcesLeastAllocated and NodeResourcesMostAllocated at once"},
	}, {
		name: "a plugin v1beta2 refused",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled:
      - name: NodeResourcesLeastAllocated
`,
		want: []string{`line 7:15: plugin "NodeResourcesLeastAllocated": kube-scheduler v1.27 refused it in a kubescheduler.config.k8s.io/v1beta2 file`},
	}, {
		name: "v1alpha2",
		file: "apiVersion: kubescheduler.config.k8s.io/v1alpha2\nkind: KubeSchedulerConfiguration\n",
		want: []string{"line 1:13: apiVersion: kubescheduler.config.k8s.io/v1alpha2 cannot be migrated"},
	}, {
		name: "not a KubeSchedulerConfiguration",
		file: "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: Policy\n",
		want: []string{`line 2:7: kind: must be KubeSchedulerConfiguration, got the string "Policy"`},
	}, {
		name: "a result v1 refuses",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
parallelism: 0
`,
		want: []string{"line 3:1: parallelism: the migrated file would not be valid v1: must be > 0 (got 0)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Migrate([]byte(tc.file), registry.NewInTree())
			if err == nil {
				t.Fatalf("migrated:\n%s", m.Output)
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("%T %v, want *Error", err, err)
			}
			got := FormatProblems("", e.Problems, "")
			if len(got) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(tc.want))
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("problem %d is %q, want it to start with %q", i, got[i], want)
				}
			}
		})
	}

	t.Run("v1 is left as it is", func(t *testing.T) {
		in := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n#  odd   spacing kept\nparallelism:   4\n"
		m, err := Migrate([]byte(in), registry.NewInTree())
		if err != nil || !m.Current || string(m.Output) != in || len(m.Notes) != 0 {
			t.Errorf("Migrate(v1) = %+v, %v; want the input unchanged", m, err)
		}
	})
}

// What the migration deletes or reads generously it says, at its line, and
// the result still loads.
func TestMigrateNotes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string
		notes []string
		// gone must not be in the output.
		gone []string
		// score are weights the migrated profile must have.
		score map[string]int64
	}{{
		name: "SelectorSpread and in-tree volume limits",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    preScore:
      enabled:
      - name: SelectorSpread
    score:
      enabled:
      - name: SelectorSpread
        weight: 2
    filter:
      enabled:
      - name: CinderLimits
`,
		notes: []string{"line 7:15: profiles[0]: deleted SelectorSpread", "line 14:15: profiles[0].plugins.filter.enabled: deleted CinderLimits"},
		gone:  []string{"SelectorSpread", "CinderLimits", "filter:", "preScore:"},
		// v1beta2's defaults (v1.27.16), SelectorSpread gone.
		score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "InterPodAffinity": 1,
			"NodeResourcesFit": 1, "NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1,
			"DynamicResources": 2}, // v1's addition
	}, {
		name: "a v1beta1 default enabled again",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled:
      - name: ImageLocality
        weight: 4
      disabled:
      - name: NodePreferAvoidPods
`,
		notes: []string{"line 7:15: kube-scheduler v1.22 refused this file: ImageLocality is a default score plugin, enabled again"},
		gone:  []string{"NodePreferAvoidPods"},
		// v1beta1's defaults (v1.22.17), ImageLocality at 4 and no
		// NodePreferAvoidPods, which the file disabled.
		score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "ImageLocality": 4, "InterPodAffinity": 1,
			"NodeResourcesFit": 1, "NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1,
			"DynamicResources": 2}, // v1's addition
	}, {
		name: "nothing scores resources",
		file: `apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      disabled:
      - name: NodeResourcesLeastAllocated
      - name: NodePreferAvoidPods
      - name: NodeResourcesFit
`,
		// NodeResourcesFit did not score in v1beta1; disabling it there
		// did nothing, and in v1 it keeps resources out of the score.
		score: map[string]int64{"NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "InterPodAffinity": 1,
			"NodeAffinity": 1, "PodTopologySpread": 2, "TaintToleration": 1,
			"DynamicResources": 2}, // v1's addition
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Migrate([]byte(tc.file), registry.NewInTree())
			if err != nil {
				t.Fatal(err)
			}
			c, err := Decode(m.Output)
			if err != nil {
				t.Fatalf("the output does not load: %v\n%s", err, m.Output)
			}
			checkNotes(t, m.Notes, tc.notes)
			for _, s := range tc.gone {
				if strings.Contains(string(m.Output), s) {
					t.Errorf("the output still has %q:\n%s", s, m.Output)
				}
			}
			score := map[string]int64{}
			for _, wp := range c.Profiles[0].Score {
				score[wp.Name] = wp.Weight
			}
			if diff := cmp.Diff(tc.score, score); diff != "" {
				t.Errorf("score weights (-want +got):\n%s\n%s", diff, m.Output)
			}
		})
	}
}

// FuzzMigrate feeds Migrate arbitrary files, seeded with the legacy
// examples: it returns a migration or an error and never panics, and a
// migration it returns loads as v1.
func FuzzMigrate(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "legacy", "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no legacy examples: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		"apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\nprofiles: [null, 3, {plugins: 7}, {plugins: {score: x}}]\n",
		"apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins: {score: {enabled: [{name: NodeResourcesMostAllocated}], disabled: [{name: NodeResourcesLeastAllocated}]}}\n  pluginConfig: 5\n",
		`{"apiVersion": "kubescheduler.config.k8s.io/v1beta2", "kind": "KubeSchedulerConfiguration", "healthzBindAddress": "yes"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Migrate(data, registry.NewInTree())
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%T %v, want *Error", err, err)
			}
			return
		}
		if _, err := Decode(m.Output); err != nil {
			t.Fatalf("the migration of\n%s\ndoes not load: %v\n%s", data, err, m.Output)
		}
	})
}

// checkNotes checks that the migration made as many notes as want, each
// starting with its want.
func checkNotes(t *testing.T, got []FieldError, want []string) {
	t.Helper()
	var notes []string
	for _, n := range got {
		notes = append(notes, n.Error())
	}
	if len(notes) != len(want) {
		t.Fatalf("notes:\n%s\nwant %d", strings.Join(notes, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(notes[i], w) {
			t.Errorf("note %d is %q, want it to start with %q", i, notes[i], w)
		}
	}
}
