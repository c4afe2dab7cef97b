package registry

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
	"github.com/yardmaster-io/yardmaster/priorities/networktraffic"
)

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
func (noBindingCycle) KubeConfig() *rest.Config                         { return nil }
func (noBindingCycle) Parallelizer() framework.Parallelizer             { return framework.NewParallelizer(1) }

// TestMetricPluginsNotDefault: the plugins that read Prometheus need its
// address, so no default profile enables them.
func TestMetricPluginsNotDefault(t *testing.T) {
	metric := []string{networktraffic.Name, loadaware.PrometheusScoreName, loadaware.TargetLoadPackingName,
		loadaware.LoadVariationRiskBalancingName, loadaware.LoadHotSpotName}
	reg := NewInTree()
	for _, name := range metric {
		if _, ok := reg[name]; !ok {
			t.Errorf("no %s registration", name)
		}
	}
	for _, wp := range DefaultPlugins() {
		if slices.Contains(metric, wp.Name) {
			t.Errorf("%s is in the default plugins; it needs a Prometheus address", wp.Name)
		}
	}
}
