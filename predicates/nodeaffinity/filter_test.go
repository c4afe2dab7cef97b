package nodeaffinity_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/nodeaffinity"
)

// benchNodeInfos returns n NodeInfos built by node(i).
func benchNodeInfos(n int, node func(i int) *v1.Node) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, n)
	for i := range out {
		out[i] = frameworktest.NodeInfoOf(node(i))
	}
	return out
}

func nsTerm() *frameworktest.NodeSelectorTermWrapper { return frameworktest.MakeNodeSelectorTerm() }

func names(n ...string) *framework.PreFilterResult {
	r := &framework.PreFilterResult{NodeNames: map[string]struct{}{}}
	for _, s := range n {
		r.NodeNames[s] = struct{}{}
	}
	return r
}

// withEmptyRequired gives pod a required node affinity without terms.
func withEmptyRequired(pod *v1.Pod) *v1.Pod {
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{},
	}}
	return pod
}

func TestNodeAffinityPreFilter(t *testing.T) {
	nameIn := func(values ...string) *frameworktest.NodeSelectorTermWrapper {
		return nsTerm().Field(framework.NodeNameField, v1.NodeSelectorOpIn, values...)
	}
	tests := []struct {
		name       string
		pod        *v1.Pod
		wantResult *framework.PreFilterResult
		wantStatus *framework.Status
	}{
		{name: "no selector, no affinity: skip", pod: frameworktest.MakePod().Obj(), wantStatus: framework.NewStatus(framework.Skip)},
		{name: "only preferred affinity: skip", pod: frameworktest.MakePod().PreferredNodeAffinity(5, nsTerm().In("zone", "a").Obj()).Obj(),
			wantStatus: framework.NewStatus(framework.Skip)},
		{name: "nodeSelector: all nodes", pod: frameworktest.MakePod().NodeSelector(map[string]string{"zone": "a"}).Obj()},
		{name: "required without terms: all nodes, Filter rejects", pod: withEmptyRequired(frameworktest.MakePod().Obj())},
		{name: "label term: all nodes", pod: frameworktest.MakePod().RequiredNodeAffinity(nsTerm().In("zone", "a").Obj()).Obj()},
		{name: "name In pins the nodes", pod: frameworktest.MakePod().RequiredNodeAffinity(nameIn("n1").Obj()).Obj(),
			wantResult: names("n1")},
		{name: "name In with label requirement still pins", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nameIn("n1").In("zone", "a").Obj()).Obj(), wantResult: names("n1")},
		{name: "terms unite", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nameIn("n1").Obj()).RequiredNodeAffinity(nameIn("n2").Obj()).Obj(), wantResult: names("n1", "n2")},
		{name: "In lists of one term intersect", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nameIn("n1", "n2").Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n2", "n3").Obj()).Obj(),
			wantResult: names("n2")},
		{name: "a term without name In frees every node", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nameIn("n1").Obj()).RequiredNodeAffinity(nsTerm().In("zone", "a").Obj()).Obj()},
		{name: "name NotIn does not pin", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nsTerm().Field(framework.NodeNameField, v1.NodeSelectorOpNotIn, "n1").Obj()).Obj()},
		{name: "empty intersection in every term: conflict", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nameIn("n1").Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n2").Obj()).Obj(),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, "pod affinity terms conflict")},
		{name: "empty intersection in one term only", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nameIn("n1").Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n2").Obj()).
			RequiredNodeAffinity(nameIn("n3").Obj()).Obj(), wantResult: names("n3")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, st := nodeaffinity.NewFilter(nil).PreFilter(context.Background(), framework.NewCycleState(), tc.pod, nil)
			if diff := cmp.Diff(frameworktest.ViewOf(tc.wantStatus), frameworktest.ViewOf(st)); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResult, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeAffinityFilter(t *testing.T) {
	rejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector")
	node := frameworktest.MakeNode().Name("n1").Label("zone", "a").Label("disk", "ssd").Label("cores", "16").Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		want *framework.Status
	}{
		{name: "nodeSelector matches", pod: frameworktest.MakePod().NodeSelector(map[string]string{"zone": "a", "disk": "ssd"}).Obj()},
		{name: "nodeSelector label differs", pod: frameworktest.MakePod().NodeSelector(map[string]string{"zone": "b"}).Obj(), want: rejected},
		{name: "nodeSelector label missing", pod: frameworktest.MakePod().NodeSelector(map[string]string{"gpu": "true"}).Obj(), want: rejected},
		{name: "required term matches", pod: frameworktest.MakePod().RequiredNodeAffinity(nsTerm().In("zone", "a", "b").Gt("cores", "8").Obj()).Obj()},
		{name: "required term fails", pod: frameworktest.MakePod().RequiredNodeAffinity(nsTerm().In("zone", "b").Obj()).Obj(), want: rejected},
		{name: "terms ORed", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nsTerm().In("zone", "b").Obj()).RequiredNodeAffinity(nsTerm().Lt("cores", "32").Obj()).Obj()},
		{name: "nodeSelector ANDed with affinity", pod: frameworktest.MakePod().NodeSelector(map[string]string{"disk": "hdd"}).
			RequiredNodeAffinity(nsTerm().In("zone", "a").Obj()).Obj(), want: rejected},
		{name: "name field matches", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nsTerm().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n1").Obj()).Obj()},
		{name: "name field NotIn", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nsTerm().Field(framework.NodeNameField, v1.NodeSelectorOpNotIn, "n1").Obj()).Obj(), want: rejected},
		{name: "empty term matches nothing", pod: frameworktest.MakePod().RequiredNodeAffinity(nsTerm().Obj()).Obj(), want: rejected},
		{name: "required without terms matches nothing", pod: withEmptyRequired(frameworktest.MakePod().Obj()), want: rejected},
		{name: "invalid term matches nothing", pod: frameworktest.MakePod().RequiredNodeAffinity(nsTerm().Gt("cores", "many").Obj()).Obj(), want: rejected},
		{name: "invalid term ignored beside a valid one", pod: frameworktest.MakePod().
			RequiredNodeAffinity(nsTerm().Gt("cores", "many").Obj()).RequiredNodeAffinity(nsTerm().Exists("zone").Obj()).Obj()},
		{name: "preferred affinity is not required", pod: frameworktest.MakePod().PreferredNodeAffinity(10, nsTerm().In("zone", "b").Obj()).Obj()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := nodeaffinity.NewFilter(nil)
			state := framework.NewCycleState()
			if _, st := pl.PreFilter(context.Background(), state, tc.pod, nil); st.IsSkip() {
				// A skipped filter is not called: the node passes.
				if tc.want != nil {
					t.Fatalf("PreFilter skipped, want %v", tc.want.Message())
				}
				return
			} else if !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st.Message())
			}
			got := pl.Filter(context.Background(), state, tc.pod, frameworktest.NodeInfoOf(node))
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			// Without PreFilter (a profile that disables it) the verdict is the same.
			got = pl.Filter(context.Background(), framework.NewCycleState(), tc.pod, frameworktest.NodeInfoOf(node))
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(got)); diff != "" {
				t.Errorf("Filter without PreFilter (-want +got):\n%s", diff)
			}
		})
	}
}

// addedRequired is NodeAffinityArgs whose addedAffinity requires one of
// terms.
func addedRequired(terms ...v1.NodeSelectorTerm) *nodeaffinity.Args {
	return &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms},
	}}
}

// The profile's addedAffinity: its required terms are ANDed with the
// pod's, checked first, with kube-scheduler's own reason; its preferred
// terms are the scorer's.
func TestNodeAffinityFilterAddedAffinity(t *testing.T) {
	enforced := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match scheduler-enforced node affinity")
	podRejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector")
	node := frameworktest.MakeNode().Name("n1").Label("zone", "a").Label("disk", "ssd").Obj()
	tests := []struct {
		name string
		args *nodeaffinity.Args
		pod  *v1.Pod
		// wantPre is PreFilter's status; want Filter's (when PreFilter
		// did not skip).
		wantPre *framework.Status
		want    *framework.Status
	}{
		{name: "added term matches, pod has none: filtered, passes", args: addedRequired(nsTerm().In("zone", "a").Obj()), pod: frameworktest.MakePod().Obj()},
		{name: "added term fails, pod has none", args: addedRequired(nsTerm().In("zone", "b").Obj()), pod: frameworktest.MakePod().Obj(), want: enforced},
		{name: "added terms ORed", args: addedRequired(nsTerm().In("zone", "b").Obj(), nsTerm().Exists("disk").Obj()), pod: frameworktest.MakePod().Obj()},
		{name: "added without terms matches nothing", args: addedRequired(), pod: frameworktest.MakePod().Obj(), want: enforced},
		{
			name: "added and pod's both fail: the added reason first",
			args: addedRequired(nsTerm().In("zone", "b").Obj()),
			pod:  frameworktest.MakePod().NodeSelector(map[string]string{"disk": "hdd"}).Obj(),
			want: enforced,
		},
		{
			name: "added passes, pod's fails: the pod's reason",
			args: addedRequired(nsTerm().In("zone", "a").Obj()),
			pod:  frameworktest.MakePod().RequiredNodeAffinity(nsTerm().In("disk", "hdd").Obj()).Obj(),
			want: podRejected,
		},
		{
			// The pod's matchFields still pin its nodes; the added terms
			// do not take part.
			name:    "pinning by the pod's name field is unchanged",
			args:    addedRequired(nsTerm().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n2").Obj()),
			pod:     frameworktest.MakePod().RequiredNodeAffinity(nsTerm().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n1").Obj()).Obj(),
			wantPre: nil,
			want:    enforced,
		},
		{
			name:    "only added preferred terms: skip",
			args:    &nodeaffinity.Args{AddedAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 1, Preference: nsTerm().In("zone", "b").Obj()}}}},
			pod:     frameworktest.MakePod().Obj(),
			wantPre: framework.NewStatus(framework.Skip),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := nodeaffinity.ValidateArgs(tc.args); err != nil {
				t.Fatal(err)
			}
			pl := nodeaffinity.NewFilter(tc.args)
			state := framework.NewCycleState()
			_, st := pl.PreFilter(context.Background(), state, tc.pod, nil)
			if diff := cmp.Diff(frameworktest.ViewOf(tc.wantPre), frameworktest.ViewOf(st)); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if !st.IsSuccess() {
				return
			}
			got := pl.Filter(context.Background(), state, tc.pod, frameworktest.NodeInfoOf(node))
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(got)); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			got = pl.Filter(context.Background(), framework.NewCycleState(), tc.pod, frameworktest.NodeInfoOf(node))
			if diff := cmp.Diff(frameworktest.ViewOf(tc.want), frameworktest.ViewOf(got)); diff != "" {
				t.Errorf("Filter without PreFilter (-want +got):\n%s", diff)
			}
		})
	}
}

// labelledCluster has nodes in three zones with 4 to 32 cores, every one of
// which benchSelectivePod accepts.
func labelledCluster(n int) []*framework.NodeInfo {
	return benchNodeInfos(n, func(i int) *v1.Node {
		return frameworktest.MakeNode().Name(fmt.Sprintf("node-%d", i)).
			Label("topology.kubernetes.io/zone", fmt.Sprintf("zone-%d", i%3)).
			Label("node.kubernetes.io/instance-type", "m5.xlarge").
			Label("example.com/cores", strconv.Itoa(4<<(i%4))).Obj()
	})
}

func benchSelectivePod() *v1.Pod {
	return frameworktest.MakePod().Name("p").
		NodeSelector(map[string]string{"node.kubernetes.io/instance-type": "m5.xlarge"}).
		RequiredNodeAffinity(nsTerm().In("topology.kubernetes.io/zone", "zone-0", "zone-1").Gt("example.com/cores", "2").Obj()).
		RequiredNodeAffinity(nsTerm().In("topology.kubernetes.io/zone", "zone-2").DoesNotExist("example.com/gpu").Obj()).Obj()
}

func TestNodeAffinityFilterDoesNotAllocate(t *testing.T) {
	nodes, pod := labelledCluster(100), benchSelectivePod()
	pl, state := nodeaffinity.NewFilter(nil), framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Message())
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, ni := range nodes {
			if st := pl.Filter(context.Background(), state, pod, ni); st != nil {
				t.Fatalf("Filter(%s) = %v", ni.Node().Name, st.Message())
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Filter allocates %v times per 100 nodes, want 0", allocs)
	}
}

func BenchmarkNodeAffinityFilter(b *testing.B) {
	nodes, pod := labelledCluster(5000), benchSelectivePod()
	pl, state, ctx := nodeaffinity.NewFilter(nil), framework.NewCycleState(), context.Background()
	if _, st := pl.PreFilter(ctx, state, pod, nodes); !st.IsSuccess() {
		b.Fatalf("PreFilter: %v", st.Message())
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range nodes {
			if st := pl.Filter(ctx, state, pod, ni); st != nil {
				b.Fatal(st.Message())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
}

func TestReasonsMatchKubeScheduler(t *testing.T) {
	// Users grep events for these strings: they must stay kube-scheduler
	// v1.37's (unchanged since v1.36).
	got := []string{nodeaffinity.ReasonNodeAffinity, nodeaffinity.ReasonNodeAffinityEnforced, nodeaffinity.ReasonNodeAffinityConflict}
	want := []string{
		"node(s) didn't match Pod's node affinity/selector",
		"node(s) didn't match scheduler-enforced node affinity",
		"pod affinity terms conflict",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	if got := nodeaffinity.NewFilter(nil).Name(); got != "NodeAffinity" {
		t.Errorf("name = %q, want NodeAffinity", got)
	}
}

// The filter signs everything it reads of a pod, and only that: see
// framework.PodSigner.
func TestNodeAffinityFilterSignsWhatItReads(t *testing.T) {
	base := func() *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name("a").Label("app", "web").Req("500m", "1Gi").HostPort(80, v1.ProtocolTCP, "")
	}
	cases := []frameworktest.SignCase{
		{Name: "replica", A: base().NodeSelector(map[string]string{"disk": "ssd"}).Obj(), B: base().Name("b").NodeSelector(map[string]string{"disk": "ssd"}).Obj(), Same: true},
		{Name: "nodeSelector", A: base().NodeSelector(map[string]string{"disk": "ssd"}).Obj(), B: base().NodeSelector(map[string]string{"disk": "hdd"}).Obj()},
		{
			Name: "required affinity",
			A:    base().NodeSelector(map[string]string{"disk": "ssd"}).Obj(),
			B: base().NodeSelector(map[string]string{"disk": "ssd"}).
				RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().In("zone", "a").Obj()).Obj(),
		},
		{
			Name: "preferred affinity is the scorer's",
			A:    base().NodeSelector(map[string]string{"disk": "ssd"}).Obj(),
			B: base().NodeSelector(map[string]string{"disk": "ssd"}).
				PreferredNodeAffinity(5, frameworktest.MakeNodeSelectorTerm().In("zone", "a").Obj()).Obj(),
			Same: true,
		},
	}
	pl := nodeaffinity.NewFilter(nil)
	frameworktest.CheckSigning(t, pl, cases)
	// What the signatures are for: pods signed alike get the same
	// answers, on nodes that answer the pods of the cases apart.
	nodes := frameworktest.NewSnapshot([]*v1.Node{
		frameworktest.MakeNode().Name("n1").Label("disk", "ssd").Label("zone", "a").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("n2").Label("disk", "hdd").Label("zone", "b").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("n3").Label("disk", "ssd").Label("zone", "b").Capacity("4", "8Gi", 110).Obj(),
	}, nil)
	var pods []*v1.Pod
	for _, c := range cases {
		pods = append(pods, c.A, c.B)
	}
	frameworktest.CheckKeptAnswers(t, pl, nodes, pods)
}
