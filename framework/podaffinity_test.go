package framework_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	listersv1 "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

func podTerm(key string) *frameworktest.PodAffinityTermWrapper {
	return frameworktest.MakePodAffinityTerm(key)
}

func namespaceLister(t testing.TB, nss ...*v1.Namespace) listersv1.NamespaceLister {
	t.Helper()
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, ns := range nss {
		if err := idx.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	return listersv1.NewNamespaceLister(idx)
}

func namespace(name string, kv ...string) *v1.Namespace {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		ns.Labels[kv[i]] = kv[i+1]
	}
	return ns
}

func TestNewPodAffinityTermsNil(t *testing.T) {
	for name, pod := range map[string]*v1.Pod{
		"no affinity":        frameworktest.MakePod().Obj(),
		"only node affinity": frameworktest.MakePod().RequiredNodeAffinity(frameworktest.MakeNodeSelectorTerm().In("zone", "a").Obj()).Obj(),
	} {
		if got := framework.NewPodAffinityTerms(pod); got != nil {
			t.Errorf("%s: NewPodAffinityTerms = %+v, want nil", name, got)
		}
		if got := framework.NewPodInfo(pod).RequiredAntiAffinityTerms(); got != nil {
			t.Errorf("%s: RequiredAntiAffinityTerms = %v, want nil", name, got)
		}
	}
}

// TestAffinityTermMatches compiles the one required affinity term of owner
// and matches it against target, whose namespace has nsLabels.
func TestAffinityTermMatches(t *testing.T) {
	owner := func(term v1.PodAffinityTerm) *frameworktest.PodWrapper {
		return frameworktest.MakePod().Namespace("ns1").Name("owner").Label("app", "web").Label("tenant", "a").RequiredPodAffinity(term)
	}
	target := func(ns string, kv ...string) *v1.Pod {
		p := frameworktest.MakePod().Namespace(ns).Name("target")
		for i := 0; i+1 < len(kv); i += 2 {
			p.Label(kv[i], kv[i+1])
		}
		return p.Obj()
	}
	prod := labels.Set{"env": "prod"}
	tests := []struct {
		name     string
		owner    *v1.Pod
		target   *v1.Pod
		nsLabels labels.Set
		want     bool
	}{
		{name: "own namespace by default", owner: owner(podTerm("zone").MatchLabel("app", "web").Obj()).Obj(),
			target: target("ns1", "app", "web"), want: true},
		{name: "other namespace not by default", owner: owner(podTerm("zone").MatchLabel("app", "web").Obj()).Obj(),
			target: target("ns2", "app", "web")},
		{name: "labels differ", owner: owner(podTerm("zone").MatchLabel("app", "web").Obj()).Obj(),
			target: target("ns1", "app", "db")},
		{name: "named namespaces replace the own one", owner: owner(podTerm("zone").MatchLabel("app", "web").Namespaces("ns2").Obj()).Obj(),
			target: target("ns1", "app", "web")},
		{name: "named namespace", owner: owner(podTerm("zone").MatchLabel("app", "web").Namespaces("ns2", "ns3").Obj()).Obj(),
			target: target("ns3", "app", "web"), want: true},
		{name: "namespaceSelector selects the target's namespace", owner: owner(podTerm("zone").MatchLabel("app", "web").
			NamespaceSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}).Obj()).Obj(),
			target: target("ns2", "app", "web"), nsLabels: prod, want: true},
		{name: "namespaceSelector alone drops the own namespace", owner: owner(podTerm("zone").MatchLabel("app", "web").
			NamespaceSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}).Obj()).Obj(),
			target: target("ns1", "app", "web"), nsLabels: prod},
		{name: "namespaces and selector are ORed", owner: owner(podTerm("zone").MatchLabel("app", "web").Namespaces("ns1").
			NamespaceSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}).Obj()).Obj(),
			target: target("ns1", "app", "web"), nsLabels: prod, want: true},
		{name: "empty namespaceSelector: every namespace", owner: owner(podTerm("zone").MatchLabel("app", "web").
			NamespaceSelector(&metav1.LabelSelector{}).Obj()).Obj(),
			target: target("elsewhere", "app", "web"), want: true},
		{name: "nil labelSelector selects nothing", owner: owner(podTerm("zone").Obj()).Obj(),
			target: target("ns1", "app", "web")},
		{name: "empty labelSelector selects every pod", owner: owner(podTerm("zone").EmptySelector().Obj()).Obj(),
			target: target("ns1"), want: true},
		{name: "matchLabelKeys adds app in (web)", owner: owner(podTerm("zone").Exists("tier").MatchLabelKeys("app").Obj()).Obj(),
			target: target("ns1", "tier", "fe", "app", "web"), want: true},
		{name: "matchLabelKeys: other value", owner: owner(podTerm("zone").Exists("tier").MatchLabelKeys("app").Obj()).Obj(),
			target: target("ns1", "tier", "fe", "app", "db")},
		{name: "matchLabelKeys on a key the owner lacks adds nothing", owner: owner(podTerm("zone").Exists("tier").MatchLabelKeys("missing").Obj()).Obj(),
			target: target("ns1", "tier", "fe"), want: true},
		{name: "matchLabelKeys with a nil selector still selects nothing", owner: owner(podTerm("zone").MatchLabelKeys("app").Obj()).Obj(),
			target: target("ns1", "app", "web")},
		{name: "mismatchLabelKeys adds tenant notin (a)", owner: owner(podTerm("zone").Exists("tier").MismatchLabelKeys("tenant").Obj()).Obj(),
			target: target("ns1", "tier", "fe", "tenant", "a")},
		{name: "mismatchLabelKeys: other tenant", owner: owner(podTerm("zone").Exists("tier").MismatchLabelKeys("tenant").Obj()).Obj(),
			target: target("ns1", "tier", "fe", "tenant", "b"), want: true},
		{name: "mismatchLabelKeys: no tenant at all", owner: owner(podTerm("zone").Exists("tier").MismatchLabelKeys("tenant").Obj()).Obj(),
			target: target("ns1", "tier", "fe"), want: true},
		{
			// kube-apiserver wrote "app in (v1)" at creation; the owner's
			// label has since become web. kube-scheduler matches v1.
			name:   "matchLabelKeys already merged by the API server keeps the creation value",
			owner:  owner(podTerm("zone").In("app", "v1").MatchLabelKeys("app").Obj()).Obj(),
			target: target("ns1", "app", "v1"), want: true,
		},
		{name: "matchLabelKeys already merged: the current value does not count",
			owner:  owner(podTerm("zone").In("app", "v1").MatchLabelKeys("app").Obj()).Obj(),
			target: target("ns1", "app", "web")},
		{name: "mismatchLabelKeys already merged is not doubled",
			owner:  owner(podTerm("zone").NotIn("tenant", "a").MismatchLabelKeys("tenant").Obj()).Obj(),
			target: target("ns1", "tenant", "b"), want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pi := framework.NewPodInfo(tc.owner)
			if pi.Affinity == nil || pi.Affinity.Err != nil || len(pi.RequiredAffinityTerms()) != 1 {
				t.Fatalf("compiled terms = %+v, want one valid required term", pi.Affinity)
			}
			term := pi.RequiredAffinityTerms()[0]
			if got := term.Matches(tc.target, tc.nsLabels); got != tc.want {
				t.Errorf("Matches = %v, want %v (selector %q)", got, tc.want, term.Selector)
			}
		})
	}
}

func TestNewPodAffinityTermsLists(t *testing.T) {
	pod := frameworktest.MakePod().Namespace("ns1").Name("p").
		RequiredPodAffinity(podTerm("zone").MatchLabel("a", "1").Obj()).
		RequiredPodAntiAffinity(podTerm("host").MatchLabel("b", "2").Obj()).
		RequiredPodAntiAffinity(podTerm("zone").MatchLabel("c", "3").Obj()).
		PreferredPodAffinity(7, podTerm("rack").MatchLabel("d", "4").Obj()).
		PreferredPodAntiAffinity(9, podTerm("host").MatchLabel("e", "5").Obj()).Obj()
	got := framework.NewPodAffinityTerms(pod)
	type view struct {
		Required, RequiredAnti   []string
		Preferred, PreferredAnti []string
	}
	show := func(ts []framework.AffinityTerm) (out []string) {
		for _, t := range ts {
			out = append(out, t.TopologyKey+" "+t.Selector.String()+" "+strings.Join(sets.List(t.Namespaces), ","))
		}
		return out
	}
	showW := func(ts []framework.WeightedAffinityTerm) (out []string) {
		for _, t := range ts {
			out = append(out, t.TopologyKey+" "+t.Selector.String()+" "+strings.Join(sets.List(t.Namespaces), ",")+" w="+strconv.Itoa(int(t.Weight)))
		}
		return out
	}
	want := view{
		Required:      []string{"zone a=1 ns1"},
		RequiredAnti:  []string{"host b=2 ns1", "zone c=3 ns1"},
		Preferred:     []string{"rack d=4 ns1 w=7"},
		PreferredAnti: []string{"host e=5 ns1 w=9"},
	}
	gotView := view{show(got.RequiredAffinity), show(got.RequiredAntiAffinity), showW(got.PreferredAffinity), showW(got.PreferredAntiAffinity)}
	if diff := cmp.Diff(want, gotView); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
	if got.Err != nil {
		t.Errorf("Err = %v", got.Err)
	}
}

// An unparsable selector drops its list only, and says which, in
// kube-scheduler's words.
func TestNewPodAffinityTermsInvalid(t *testing.T) {
	pod := frameworktest.MakePod().Namespace("ns1").Name("p").
		RequiredPodAffinity(podTerm("zone").MatchLabel("a", "1").Obj()).
		RequiredPodAffinity(podTerm("zone").In("service", "{{.bad-value.}}").Obj()).
		RequiredPodAntiAffinity(podTerm("host").MatchLabel("b", "2").Obj()).Obj()
	got := framework.NewPodAffinityTerms(pod)
	if got.RequiredAffinity != nil {
		t.Errorf("RequiredAffinity = %v, want dropped", got.RequiredAffinity)
	}
	if len(got.RequiredAntiAffinity) != 1 {
		t.Errorf("RequiredAntiAffinity = %v, want kept", got.RequiredAntiAffinity)
	}
	wantPrefix := `requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}"`
	if got.Err == nil || !strings.HasPrefix(got.Err.Error(), wantPrefix) {
		t.Errorf("Err = %v, want prefix %q", got.Err, wantPrefix)
	}
}

func TestResolveNamespaceSelectors(t *testing.T) {
	lister := namespaceLister(t, namespace("prod-a", "env", "prod"), namespace("prod-b", "env", "prod"),
		namespace("dev", "env", "dev", "tier", "fe"), namespace("bare"))
	compile := func(ts ...v1.PodAffinityTerm) []framework.AffinityTerm {
		w := frameworktest.MakePod().Namespace("own").Name("p")
		for _, x := range ts {
			w.RequiredPodAffinity(x)
		}
		return framework.NewPodAffinityTerms(w.Obj()).RequiredAffinity
	}
	sel := func(op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: op, Values: values}}}
	}
	// A resolved term is matched as the incoming pod's terms are: with no
	// namespace labels. probes are the namespaces of the pods it is asked
	// about; "ghost" is in no lister.
	probes := []string{"bare", "dev", "ghost", "own", "prod-a", "prod-b", "x"}
	tests := []struct {
		name  string
		terms []framework.AffinityTerm
		// want is, per term, the probe namespaces whose pod it matches.
		want [][]string
		// same is set when nothing needs resolving: the input comes back.
		same bool
	}{
		{name: "no selectors: the same slice", terms: compile(podTerm("z").EmptySelector().Obj(), podTerm("z").EmptySelector().Namespaces("x").Obj()),
			want: [][]string{{"own"}, {"x"}}, same: true},
		{name: "empty selector (all namespaces) is left alone", terms: compile(podTerm("z").EmptySelector().NamespaceSelector(&metav1.LabelSelector{}).Obj()),
			want: [][]string{probes}, same: true},
		{name: "selector unions with named namespaces", terms: compile(
			podTerm("z").EmptySelector().Obj(),
			podTerm("z").EmptySelector().Namespaces("x").NamespaceSelector(sel(metav1.LabelSelectorOpIn, "prod")).Obj()),
			want: [][]string{{"own"}, {"prod-a", "prod-b", "x"}}},
		{name: "Exists selects the labelled namespaces", terms: compile(podTerm("z").EmptySelector().NamespaceSelector(sel(metav1.LabelSelectorOpExists)).Obj()),
			want: [][]string{{"dev", "prod-a", "prod-b"}}},
		{
			// NotIn and DoesNotExist accept an empty label set; kube-scheduler
			// v1.36 then matched the pods of every namespace (it kept the
			// selector and matched it against no labels), v1.37 only those
			// of the namespaces the lister found: bare (no env) and dev.
			name:  "NotIn selects the namespaces without that value, labelless ones included",
			terms: compile(podTerm("z").EmptySelector().NamespaceSelector(sel(metav1.LabelSelectorOpNotIn, "prod")).Obj()),
			want:  [][]string{{"bare", "dev"}},
		},
		{
			// bare has no env label; x is named.
			name:  "DoesNotExist selects the namespaces without the label, besides the named ones",
			terms: compile(podTerm("z").EmptySelector().Namespaces("x").NamespaceSelector(sel(metav1.LabelSelectorOpDoesNotExist)).Obj()),
			want:  [][]string{{"bare", "x"}},
		},
		{
			// matchLabels does not accept an empty label set, so the
			// NotIn beside it changes nothing: only what the lister found.
			name: "NotIn beside matchLabels selects only the listed namespaces",
			terms: compile(podTerm("z").EmptySelector().NamespaceSelector(&metav1.LabelSelector{
				MatchLabels:      map[string]string{"env": "dev"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"be"}}},
			}).Obj()),
			want: [][]string{{"dev"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := make([]sets.Set[string], len(tc.terms))
			for i := range tc.terms {
				before[i] = tc.terms[i].Namespaces.Clone()
			}
			got, err := framework.ResolveNamespaceSelectors(tc.terms, lister)
			if err != nil {
				t.Fatal(err)
			}
			var gotNS [][]string
			for i := range got {
				matched := []string{}
				for _, ns := range probes {
					if got[i].Matches(frameworktest.MakePod().Namespace(ns).Name("e").Obj(), nil) {
						matched = append(matched, ns)
					}
				}
				gotNS = append(gotNS, matched)
			}
			if diff := cmp.Diff(tc.want, gotNS); diff != "" {
				t.Errorf("namespaces matched (-want +got):\n%s", diff)
			}
			if same := len(got) > 0 && &got[0] == &tc.terms[0]; same != tc.same {
				t.Errorf("returned the input slice = %v, want %v", same, tc.same)
			}
			for i := range tc.terms {
				if !tc.terms[i].Namespaces.Equal(before[i]) {
					t.Errorf("input term %d mutated: %v, was %v", i, sets.List(tc.terms[i].Namespaces), sets.List(before[i]))
				}
			}
		})
	}
}

func TestNamespaceLabels(t *testing.T) {
	lister := namespaceLister(t, namespace("prod", "env", "prod"))
	if diff := cmp.Diff(labels.Set{"env": "prod"}, framework.NamespaceLabels(lister, "prod")); diff != "" {
		t.Errorf("known namespace (-want +got):\n%s", diff)
	}
	if got := framework.NamespaceLabels(lister, "unknown"); got != nil {
		t.Errorf("unknown namespace: %v, want nil", got)
	}
}

// Matching a compiled term allocates nothing: Filter and Score rely on it.
func TestAffinityTermMatchesDoesNotAllocate(t *testing.T) {
	term := framework.NewPodAffinityTerms(frameworktest.MakePod().Namespace("ns1").Name("o").
		RequiredPodAffinity(podTerm("zone").In("app", "web", "api").Exists("tier").Obj()).Obj()).RequiredAffinity[0]
	pod := frameworktest.MakePod().Namespace("ns1").Name("p").Label("app", "web").Label("tier", "fe").Obj()
	if n := testing.AllocsPerRun(100, func() { term.Matches(pod, nil) }); n != 0 {
		t.Errorf("Matches allocates %v times", n)
	}
}

func TestAffinityTermMatchKey(t *testing.T) {
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	term := func(nss []string, nsSel, sel labels.Selector, key string) framework.AffinityTerm {
		return framework.AffinityTerm{Namespaces: sets.New(nss...), NamespaceSelector: nsSel, Selector: sel, TopologyKey: key}
	}
	base := term([]string{"b", "a"}, labels.Nothing(), web, "zone")
	same := []framework.AffinityTerm{
		term([]string{"a", "b"}, labels.Nothing(), labels.SelectorFromSet(labels.Set{"app": "web"}), "zone"),
		term([]string{"a", "b"}, labels.Nothing(), web, "hostname"), // the topology key does not change what matches
	}
	differ := []framework.AffinityTerm{
		term([]string{"a"}, labels.Nothing(), web, "zone"),
		term([]string{"a", "b"}, labels.Everything(), web, "zone"), // every namespace, not none
		term([]string{"a", "b"}, labels.Nothing(), labels.Everything(), "zone"),
		term([]string{"a", "b"}, labels.Nothing(), labels.Nothing(), "zone"),
	}
	for i, o := range same {
		if o.MatchKey() != base.MatchKey() {
			t.Errorf("same[%d]: key %q, want %q", i, o.MatchKey(), base.MatchKey())
		}
	}
	seen := map[string]int{base.MatchKey(): -1}
	for i, o := range differ {
		if j, dup := seen[o.MatchKey()]; dup {
			t.Errorf("differ[%d] has the key of %d: %q", i, j, o.MatchKey())
		}
		seen[o.MatchKey()] = i
	}
}
