package framework_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

func term() *frameworktest.NodeSelectorTermWrapper { return frameworktest.MakeNodeSelectorTerm() }

func TestNodeSelectorTermMatch(t *testing.T) {
	node := frameworktest.MakeNode().Name("n1").
		Label("zone", "a").Label("cores", "16").Label("empty", "").Label("word", "abc").Obj()
	nameless := frameworktest.MakeNode().Label("zone", "a").Obj()
	many := []string{"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "a"}

	tests := []struct {
		name    string
		term    v1.NodeSelectorTerm
		node    *v1.Node
		want    bool
		wantErr bool
	}{
		{name: "empty term matches nothing", term: term().Obj(), want: false},
		{name: "In value present", term: term().In("zone", "b", "a").Obj(), want: true},
		{name: "In other value", term: term().In("zone", "b").Obj(), want: false},
		{name: "In missing label", term: term().In("region", "a").Obj(), want: false},
		{name: "In empty value", term: term().In("empty", "").Obj(), want: true},
		{name: "In many values (set)", term: term().In("zone", many...).Obj(), want: true},
		{name: "In many values, none", term: term().In("zone", many[:9]...).Obj(), want: false},
		{name: "NotIn missing label", term: term().NotIn("region", "a").Obj(), want: true},
		{name: "NotIn other value", term: term().NotIn("zone", "b").Obj(), want: true},
		{name: "NotIn value present", term: term().NotIn("zone", "b", "a").Obj(), want: false},
		{name: "NotIn many values", term: term().NotIn("zone", many...).Obj(), want: false},
		{name: "Exists", term: term().Exists("zone").Obj(), want: true},
		{name: "Exists with empty value", term: term().Exists("empty").Obj(), want: true},
		{name: "Exists missing", term: term().Exists("region").Obj(), want: false},
		{name: "DoesNotExist missing", term: term().DoesNotExist("region").Obj(), want: true},
		{name: "DoesNotExist present", term: term().DoesNotExist("zone").Obj(), want: false},
		{name: "Gt 16 > 8", term: term().Gt("cores", "8").Obj(), want: true},
		{name: "Gt 16 > 16 is false", term: term().Gt("cores", "16").Obj(), want: false},
		{name: "Gt 16 > 32 is false", term: term().Gt("cores", "32").Obj(), want: false},
		{name: "Gt leading zeros 16 > 015", term: term().Gt("cores", "015").Obj(), want: true},
		{name: "Gt missing label", term: term().Gt("gpus", "0").Obj(), want: false},
		{name: "Gt label not an integer", term: term().Gt("word", "0").Obj(), want: false},
		{name: "Lt 16 < 32", term: term().Lt("cores", "32").Obj(), want: true},
		{name: "Lt 16 < 16 is false", term: term().Lt("cores", "16").Obj(), want: false},
		{name: "Lt 16 < 8 is false", term: term().Lt("cores", "8").Obj(), want: false},
		{name: "Lt missing label", term: term().Lt("gpus", "8").Obj(), want: false},
		{name: "Gt value not an integer is invalid", term: term().Gt("cores", "eight").Obj(), wantErr: true},
		// "-5" parses as an integer but is not a valid label value, which
		// labels.NewRequirement also checks: kube-scheduler rejects the term.
		{name: "Gt negative value is an invalid label value", term: term().Gt("cores", "-5").Obj(), wantErr: true},
		{name: "Gt with two values is invalid", term: term().Expr("cores", v1.NodeSelectorOpGt, "1", "2").Obj(), wantErr: true},
		{name: "Lt without value is invalid", term: term().Expr("cores", v1.NodeSelectorOpLt).Obj(), wantErr: true},
		{name: "In without values is invalid", term: term().In("zone").Obj(), wantErr: true},
		{name: "Exists with values is invalid", term: term().Expr("zone", v1.NodeSelectorOpExists, "a").Obj(), wantErr: true},
		{name: "unknown operator is invalid", term: term().Expr("zone", "Equals", "a").Obj(), wantErr: true},
		{name: "invalid key", term: term().Exists("bad key!").Obj(), wantErr: true},
		{name: "invalid value", term: term().In("zone", "a", "not/valid").Obj(), wantErr: true},
		{name: "one invalid requirement spoils the term", term: term().In("zone", "a").Gt("cores", "x").Obj(), wantErr: true},
		{name: "requirements are ANDed, all match", term: term().In("zone", "a").Gt("cores", "8").Exists("word").Obj(), want: true},
		{name: "requirements are ANDed, one fails", term: term().In("zone", "a").Gt("cores", "64").Obj(), want: false},
		{name: "field In name", term: term().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n1").Obj(), want: true},
		{name: "field In other name", term: term().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n2").Obj(), want: false},
		{name: "field NotIn other name", term: term().Field(framework.NodeNameField, v1.NodeSelectorOpNotIn, "n2").Obj(), want: true},
		{name: "field NotIn name", term: term().Field(framework.NodeNameField, v1.NodeSelectorOpNotIn, "n1").Obj(), want: false},
		{name: "field In two values is invalid", term: term().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n1", "n2").Obj(), wantErr: true},
		{name: "field Exists is invalid", term: term().Field(framework.NodeNameField, v1.NodeSelectorOpExists).Obj(), wantErr: true},
		{name: "field unknown key reads empty, In fails", term: term().Field("metadata.uid", v1.NodeSelectorOpIn, "n1").Obj(), want: false},
		{name: "field unknown key reads empty, NotIn passes", term: term().Field("metadata.uid", v1.NodeSelectorOpNotIn, "n1").Obj(), want: true},
		{name: "fields and labels ANDed", term: term().In("zone", "a").Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n1").Obj(), want: true},
		{name: "fields and labels ANDed, label fails", term: term().In("zone", "b").Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n1").Obj(), want: false},
		{name: "fields ignored for a nameless node", term: term().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n1").Obj(), node: nameless, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := node
			if tc.node != nil {
				n = tc.node
			}
			c := framework.NewNodeSelectorTerm(&tc.term)
			if got := c.Match(n); got != tc.want {
				t.Errorf("Match() = %v, want %v", got, tc.want)
			}
			if gotErr := c.Err() != nil; gotErr != tc.wantErr {
				t.Errorf("Err() = %v, want error: %v", c.Err(), tc.wantErr)
			}
		})
	}
}

func TestNodeSelectorMatch(t *testing.T) {
	node := frameworktest.MakeNode().Name("n1").Label("zone", "a").Label("cores", "16").Obj()
	tests := []struct {
		name    string
		terms   []v1.NodeSelectorTerm
		want    bool
		wantErr bool
	}{
		{name: "no terms match nothing", terms: nil, want: false},
		{name: "only an empty term matches nothing", terms: []v1.NodeSelectorTerm{term().Obj()}, want: false},
		{name: "terms are ORed, second matches", terms: []v1.NodeSelectorTerm{
			term().In("zone", "b").Obj(), term().Gt("cores", "8").Obj(),
		}, want: true},
		{name: "terms are ORed, none matches", terms: []v1.NodeSelectorTerm{
			term().In("zone", "b").Obj(), term().Lt("cores", "8").Obj(),
		}, want: false},
		{name: "empty term skipped, other matches", terms: []v1.NodeSelectorTerm{
			term().Obj(), term().Exists("zone").Obj(),
		}, want: true},
		{name: "invalid term never matches, valid one does", terms: []v1.NodeSelectorTerm{
			term().Gt("cores", "many").Obj(), term().In("zone", "a").Obj(),
		}, want: true, wantErr: true},
		{name: "invalid term alone", terms: []v1.NodeSelectorTerm{term().Gt("cores", "many").Obj()}, want: false, wantErr: true},
		{name: "field term ORed with label term", terms: []v1.NodeSelectorTerm{
			term().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n2").Obj(), term().In("zone", "a").Obj(),
		}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := framework.NewNodeSelector(&v1.NodeSelector{NodeSelectorTerms: tc.terms})
			if got := s.Match(node); got != tc.want {
				t.Errorf("Match() = %v, want %v", got, tc.want)
			}
			if gotErr := s.Err() != nil; gotErr != tc.wantErr {
				t.Errorf("Err() = %v, want error: %v", s.Err(), tc.wantErr)
			}
		})
	}
}

func TestNodeSelectorErrPath(t *testing.T) {
	s := framework.NewNodeSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
		term().In("zone", "a").Obj(), term().Exists("zone").Gt("cores", "many").Obj(),
	}})
	want := `nodeSelectorTerms[1].matchExpressions[1].values[0]: Invalid value: "many": for 'Gt', 'Lt' operators, the value must be an integer`
	if diff := cmp.Diff(want, s.Err().Error()); diff != "" {
		t.Errorf("Err() (-want +got):\n%s", diff)
	}
}

func TestPreferredSchedulingTerms(t *testing.T) {
	node := frameworktest.MakeNode().Name("n1").Label("zone", "a").Label("cores", "16").Obj()
	pref := func(w int32, t v1.NodeSelectorTerm) v1.PreferredSchedulingTerm {
		return v1.PreferredSchedulingTerm{Weight: w, Preference: t}
	}
	tests := []struct {
		name    string
		terms   []v1.PreferredSchedulingTerm
		want    int64
		wantLen int
		wantErr string
	}{
		{name: "none", want: 0},
		{name: "one matching", terms: []v1.PreferredSchedulingTerm{pref(5, term().In("zone", "a").Obj())}, want: 5, wantLen: 1},
		{name: "sum of matching weights: 5 + 20", terms: []v1.PreferredSchedulingTerm{
			pref(5, term().In("zone", "a").Obj()),
			pref(7, term().In("zone", "b").Obj()),
			pref(20, term().Gt("cores", "8").Obj()),
		}, want: 5 + 20, wantLen: 3},
		{name: "zero weight and empty terms dropped", terms: []v1.PreferredSchedulingTerm{
			pref(0, term().In("zone", "a").Obj()),
			pref(9, term().Obj()),
			pref(3, term().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "n1").Obj()),
		}, want: 3, wantLen: 1},
		{name: "an invalid term is an error", terms: []v1.PreferredSchedulingTerm{
			pref(5, term().In("zone", "a").Obj()),
			pref(5, term().Lt("cores", "few").Obj()),
		}, wantErr: `[1].matchExpressions[0].values[0]: Invalid value: "few": for 'Gt', 'Lt' operators, the value must be an integer`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := framework.NewPreferredSchedulingTerms(tc.terms)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("no error, want %q", tc.wantErr)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Score(node); got != tc.want {
				t.Errorf("Score() = %d, want %d", got, tc.want)
			}
			if got := p.Len(); got != tc.wantLen {
				t.Errorf("Len() = %d, want %d", got, tc.wantLen)
			}
		})
	}
}

func TestRequiredNodeAffinity(t *testing.T) {
	node := frameworktest.MakeNode().Name("n1").Label("zone", "a").Label("disk", "ssd").Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{name: "nothing required", pod: frameworktest.MakePod().Obj(), want: true},
		{name: "nodeSelector matches", pod: frameworktest.MakePod().NodeSelector(map[string]string{"zone": "a", "disk": "ssd"}).Obj(), want: true},
		{name: "nodeSelector one label differs", pod: frameworktest.MakePod().NodeSelector(map[string]string{"zone": "a", "disk": "hdd"}).Obj(), want: false},
		{name: "nodeSelector empty value needs the label", pod: frameworktest.MakePod().NodeSelector(map[string]string{"gpu": ""}).Obj(), want: false},
		{name: "affinity matches", pod: frameworktest.MakePod().RequiredNodeAffinity(term().In("zone", "a").Obj()).Obj(), want: true},
		{name: "affinity fails", pod: frameworktest.MakePod().RequiredNodeAffinity(term().In("zone", "b").Obj()).Obj(), want: false},
		{name: "nodeSelector and affinity both match", pod: frameworktest.MakePod().
			NodeSelector(map[string]string{"disk": "ssd"}).RequiredNodeAffinity(term().In("zone", "a").Obj()).Obj(), want: true},
		{name: "nodeSelector ANDed with affinity", pod: frameworktest.MakePod().
			NodeSelector(map[string]string{"disk": "hdd"}).RequiredNodeAffinity(term().In("zone", "a").Obj()).Obj(), want: false},
		{name: "required affinity without terms matches nothing", pod: func() *v1.Pod {
			p := frameworktest.MakePod().Obj()
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{},
			}}
			return p
		}(), want: false},
		{name: "only preferred affinity requires nothing", pod: frameworktest.MakePod().
			PreferredNodeAffinity(10, term().In("zone", "b").Obj()).Obj(), want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := framework.NewRequiredNodeAffinity(tc.pod).Match(node); got != tc.want {
				t.Errorf("Match() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestToleratesTaint(t *testing.T) {
	taints := []v1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "other", Value: "gpu", Effect: v1.TaintEffectNoExecute},
		{Key: "count", Value: "5", Effect: v1.TaintEffectNoSchedule},
	}
	tests := []struct {
		name       string
		toleration v1.Toleration
		want       []bool // per taint above
	}{
		{name: "Equal key value effect", toleration: v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule},
			want: []bool{true, false, false, false}},
		{name: "empty operator means Equal", toleration: v1.Toleration{Key: "dedicated", Value: "gpu"},
			want: []bool{true, false, false, false}},
		{name: "empty effect matches every effect", toleration: v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists},
			want: []bool{true, true, false, false}},
		{name: "Exists with effect", toleration: v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectPreferNoSchedule},
			want: []bool{false, true, false, false}},
		{name: "empty key and Exists tolerates everything", toleration: v1.Toleration{Operator: v1.TolerationOpExists},
			want: []bool{true, true, true, true}},
		{name: "empty key, Exists, one effect", toleration: v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
			want: []bool{false, false, true, false}},
		{name: "empty key with Equal matches by value", toleration: v1.Toleration{Value: "gpu"},
			want: []bool{true, false, true, false}},
		{name: "Gt is behind an alpha gate, off", toleration: v1.Toleration{Key: "count", Operator: v1.TolerationOpGt, Value: "1"},
			want: []bool{false, false, false, false}},
		{name: "Lt is behind an alpha gate, off", toleration: v1.Toleration{Key: "count", Operator: v1.TolerationOpLt, Value: "9"},
			want: []bool{false, false, false, false}},
		{name: "unknown operator", toleration: v1.Toleration{Key: "dedicated", Operator: "In", Value: "gpu"},
			want: []bool{false, false, false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got, api []bool
			for i := range taints {
				got = append(got, framework.ToleratesTaint(&tc.toleration, &taints[i]))
				api = append(api, tc.toleration.ToleratesTaint(klog.Background(), &taints[i], false))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ToleratesTaint (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(api, got); diff != "" {
				t.Errorf("disagrees with v1.Toleration.ToleratesTaint (-api +got):\n%s", diff)
			}
		})
	}
}

func TestFindUntoleratedTaint(t *testing.T) {
	taints := []v1.Taint{
		{Key: "soft", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "a", Value: "1", Effect: v1.TaintEffectNoSchedule},
		{Key: "b", Value: "2", Effect: v1.TaintEffectNoExecute},
	}
	tests := []struct {
		name        string
		tolerations []v1.Toleration
		want        *v1.Taint
	}{
		{name: "no tolerations: first hard taint", want: &taints[1]},
		{name: "first tolerated: second", tolerations: []v1.Toleration{{Key: "a", Operator: v1.TolerationOpExists}}, want: &taints[2]},
		{name: "all tolerated", tolerations: []v1.Toleration{{Key: "a", Value: "1"}, {Key: "b", Value: "2", Effect: v1.TaintEffectNoExecute}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, found := framework.FindUntoleratedTaint(taints, tc.tolerations, framework.IsDoNotScheduleTaint)
			if found != (tc.want != nil) {
				t.Fatalf("found = %v, want %v", found, tc.want != nil)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("taint (-want +got):\n%s", diff)
			}
		})
	}
}

func benchNodes(n int) []*v1.Node {
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		nodes[i] = frameworktest.MakeNode().Name(fmt.Sprintf("node-%d", i)).
			Label("topology.kubernetes.io/zone", fmt.Sprintf("zone-%d", i%3)).
			Label("cores", strconv.Itoa(4<<(i%4))).
			Label("node.kubernetes.io/instance-type", "m5.xlarge").Obj()
	}
	return nodes
}

func benchPod() *v1.Pod {
	return frameworktest.MakePod().Name("p").
		NodeSelector(map[string]string{"node.kubernetes.io/instance-type": "m5.xlarge"}).
		RequiredNodeAffinity(term().In("topology.kubernetes.io/zone", "zone-0", "zone-1").Gt("cores", "4").Obj()).
		RequiredNodeAffinity(term().Field(framework.NodeNameField, v1.NodeSelectorOpIn, "node-7").Obj()).Obj()
}

func TestRequiredNodeAffinityMatchDoesNotAllocate(t *testing.T) {
	nodes := benchNodes(64)
	r := framework.NewRequiredNodeAffinity(benchPod())
	allocs := testing.AllocsPerRun(10, func() {
		for _, n := range nodes {
			r.Match(n)
		}
	})
	if allocs != 0 {
		t.Errorf("Match allocates %v times per 64 nodes, want 0", allocs)
	}
}

func BenchmarkRequiredNodeAffinityMatch(b *testing.B) {
	nodes := benchNodes(5000)
	r := framework.NewRequiredNodeAffinity(benchPod())
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range nodes {
			r.Match(n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nodes)), "ns/node")
}
