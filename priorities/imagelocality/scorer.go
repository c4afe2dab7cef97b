package imagelocality

import (
	"context"
	"errors"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
)

// scoreStateKey is where PreScore leaves the pod's image names.
const scoreStateKey framework.StateKey = "PreScore" + Name

// The bounds of the image score, kube-scheduler's: images smaller than
// 23 MiB in total are not worth steering for, and 1000 MiB per image the pod
// names is where the benefit stops growing. Most images in public
// registries lie in between.
const (
	imageMiB                   int64 = 1024 * 1024
	imageMinThreshold          int64 = 23 * imageMiB
	imageMaxContainerThreshold int64 = 1000 * imageMiB
)

// scoreState is the pod's image names, normalized once per cycle,
// and what the score is scaled by.
type scoreState struct {
	// images are the pod's image names, one per container, init container
	// and image volume: their number sets the top of the score's range.
	images     []string
	totalNodes int
}

// Clone returns s: it is never mutated after PreScore.
func (s *scoreState) Clone() framework.StateData { return s }

// Scorer is the scorer that favours nodes that already have the
// pod's images, so the pod starts without a long pull. Each image present
// on the node counts its size scaled by the share of nodes that have it
// (an image every node has steers nowhere, which keeps pods of one image
// from piling onto the first node that pulled it); the sum is clamped to
// [23 MiB, 1000 MiB × images] and mapped linearly to [0, 100], where the
// images are those of the containers, init containers and image volumes.
//
// Image volumes count in the upper bound as containers do, as in
// kube-scheduler v1.37 (imagelocality.sumImageScores returns the count): in
// v1.36 they added to the sum but not to the bound, so a pod with image
// volumes scored higher than one naming the same images as containers.
type Scorer struct {
	snapshot framework.NodeInfoLister
}

var (
	_ framework.PreScorePlugin = &Scorer{}
	_ framework.ScorePlugin    = &Scorer{}
	_ framework.PodSigner      = &Scorer{}
)

// NewScorer returns the scorer; it reads the node count from h's
// snapshot.
func NewScorer(h framework.Handle) (*Scorer, error) {
	if h == nil || h.SnapshotSharedLister() == nil {
		return nil, errors.New("ImageLocality needs the snapshot lister")
	}
	return &Scorer{snapshot: h.SnapshotSharedLister()}, nil
}

// Name returns Name.
func (*Scorer) Name() string { return Name }

// PreScore normalizes the pod's image names (init containers, containers
// and image volumes) and counts the nodes, so that Score only looks names
// up. It never skips: nodes without the images score 0, not nothing.
// kube-scheduler's ImageLocality has no PreScore and does this per node;
// the scores are the same.
func (pl *Scorer) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	state.Write(scoreStateKey, pl.newState(pod))
	return nil
}

func (pl *Scorer) newState(pod *v1.Pod) *scoreState {
	s := &scoreState{
		images:     make([]string, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers)),
		totalNodes: len(pl.snapshot.List()),
	}
	for i := range pod.Spec.InitContainers {
		s.images = append(s.images, NormalizedImageName(pod.Spec.InitContainers[i].Image))
	}
	for i := range pod.Spec.Containers {
		s.images = append(s.images, NormalizedImageName(pod.Spec.Containers[i].Image))
	}
	for i := range pod.Spec.Volumes {
		if img := pod.Spec.Volumes[i].Image; img != nil {
			s.images = append(s.images, NormalizedImageName(img.Reference))
		}
	}
	return s
}

// Score returns the node's image score in [0, MaxNodeScore].
func (pl *Scorer) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*scoreState](state, scoreStateKey)
	if err != nil {
		// PreScore was not run (a profile that disables it): work it out
		// here, per node, as kube-scheduler does.
		s = pl.newState(pod)
	}
	var sum int64
	for _, name := range s.images {
		if st, ok := nodeInfo.ImageStates[name]; ok {
			sum += scaledImageScore(st, s.totalNodes)
		}
	}
	return imageScore(sum, len(s.images)), nil
}

// SignPod signs what Score reads besides the node: the pod's image names
// (their number sets the score's range) and the number of nodes in the
// cluster. (The
// node's images, and how many nodes have each, are the node's NodeInfo
// as of its generation.)
func (pl *Scorer) SignPod(state *framework.CycleState, pod *v1.Pod, sig []byte) ([]byte, bool) {
	s, err := framework.ReadAs[*scoreState](state, scoreStateKey)
	if err != nil {
		s = pl.newState(pod)
	}
	sig = framework.SignInts(sig, int64(s.totalNodes), int64(len(s.images)))
	for _, name := range s.images {
		sig = framework.SignString(sig, name)
	}
	return sig, true
}

// ScoreExtensions returns nil: Score is already in [0, MaxNodeScore].
func (*Scorer) ScoreExtensions() framework.ScoreExtensions { return nil }

// scaledImageScore is the image's size times the share of the cluster's
// nodes that have it, truncated.
func scaledImageScore(st *framework.ImageStateSummary, totalNodes int) int64 {
	if totalNodes == 0 {
		return 0
	}
	spread := float64(st.NumNodes) / float64(totalNodes)
	return int64(float64(st.Size) * spread)
}

// imageScore clamps sum to [imageMinThreshold, imageMaxContainerThreshold ×
// numImages] and maps that range linearly to [0, MaxNodeScore],
// truncating.
func imageScore(sum int64, numImages int) int64 {
	maxThreshold := imageMaxContainerThreshold * int64(numImages)
	if sum < imageMinThreshold {
		sum = imageMinThreshold
	} else if sum > maxThreshold {
		sum = maxThreshold
	}
	return framework.MaxNodeScore * (sum - imageMinThreshold) / (maxThreshold - imageMinThreshold)
}

// NormalizedImageName returns name as node status reports images: with the
// tag ":latest" when it has neither tag nor digest. It is kube-scheduler's
// normalizedImageName, corners included: it does not add the implicit
// "docker.io/library/" prefix, so a pod asking for "nginx:1.25" does not
// find the "docker.io/library/nginx:1.25" that containerd lists in node
// status. Matching that would place such pods differently from
// kube-scheduler, which leaves it as a TODO; parity wins here.
func NormalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		return name + ":latest"
	}
	return name
}
