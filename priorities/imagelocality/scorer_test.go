package imagelocality_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/priorities/imagelocality"
)

const imgMiB int64 = 1024 * 1024

// ilNodes is a NodeInfoLister over NodeInfos whose image states the test
// sets directly, NumNodes included.
type ilNodes []*framework.NodeInfo

func (l ilNodes) List() []*framework.NodeInfo                                 { return l }
func (l ilNodes) HavePodsWithAffinityList() []*framework.NodeInfo             { return nil }
func (l ilNodes) HavePodsWithRequiredAntiAffinityList() []*framework.NodeInfo { return nil }
func (l ilNodes) HostnamesUnique() bool                                       { return true }
func (l ilNodes) Slots() framework.NodeSlots                                  { return framework.NodeSlots{} }
func (l ilNodes) Get(name string) (*framework.NodeInfo, error) {
	for _, ni := range l {
		if ni.Node().Name == name {
			return ni, nil
		}
	}
	return nil, fmt.Errorf("node %q not found", name)
}

// ilImage is one entry of a node's image states.
type ilImage struct {
	name     string
	size     int64
	numNodes int
}

func ilNode(name string, images ...ilImage) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(frameworktest.MakeNode().Name(name).Obj())
	if len(images) > 0 {
		ni.ImageStates = map[string]*framework.ImageStateSummary{}
		for _, img := range images {
			ni.ImageStates[img.name] = &framework.ImageStateSummary{Size: img.size, NumNodes: img.numNodes}
		}
	}
	return ni
}

func TestImageLocalityScore(t *testing.T) {
	// Two nodes unless a case adds more.
	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes ilNodes
		want  []int64
	}{
		{
			// n1: 40 MiB × 1/2 + 300 MiB × 1/2 = 170 MiB over 2 containers:
			// 100 × (170 − 23) / (2000 − 23) = 14700/1977 = 7.
			name: "two images on one of two nodes",
			pod:  frameworktest.MakePod().ContainerImages("gcr.io/40:latest", "gcr.io/300:latest").Obj(),
			nodes: ilNodes{
				ilNode("n1", ilImage{"gcr.io/40:latest", 40 * imgMiB, 1}, ilImage{"gcr.io/300:latest", 300 * imgMiB, 1}),
				ilNode("n2", ilImage{"gcr.io/250:latest", 250 * imgMiB, 1}),
			},
			want: []int64{100 * (170 - 23) / (2000 - 23), 0},
		},
		{
			// n2: 250 MiB × 1/2 = 125 MiB, one container:
			// 100 × (125 − 23) / (1000 − 23) = 10200/977 = 10.
			name: "an untagged image means :latest",
			pod:  frameworktest.MakePod().ContainerImages("gcr.io/250").Obj(),
			nodes: ilNodes{
				ilNode("n1", ilImage{"gcr.io/40:latest", 40 * imgMiB, 1}),
				ilNode("n2", ilImage{"gcr.io/250:latest", 250 * imgMiB, 1}),
			},
			want: []int64{0, 100 * (125 - 23) / (1000 - 23)},
		},
		{
			// As kube-scheduler: no docker.io/library/ prefix is added.
			name:  "the implicit registry is not added",
			pod:   frameworktest.MakePod().ContainerImages("nginx:1.25").Obj(),
			nodes: ilNodes{ilNode("n1", ilImage{"docker.io/library/nginx:1.25", 500 * imgMiB, 1}), ilNode("n2")},
			want:  []int64{0, 0},
		},
		{
			// 10 MiB × 1/2 = 5 MiB, under the 23 MiB floor.
			name:  "small images score nothing",
			pod:   frameworktest.MakePod().ContainerImages("gcr.io/10:latest").Obj(),
			nodes: ilNodes{ilNode("n1", ilImage{"gcr.io/10:latest", 10 * imgMiB, 1}), ilNode("n2")},
			want:  []int64{0, 0},
		},
		{
			// 3000 MiB × 2/2, capped at 1000 MiB for one container.
			name: "an image everywhere, over the cap: everywhere the maximum",
			pod:  frameworktest.MakePod().ContainerImages("gcr.io/3000:latest").Obj(),
			nodes: ilNodes{
				ilNode("n1", ilImage{"gcr.io/3000:latest", 3000 * imgMiB, 2}),
				ilNode("n2", ilImage{"gcr.io/3000:latest", 3000 * imgMiB, 2}),
			},
			want: []int64{100, 100},
		},
		{
			// 600 MiB on 1 of 4 nodes: 150 MiB → 100 × 127/977 = 13;
			// on 4 of 4: 600 MiB → 100 × 577/977 = 59.
			name: "the spread factor: an image on more nodes weighs more",
			pod:  frameworktest.MakePod().ContainerImages("gcr.io/rare:1", "gcr.io/common:1").Obj(),
			nodes: ilNodes{
				ilNode("n1", ilImage{"gcr.io/rare:1", 600 * imgMiB, 1}),
				ilNode("n2", ilImage{"gcr.io/common:1", 600 * imgMiB, 4}),
				ilNode("n3", ilImage{"gcr.io/common:1", 600 * imgMiB, 4}),
				ilNode("n4", ilImage{"gcr.io/common:1", 600 * imgMiB, 4}),
			},
			want: []int64{
				100 * (150 - 23) / (2000 - 23), 100 * (600 - 23) / (2000 - 23),
				100 * (600 - 23) / (2000 - 23), 100 * (600 - 23) / (2000 - 23),
			},
		},
		{
			// init 300 MiB + container 200 MiB + image volume 500 MiB, each
			// on 1 of 2 nodes: 150 + 100 + 250 = 500 MiB over 3 images:
			// 100 × 477/2977 = 16. (kube-scheduler v1.36 left the image
			// volume out of the bound: 100 × 477/1977 = 24.)
			name: "init containers and image volumes count",
			pod: frameworktest.MakePod().InitContainerImage("gcr.io/init:1").ContainerImages("gcr.io/app:1").
				ImageVolume("gcr.io/data:1").Obj(),
			nodes: ilNodes{
				ilNode("n1", ilImage{"gcr.io/init:1", 300 * imgMiB, 1}, ilImage{"gcr.io/app:1", 200 * imgMiB, 1}, ilImage{"gcr.io/data:1", 500 * imgMiB, 1}),
				ilNode("n2"),
			},
			want: []int64{100 * (500 - 23) / (3000 - 23), 0},
		},
		{
			// kube-scheduler v1.37's case: container 30 MiB, image volume
			// 300 MiB. n1 has the 300 MiB image on 1 of 2 nodes: 150 MiB
			// over 2 images, 100 × 127/1977 = 6; n2's 30 MiB × 1/2 is under
			// the floor. An image volume counts as a container would.
			name:  "an image volume counts like a container",
			pod:   frameworktest.MakePod().ContainerImages("gcr.io/30").ImageVolume("gcr.io/300").Obj(),
			nodes: ilNodes{ilNode("n1", ilImage{"gcr.io/300:latest", 300 * imgMiB, 1}), ilNode("n2", ilImage{"gcr.io/30:latest", 30 * imgMiB, 1})},
			want:  []int64{100 * (150 - 23) / (2000 - 23), 0},
		},
		{
			// The same images as two containers: the same scores.
			name:  "the same images as containers",
			pod:   frameworktest.MakePod().ContainerImages("gcr.io/30", "gcr.io/300").Obj(),
			nodes: ilNodes{ilNode("n1", ilImage{"gcr.io/300:latest", 300 * imgMiB, 1}), ilNode("n2", ilImage{"gcr.io/30:latest", 30 * imgMiB, 1})},
			want:  []int64{100 * (150 - 23) / (2000 - 23), 0},
		},
		{
			// An image volume on no node still widens the range: 150 MiB
			// of the container's image over 2 images, 100 × 127/1977 = 6.
			name:  "an image volume no node has",
			pod:   frameworktest.MakePod().ContainerImages("gcr.io/300").ImageVolume("gcr.io/nowhere:1").Obj(),
			nodes: ilNodes{ilNode("n1", ilImage{"gcr.io/300:latest", 300 * imgMiB, 1}), ilNode("n2")},
			want:  []int64{100 * (150 - 23) / (2000 - 23), 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := imagelocality.NewScorer(frameworktest.NewHandle(tc.nodes))
			if err != nil {
				t.Fatal(err)
			}
			ctx, state := context.Background(), framework.NewCycleState()
			if st := pl.PreScore(ctx, state, tc.pod, tc.nodes); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			var got, gotWithout []int64
			for _, ni := range tc.nodes {
				s, st := pl.Score(ctx, state, tc.pod, ni)
				if !st.IsSuccess() {
					t.Fatal(st.Message())
				}
				got = append(got, s)
				// Without PreScore (a profile that disables it) the score
				// is the same.
				s, _ = pl.Score(ctx, framework.NewCycleState(), tc.pod, ni)
				gotWithout = append(gotWithout, s)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, gotWithout); diff != "" {
				t.Errorf("scores without PreScore (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizedImageName(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                          "nginx:latest",
		"nginx:1.25":                     "nginx:1.25",
		"gcr.io/project/app":             "gcr.io/project/app:latest",
		"localhost:5000/app":             "localhost:5000/app:latest",
		"localhost:5000/app:v2":          "localhost:5000/app:v2",
		"gcr.io/app@sha256:0123abcd":     "gcr.io/app@sha256:0123abcd",
		"docker.io/library/nginx:latest": "docker.io/library/nginx:latest",
	} {
		if got := imagelocality.NormalizedImageName(in); got != want {
			t.Errorf("NormalizedImageName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImageLocalityScoreDoesNotAllocate(t *testing.T) {
	nodes := ilNodes{ilNode("n1", ilImage{"gcr.io/a:latest", 400 * imgMiB, 1}), ilNode("n2")}
	pl, err := imagelocality.NewScorer(frameworktest.NewHandle(nodes))
	if err != nil {
		t.Fatal(err)
	}
	pod := frameworktest.MakePod().ContainerImages("gcr.io/a", "gcr.io/b:1").Obj()
	ctx, state := context.Background(), framework.NewCycleState()
	if st := pl.PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if n := testing.AllocsPerRun(100, func() { pl.Score(ctx, state, pod, nodes[0]) }); n != 0 {
		t.Errorf("Score allocates %v times", n)
	}
}

// The scorer signs everything it reads of a pod, and only that: see
// framework.PodSigner.
func TestImageLocalitySignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi")
	}
	images := func(names ...string) *v1.Pod { return base().ContainerImages(names...).Obj() }
	cases := []frameworktest.SignCase{
		{Name: "replica", A: images("web:1"), B: func() *v1.Pod { p := images("web:1"); p.Name = "b"; return p }(), Same: true},
		{Name: "image", A: images("web:1"), B: images("web:2")},
		{Name: "containers", A: images("web:1"), B: images("web:1", "web:1")},
		// An image volume widens the score's range, wherever its image is.
		{Name: "image volume", A: images("web:1"), B: base().ContainerImages("web:1").ImageVolume("data:1").Obj()},
	}
	il := newImageLocality(t, 3)
	frameworktest.CheckSigning(t, il, cases)
	// What the signatures are for: pods signed alike get the same
	// scores, on nodes that score the pods of the cases apart.
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Image(500<<20, "web:1").Obj(),
		frameworktest.MakeNode().Name("n2").Capacity("2", "16Gi", 110).Image(300<<20, "web:2", "data:1").Obj(),
		frameworktest.MakeNode().Name("n3").Capacity("8", "8Gi", 110).Obj(),
	}, nil)
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, il, nodes, pods)
	// ImageLocality scales by the number of nodes: it signs it.
	a, _ := frameworktest.SignPod(t, il, images("web:1"))
	b, _ := frameworktest.SignPod(t, newImageLocality(t, 4), images("web:1"))
	if bytes.Equal(a, b) {
		t.Error("ImageLocality signs alike on 3 and 4 nodes")
	}
}

// newImageLocality returns the scorer over a snapshot of nodes nodes.
func newImageLocality(t *testing.T, nodes int) *imagelocality.Scorer {
	t.Helper()
	var ns []*v1.Node
	for i := range nodes {
		ns = append(ns, frameworktest.MakeNode().Name(fmt.Sprint("n", i)).Obj())
	}
	pl, err := imagelocality.NewScorer(frameworktest.NewHandle(frameworktest.NewSnapshot(ns, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func TestImageLocalityName(t *testing.T) {
	if got := newImageLocality(t, 1).Name(); got != "ImageLocality" {
		t.Errorf("Name() = %q, want ImageLocality", got)
	}
}
