package nodepool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest/cycletest"
)

// The module's configuration file, run by yardmaster's scheduling cycle
// beside the built-in plugins: team-a's pods go to the cheaper node of
// team-a however full it gets, a pod without a pool to the general pool,
// and a pod of a pool without nodes fits nowhere, with NodePool's reason.
func TestSchedule(t *testing.T) {
	config, err := os.ReadFile(filepath.Join("..", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	node := func(name, pool, cost string) *v1.Node {
		n := frameworktest.MakeNode().Name(name).Capacity("4", "8Gi", 110)
		if pool != "" {
			n.Label(DefaultPoolLabel, pool)
		}
		if cost != "" {
			n.Label(DefaultCostLabel, cost)
		}
		return n.Obj()
	}
	pod := func(name, pool string) *v1.Pod {
		p := frameworktest.MakePod().Name(name).Req("500m", "1Gi")
		if pool != "" {
			p.Label(DefaultPoolLabel, pool)
		}
		return p.Obj()
	}
	results := cycletest.Schedule(t, cycletest.Options{
		Plugins: []framework.Registration{Registration()},
		Config:  string(config),
		Nodes: []*v1.Node{
			node("a-dear", "team-a", "30"),
			node("a-cheap", "team-a", "10"),
			node("general", "general", "20"),
			node("spare", "", ""),
		},
	},
		// With weight 5, a-cheap scores 5 × 100 more than a-dear;
		// NodeResourcesFit and BalancedAllocation, weight 1 each, differ
		// by less than 100 between the two even with three pods of
		// 500m of 4 cpu on a-cheap.
		pod("a-0", "team-a"), pod("a-1", "team-a"), pod("a-2", "team-a"),
		pod("plain", ""),
		pod("c-0", "team-c"),
	)
	want := []string{"a-cheap", "a-cheap", "a-cheap", "general", ""}
	for i, r := range results {
		if r.Node != want[i] {
			t.Errorf("%s went to %q (%s), want %q", r.Pod, r.Node, r.Message, want[i])
		}
	}
	// Every node is of another pool than team-c, or of none.
	wantMsg := "0/4 nodes are available: 4 " + ReasonNotInPool + "."
	if msg := results[4].Message; !strings.HasPrefix(msg, wantMsg) {
		t.Errorf("c-0's FailedScheduling message: %q, want it to start with %q", msg, wantMsg)
	}
}
