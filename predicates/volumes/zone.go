package volumes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// ZoneName is the name of the VolumeZone plugin.
const ZoneName = "VolumeZone"

// ReasonVolumeZoneConflict is given for a node outside the zone or region a
// bound PersistentVolume is labelled with.
const ReasonVolumeZoneConflict = "node(s) had no available volume zone"

// statusVolumeZoneConflict is shared by every rejection for it: the
// scheduler never changes a status a filter returns.
var statusVolumeZoneConflict = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonVolumeZoneConflict)

// volumeZoneStateKey is where PreFilter leaves the volumes' topology.
const volumeZoneStateKey framework.StateKey = "PreFilter" + ZoneName

// volumeTopologyLabels are the PV labels VolumeZone reads, beta first, as
// kube-scheduler orders them.
var volumeTopologyLabels = []string{
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
}

// zoneLabelDelimiter separates the zones of a multi-zone volume in one
// label value ("us-east-1a__us-east-1b").
const zoneLabelDelimiter = "__"

// volumeTopology is one topology label of one of the pod's volumes.
type volumeTopology struct {
	key string
	// gaKey is the GA spelling of a beta key, tried on nodes that only
	// carry the GA label; equal to key for a GA key.
	gaKey  string
	values []string
}

// volumeZoneState holds the topology labels of the pod's bound volumes.
type volumeZoneState struct {
	topologies []volumeTopology
}

// Clone returns s: it is never mutated after PreFilter.
func (s *volumeZoneState) Clone() framework.StateData { return s }

// Zone is VolumeZone, the filter for the zone and region labels of bound
// PersistentVolumes (topology.kubernetes.io/zone and /region, or their
// failure-domain.beta.kubernetes.io forms): a node that carries any of
// those labels must carry each of the volume's with one of its values.
// A node without any topology label passes (a single-zone cluster).
type Zone struct {
	listers storageListers
}

var (
	_ framework.PreFilterPlugin = &Zone{}
	_ framework.FilterPlugin    = &Zone{}
)

// NewZone returns the filter, reading claims, volumes and classes
// through h's informers.
func NewZone(h framework.Handle) *Zone {
	return &Zone{listers: newStorageListers(h)}
}

// Name returns ZoneName.
func (*Zone) Name() string { return ZoneName }

// PreFilter reads the topology labels of the volumes bound to the pod's
// claims (spec.volumes[].persistentVolumeClaim; a claim counts as bound
// here as soon as spec.volumeName is set). An unbound claim of a
// WaitForFirstConsumer class is skipped; any other unbound claim, or a
// missing claim, class or volume, rejects the pod,
// UnschedulableAndUnresolvable, with kube-scheduler's message. It returns
// Skip when no volume has a topology label.
func (pl *Zone) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	s := &volumeZoneState{}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		name := vol.PersistentVolumeClaim.ClaimName
		if name == "" {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
		}
		claim, err := pl.listers.claims.PersistentVolumeClaims(pod.Namespace).Get(name)
		if err != nil {
			return nil, statusOfLookup(err)
		}
		if claim.Spec.VolumeName == "" {
			className := claimClass(claim)
			if className == "" {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name")
			}
			class, err := pl.listers.classes.Get(className)
			if err != nil {
				return nil, statusOfLookup(err)
			}
			if class.VolumeBindingMode == nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", className))
			}
			if *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolume had no name")
		}
		pv, err := pl.listers.volumes.Get(claim.Spec.VolumeName)
		if err != nil {
			return nil, statusOfLookup(err)
		}
		s.topologies = appendVolumeTopologies(s.topologies, pv)
	}
	if len(s.topologies) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(volumeZoneStateKey, s)
	return nil, nil
}

// appendVolumeTopologies appends pv's topology labels. A label whose value
// lists an empty zone ("a____b") is ignored, as kube-scheduler ignores a
// value it cannot parse.
func appendVolumeTopologies(out []volumeTopology, pv *v1.PersistentVolume) []volumeTopology {
	for _, key := range volumeTopologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		zones := strings.Split(value, zoneLabelDelimiter)
		valid := true
		for i, z := range zones {
			zones[i] = strings.TrimSpace(z)
			if zones[i] == "" {
				valid = false
				break
			}
		}
		if !valid {
			continue
		}
		out = append(out, volumeTopology{key: key, gaKey: gaTopologyLabel(key), values: zones})
	}
	return out
}

// gaTopologyLabel maps a beta topology label to its GA form.
func gaTopologyLabel(key string) string {
	switch key {
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	}
	return key
}

// Filter rejects a node that carries a topology label but not, for some
// volume label, the same key (or its GA form, for a beta key) with one of
// the volume's values. UnschedulableAndUnresolvable: evicting pods changes
// no label.
func (pl *Zone) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	s, err := framework.ReadAs[*volumeZoneState](state, volumeZoneStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	constrained := false
	for _, key := range volumeTopologyLabels {
		if _, ok := node.Labels[key]; ok {
			constrained = true
			break
		}
	}
	if !constrained {
		return nil
	}
	for i := range s.topologies {
		t := &s.topologies[i]
		value, ok := node.Labels[t.key]
		if !ok {
			value, ok = node.Labels[t.gaKey]
		}
		if !ok || !slices.Contains(t.values, value) {
			return statusVolumeZoneConflict
		}
	}
	return nil
}
