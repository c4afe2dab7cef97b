package interpodaffinity_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
)

const ipaZone = v1.LabelTopologyZone

func ipaTerm(key string) *frameworktest.PodAffinityTermWrapper {
	return frameworktest.MakePodAffinityTerm(key)
}

// runInterPodAffinityFilter runs PreFilter and then Filter on every node, and
// returns the PreFilter status and each node's Filter status (nil when
// PreFilter did not succeed).
func runInterPodAffinityFilter(t testing.TB, pod *v1.Pod, nodes []*v1.Node, pods []*v1.Pod, nss ...*v1.Namespace) (frameworktest.StatusView, map[string]frameworktest.StatusView) {
	t.Helper()
	snap := frameworktest.NewSnapshot(nodes, pods)
	pl, err := interpodaffinity.NewFilter(frameworktest.NewHandle(snap, nss...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, state := context.Background(), framework.NewCycleState()
	_, st := pl.PreFilter(ctx, state, pod, snap.List())
	if !st.IsSuccess() {
		return frameworktest.ViewOf(st), nil
	}
	got := map[string]frameworktest.StatusView{}
	for _, ni := range snap.List() {
		got[ni.Node().Name] = frameworktest.ViewOf(pl.Filter(ctx, state, pod, ni))
	}
	return frameworktest.ViewOf(st), got
}

func TestInterPodAffinityFilter(t *testing.T) {
	pass := frameworktest.ViewOf(nil)
	affinity := frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match pod affinity rules"))
	anti := frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable, "node(s) didn't match pod anti-affinity rules"))
	existing := frameworktest.ViewOf(framework.NewStatus(framework.Unschedulable, "node(s) didn't satisfy existing pods anti-affinity rules"))
	skip := frameworktest.ViewOf(framework.NewStatus(framework.Skip))
	nodes := func(n1, n2, n3, n4 frameworktest.StatusView) map[string]frameworktest.StatusView {
		return map[string]frameworktest.StatusView{"n1": n1, "n2": n2, "n3": n3, "n4": n4}
	}
	prodNS := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	namespaces := []*v1.Namespace{
		frameworktest.Namespace("default"),
		frameworktest.Namespace("prod-ns", "env", "prod"),
		frameworktest.Namespace("dev-ns", "env", "dev"),
	}

	tests := []struct {
		name string
		pod  *v1.Pod
		pods []*v1.Pod
		// wantPre is the PreFilter status; success when unset.
		wantPre   frameworktest.StatusView
		wantNodes map[string]frameworktest.StatusView
	}{
		{
			name:    "no terms and no existing anti-affinity: skip",
			pod:     frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods:    []*v1.Pod{frameworktest.PodOn("n1", "default", "db", "app", "db").Obj()},
			wantPre: skip,
		},
		{
			name: "only preferred terms: skip",
			pod: frameworktest.IncomingPod("default", "app", "web").
				PreferredPodAffinity(10, ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).Obj(),
			wantPre: skip,
		},
		{
			// db on n1 puts zone z1 in; n4 lacks the zone key altogether.
			name:      "required affinity: the zone of a matching pod",
			pod:       frameworktest.IncomingPod("default", "app", "web").RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n1", "default", "db", "app", "db").Obj(), frameworktest.PodOn("n3", "default", "cache", "app", "cache").Obj()},
			wantNodes: nodes(pass, pass, affinity, affinity),
		},
		{
			name:      "required affinity without any matching pod, pod not matching itself: nowhere",
			pod:       frameworktest.IncomingPod("default", "app", "web").RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n3", "default", "cache", "app", "cache").Obj()},
			wantNodes: nodes(affinity, affinity, affinity, affinity),
		},
		{
			// kube-scheduler's first-pod rule: no pod matches yet and the
			// pod matches its own term, so any node with the key will do.
			name:      "self-affinity, first pod of the group: every node carrying the topology key",
			pod:       frameworktest.IncomingPod("default", "app", "web").RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n3", "default", "cache", "app", "cache").Obj()},
			wantNodes: nodes(pass, pass, pass, affinity),
		},
		{
			name:      "self-affinity, second pod: the first one's zone",
			pod:       frameworktest.IncomingPod("default", "app", "web").RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n3", "default", "web-0", "app", "web").Obj()},
			wantNodes: nodes(affinity, affinity, pass, affinity),
		},
		{
			// A matching pod on a node without the zone key is in no zone:
			// it counts for nothing, so the group still has no first pod.
			name:      "self-affinity, matching pod only on a node without the topology key: still the first",
			pod:       frameworktest.IncomingPod("default", "app", "web").RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n4", "default", "web-0", "app", "web").Obj()},
			wantNodes: nodes(pass, pass, pass, affinity),
		},
		{
			name: "self-affinity in another namespace does not make a first pod",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Namespaces("prod-ns").Obj()).Obj(),
			wantNodes: nodes(affinity, affinity, affinity, affinity),
		},
		{
			// One pod must match every term: db/backend on n1 counts for
			// zone z1 and host n1; db alone on n3 counts for nothing. n2 is
			// in z1 but not on host n1.
			name: "multiple affinity terms: all matched by one pod, every topology key checked",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).
				RequiredPodAffinity(ipaTerm(v1.LabelHostname).MatchLabel("tier", "backend").Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "db-be", "app", "db", "tier", "backend").Obj(),
				frameworktest.PodOn("n3", "default", "db", "app", "db").Obj(),
			},
			wantNodes: nodes(pass, affinity, affinity, affinity),
		},
		{
			name: "multiple affinity terms matched by different pods: nowhere",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).
				RequiredPodAffinity(ipaTerm(v1.LabelHostname).MatchLabel("tier", "backend").Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "db", "app", "db").Obj(),
				frameworktest.PodOn("n1", "default", "be", "tier", "backend").Obj(),
			},
			wantNodes: nodes(affinity, affinity, affinity, affinity),
		},
		{
			name:      "required anti-affinity by hostname",
			pod:       frameworktest.IncomingPod("default", "app", "web").RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n1", "default", "web-0", "app", "web").Obj()},
			wantNodes: nodes(anti, pass, pass, pass),
		},
		{
			// n4 has no zone: it is in no zone with a web pod.
			name:      "required anti-affinity by zone: nodes without the key are free",
			pod:       frameworktest.IncomingPod("default", "app", "web").RequiredPodAntiAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n1", "default", "web-0", "app", "web").Obj()},
			wantNodes: nodes(anti, anti, pass, pass),
		},
		{
			name: "anti-affinity: any one term matching rejects",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAntiAffinity(ipaTerm(ipaZone).MatchLabel("app", "nothing-like-it").Obj()).
				RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n3", "default", "web-0", "app", "web").Obj()},
			wantNodes: nodes(pass, pass, anti, pass),
		},
		{
			name: "anti-affinity: a term's selector matching on a node without its topology key counts nothing",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAntiAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			pods:      []*v1.Pod{frameworktest.PodOn("n4", "default", "web-0", "app", "web").Obj()},
			wantNodes: nodes(pass, pass, pass, pass),
		},
		{
			name: "symmetry: an existing pod's anti-affinity keeps the incoming pod out of its zone",
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "loner", "app", "loner").RequiredPodAntiAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantNodes: nodes(existing, existing, pass, pass),
		},
		{
			name: "symmetry: an existing anti-affinity that does not match the pod: skip",
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "loner", "app", "loner").RequiredPodAntiAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).Obj(),
			},
			wantPre: skip,
		},
		{
			name: "symmetry: existing pod on a node without its topology key constrains nothing",
			pod:  frameworktest.IncomingPod("default", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n4", "default", "loner", "app", "loner").RequiredPodAntiAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantPre: skip,
		},
		{
			name: "symmetry: existing anti-affinity in its own namespace ignores pods of others",
			pod:  frameworktest.IncomingPod("prod-ns", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "loner", "app", "loner").RequiredPodAntiAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").Obj()).Obj(),
			},
			wantPre: skip,
		},
		{
			// The existing pod's namespaceSelector reads the incoming
			// pod's namespace labels: prod-ns has env=prod.
			name: "symmetry with namespaceSelector: incoming pod's namespace selected",
			pod:  frameworktest.IncomingPod("prod-ns", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "default", "loner", "app", "loner").
					RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").NamespaceSelector(prodNS).Obj()).Obj(),
			},
			wantNodes: nodes(pass, pass, existing, pass),
		},
		{
			name: "symmetry with namespaceSelector: incoming pod's namespace not selected",
			pod:  frameworktest.IncomingPod("dev-ns", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "default", "loner", "app", "loner").
					RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").NamespaceSelector(prodNS).Obj()).Obj(),
			},
			wantPre: skip,
		},
		{
			name: "affinity with named namespaces",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").Namespaces("dev-ns").Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "db", "app", "db").Obj(),
				frameworktest.PodOn("n3", "dev-ns", "db", "app", "db").Obj(),
			},
			wantNodes: nodes(affinity, affinity, pass, affinity),
		},
		{
			// The incoming pod's namespaceSelector is resolved through
			// the namespace lister: prod-ns only.
			name: "affinity with namespaceSelector",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").NamespaceSelector(prodNS).Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "dev-ns", "db", "app", "db").Obj(),
				frameworktest.PodOn("n3", "prod-ns", "db", "app", "db").Obj(),
			},
			wantNodes: nodes(affinity, affinity, pass, affinity),
		},
		{
			name: "anti-affinity with an empty namespaceSelector: every namespace",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").NamespaceSelector(&metav1.LabelSelector{}).Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "dev-ns", "web", "app", "web").Obj(),
				frameworktest.PodOn("n2", "prod-ns", "web", "app", "web").Obj(),
			},
			wantNodes: nodes(anti, anti, pass, pass),
		},
		{
			// "env notin (prod)" selects default and dev-ns: only the web
			// pod on n1 counts. kube-scheduler v1.36 matched this selector
			// against no labels once it had listed the namespaces, which
			// NotIn accepts, so prod-ns's web pod on n2 counted too; v1.37
			// keeps to the namespaces listed.
			name: "anti-affinity with a NotIn namespaceSelector: only the namespaces it selects",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").NamespaceSelector(&metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}},
				}).Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "dev-ns", "web", "app", "web").Obj(),
				frameworktest.PodOn("n2", "prod-ns", "web", "app", "web").Obj(),
			},
			wantNodes: nodes(anti, pass, pass, pass),
		},
		{
			// The same for DoesNotExist, and for affinity: prod-ns has the
			// env label, so its db pod on n3 satisfies nothing (v1.36: it
			// did); the one in default, which has no labels, on n1 does.
			name: "affinity with a DoesNotExist namespaceSelector: only the namespaces it selects",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").NamespaceSelector(&metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpDoesNotExist}},
				}).Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "prod-ns", "db", "app", "db").Obj(),
				frameworktest.PodOn("n1", "default", "db", "app", "db").Obj(),
			},
			wantNodes: nodes(pass, pass, affinity, affinity),
		},
		{
			// An existing pod's namespaceSelector is matched against the
			// incoming pod's real namespace labels: prod-ns has env=prod,
			// so "env notin (prod)" does not select it.
			name: "symmetry with a NotIn namespaceSelector: read against the incoming pod's namespace labels",
			pod:  frameworktest.IncomingPod("prod-ns", "app", "web").Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n3", "default", "loner", "app", "loner").
					RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").NamespaceSelector(&metav1.LabelSelector{
						MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}},
					}).Obj()).Obj(),
			},
			wantPre: skip,
		},
		{
			// matchLabelKeys [version] adds "version in (v2)": only the
			// v2 pod in z2 counts.
			name: "affinity with matchLabelKeys",
			pod: frameworktest.IncomingPod("default", "app", "web", "version", "v2").
				RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "web").MatchLabelKeys("version").Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "web-v1", "app", "web", "version", "v1").Obj(),
				frameworktest.PodOn("n3", "default", "web-v2", "app", "web", "version", "v2").Obj(),
			},
			wantNodes: nodes(affinity, affinity, pass, affinity),
		},
		{
			// mismatchLabelKeys [tenant] adds "tenant notin (a)": keep
			// away from other tenants only.
			name: "anti-affinity with mismatchLabelKeys",
			pod: frameworktest.IncomingPod("default", "tenant", "a").
				RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).Exists("tenant").MismatchLabelKeys("tenant").Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "b-0", "tenant", "b").Obj(),
				frameworktest.PodOn("n3", "default", "a-0", "tenant", "a").Obj(),
			},
			wantNodes: nodes(anti, pass, pass, pass),
		},
		{
			// n1: affinity holds but the pod's own anti-affinity fails;
			// n2: existing anti-affinity only; n3 affinity fails first.
			name: "affinity, anti-affinity and symmetry: checked in that order",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).
				RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj(),
			pods: []*v1.Pod{
				frameworktest.PodOn("n1", "default", "db", "app", "db").Obj(),
				frameworktest.PodOn("n1", "default", "web-0", "app", "web").Obj(),
				frameworktest.PodOn("n2", "default", "loner", "app", "loner").RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj(),
				frameworktest.PodOn("n3", "default", "web-1", "app", "web").Obj(),
			},
			wantNodes: nodes(anti, existing, affinity, affinity),
		},
		{
			name: "unparsable selector: rejected in PreFilter",
			pod: frameworktest.IncomingPod("default", "app", "web").
				RequiredPodAffinity(ipaTerm(ipaZone).In("service", "{{.bad-value.}}").Obj()).Obj(),
			wantPre: frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, `parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": `+
				`a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character `+
				`(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`)),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gotPre, gotNodes := runInterPodAffinityFilter(t, tc.pod, frameworktest.AffinityCluster(), tc.pods, namespaces...)
			wantPre := tc.wantPre
			if wantPre.Code == "" {
				wantPre = pass
			}
			if diff := cmp.Diff(wantPre, gotPre); diff != "" {
				t.Errorf("PreFilter (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNodes, gotNodes); diff != "" {
				t.Errorf("Filter per node (-want +got):\n%s", diff)
			}
		})
	}
}

// Filter without a PreFilter state fails, as in kube-scheduler: the scheduler
// only calls it after PreFilter succeeded.
func TestInterPodAffinityFilterWithoutPreFilter(t *testing.T) {
	snap := frameworktest.NewSnapshot(frameworktest.AffinityCluster(), nil)
	pl, err := interpodaffinity.NewFilter(frameworktest.NewHandle(snap))
	if err != nil {
		t.Fatal(err)
	}
	st := pl.Filter(context.Background(), framework.NewCycleState(), frameworktest.IncomingPod("default").Obj(), snap.List()[0])
	if st.Code() != framework.Error {
		t.Errorf("Filter = %v %q, want Error", st.Code(), st.Message())
	}
}

// Filter reads a few map entries per node: it allocates nothing for a node
// it accepts.
func TestInterPodAffinityFilterDoesNotAllocate(t *testing.T) {
	pod := frameworktest.IncomingPod("default", "app", "web").
		RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").Obj()).
		RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj()
	pods := []*v1.Pod{
		frameworktest.PodOn("n1", "default", "db", "app", "db").Obj(),
		frameworktest.PodOn("n1", "default", "loner", "app", "loner").RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "web").Obj()).Obj(),
		frameworktest.PodOn("n2", "default", "other", "app", "other").Obj(),
	}
	snap := frameworktest.NewSnapshot(frameworktest.AffinityCluster(), pods)
	pl, err := interpodaffinity.NewFilter(frameworktest.NewHandle(snap))
	if err != nil {
		t.Fatal(err)
	}
	ctx, state := context.Background(), framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, snap.List()); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Message())
	}
	n2, err := snap.Get("n2")
	if err != nil {
		t.Fatal(err)
	}
	if st := pl.Filter(ctx, state, pod, n2); !st.IsSuccess() {
		t.Fatalf("Filter(n2) = %q, want success", st.Message())
	}
	if n := testing.AllocsPerRun(100, func() { pl.Filter(ctx, state, pod, n2) }); n != 0 {
		t.Errorf("Filter on a feasible node allocates %v times", n)
	}
}

// ipaBenchCluster is 5,000 nodes in 10 zones, one pod per node with
// label app=a<i%7>; every tenth pod (10%) has required hostname
// anti-affinity against its own app, the way spread-out deployments do.
func ipaBenchCluster() ([]*v1.Node, []*v1.Pod) {
	const n = 5000
	nodes := make([]*v1.Node, n)
	pods := make([]*v1.Pod, n)
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		nodes[i] = frameworktest.MakeNode().Name(name).Label(ipaZone, fmt.Sprintf("zone-%d", i%10)).
			Label("node.kubernetes.io/instance-type", "m5.xlarge").Obj()
		app := fmt.Sprintf("a%d", i%7)
		p := frameworktest.PodOn(name, "default", fmt.Sprintf("pod-%d", i), "app", app, "tier", "backend")
		if i%10 == 0 {
			p.RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", app).Obj())
		}
		pods[i] = p.Obj()
	}
	return nodes, pods
}

// ipaBenchPod has app=a1, keeps away from a1 pods by host (~1 node in
// 7 holds one) and wants a zone holding an a2 pod (every zone does). The
// existing a1 pods with anti-affinity reject it by symmetry too.
func ipaBenchPod() *v1.Pod {
	return frameworktest.IncomingPod("default", "app", "a1").
		RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "a2").Obj()).
		RequiredPodAntiAffinity(ipaTerm(v1.LabelHostname).MatchLabel("app", "a1").Obj()).Obj()
}

// BenchmarkInterPodAffinity measures one cycle's PreFilter over 5,000 nodes
// and 5,000 pods, and Filter per node: "feasible" sweeps the nodes Filter
// accepts (allocs/op stays 0: no per-node allocation), "all" sweeps every
// node, whose rejections allocate only their Status.
func BenchmarkInterPodAffinity(b *testing.B) {
	nodes, pods := ipaBenchCluster()
	snap := frameworktest.NewSnapshot(nodes, pods)
	pl, err := interpodaffinity.NewFilter(frameworktest.NewHandle(snap))
	if err != nil {
		b.Fatal(err)
	}
	pod := ipaBenchPod()
	ctx := context.Background()
	all := snap.List()

	b.Run("PreFilter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, st := pl.PreFilter(ctx, framework.NewCycleState(), pod, all); !st.IsSuccess() {
				b.Fatal(st.Message())
			}
		}
	})

	state := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, all); !st.IsSuccess() {
		b.Fatal(st.Message())
	}
	var feasible []*framework.NodeInfo
	for _, ni := range all {
		if pl.Filter(ctx, state, pod, ni).IsSuccess() {
			feasible = append(feasible, ni)
		}
	}
	sweep := func(list []*framework.NodeInfo) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, ni := range list {
					pl.Filter(ctx, state, pod, ni)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(list)), "ns/node")
			b.ReportMetric(float64(len(list)), "nodes")
		}
	}
	b.Run("Filter/feasible", sweep(feasible))
	b.Run("Filter/all", sweep(all))
}

// A scheduler built without informers (tests, benchmarks) still gets the
// plugin; namespaceSelectors then select no namespace.
func TestInterPodAffinityWithoutInformers(t *testing.T) {
	pods := []*v1.Pod{frameworktest.PodOn("n3", "prod-ns", "db", "app", "db").Obj()}
	snap := frameworktest.NewSnapshot(frameworktest.AffinityCluster(), pods)
	h := frameworktest.NewHandle(snap)
	h.Factory = nil
	pl, err := interpodaffinity.NewFilter(h)
	if err != nil {
		t.Fatal(err)
	}
	pod := frameworktest.IncomingPod("default").RequiredPodAffinity(ipaTerm(ipaZone).MatchLabel("app", "db").
		NamespaceSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}).Obj()).Obj()
	ctx, state := context.Background(), framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, snap.List()); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st.Message())
	}
	n3, _ := snap.Get("n3")
	want := frameworktest.ViewOf(framework.NewStatus(framework.UnschedulableAndUnresolvable, interpodaffinity.ReasonPodAffinityRulesNotMatch))
	if diff := cmp.Diff(want, frameworktest.ViewOf(pl.Filter(ctx, state, pod, n3))); diff != "" {
		t.Errorf("Filter(n3) (-want +got):\n%s", diff)
	}
}
