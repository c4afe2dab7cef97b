package volumes_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// preFilterFilter is what every volume filter is.
type preFilterFilter interface {
	framework.PreFilterPlugin
	framework.FilterPlugin
}

// volumeCase is the shape of the volume filters' test tables.
type volumeCase struct {
	name    string
	pod     *v1.Pod
	pods    []*v1.Pod        // already on the nodes
	objects []runtime.Object // claims, volumes, classes, CSINodes, attachments
	// wantPre is PreFilter's status; zero means Success.
	wantPre frameworktest.StatusView
	// want are the nodes Filter rejects, by name, when PreFilter succeeds.
	want map[string]frameworktest.StatusView
}

// runVolumeFilter builds the plugin over a handle holding nodes, pods and
// objects, runs PreFilter and then Filter on every node, and returns the
// PreFilter status and the rejections by node.
func runVolumeFilter(t testing.TB, build func(framework.Handle) preFilterFilter, nodes []*v1.Node, tc volumeCase) (frameworktest.StatusView, map[string]frameworktest.StatusView) {
	t.Helper()
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, tc.pods)).AddObjects(tc.objects...)
	pl := build(h)
	state := framework.NewCycleState()
	_, st := pl.PreFilter(context.Background(), state, tc.pod, h.Lister.List())
	if !st.IsSuccess() {
		return frameworktest.ViewOf(st), nil
	}
	rejected := map[string]frameworktest.StatusView{}
	for _, ni := range h.Lister.List() {
		if st := pl.Filter(context.Background(), state, tc.pod, ni); st != nil {
			rejected[ni.Node().Name] = frameworktest.ViewOf(st)
		}
	}
	return frameworktest.ViewOf(nil), rejected
}

// checkVolumeCases runs each case through runVolumeFilter.
func checkVolumeCases(t *testing.T, build func(framework.Handle) preFilterFilter, nodes func() []*v1.Node, cases []volumeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pre, got := runVolumeFilter(t, build, nodes(), tc)
			wantPre := tc.wantPre
			if wantPre.Code == "" {
				wantPre = frameworktest.ViewOf(nil)
			}
			if d := cmp.Diff(wantPre, pre); d != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", d)
			}
			if pre.Code != "Success" {
				return
			}
			want := tc.want
			if want == nil {
				want = map[string]frameworktest.StatusView{}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("rejected nodes (-want +got):\n%s", d)
			}
		})
	}
}

// volumePod is the incoming pod of the volume tests.
func volumePod() *frameworktest.PodWrapper { return frameworktest.MakePod().Name("new").UID("new-uid") }

// rejectedOn maps each node name to v.
func rejectedOn(v frameworktest.StatusView, names ...string) map[string]frameworktest.StatusView {
	m := map[string]frameworktest.StatusView{}
	for _, n := range names {
		m[n] = v
	}
	return m
}
