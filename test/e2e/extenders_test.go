package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// testExtender is an HTTP extender served on loopback, as a platform team
// would run one beside the scheduler. Two extenders share it, by prefix:
//
//   - /main (node-cache-capable, weight 5): filters out node a as
//     unresolvable and node b as busy (every node for a pod labelled
//     deny=all), scores d 10 and c 2, and binds the pods itself through
//     the API;
//   - /gpu (sent Node objects, manages example.com/gpu, which
//     NodeResourcesFit then ignores): passes node c only.
//
// It records which verbs each pod was sent.
type testExtender struct {
	e     *env
	srv   *httptest.Server
	mu    sync.Mutex
	calls map[string]map[string]bool // pod → "prefix/verb"
}

func newTestExtender(e *env) *testExtender {
	x := &testExtender{e: e, calls: map[string]map[string]bool{}}
	x.srv = httptest.NewServer(http.HandlerFunc(x.serve))
	e.t.Cleanup(x.srv.Close)
	return x
}

// config is the extenders' part of a KubeSchedulerConfiguration.
func (x *testExtender) config() string {
	return fmt.Sprintf(`extenders:
- urlPrefix: %[1]s/main
  filterVerb: filter
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 5
  nodeCacheCapable: true
- urlPrefix: %[1]s/gpu
  filterVerb: filter
  managedResources:
  - name: example.com/gpu
    ignoredByScheduler: true
`, x.srv.URL)
}

func (x *testExtender) record(pod, call string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.calls[pod] == nil {
		x.calls[pod] = map[string]bool{}
	}
	x.calls[pod][call] = true
}

// verbs returns the calls made for pod, sorted.
func (x *testExtender) verbs(pod string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []string
	for c := range x.calls[pod] {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// short is a node's name without the test's prefix.
func (x *testExtender) short(node string) string { return strings.TrimPrefix(node, x.e.ns+"-") }

func (x *testExtender) serve(w http.ResponseWriter, r *http.Request) {
	call := strings.TrimPrefix(r.URL.Path, "/")
	if call == "main/bind" {
		var args extenderv1.ExtenderBindingArgs
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		x.record(args.PodName, call)
		err := x.e.client.CoreV1().Pods(args.PodNamespace).Bind(r.Context(), &v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: args.PodName, UID: args.PodUID},
			Target:     v1.ObjectReference{Kind: "Node", Name: args.Node},
		}, metav1.CreateOptions{})
		res := extenderv1.ExtenderBindingResult{}
		if err != nil {
			res.Error = err.Error()
		}
		_ = json.NewEncoder(w).Encode(res)
		return
	}
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil || args.Pod == nil {
		http.Error(w, fmt.Sprintf("bad args: %v", err), http.StatusBadRequest)
		return
	}
	x.record(args.Pod.Name, call)
	var names []string
	switch {
	case args.NodeNames != nil:
		names = *args.NodeNames
	case args.Nodes != nil:
		for _, n := range args.Nodes.Items {
			names = append(names, n.Name)
		}
	}
	switch call {
	case "main/filter":
		if args.NodeNames == nil {
			http.Error(w, "main is node-cache-capable: want node names", http.StatusBadRequest)
			return
		}
		res := extenderv1.ExtenderFilterResult{NodeNames: &[]string{}, FailedNodes: extenderv1.FailedNodesMap{}, FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{}}
		for _, n := range names {
			switch {
			case x.short(n) == "a":
				res.FailedAndUnresolvableNodes[n] = "extender: node a is reserved"
			case x.short(n) == "b" || args.Pod.Labels["deny"] == "all":
				res.FailedNodes[n] = "extender: node busy"
			default:
				*res.NodeNames = append(*res.NodeNames, n)
			}
		}
		_ = json.NewEncoder(w).Encode(res)
	case "main/prioritize":
		list := extenderv1.HostPriorityList{}
		for _, n := range names {
			score := map[string]int64{"c": 2, "d": 10}[x.short(n)]
			list = append(list, extenderv1.HostPriority{Host: n, Score: score})
		}
		_ = json.NewEncoder(w).Encode(list)
	case "gpu/filter":
		if args.Nodes == nil {
			http.Error(w, "gpu is not node-cache-capable: want nodes", http.StatusBadRequest)
			return
		}
		res := extenderv1.ExtenderFilterResult{Nodes: &v1.NodeList{}, FailedNodes: extenderv1.FailedNodesMap{}}
		for _, n := range args.Nodes.Items {
			if x.short(n.Name) == "c" {
				res.Nodes.Items = append(res.Nodes.Items, n)
			} else {
				res.FailedNodes[n.Name] = "extender: no gpu here"
			}
		}
		_ = json.NewEncoder(w).Encode(res)
	default:
		http.NotFound(w, r)
	}
}

// servePreempt answers /pre/preempt: of the candidate nodes it is sent,
// with their victims, it keeps node b only, with the same victims.
func (x *testExtender) servePreempt(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderPreemptionArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil || args.Pod == nil || args.NodeNameToVictims == nil {
		http.Error(w, fmt.Sprintf("want a pod and victims (not node-cache-capable): %v", err), http.StatusBadRequest)
		return
	}
	res := extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{}}
	for node, v := range args.NodeNameToVictims {
		x.record(args.Pod.Name, "pre/preempt:"+x.short(node))
		if x.short(node) != "b" {
			continue
		}
		mv := &extenderv1.MetaVictims{NumPDBViolations: v.NumPDBViolations}
		for _, p := range v.Pods {
			mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
		}
		res.NodeNameToMetaVictims[node] = mv
	}
	_ = json.NewEncoder(w).Encode(res)
}

// A preempting extender narrows the candidates: of two nodes where a
// low-priority pod could make room, it keeps b, and both schedulers evict
// b's pod and place the preemptor there.
func TestExtenderPreemptionMatchesKubeScheduler(t *testing.T) {
	sideBySide(t, func(t *testing.T, kube bool) extenderOutcome {
		e := newEnv(t)
		e.priorityClass("low", 10)
		e.priorityClass("high", 1000)
		for _, n := range []string{"a", "b"} {
			e.addNode(e.node(n).Capacity("1", "2Gi", 110))
			w := e.pod("low-"+n).PriorityClassName(e.ns+"-low").Req("1", "")
			w.Spec.NodeName = e.ns + "-" + n
			w.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
			e.createPod(w)
		}
		x := &testExtender{e: e, calls: map[string]map[string]bool{}}
		x.srv = httptest.NewServer(http.HandlerFunc(x.servePreempt))
		t.Cleanup(x.srv.Close)
		top := fmt.Sprintf("extenders:\n- urlPrefix: %s/pre\n  preemptVerb: preempt\n", x.srv.URL)
		if kube {
			e.startKubeSchedulerWith(top)
		} else {
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			data := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + top
			if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			e.startScheduler(func(o *app.Options) { o.ConfigFile = cfg })
		}
		e.createPod(e.pod("high").PriorityClassName(e.ns+"-high").Req("1", ""))
		out := extenderOutcome{Nodes: map[string]string{}, Calls: map[string][]string{}}
		out.Nodes["high"] = x.short(e.waitBound(60*time.Second, "high")["high"])
		for _, n := range []string{"a", "b"} {
			_, err := e.client.CoreV1().Pods(e.ns).Get(e.ctx, "low-"+n, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				out.Calls["evicted"] = append(out.Calls["evicted"], "low-"+n)
			}
		}
		out.Calls["high"] = x.verbs("high")
		return out
	})
}

// extenderOutcome is what a scheduler did with the extenders.
type extenderOutcome struct {
	// Nodes maps each pod placed to its node, without the prefix.
	Nodes map[string]string
	// Calls are the extender verbs each pod was sent.
	Calls map[string][]string
	// Denied is the FailedScheduling message of the pod every node was
	// refused to, namespace left out.
	Denied string
}

// Through HTTP extenders on loopback, yardmaster does what kube-scheduler
// does: the first extender filters (unresolvable and plain refusals),
// scores and binds; the second, which manages an extended resource that
// NodeResourcesFit is told to ignore, sees only the pods that ask for it
// and filters what the first passed; a pod every node is refused to waits
// with the extenders' reasons.
func TestExtendersMatchKubeScheduler(t *testing.T) {
	sideBySide(t, func(t *testing.T, kube bool) extenderOutcome {
		e := newEnv(t)
		for _, n := range []string{"a", "b", "c", "d"} {
			e.addNode(e.node(n).Capacity("4", "8Gi", 110))
		}
		x := newTestExtender(e)
		if kube {
			e.startKubeSchedulerWith(x.config())
		} else {
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			data := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + x.config()
			if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			e.startScheduler(func(o *app.Options) { o.ConfigFile = cfg })
		}
		gpu := e.pod("gpu").Req("100m", "64Mi").Obj()
		gpu.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1")
		gpu.Spec.Containers[0].Resources.Limits = v1.ResourceList{"example.com/gpu": resource.MustParse("1")}
		e.createPod(e.pod("plain").Req("100m", "64Mi"))
		if _, err := e.client.CoreV1().Pods(e.ns).Create(e.ctx, gpu, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.createPod(e.pod("denied").Req("100m", "64Mi").Label("deny", "all"))

		out := extenderOutcome{Nodes: map[string]string{}, Calls: map[string][]string{}}
		for pod, node := range e.waitBound(60*time.Second, "plain", "gpu") {
			out.Nodes[pod] = x.short(node)
		}
		msg := e.waitFailedScheduling("denied", "extender")
		out.Denied = strings.ReplaceAll(msg, e.ns+"/", "")
		e.expectPending("denied", time.Second)
		for _, pod := range []string{"plain", "gpu", "denied"} {
			out.Calls[pod] = x.verbs(pod)
		}
		return out
	})
}
