package registry

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
	"github.com/yardmaster-io/yardmaster/predicates/volumes"
	"github.com/yardmaster-io/yardmaster/scheduler/cache"
)

// noInformers is a handle without an informer factory, as the scheduler's
// own unit tests build it.
type noInformers struct {
	noBindingCycle
	snapshot *cache.Snapshot
}

func (h noInformers) SnapshotSharedLister() framework.NodeInfoLister       { return h.snapshot }
func (noInformers) SharedInformerFactory() informers.SharedInformerFactory { return nil }
func (noInformers) DynamicInformerFactory() dynamicinformer.DynamicSharedInformerFactory {
	return nil
}
func (noInformers) MetricsRegisterer() prometheus.Registerer { return prometheus.NewRegistry() }
func (noInformers) Logger() *zap.Logger                      { return zap.NewNop() }

// pointsOf lists the extension points parts implement.
func pointsOf(parts []framework.Plugin) []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range parts {
		if _, ok := p.(framework.PreFilterPlugin); ok {
			add(framework.PointPreFilter)
		}
		if _, ok := p.(framework.FilterPlugin); ok {
			add(framework.PointFilter)
		}
		if _, ok := p.(framework.PreScorePlugin); ok {
			add(framework.PointPreScore)
		}
		if _, ok := p.(framework.ScorePlugin); ok {
			add(framework.PointScore)
		}
		if _, ok := p.(framework.ReservePlugin); ok {
			add(framework.PointReserve)
		}
		if _, ok := p.(framework.PermitPlugin); ok {
			add(framework.PointPermit)
		}
		if _, ok := p.(framework.PreBindPlugin); ok {
			add(framework.PointPreBind)
		}
		if _, ok := p.(framework.PostBindPlugin); ok {
			add(framework.PointPostBind)
		}
	}
	return out
}

// The registrations of the plugins that look beyond the node (topology
// spreading over the snapshot, the volume filters reading the informers)
// build, with or without informers, into parts that implement exactly the
// points they declare, under their own names.
func TestSpreadRegistrations(t *testing.T) {
	handles := map[string]framework.Handle{
		"informers":    frameworktest.NewHandle(cache.NewSnapshot()),
		"no informers": noInformers{snapshot: cache.NewSnapshot()},
	}
	for _, r := range []framework.Registration{
		podtopologyspread.Registration(), volumes.RestrictionsRegistration(), volumes.NodeLimitsRegistration(),
		volumes.BindingRegistration(), volumes.ZoneRegistration(),
	} {
		for hname, h := range handles {
			t.Run(r.Name+"/"+hname, func(t *testing.T) {
				var args any
				if r.NewArgs != nil {
					args = r.NewArgs()
					if err := r.ValidateArgs(args); err != nil {
						t.Fatalf("default args invalid: %v", err)
					}
				}
				parts, err := r.New(args, h)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(r.Points, pointsOf(parts)); diff != "" {
					t.Errorf("points (-declared +implemented):\n%s", diff)
				}
				for _, p := range parts {
					if p.Name() != r.Name {
						t.Errorf("part %T is named %q", p, p.Name())
					}
				}
			})
		}
	}
}

// The default profile keeps kube-scheduler's order and weights for these
// plugins.
func TestDefaultPluginsSpreadOrder(t *testing.T) {
	want := []framework.WeightedPlugin{
		{Name: "NodeResourcesFit", Weight: 1},
		{Name: "VolumeRestrictions"},
		{Name: "NodeVolumeLimits"},
		{Name: "VolumeBinding"},
		{Name: "VolumeZone"},
		{Name: "PodTopologySpread", Weight: 2},
	}
	var got []framework.WeightedPlugin
	for _, wp := range DefaultPlugins() {
		if slices.ContainsFunc(want, func(w framework.WeightedPlugin) bool { return w.Name == wp.Name }) {
			got = append(got, wp)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default plugins (-want +got):\n%s", diff)
	}
}

func TestSpreadArgsValidation(t *testing.T) {
	reg := NewInTree()
	pts := reg["PodTopologySpread"]
	bad := &podtopologyspread.Args{DefaultingType: podtopologyspread.SystemDefaulting,
		DefaultConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule}}}
	if err := pts.ValidateArgs(bad); err == nil {
		t.Error("PodTopologySpread accepted System defaulting with constraints")
	}
	if _, err := pts.New(bad, frameworktest.NewHandle(cache.NewSnapshot())); err == nil {
		t.Error("PodTopologySpread built with System defaulting and constraints")
	}
	neg := int64(-1)
	if err := reg["VolumeBinding"].ValidateArgs(&volumes.BindingArgs{BindTimeoutSeconds: &neg}); err == nil {
		t.Error("VolumeBinding accepted a negative bindTimeoutSeconds")
	}
}
