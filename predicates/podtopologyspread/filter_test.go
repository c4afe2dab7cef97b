package podtopologyspread_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
)

const tsZone = v1.LabelTopologyZone

func tsSpread(maxSkew int32, key string) *frameworktest.SpreadConstraintWrapper {
	return frameworktest.MakeSpreadConstraint(maxSkew, key, v1.DoNotSchedule)
}

// tsCluster has zone a (a1, a2), zone b (b1), zone c (c1) and x1
// without a zone, and app=web pods on a1, a2 and b1: per zone a=2, b=1,
// c=0.
func tsCluster() ([]*v1.Node, []*v1.Pod) {
	nodes := []*v1.Node{
		frameworktest.MakeNode().Name("a1").Label(tsZone, "a").Obj(),
		frameworktest.MakeNode().Name("a2").Label(tsZone, "a").Obj(),
		frameworktest.MakeNode().Name("b1").Label(tsZone, "b").Obj(),
		frameworktest.MakeNode().Name("c1").Label(tsZone, "c").Obj(),
		frameworktest.MakeNode().Name("x1").Obj(),
	}
	pods := []*v1.Pod{
		frameworktest.MakePod().Name("web-a1").Label("app", "web").Label("version", "v1").Node("a1").Obj(),
		frameworktest.MakePod().Name("web-a2").Label("app", "web").Label("version", "v1").Node("a2").Obj(),
		frameworktest.MakePod().Name("web-b1").Label("app", "web").Label("version", "v2").Node("b1").Obj(),
	}
	return nodes, pods
}

func tsWebPod() *frameworktest.PodWrapper {
	return frameworktest.MakePod().Name("new").Label("app", "web").Label("version", "v2")
}

// runSpreadFilter runs PreFilter and then Filter on every node, and returns
// the PreFilter status and the rejections by node.
func runSpreadFilter(t testing.TB, args *podtopologyspread.Args, pod *v1.Pod, nodes []*v1.Node, pods []*v1.Pod, objects ...runtime.Object) (frameworktest.StatusView, map[string]frameworktest.StatusView) {
	t.Helper()
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, pods)).AddObjects(objects...)
	ts, err := podtopologyspread.NewSpread(args, h)
	if err != nil {
		t.Fatal(err)
	}
	pl := podtopologyspread.NewFilter(ts)
	state := framework.NewCycleState()
	_, st := pl.PreFilter(context.Background(), state, pod, h.Lister.List())
	if !st.IsSuccess() {
		return frameworktest.ViewOf(st), nil
	}
	rejected := map[string]frameworktest.StatusView{}
	for _, ni := range h.Lister.List() {
		if st := pl.Filter(context.Background(), state, pod, ni); st != nil {
			rejected[ni.Node().Name] = frameworktest.ViewOf(st)
		}
	}
	return frameworktest.ViewOf(nil), rejected
}

func TestPodTopologySpreadFilter(t *testing.T) {
	skewed := frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable, "node(s) didn't match pod topology spread constraints"))
	noLabel := frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match pod topology spread constraints (missing required label)"))
	skip := frameworktest.ViewOf(framework.NewStatus(framework.Skip))
	list := func(cs ...v1.TopologySpreadConstraint) *podtopologyspread.Args {
		return &podtopologyspread.Args{DefaultingType: podtopologyspread.ListDefaulting, DefaultConstraints: cs}
	}
	withTaint := func(nodes []*v1.Node) []*v1.Node {
		nodes[3].Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
		return nodes
	}
	tests := []struct {
		name      string
		args      *podtopologyspread.Args // nil: System defaults
		pod       *v1.Pod
		nodes     func([]*v1.Node) []*v1.Node
		extraPods []*v1.Pod
		objects   []runtime.Object
		wantPre   frameworktest.StatusView // zero: Success
		want      map[string]frameworktest.StatusView
	}{
		{name: "no constraints, no owner: skip", pod: tsWebPod().Obj(), wantPre: skip},
		{name: "only ScheduleAnyway constraints: skip",
			pod:     tsWebPod().SpreadConstraint(frameworktest.MakeSpreadConstraint(1, tsZone, v1.ScheduleAnyway).MatchLabels("app", "web").Obj()).Obj(),
			wantPre: skip},
		{
			// min over a=2, b=1, c=0 is 0; skew = count + 1 - 0:
			// a 3 > 1, b 2 > 1, c 1 ≤ 1; x1 has no zone.
			name: "zone maxSkew 1",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// a 2+1-0 = 3 > 2; b 1+1 = 2 ≤ 2.
			name: "zone maxSkew 2",
			pod:  tsWebPod().SpreadConstraint(tsSpread(2, tsZone).MatchLabels("app", "web").Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "x1": noLabel},
		},
		{
			// The pod does not match its selector: skew = count - 0:
			// a 2 > 1, b 1 ≤ 1.
			name: "pod outside its own selector",
			pod:  frameworktest.MakePod().Name("new").Label("app", "db").SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "x1": noLabel},
		},
		{
			// Without zone c: domains a=1, b=1 (only web-a1, web-b1) →
			// min 1, skew 1+1-1 = 1 everywhere.
			name: "two domains, minDomains unset",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").Obj()).Obj(),
			nodes: func(n []*v1.Node) []*v1.Node {
				return []*v1.Node{n[0], n[2]}
			},
			want: map[string]frameworktest.StatusView{},
		},
		{
			// 2 domains < minDomains 3 → global min 0: skew 1+1-0 = 2 > 1.
			name: "fewer domains than minDomains",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").MinDomains(3).Obj()).Obj(),
			nodes: func(n []*v1.Node) []*v1.Node {
				return []*v1.Node{n[0], n[2]}
			},
			want: map[string]frameworktest.StatusView{"a1": skewed, "b1": skewed},
		},
		{
			// 3 domains ≥ minDomains 3: as maxSkew 1 without it.
			name: "enough domains for minDomains",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").MinDomains(3).Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// Honor (default): zone c fails the nodeSelector and is not a
			// domain → min over a=2, b=1 is 1: a 2+1-1 = 2 > 1, b 1 ≤ 1,
			// c 0+1-1 = 0.
			name: "nodeAffinityPolicy Honor drops domains the pod cannot use",
			pod: tsWebPod().RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().In(tsZone, "a", "b").Obj()).
				SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "x1": noLabel},
		},
		{
			// Ignore: zone c counts with 0 → min 0: b 1+1 = 2 > 1.
			name: "nodeAffinityPolicy Ignore keeps them",
			pod: tsWebPod().RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().In(tsZone, "a", "b").Obj()).
				SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").NodeAffinityPolicy(v1.NodeInclusionPolicyIgnore).Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// Honor: c1's untolerated taint drops zone c → min 1: b passes.
			name:  "nodeTaintsPolicy Honor drops tainted domains",
			pod:   tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").NodeTaintsPolicy(v1.NodeInclusionPolicyHonor).Obj()).Obj(),
			nodes: withTaint,
			want:  map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "x1": noLabel},
		},
		{
			// Ignore (default): c1 counts despite its taint → min 0.
			name:  "nodeTaintsPolicy Ignore keeps them",
			pod:   tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").Obj()).Obj(),
			nodes: withTaint,
			want:  map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// A toleration keeps the tainted domain with Honor.
			name: "nodeTaintsPolicy Honor with a toleration",
			pod: tsWebPod().Toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).
				SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").NodeTaintsPolicy(v1.NodeInclusionPolicyHonor).Obj()).Obj(),
			nodes: withTaint,
			want:  map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// version=v2 joins the selector: a=0 (v1 pods), b=1, c=0 →
			// min 0: a 0+1 = 1, b 1+1 = 2 > 1.
			name: "matchLabelKeys merged into the selector",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").MatchLabelKeys("version").Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"b1": skewed, "x1": noLabel},
		},
		{
			// A key the pod lacks adds nothing.
			name: "matchLabelKeys the pod lacks",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").MatchLabelKeys("track").Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// Pods of another namespace and terminating pods in c do not
			// count: c stays 0.
			name: "other namespaces and terminating pods do not count",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").Obj()).Obj(),
			extraPods: []*v1.Pod{
				frameworktest.MakePod().Namespace("other").Name("o").Label("app", "web").Node("c1").Obj(),
				frameworktest.MakePod().Name("gone").Label("app", "web").Node("c1").Terminating().Obj(),
			},
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// labelSelector {} matches the pod but counts nothing: skew
			// 0+1-0 = 1 everywhere (kube-scheduler's corner).
			name: "empty labelSelector counts no pod",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).Selector(&metav1.LabelSelector{}).Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"x1": noLabel},
		},
		{
			// No labelSelector matches nothing, the pod included: skew 0.
			name: "no labelSelector",
			pod:  tsWebPod().SpreadConstraint(tsSpread(1, tsZone).Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"x1": noLabel},
		},
		{
			// Hostname domains: a1=1, a2=1, b1=1, c1=0, x1=0 → min 0:
			// 1+1 = 2 > 1 on a1, a2, b1. The zone constraint (maxSkew 2)
			// also rejects x1 for its missing label.
			name: "hostname and zone constraints together",
			pod: tsWebPod().SpreadConstraint(tsSpread(2, tsZone).MatchLabels("app", "web").Obj()).
				SpreadConstraint(tsSpread(1, v1.LabelHostname).MatchLabels("app", "web").Obj()).Obj(),
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// x1 lacks a zone, so it is no domain of the hostname
			// constraint either: only nodes with every key count.
			name: "a node without every key is no domain of any constraint",
			pod: tsWebPod().SpreadConstraint(tsSpread(5, tsZone).MatchLabels("app", "web").Obj()).
				SpreadConstraint(tsSpread(1, v1.LabelHostname).MatchLabels("app", "web").Obj()).Obj(),
			extraPods: []*v1.Pod{frameworktest.MakePod().Name("web-c1").Label("app", "web").Node("c1").Obj()},
			// Hostname domains a1, a2, b1, c1 all hold 1 → min 1: skew 1.
			want: map[string]frameworktest.StatusView{"x1": noLabel},
		},
		{
			// List defaults, selector from the ReplicaSet: as "zone
			// maxSkew 1".
			name: "List default constraints with a ReplicaSet owner",
			args: list(tsSpread(1, tsZone).Obj()),
			pod:  tsWebPod().ControlledBy("apps/v1", "ReplicaSet", "web").Obj(),
			objects: []runtime.Object{&appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
				Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			}},
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// The Service selects app=web: the same.
			name:    "List default constraints with a Service",
			args:    list(tsSpread(1, tsZone).Obj()),
			pod:     tsWebPod().Obj(),
			objects: []runtime.Object{tsService("web", map[string]string{"app": "web"})},
			want:    map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			// version=v2 (Service) AND app=web (StatefulSet): only web-b1
			// counts → a 0+1, b 1+1 = 2 > 1.
			name: "Service and StatefulSet selectors merge",
			args: list(tsSpread(1, tsZone).Obj()),
			pod:  tsWebPod().ControlledBy("apps/v1", "StatefulSet", "web").Obj(),
			objects: []runtime.Object{
				tsService("v2", map[string]string{"version": "v2"}),
				tsService("unrelated", map[string]string{"app": "db"}),
				&appsv1.StatefulSet{
					ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
					Spec:       appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
				},
			},
			want: map[string]frameworktest.StatusView{"b1": skewed, "x1": noLabel},
		},
		{
			name: "List default constraints with a ReplicationController",
			args: list(tsSpread(1, tsZone).Obj()),
			pod:  tsWebPod().ControlledBy("v1", "ReplicationController", "web").Obj(),
			objects: []runtime.Object{&v1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
				Spec:       v1.ReplicationControllerSpec{Selector: map[string]string{"app": "web"}},
			}},
			want: map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "b1": skewed, "x1": noLabel},
		},
		{
			name:    "List default constraints without an owner: skip",
			args:    list(tsSpread(1, tsZone).Obj()),
			pod:     tsWebPod().Obj(),
			objects: []runtime.Object{tsService("db", map[string]string{"app": "db"})},
			wantPre: skip,
		},
		{
			name:    "own constraints win over the defaults",
			args:    list(tsSpread(1, tsZone).Obj()),
			pod:     tsWebPod().SpreadConstraint(tsSpread(2, tsZone).MatchLabels("app", "web").Obj()).Obj(),
			objects: []runtime.Object{tsService("web", map[string]string{"app": "web"})},
			want:    map[string]frameworktest.StatusView{"a1": skewed, "a2": skewed, "x1": noLabel},
		},
		{
			name:    "System defaults are ScheduleAnyway: skip",
			pod:     tsWebPod().Obj(),
			objects: []runtime.Object{tsService("web", map[string]string{"app": "web"})},
			wantPre: skip,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes, pods := tsCluster()
			if tc.nodes != nil {
				nodes = tc.nodes(nodes)
			}
			pods = append(pods, tc.extraPods...)
			args := tc.args
			if args == nil {
				args = podtopologyspread.DefaultArgs()
			}
			pre, got := runSpreadFilter(t, args, tc.pod, nodes, pods, tc.objects...)
			wantPre := tc.wantPre
			if wantPre.Code == "" {
				wantPre = frameworktest.ViewOf(nil)
			}
			if diff := cmp.Diff(wantPre, pre); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if pre.Code != "Success" {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rejected nodes (-want +got):\n%s", diff)
			}
		})
	}
}

func tsService(name string, selector map[string]string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: v1.ServiceSpec{Selector: selector}}
}

func TestPodTopologySpreadInvalidSelector(t *testing.T) {
	pod := tsWebPod().SpreadConstraint(tsSpread(1, tsZone).Selector(&metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}},
	}).Obj()).Obj()
	nodes, pods := tsCluster()
	pre, _ := runSpreadFilter(t, podtopologyspread.DefaultArgs(), pod, nodes, pods)
	if pre.Code != "Error" {
		t.Errorf("PreFilter = %+v, want an Error", pre)
	}
}

// zoneSpreadCluster has n nodes in 3 zones and n pods, one per node, every
// other one app=web.
func zoneSpreadCluster(n int) ([]*v1.Node, []*v1.Pod) {
	nodes := make([]*v1.Node, n)
	pods := make([]*v1.Pod, n)
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		nodes[i] = frameworktest.MakeNode().Name(name).Label(tsZone, fmt.Sprintf("zone-%d", i%3)).Obj()
		app := "web"
		if i%2 == 1 {
			app = "db"
		}
		pods[i] = frameworktest.MakePod().Name(fmt.Sprintf("pod-%d", i)).Label("app", app).Node(name).Obj()
	}
	return nodes, pods
}

func zoneSpreadPod(maxSkew int32) *v1.Pod {
	return frameworktest.MakePod().Name("new").Label("app", "web").
		SpreadConstraint(tsSpread(maxSkew, tsZone).MatchLabels("app", "web").Obj()).Obj()
}

func TestPodTopologySpreadFilterDoesNotAllocate(t *testing.T) {
	nodes, pods := zoneSpreadCluster(300)
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, pods))
	ts, err := podtopologyspread.NewSpread(podtopologyspread.DefaultArgs(), h)
	if err != nil {
		t.Fatal(err)
	}
	pl, state, pod := podtopologyspread.NewFilter(ts), framework.NewCycleState(), zoneSpreadPod(1)
	if _, st := pl.PreFilter(context.Background(), state, pod, h.Lister.List()); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Message())
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, ni := range h.Lister.List() {
			// 50 web pods per zone: skew 50+1-50 = 1, every node passes.
			if st := pl.Filter(context.Background(), state, pod, ni); st != nil {
				t.Fatalf("Filter(%s) = %v", ni.Node().Name, st.Message())
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Filter allocates %v times per 300 nodes, want 0", allocs)
	}
}

// BenchmarkPodTopologySpreadFilter is one cycle of a zone-spread pod over
// 5,000 nodes holding 5,000 pods: PreFilter once, Filter on every node.
// The zones hold 834, 833 and 833 web pods, so with maxSkew 2 every node
// passes (834+1-833 = 2).
func BenchmarkPodTopologySpreadFilter(b *testing.B) {
	nodes, pods := zoneSpreadCluster(5000)
	h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, pods))
	ts, err := podtopologyspread.NewSpread(podtopologyspread.DefaultArgs(), h)
	if err != nil {
		b.Fatal(err)
	}
	pl, pod, ctx := podtopologyspread.NewFilter(ts), zoneSpreadPod(2), context.Background()
	infos := h.Lister.List()
	b.Run("PreFilter+Filter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			state := framework.NewCycleState()
			if _, st := pl.PreFilter(ctx, state, pod, infos); !st.IsSuccess() {
				b.Fatal(st.Message())
			}
			for _, ni := range infos {
				if st := pl.Filter(ctx, state, pod, ni); st != nil {
					b.Fatal(st.Message())
				}
			}
		}
	})
	b.Run("Filter", func(b *testing.B) {
		state := framework.NewCycleState()
		if _, st := pl.PreFilter(ctx, state, pod, infos); !st.IsSuccess() {
			b.Fatal(st.Message())
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, ni := range infos {
				if st := pl.Filter(ctx, state, pod, ni); st != nil {
					b.Fatal(st.Message())
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(infos)), "ns/node")
	})
}

// Preemption's what-ifs count a pod in or out only where PreFilter counts
// it: a terminating pod and a constraint with an empty labelSelector ({})
// count nothing in PreFilter, so taking such a pod off a node (a victim)
// or adding one (a nominated pod) changes nothing either.
// kube-scheduler v1.37 counts them in AddPod and RemovePod all the same
// (its updateWithPod checks only the selector), so its counts drift from
// what the cluster would hold; yardmaster keeps them consistent (see
// docs/preemption.md, "Differences from kube-scheduler").
func TestPodTopologySpreadWhatIfCountsAsPreFilter(t *testing.T) {
	skewed := frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable, "node(s) didn't match pod topology spread constraints"))
	nodes := []*v1.Node{
		frameworktest.MakeNode().Name("a1").Label(tsZone, "a").Obj(),
		frameworktest.MakeNode().Name("b1").Label(tsZone, "b").Obj(),
	}
	web := func(name, node string) *frameworktest.PodWrapper {
		return frameworktest.MakePod().Name(name).UID(name).Label("app", "web").Node(node)
	}
	// Zone a holds 2 web pods (a third terminating), zone b 1.
	pods := []*v1.Pod{
		web("web-1", "a1").Obj(), web("web-2", "a1").Obj(), web("web-gone", "a1").Terminating().Obj(),
		web("web-3", "b1").Obj(),
	}
	zoneWeb := tsWebPod().SpreadConstraint(tsSpread(1, tsZone).MatchLabels("app", "web").Obj()).Obj()
	zoneAny := tsWebPod().SpreadConstraint(tsSpread(1, tsZone).Selector(&metav1.LabelSelector{}).Obj()).Obj()
	nominated := func(name string) *v1.Pod { return web(name, "").Obj() }
	tests := []struct {
		name    string
		pod     *v1.Pod
		remove  []*v1.Pod // from a1
		add     []*v1.Pod // to a1
		wantOn1 frameworktest.StatusView
	}{
		// a 2+1-1 = 2 > 1.
		{name: "as it is", pod: zoneWeb, wantOn1: skewed},
		// a 1+1-1 = 1.
		{name: "a counted victim leaves", pod: zoneWeb, remove: pods[:1], wantOn1: frameworktest.ViewOf(nil)},
		// Still a 2+1-1: the terminating pod was never counted
		// (kube-scheduler: a 1+1-1, the node passes).
		{name: "a terminating victim leaves", pod: zoneWeb, remove: pods[2:3], wantOn1: skewed},
		// An empty selector counts no pod: 0+1-0 everywhere, nominated
		// pods or not (kube-scheduler: a 2+1-0 = 3 > 1).
		{name: "empty selector, nominated pods", pod: zoneAny, add: []*v1.Pod{nominated("nom-1"), nominated("nom-2")}, wantOn1: frameworktest.ViewOf(nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := frameworktest.NewHandle(frameworktest.NewSnapshot(nodes, pods))
			ts, err := podtopologyspread.NewSpread(podtopologyspread.DefaultArgs(), h)
			if err != nil {
				t.Fatal(err)
			}
			pl, ctx := podtopologyspread.NewFilter(ts), context.Background()
			state := framework.NewCycleState()
			if _, st := pl.PreFilter(ctx, state, tc.pod, h.Lister.List()); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st.Message())
			}
			a1, err := h.Lister.Get("a1")
			if err != nil {
				t.Fatal(err)
			}
			what := state.Clone()
			for _, p := range tc.remove {
				if st := pl.RemovePod(ctx, what, tc.pod, framework.NewPodInfo(p), a1); !st.IsSuccess() {
					t.Fatalf("RemovePod: %v", st.Message())
				}
			}
			for _, p := range tc.add {
				if st := pl.AddPod(ctx, what, tc.pod, framework.NewPodInfo(p), a1); !st.IsSuccess() {
					t.Fatalf("AddPod: %v", st.Message())
				}
			}
			if diff := cmp.Diff(tc.wantOn1, frameworktest.ViewOf(pl.Filter(ctx, what, tc.pod, a1))); diff != "" {
				t.Errorf("Filter(a1) (-want +got):\n%s", diff)
			}
		})
	}
}
