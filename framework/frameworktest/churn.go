package frameworktest

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/scheduler/cache"
)

// ChurningCluster is a cluster that changes at random between scheduling
// cycles, for tests that compare plugins keeping state across cycles (memos
// by node slot, kept answers) with plugins made fresh for each, kept in the
// scheduler's real cache so that NodeInfos carry the slots and generations
// the plugins' memos rely on: pods come, go and start terminating; nodes
// change zone or lose it, take another node's hostname label or lose their
// own, and go (a new node may take the slot).
type ChurningCluster struct {
	// Snapshot is brought up to date after every Step.
	Snapshot *cache.Snapshot

	rng     *rand.Rand
	cache   *cache.Cache
	newNode func(i int) *v1.Node
	newPod  func() *v1.Pod
	nodes   []*v1.Node
	placed  []*v1.Pod
	next    int
}

// NewChurningCluster returns a cluster of nodes made by newNode; Step places pods made by
// newPod. All randomness comes from rng.
func NewChurningCluster(rng *rand.Rand, nodes int, newNode func(i int) *v1.Node, newPod func() *v1.Pod) *ChurningCluster {
	c := &ChurningCluster{rng: rng, cache: cache.New(clock.RealClock{}, time.Minute), Snapshot: cache.NewSnapshot(), newNode: newNode, newPod: newPod}
	for range nodes {
		c.nodes = append(c.nodes, c.addNode())
	}
	c.cache.UpdateSnapshot(c.Snapshot)
	return c
}

func (c *ChurningCluster) addNode() *v1.Node {
	n := c.newNode(c.next)
	c.next++
	c.cache.AddNode(n)
	return n
}

// Step makes one random change and brings the snapshot up to date.
func (c *ChurningCluster) Step() {
	switch r := c.rng.IntN(10); {
	case r < 5:
		p := c.newPod()
		p.Spec.NodeName = c.nodes[c.rng.IntN(len(c.nodes))].Name
		c.cache.AddPod(p)
		c.placed = append(c.placed, p)
	case r < 7 && len(c.placed) > 0:
		i := c.rng.IntN(len(c.placed))
		c.cache.RemovePod(c.placed[i])
		c.placed = append(c.placed[:i], c.placed[i+1:]...)
	case r == 7 && len(c.placed) > 0:
		i := c.rng.IntN(len(c.placed))
		p := c.placed[i].DeepCopy()
		p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		c.cache.UpdatePod(c.placed[i], p)
		c.placed[i] = p
	case r == 8:
		i := c.rng.IntN(len(c.nodes))
		n := c.nodes[i].DeepCopy()
		if c.rng.IntN(3) == 0 {
			delete(n.Labels, v1.LabelTopologyZone)
		} else {
			n.Labels[v1.LabelTopologyZone] = fmt.Sprintf("z%d", c.rng.IntN(3))
		}
		// Hostname labels are not always unique: a node may take another's
		// for a while, or lose its own.
		switch c.rng.IntN(6) {
		case 0:
			n.Labels[v1.LabelHostname] = c.nodes[c.rng.IntN(len(c.nodes))].Name
		case 1:
			delete(n.Labels, v1.LabelHostname)
		case 2, 3:
			n.Labels[v1.LabelHostname] = n.Name
		}
		c.cache.UpdateNode(c.nodes[i], n)
		c.nodes[i] = n
	case r == 9:
		i := c.rng.IntN(len(c.nodes))
		rest := c.placed[:0]
		for _, p := range c.placed {
			if p.Spec.NodeName == c.nodes[i].Name {
				c.cache.RemovePod(p)
			} else {
				rest = append(rest, p)
			}
		}
		c.placed = rest
		c.cache.RemoveNode(c.nodes[i])
		c.nodes[i] = c.addNode()
	}
	c.cache.UpdateSnapshot(c.Snapshot)
}
