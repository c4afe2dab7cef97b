package registry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
)

type fakeHandle struct {
	noBindingCycle
	reg prometheus.Registerer
}

// noBindingCycle gives a test handle what the binding cycle offers
// plugins: no client and no waiting pods.
type noBindingCycle struct{}

func (noBindingCycle) ClientSet() kubernetes.Interface                   { return nil }
func (noBindingCycle) IterateOverWaitingPods(func(framework.WaitingPod)) {}
func (noBindingCycle) GetWaitingPod(types.UID) framework.WaitingPod      { return nil }
func (noBindingCycle) SharedDRAManager() framework.SharedDRAManager      { return nil }
func (noBindingCycle) EventRecorder() events.EventRecorder               { return nil }
func (noBindingCycle) RaiseEvent(framework.ClusterEvent, any, any)       {}
func (noBindingCycle) ReadNodeInfo(string, func(*framework.NodeInfo)) bool {
	return false
}
func (noBindingCycle) NominatedPodsForNode(string) []*framework.PodInfo { return nil }

func (fakeHandle) SnapshotSharedLister() framework.NodeInfoLister         { return nil }
func (fakeHandle) SharedInformerFactory() informers.SharedInformerFactory { return nil }
func (h fakeHandle) MetricsRegisterer() prometheus.Registerer             { return h.reg }
func (fakeHandle) Logger() *zap.Logger                                    { return zap.NewNop() }

func TestNetworkRegistrations(t *testing.T) {
	reg := framework.Registry{}
	for _, r := range networkRegistrations(nil) {
		if err := reg.Register(r); err != nil {
			t.Fatal(err)
		}
	}
	r, ok := reg[networktraffic.Name]
	if !ok {
		t.Fatalf("no %s registration", networktraffic.Name)
	}
	for _, p := range []string{framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore} {
		if !r.Implements(p) {
			t.Errorf("%s does not implement %s", r.Name, p)
		}
	}
	for _, wp := range DefaultPlugins() {
		if wp.Name == networktraffic.Name {
			t.Errorf("%s is in the default plugins; it needs a Prometheus address", wp.Name)
		}
	}

	// Decoded args are defaulted before validation; the published
	// examples' names are accepted.
	args := r.NewArgs().(*framework.NetworkTrafficArgs)
	args.PrometheusAddress = "http://prometheus-k8s.monitoring:9090"
	args.NetworkInterface = "ens192"
	args.TimeRangeInSeconds = new(int64(60))
	if err := r.ValidateArgs(args); err != nil {
		t.Errorf("ValidateArgs: %v", err)
	}
	if err := r.ValidateArgs(r.NewArgs()); err == nil || !strings.Contains(err.Error(), "prometheusAddress") {
		t.Errorf("ValidateArgs without an address: %v", err)
	}
	if err := r.ValidateArgs(&framework.NodeResourcesFitArgs{}); err == nil {
		t.Error("ValidateArgs accepted another plugin's args")
	}

	parts, err := r.New(args, fakeHandle{reg: prometheus.NewRegistry()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if len(parts) != 1 {
		t.Fatalf("New returned %d parts", len(parts))
	}
	pl := parts[0]
	defer pl.(*networktraffic.NetworkTraffic).Source().Close()
	for name, ok := range map[string]bool{
		"PreFilterPlugin":  is[framework.PreFilterPlugin](pl),
		"FilterPlugin":     is[framework.FilterPlugin](pl),
		"PreScorePlugin":   is[framework.PreScorePlugin](pl),
		"ScorePlugin":      is[framework.ScorePlugin](pl),
		"BackgroundPlugin": is[framework.BackgroundPlugin](pl),
	} {
		if !ok {
			t.Errorf("the plugin is not a %s", name)
		}
	}
	if _, err := r.New(r.NewArgs(), fakeHandle{reg: prometheus.NewRegistry()}); err == nil {
		t.Error("New without an address succeeded")
	}
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}
