package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/scheduler/extender"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// extenderServer serves one extender's verbs with the given handlers.
func extenderServer(t *testing.T, verbs map[string]func(args extenderv1.ExtenderArgs) (any, int)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := verbs[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		var args extenderv1.ExtenderArgs
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res, code := h(args)
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(res)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func newExtender(t *testing.T, c extender.Config) *extender.Extender {
	t.Helper()
	e, err := extender.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func threeNodes() []*v1.Node {
	return []*v1.Node{
		frameworktest.MakeNode().Name("a").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("b").Capacity("4", "8Gi", 110).Obj(),
		frameworktest.MakeNode().Name("c").Capacity("4", "8Gi", 110).Obj(),
	}
}

func passOnly(node string) func(extenderv1.ExtenderArgs) (any, int) {
	return func(args extenderv1.ExtenderArgs) (any, int) {
		res := extenderv1.ExtenderFilterResult{NodeNames: &[]string{}, FailedNodes: extenderv1.FailedNodesMap{}}
		for _, n := range *args.NodeNames {
			if n == node {
				*res.NodeNames = append(*res.NodeNames, n)
			} else {
				res.FailedNodes[n] = "extender says no"
			}
		}
		return res, http.StatusOK
	}
}

func failing(args extenderv1.ExtenderArgs) (any, int) { return nil, http.StatusInternalServerError }

func TestExtenderFilterErrors(t *testing.T) {
	pod := frameworktest.MakePod().Namespace("ns").Name("p").SchedulerName("yardmaster").Req("100m", "").Obj()
	tests := []struct {
		name      string
		extenders func(t *testing.T) []*extender.Extender
		wantNode  string
		wantErr   string
	}{{
		name: "a failing extender fails the attempt",
		extenders: func(t *testing.T) []*extender.Extender {
			url := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": failing})
			return []*extender.Extender{newExtender(t, extender.Config{URLPrefix: url, FilterVerb: "filter", NodeCacheCapable: true})}
		},
		wantErr: "code 500",
	}, {
		name: "an ignorable one is skipped, the next one decides",
		extenders: func(t *testing.T) []*extender.Extender {
			bad := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": failing})
			good := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": passOnly("b")})
			return OrderExtenders([]*extender.Extender{
				newExtender(t, extender.Config{URLPrefix: bad, FilterVerb: "filter", NodeCacheCapable: true, Ignorable: true}),
				newExtender(t, extender.Config{URLPrefix: good, FilterVerb: "filter", NodeCacheCapable: true}),
			})
		},
		wantNode: "b",
	}, {
		name: "an answer naming a node it was not sent is an error",
		extenders: func(t *testing.T) []*extender.Extender {
			url := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": func(extenderv1.ExtenderArgs) (any, int) {
				return extenderv1.ExtenderFilterResult{NodeNames: &[]string{"elsewhere"}}, http.StatusOK
			}})
			return []*extender.Extender{newExtender(t, extender.Config{URLPrefix: url, FilterVerb: "filter", NodeCacheCapable: true})}
		},
		wantErr: `claims a filtered node "elsewhere"`,
	}, {
		name: "an error in the answer is an error",
		extenders: func(t *testing.T) []*extender.Extender {
			url := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": func(extenderv1.ExtenderArgs) (any, int) {
				return extenderv1.ExtenderFilterResult{Error: "out of order"}, http.StatusOK
			}})
			return []*extender.Extender{newExtender(t, extender.Config{URLPrefix: url, FilterVerb: "filter"})}
		},
		wantErr: "out of order",
	}, {
		name: "a prioritize that fails gives no score and no error",
		extenders: func(t *testing.T) []*extender.Extender {
			url := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": passOnly("c"), "prioritize": failing})
			return []*extender.Extender{newExtender(t, extender.Config{URLPrefix: url, FilterVerb: "filter", PrioritizeVerb: "prioritize", Weight: 1, NodeCacheCapable: true})}
		},
		wantNode: "c",
	}, {
		name: "an extender managing a resource the pod does not ask for is not called",
		extenders: func(t *testing.T) []*extender.Extender {
			url := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": failing})
			return []*extender.Extender{newExtender(t, extender.Config{URLPrefix: url, FilterVerb: "filter", ManagedResources: []extender.ManagedResource{{Name: "example.com/gpu"}}})}
		},
		wantNode: "any",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestScheduler(t, 100, threeNodes()...)
			s.extenders = tc.extenders(t)
			node, err := s.scheduleForTest(pod)
			switch {
			case tc.wantErr != "":
				var fe *FitError
				if err == nil || errors.As(err, &fe) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", node, err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantNode != "any" && node != tc.wantNode:
				t.Errorf("placed on %q, want %q", node, tc.wantNode)
			}
		})
	}
}

// An extender that refuses every node the plugins passed makes a FitError
// naming it, with its reasons, whose pod every event retries; its plain
// refusals are preemption candidates.
func TestExtenderRejectionIsAFitError(t *testing.T) {
	url := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": passOnly("none")})
	s := newTestScheduler(t, 100, threeNodes()...)
	s.extenders = []*extender.Extender{newExtender(t, extender.Config{URLPrefix: url, FilterVerb: "filter", NodeCacheCapable: true})}
	pod := frameworktest.MakePod().Namespace("ns").Name("p").SchedulerName("yardmaster").Req("100m", "").Obj()
	_, err := s.scheduleForTest(pod)
	var fe *FitError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a FitError", err)
	}
	if want := "0/3 nodes are available: 3 extender says no."; !strings.HasPrefix(fe.Error(), want) {
		t.Errorf("message %q, want it to start with %q", fe.Error(), want)
	}
	if !fe.Plugins.Has(ExtenderName) || fe.Unresolvable || len(fe.candidates) != 3 {
		t.Errorf("plugins %v, unresolvable %v, %d candidates; want %s named, resolvable, 3", fe.Plugins, fe.Unresolvable, len(fe.candidates), ExtenderName)
	}
}

// A profile without score plugins, and without extenders that filter or
// score, takes the first feasible node found, as kube-scheduler does;
// one that filters makes the cycle look for more.
func TestNoScoringFindsOneNode(t *testing.T) {
	p := registry.DefaultProfile("yardmaster")
	p.Score, p.PreScore = nil, nil
	s, err := New(Options{Registry: registry.NewInTree(), Profiles: []framework.Profile{p}, PercentageOfNodesToScore: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range threeNodes() {
		s.Cache.AddNode(n)
	}
	pod := frameworktest.MakePod().Namespace("ns").Name("p").SchedulerName("yardmaster").Req("100m", "").Obj()
	s.Cache.UpdateSnapshot(s.snapshot)
	res, err := s.schedulePod(context.Background(), s.profiles["yardmaster"], framework.NewCycleState(), pod)
	if err != nil || res.feasible != 1 {
		t.Fatalf("got %+v, %v; want one feasible node", res, err)
	}
	url := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": passOnly("c")})
	s.extenders = []*extender.Extender{newExtender(t, extender.Config{URLPrefix: url, FilterVerb: "filter", NodeCacheCapable: true})}
	for range 3 {
		res, err := s.schedulePod(context.Background(), s.profiles["yardmaster"], framework.NewCycleState(), pod)
		if err != nil || res.node != "c" {
			t.Fatalf("with a filtering extender: %+v, %v; want node c", res, err)
		}
	}
}

// An explanation calls no extender: it names those that would have been
// asked, and its verdicts are the plugins'.
func TestExplainNamesExtendersWithoutCallingThem(t *testing.T) {
	called := false
	url := extenderServer(t, map[string]func(extenderv1.ExtenderArgs) (any, int){"filter": func(extenderv1.ExtenderArgs) (any, int) {
		called = true
		return nil, http.StatusInternalServerError
	}})
	s := newTestScheduler(t, 100, threeNodes()...)
	s.extenders = []*extender.Extender{
		newExtender(t, extender.Config{URLPrefix: url, FilterVerb: "filter"}),
		newExtender(t, extender.Config{URLPrefix: url + "/gpu", FilterVerb: "filter", ManagedResources: []extender.ManagedResource{{Name: "example.com/gpu"}}}),
		newExtender(t, extender.Config{URLPrefix: url + "/bind", BindVerb: "bind"}),
	}
	pod := frameworktest.MakePod().Namespace("ns").Name("p").SchedulerName("yardmaster").Req("100m", "").Obj()
	e, err := s.Explain(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if called {
		t.Error("the explanation called an extender")
	}
	if len(e.NotConsulted) != 1 || e.NotConsulted[0] != url || len(e.Best) != 3 {
		t.Errorf("not consulted %v, best %v; want only %s named (the others do not filter this pod) and every node best", e.NotConsulted, e.Best, url)
	}
}
