// Package cache keeps the scheduler's view of the cluster: every node with
// the pods assigned to it, including pods the scheduler has only *assumed*
// onto a node while their binding is in flight.
//
// Life of a pod in the cache:
//
//	AssumePod ──► FinishBinding ──► AddPod (informer saw the binding) ──► RemovePod
//	    │               │
//	    └── ForgetPod ◄─┴── (binding failed, or never confirmed before the TTL)
//
// Assuming at once lets the next scheduling cycle see the capacity the pod
// takes without waiting for the API round trip; that is what keeps two pods
// from being placed into the same free slot.
//
// Every change to a node bumps the cache's generation and stamps it on the
// node's NodeInfo, and moves the node to the head of a recency list, so
// UpdateSnapshot copies only the nodes that changed since the last snapshot.
package cache

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
)

// DefaultAssumedPodTTL is how long a pod whose binding succeeded may stay
// assumed without the informer confirming it. It is long on purpose: a pod
// forgotten too early frees capacity that is really taken, and the next
// cycle would overcommit the node.
const DefaultAssumedPodTTL = 5 * time.Minute

type podState struct {
	pod *v1.Pod
	// deadline is set once binding finished; nil while the bind is in flight.
	deadline *time.Time
}

// nodeItem is one node in a doubly linked list ordered by the time of the
// last change, most recent first.
type nodeItem struct {
	info       *framework.NodeInfo
	prev, next *nodeItem
}

// Cache is safe for concurrent use. Lock order: Cache.mu is a leaf lock;
// nothing else is taken while it is held.
type Cache struct {
	clock clock.WithTicker
	ttl   time.Duration

	mu         sync.RWMutex
	generation int64
	head       *nodeItem
	nodes      map[string]*nodeItem
	pods       map[types.UID]*podState
	assumed    map[types.UID]struct{}
	// nodeSetVersion changes when a node object appears or disappears, so a
	// snapshot knows to rebuild its node list.
	nodeSetVersion int64
	// images counts, per image name, the nodes that have it.
	images map[string]*imageState
	// lastSlot is the highest NodeInfo.Slot given out; freeSlots are those
	// of nodes gone since, given out again first so slots stay dense.
	lastSlot  int
	freeSlots []int
}

type imageState struct {
	size  int64
	nodes map[string]struct{}
}

// New returns an empty cache. A nil clock means the real one; a zero ttl
// means DefaultAssumedPodTTL.
func New(clk clock.WithTicker, ttl time.Duration) *Cache {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if ttl <= 0 {
		ttl = DefaultAssumedPodTTL
	}
	return &Cache{
		clock:   clk,
		ttl:     ttl,
		nodes:   make(map[string]*nodeItem),
		pods:    make(map[types.UID]*podState),
		assumed: make(map[types.UID]struct{}),
		images:  make(map[string]*imageState),
	}
}

// Run expires assumed pods until ctx is done.
func (c *Cache) Run(ctx context.Context) {
	t := c.clock.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.CleanupExpired()
		}
	}
}

// CleanupExpired forgets assumed pods whose binding finished more than the
// TTL ago without the informer confirming them. It returns them.
func (c *Cache) CleanupExpired() []*v1.Pod {
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var expired []*v1.Pod
	for uid := range c.assumed {
		ps := c.pods[uid]
		if ps.deadline != nil && now.After(*ps.deadline) {
			expired = append(expired, ps.pod)
			c.removePodLocked(ps.pod)
		}
	}
	return expired
}

// AssumePod records pod (whose spec.nodeName is set) on its node before the
// binding is confirmed.
func (c *Cache) AssumePod(pod *v1.Pod) error {
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("assume pod %s/%s: no node name", pod.Namespace, pod.Name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[pod.UID]; ok {
		return fmt.Errorf("assume pod %s/%s: already in the cache", pod.Namespace, pod.Name)
	}
	c.addPodLocked(pod)
	c.assumed[pod.UID] = struct{}{}
	return nil
}

// FinishBinding starts the TTL of an assumed pod whose binding succeeded.
func (c *Cache) FinishBinding(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.assumed[pod.UID]; !ok {
		return
	}
	d := c.clock.Now().Add(c.ttl)
	c.pods[pod.UID].deadline = &d
}

// ForgetPod drops an assumed pod, giving its capacity back. It is a no-op
// for a pod that is not assumed (confirmed or already gone).
func (c *Cache) ForgetPod(pod *v1.Pod) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.assumed[pod.UID]; !ok {
		return false
	}
	c.removePodLocked(c.pods[pod.UID].pod)
	return true
}

// AssumedPod returns the assumed pod (bound to its node) of that UID, if
// it is assumed and not yet confirmed.
func (c *Cache) AssumedPod(uid types.UID) (*v1.Pod, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if _, ok := c.assumed[uid]; !ok {
		return nil, false
	}
	return c.pods[uid].pod, true
}

// IsAssumed reports whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumed(uid types.UID) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.assumed[uid]
	return ok
}

// HasPod reports whether the cache holds the pod, assumed or not.
func (c *Cache) HasPod(uid types.UID) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.pods[uid]
	return ok
}

// AddPod records an assigned pod seen by the informer, confirming it if it
// was assumed (on whichever node the API says it is).
func (c *Cache) AddPod(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[pod.UID]; ok {
		c.removePodLocked(ps.pod)
	}
	c.addPodLocked(pod)
}

// UpdatePod replaces an assigned pod's object.
func (c *Cache) UpdatePod(_, newPod *v1.Pod) {
	c.AddPod(newPod)
}

// RemovePod drops a pod, assumed or not. Unknown pods are ignored.
func (c *Cache) RemovePod(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[pod.UID]; ok {
		c.removePodLocked(ps.pod)
	}
}

func (c *Cache) addPodLocked(pod *v1.Pod) {
	item := c.nodes[pod.Spec.NodeName]
	if item == nil {
		// The pod's node is not known yet (pod and node informers race):
		// keep the pods, the node object comes later.
		item = c.newItemLocked()
		c.nodes[pod.Spec.NodeName] = item
	}
	item.info.AddPodInfo(framework.NewPodInfo(pod))
	c.touchLocked(item)
	c.pods[pod.UID] = &podState{pod: pod}
}

func (c *Cache) removePodLocked(pod *v1.Pod) {
	delete(c.pods, pod.UID)
	delete(c.assumed, pod.UID)
	item := c.nodes[pod.Spec.NodeName]
	if item == nil {
		return
	}
	// The pod is known to be on this node (it was added there), so an error
	// would mean a broken invariant; there is nothing better to do than go on.
	_ = item.info.RemovePod(pod)
	if item.info.Node() == nil && len(item.info.Pods) == 0 {
		c.deleteItemLocked(pod.Spec.NodeName, item)
		return
	}
	c.touchLocked(item)
}

// AddNode records a node, or updates it if known.
func (c *Cache) AddNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	item := c.nodes[node.Name]
	if item == nil {
		item = c.newItemLocked()
		c.nodes[node.Name] = item
	}
	if item.info.Node() == nil {
		c.nodeSetVersion++
	} else {
		c.removeImagesLocked(item.info.Node())
	}
	item.info.SetNode(node)
	c.addImagesLocked(node)
	c.touchLocked(item)
}

// UpdateNode replaces a node's object.
func (c *Cache) UpdateNode(_, newNode *v1.Node) { c.AddNode(newNode) }

// RemoveNode drops a node. Its pods stay until the informer deletes them,
// but the node leaves every snapshot at once.
func (c *Cache) RemoveNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	item := c.nodes[node.Name]
	if item == nil || item.info.Node() == nil {
		return
	}
	c.removeImagesLocked(item.info.Node())
	item.info.RemoveNode()
	c.nodeSetVersion++
	if len(item.info.Pods) == 0 {
		c.deleteItemLocked(node.Name, item)
		return
	}
	c.touchLocked(item)
}

// addImagesLocked counts node as having each of its images.
func (c *Cache) addImagesLocked(node *v1.Node) {
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			st := c.images[name]
			if st == nil {
				st = &imageState{size: img.SizeBytes, nodes: make(map[string]struct{})}
				c.images[name] = st
			}
			st.nodes[node.Name] = struct{}{}
		}
	}
}

// imageStatesLocked summarizes node's images with the number of nodes that
// have each one now. It is called when a node is copied into a snapshot, as
// kube-scheduler does, so the counts are as fresh as the node's copy.
func (c *Cache) imageStatesLocked(node *v1.Node) map[string]*framework.ImageStateSummary {
	if len(node.Status.Images) == 0 {
		return nil
	}
	out := make(map[string]*framework.ImageStateSummary, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if st := c.images[name]; st != nil {
				out[name] = &framework.ImageStateSummary{Size: st.size, NumNodes: len(st.nodes)}
			}
		}
	}
	return out
}

func (c *Cache) removeImagesLocked(node *v1.Node) {
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if st := c.images[name]; st != nil {
				delete(st.nodes, node.Name)
				if len(st.nodes) == 0 {
					delete(c.images, name)
				}
			}
		}
	}
}

// newItemLocked returns an item for a node not held yet, with a slot.
func (c *Cache) newItemLocked() *nodeItem {
	info := framework.NewNodeInfo()
	if n := len(c.freeSlots); n > 0 {
		info.Slot = c.freeSlots[n-1]
		c.freeSlots = c.freeSlots[:n-1]
	} else {
		c.lastSlot++
		info.Slot = c.lastSlot
	}
	return &nodeItem{info: info}
}

// deleteItemLocked forgets the named node's item and frees its slot.
func (c *Cache) deleteItemLocked(name string, item *nodeItem) {
	c.unlinkLocked(item)
	delete(c.nodes, name)
	c.freeSlots = append(c.freeSlots, item.info.Slot)
}

// touchLocked stamps a new generation on item and moves it to the head.
func (c *Cache) touchLocked(item *nodeItem) {
	c.generation++
	item.info.Generation = c.generation
	if c.head == item {
		return
	}
	c.unlinkLocked(item)
	item.next = c.head
	if c.head != nil {
		c.head.prev = item
	}
	c.head = item
}

func (c *Cache) unlinkLocked(item *nodeItem) {
	if item.prev != nil {
		item.prev.next = item.next
	}
	if item.next != nil {
		item.next.prev = item.prev
	}
	if c.head == item {
		c.head = item.next
	}
	item.prev, item.next = nil, nil
}

// Counts returns the number of nodes (with a Node object) and of pods,
// and how many of those pods are assumed.
func (c *Cache) Counts() (nodes, pods, assumed int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, item := range c.nodes {
		if item.info.Node() != nil {
			nodes++
		}
	}
	return nodes, len(c.pods), len(c.assumed)
}

// ReadNodeInfo calls f with the named node's info under the read lock (f
// must only read, and not keep it); false, without calling f, when the
// node is unknown.
func (c *Cache) ReadNodeInfo(name string, f func(*framework.NodeInfo)) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	item := c.nodes[name]
	if item == nil {
		return false
	}
	f(item.info)
	return true
}

// NodeInfo returns a copy of the named node's info, for debugging and tests.
func (c *Cache) NodeInfo(name string) (*framework.NodeInfo, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	item := c.nodes[name]
	if item == nil {
		return nil, false
	}
	return item.info.Clone(), true
}
