package nodedeclaredfeatures

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/yardmaster-io/yardmaster/framework"
)

// ReasonNodeDeclaredFeatures is the reason NodeDeclaredFeatures rejects a
// node with.
const ReasonNodeDeclaredFeatures = "node(s) didn't match Pod's required features"

// statusNodeDeclaredFeatures is the rejection of a node that lacks a
// feature, made once and shared: the scheduler never changes a status a
// filter returns, and a rejection then costs the per-node loop no
// allocation.
var statusNodeDeclaredFeatures = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNodeDeclaredFeatures)

// KubeSchedulerVersion is the kube-scheduler release whose placements
// yardmaster reproduces. NodeDeclaredFeatures infers a pod's required
// features for it: a feature whose MaxVersion is older is no longer
// required of nodes (every node in the version skew has it).
const KubeSchedulerVersion = "v1.37.2"

// nodeDeclaredFeaturesStateKey is where PreFilter leaves the pod's
// required features.
const nodeDeclaredFeaturesStateKey framework.StateKey = "PreFilter" + Name

// nodeDeclaredFeaturesState is the set of features the pod requires.
type nodeDeclaredFeaturesState struct {
	required ndf.FeatureSet
}

// Clone returns s: it is never mutated after PreFilter.
func (s *nodeDeclaredFeaturesState) Clone() framework.StateData { return s }

// Filter is the filter for features a pod needs of its
// node's kubelet (a container restart rule that restarts every container,
// host networking in a user namespace, ...): a node must list each of them
// in status.declaredFeatures. Which features a pod needs is
// component-helpers' nodedeclaredfeatures inference, the one kube-scheduler
// v1.37 and the kubelet's admission use, so that the three agree.
//
// kube-scheduler v1.37 always runs it (feature gate NodeDeclaredFeatures, GA
// and locked on), last in the filter order.
type Filter struct {
	features *ndf.Framework
	version  *version.Version
}

var (
	_ framework.PreFilterPlugin = &Filter{}
	_ framework.FilterPlugin    = &Filter{}
	_ framework.PodSigner       = &Filter{}
)

// NewFilter returns the filter, inferring features for
// KubeSchedulerVersion.
func NewFilter() *Filter {
	return &Filter{features: ndf.DefaultFramework, version: version.MustParse(KubeSchedulerVersion)}
}

// Name returns Name.
func (*Filter) Name() string { return Name }

// required infers the features pod needs. As in kube-scheduler, only the
// spec is read: a pod being scheduled has no status to speak of.
func (pl *Filter) required(pod *v1.Pod) (ndf.FeatureSet, error) {
	return pl.features.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, pl.version)
}

// PreFilter infers the features the pod needs and keeps them for Filter,
// or returns Skip when it needs none (nearly every pod).
func (pl *Filter) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	required, err := pl.required(pod)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if required.IsEmpty() {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(nodeDeclaredFeaturesStateKey, &nodeDeclaredFeaturesState{required: required})
	return nil, nil
}

// Filter rejects a node that does not declare every feature the pod needs,
// UnschedulableAndUnresolvable: evicting pods declares nothing.
func (*Filter) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*nodeDeclaredFeaturesState](state, nodeDeclaredFeaturesStateKey)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("%s: %w", Name, err))
	}
	ok, err := s.required.IsSubset(nodeInfo.DeclaredFeatures())
	if err != nil {
		return framework.AsStatus(err)
	}
	if !ok {
		return statusNodeDeclaredFeatures
	}
	return nil
}

// SignPod signs the features the pod needs, all that Filter reads of it
// (kube-scheduler's signer does the same). Features are inferred from the
// pod when PreFilter left none (it skipped).
func (pl *Filter) SignPod(state *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	if s, err := framework.ReadAs[*nodeDeclaredFeaturesState](state, nodeDeclaredFeaturesStateKey); err == nil {
		return framework.SignString(sig, s.required.String()), true
	}
	required, err := pl.required(pod)
	if err != nil {
		return sig, false
	}
	return framework.SignString(sig, required.String()), true
}
