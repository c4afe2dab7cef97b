package cache

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// WhatIf adds pods to a snapshot's nodes, or takes them off, for a dry run
// (explain's dry run of a pod group cycle: each member placed sees the
// ones before it; a group preemption's: the victims gone) and undoes it, without touching the cache: nothing is assumed,
// nothing another cycle or an informer sees. Every change gives the node
// a generation of the snapshot's own, below zero, which the cache (whose
// generations count up from 1) never gives: a memo of per-node answers,
// which reuses an answer while the generation is unchanged, computes the
// node anew, and may keep that answer for the what-if state. Generation 0
// would not do: it means "not the cache's" and some memos then leave the
// node out of their totals. Undo puts back each node as it was, with its
// generation, so the next UpdateSnapshot, which copies only the nodes the
// cache changed, finds the snapshot as the cache left it, and the memos
// see the generation change back.
//
// The snapshot is the scheduler's own: the caller holds what keeps
// cycles off it (the scheduler's cycleMu) from the first AddPod to Undo.
type WhatIf struct {
	s *Snapshot
	// saved are the changed nodes as they were, by node name.
	saved map[string]framework.NodeInfo
}

// WhatIf starts a dry run on s.
func (s *Snapshot) WhatIf() *WhatIf {
	return &WhatIf{s: s, saved: map[string]framework.NodeInfo{}}
}

// AddPod puts pod on its node (spec.nodeName) in the snapshot.
func (w *WhatIf) AddPod(pod *v1.Pod) error {
	ni, ok := w.s.nodeInfoMap[pod.Spec.NodeName]
	if !ok || ni.Node() == nil {
		return fmt.Errorf("what-if: node %q not in the snapshot", pod.Spec.NodeName)
	}
	w.save(ni)
	ni.AddPodInfo(framework.NewPodInfo(pod))
	w.changed(ni)
	return nil
}

// RemovePod takes pod off its node (spec.nodeName) in the snapshot, as if
// it were gone (a preemption's victim).
func (w *WhatIf) RemovePod(pod *v1.Pod) error {
	ni, ok := w.s.nodeInfoMap[pod.Spec.NodeName]
	if !ok || ni.Node() == nil {
		return fmt.Errorf("what-if: node %q not in the snapshot", pod.Spec.NodeName)
	}
	w.save(ni)
	if err := ni.RemovePod(pod); err != nil {
		return fmt.Errorf("what-if: %w", err)
	}
	w.changed(ni)
	return nil
}

// save keeps ni as it is, the first time the dry run changes it, and
// gives it a copy with slices and maps of its own: the saved ones stay as
// they were.
func (w *WhatIf) save(ni *framework.NodeInfo) {
	if _, done := w.saved[ni.NodeName()]; done {
		return
	}
	w.saved[ni.NodeName()] = *ni
	*ni = *ni.Clone()
}

// changed gives ni, just changed, a what-if generation of its own.
func (w *WhatIf) changed(ni *framework.NodeInfo) {
	w.s.whatIfGeneration--
	ni.Generation = w.s.whatIfGeneration
	w.setSlotGen(ni, ni.Generation)
	w.s.fileAffinity(ni, true)
}

// Undo takes out every pod AddPod added. The WhatIf is empty afterwards.
func (w *WhatIf) Undo() {
	for name, saved := range w.saved {
		ni := w.s.nodeInfoMap[name]
		*ni = saved
		w.setSlotGen(ni, ni.Generation)
		w.s.fileAffinity(ni, true)
	}
	clear(w.saved)
}

// setSlotGen sets the generation the snapshot files for ni's slot, which
// the filters' per-slot answers are checked against.
func (w *WhatIf) setSlotGen(ni *framework.NodeInfo, gen int64) {
	if ni.Slot > 0 && ni.Slot < len(w.s.slotNodes) && w.s.slotNodes[ni.Slot] == ni {
		w.s.slotGens[ni.Slot] = gen
	}
}
