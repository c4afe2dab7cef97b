package cache

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// Snapshot is an immutable-for-a-cycle copy of the cache. It implements
// framework.NodeInfoLister. A Snapshot is reused across cycles: UpdateSnapshot
// copies into it only what changed.
type Snapshot struct {
	nodeInfoMap  map[string]*framework.NodeInfo
	nodeInfoList []*framework.NodeInfo
	// withAffinity and withReqAnti are the nodes holding pods with
	// inter-pod affinity, and with required anti-affinity. They change by
	// the nodes that change: in a backlog of anti-affinity pods nearly
	// every cycle adds one, and a pass over every node would cost more
	// than the cycle's filters.
	withAffinity nodeSet
	withReqAnti  nodeSet
	// hostnames counts the nodes per kubernetes.io/hostname label value;
	// sharedHostnames is how many values more than one node carries.
	hostnames       map[string]int32
	sharedHostnames int
	// slotNodes, slotGens and slotNames are the nodes, their generations
	// and their names by slot, listSlots the slots of nodeInfoList
	// (framework.NodeSlots); listSlotsStale says a node's slot changed
	// since listSlots was made.
	slotNodes      []*framework.NodeInfo
	slotGens       []int64
	slotNames      []string
	listSlots      []int
	listSlotsStale bool

	generation     int64
	nodeSetVersion int64
	// whatIfGeneration is the last generation a WhatIf gave a node:
	// below zero, counting down, never given twice.
	whatIfGeneration int64
}

var _ framework.NodeInfoLister = &Snapshot{}

// NewSnapshot returns an empty snapshot.
func NewSnapshot() *Snapshot {
	return &Snapshot{
		nodeInfoMap:    make(map[string]*framework.NodeInfo),
		hostnames:      map[string]int32{},
		withAffinity:   newNodeSet(),
		withReqAnti:    newNodeSet(),
		nodeSetVersion: -1,
	}
}

// NewSnapshotFromNodes builds a snapshot directly, for tests and benchmarks.
func NewSnapshotFromNodes(nodes []*v1.Node, pods []*v1.Pod) *Snapshot {
	c := New(nil, 0)
	for _, n := range nodes {
		c.AddNode(n)
	}
	for _, p := range pods {
		c.AddPod(p)
	}
	s := NewSnapshot()
	c.UpdateSnapshot(s)
	return s
}

// List returns every node, ordered so that consecutive nodes come from
// different zones where there are several.
func (s *Snapshot) List() []*framework.NodeInfo { return s.nodeInfoList }

// HavePodsWithAffinityList returns nodes holding pods with inter-pod
// affinity, in no particular order.
func (s *Snapshot) HavePodsWithAffinityList() []*framework.NodeInfo { return s.withAffinity.list }

// HavePodsWithRequiredAntiAffinityList returns nodes holding pods with
// required anti-affinity, in no particular order.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() []*framework.NodeInfo {
	return s.withReqAnti.list
}

// nodeSet is a list of nodes that a node joins or leaves in constant time:
// it joins at the end, and the last node takes the place of one leaving.
type nodeSet struct {
	list  []*framework.NodeInfo
	index map[*framework.NodeInfo]int
}

func newNodeSet() nodeSet { return nodeSet{index: map[*framework.NodeInfo]int{}} }

// set makes ni a member of the set or not.
func (ns *nodeSet) set(ni *framework.NodeInfo, member bool) {
	i, in := ns.index[ni]
	switch {
	case member && !in:
		ns.index[ni] = len(ns.list)
		ns.list = append(ns.list, ni)
	case !member && in:
		last := len(ns.list) - 1
		moved := ns.list[last]
		ns.list[i] = moved
		ns.index[moved] = i
		ns.list[last] = nil
		ns.list = ns.list[:last]
		delete(ns.index, ni)
	}
}

// fileAffinity puts ni in the affinity sets it belongs to, and takes it out
// of the others.
func (s *Snapshot) fileAffinity(ni *framework.NodeInfo, member bool) {
	s.withAffinity.set(ni, member && len(ni.PodsWithAffinity) > 0)
	s.withReqAnti.set(ni, member && len(ni.PodsWithRequiredAntiAffinity) > 0)
}

// Get returns the named node.
func (s *Snapshot) Get(name string) (*framework.NodeInfo, error) {
	if ni, ok := s.nodeInfoMap[name]; ok {
		return ni, nil
	}
	return nil, fmt.Errorf("node %q not found in snapshot", name)
}

// HostnamesUnique reports whether no two nodes carry the same
// kubernetes.io/hostname label value.
func (s *Snapshot) HostnamesUnique() bool { return s.sharedHostnames == 0 }

// Slots returns the nodes by slot.
func (s *Snapshot) Slots() framework.NodeSlots {
	return framework.NodeSlots{List: s.nodeInfoList, ListSlots: s.listSlots, Nodes: s.slotNodes, Gens: s.slotGens, Names: s.slotNames}
}

// fileSlot files ni under its slot, and takes it out of oldSlot when it
// held another before (a node removed and added again between two
// updates).
func (s *Snapshot) fileSlot(ni *framework.NodeInfo, oldSlot int) {
	if oldSlot != ni.Slot {
		s.unfileSlot(ni, oldSlot)
		s.listSlotsStale = true
	}
	if ni.Slot <= 0 {
		return
	}
	if ni.Slot >= len(s.slotNodes) {
		n := max(2*len(s.slotNodes), ni.Slot+1, 64)
		s.slotNodes = append(s.slotNodes, make([]*framework.NodeInfo, n-len(s.slotNodes))...)
		s.slotGens = append(s.slotGens, make([]int64, n-len(s.slotGens))...)
		s.slotNames = append(s.slotNames, make([]string, n-len(s.slotNames))...)
	}
	s.slotNodes[ni.Slot], s.slotGens[ni.Slot], s.slotNames[ni.Slot] = ni, ni.Generation, ni.NodeName()
}

// unfileSlot empties slot when ni holds it.
func (s *Snapshot) unfileSlot(ni *framework.NodeInfo, slot int) {
	if slot > 0 && slot < len(s.slotNodes) && s.slotNodes[slot] == ni {
		s.slotNodes[slot], s.slotGens[slot], s.slotNames[slot] = nil, 0, ""
	}
}

// countHostname adds (sign 1) or takes out (sign -1) node's hostname label.
func (s *Snapshot) countHostname(node *v1.Node, sign int32) {
	if node == nil {
		return
	}
	h, ok := node.Labels[v1.LabelHostname]
	if !ok {
		return
	}
	before := s.hostnames[h]
	after := before + sign
	if after == 0 {
		delete(s.hostnames, h)
	} else {
		s.hostnames[h] = after
	}
	switch {
	case before <= 1 && after > 1:
		s.sharedHostnames++
	case before > 1 && after <= 1:
		s.sharedHostnames--
	}
}

// NumNodes returns the number of nodes.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// UpdateSnapshot brings s up to date, copying only the nodes whose
// generation moved since s was last updated. Clones replace the old entries'
// contents in place, so the node list needs rebuilding only when nodes come
// or go.
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.RLock()
	defer c.mu.RUnlock()

	for item := c.head; item != nil && item.info.Generation > s.generation; item = item.next {
		node := item.info.Node()
		if node == nil {
			continue // removed node with leftover pods; pruned below
		}
		clone := item.info.Clone()
		clone.ImageStates = c.imageStatesLocked(node)
		s.countHostname(node, 1)
		if old, ok := s.nodeInfoMap[node.Name]; ok {
			s.countHostname(old.Node(), -1)
			oldSlot := old.Slot
			*old = *clone
			s.fileSlot(old, oldSlot)
			s.fileAffinity(old, true)
		} else {
			s.nodeInfoMap[node.Name] = clone
			s.fileSlot(clone, clone.Slot)
			s.fileAffinity(clone, true)
		}
	}
	s.generation = c.generation

	if s.nodeSetVersion != c.nodeSetVersion {
		for name := range s.nodeInfoMap {
			if item, ok := c.nodes[name]; !ok || item.info.Node() == nil {
				ni := s.nodeInfoMap[name]
				s.countHostname(ni.Node(), -1)
				s.unfileSlot(ni, ni.Slot)
				s.fileAffinity(ni, false)
				delete(s.nodeInfoMap, name)
			}
		}
		s.nodeSetVersion = c.nodeSetVersion
		s.rebuildList()
	}
	if s.listSlotsStale || len(s.listSlots) != len(s.nodeInfoList) {
		s.listSlots = s.listSlots[:0]
		for _, ni := range s.nodeInfoList {
			s.listSlots = append(s.listSlots, ni.Slot)
		}
		s.listSlotsStale = false
	}
}

// rebuildList orders nodes round-robin across zones, so that a scan that
// stops early (percentageOfNodesToScore) still sees every zone.
func (s *Snapshot) rebuildList() {
	zones := map[string][]*framework.NodeInfo{}
	var zoneOrder []string
	for _, ni := range s.nodeInfoMap {
		z := zoneKey(ni.Node())
		if _, ok := zones[z]; !ok {
			zoneOrder = append(zoneOrder, z)
		}
		zones[z] = append(zones[z], ni)
	}
	// Map iteration order is random; sort for a stable, reproducible list.
	slices.Sort(zoneOrder)
	for _, z := range zoneOrder {
		slices.SortFunc(zones[z], func(a, b *framework.NodeInfo) int {
			return strings.Compare(a.Node().Name, b.Node().Name)
		})
	}
	s.nodeInfoList = s.nodeInfoList[:0]
	s.listSlotsStale = true
	for i := 0; len(s.nodeInfoList) < len(s.nodeInfoMap); i++ {
		for _, z := range zoneOrder {
			if i < len(zones[z]) {
				s.nodeInfoList = append(s.nodeInfoList, zones[z][i])
			}
		}
	}
}

func zoneKey(n *v1.Node) string {
	return n.Labels[v1.LabelTopologyRegion] + ":\x00:" + n.Labels[v1.LabelTopologyZone]
}
