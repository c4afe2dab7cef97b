package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// writeFault is what faultProxy does with a write it fails.
type writeFault int

// The faults, in the order the proxy cycles through them, one write of a
// kind in two; the others go through untouched.
const (
	// Answered by the proxy, never forwarded.
	fault500 writeFault = iota
	fault503
	fault429
	fault404         // a proxy's 404: the object is there all the same
	faultResetBefore // the connection reset before the request went on
	// Forwarded.
	faultResetAfter // committed by the API server, the answer lost
	faultLatency    // 5 s late, then forwarded
	numFaults
)

var faultNames = [numFaults]string{"500", "503", "429", "404", "reset before", "reset after commit", "5 s latency"}

// apiRequest is what a request's path names: the resource (with its
// subresource after a slash, "pods/binding"), the namespace and the
// object's name ("" for a collection).
type apiRequest struct {
	resource, namespace, name string
}

// parseAPIPath reads /api/v1/... and /apis/<group>/<version>/... paths.
func parseAPIPath(path string) (apiRequest, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return apiRequest{}, false
	}
	var r apiRequest
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		r.namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		r.resource = parts[0]
	case 2:
		r.resource, r.name = parts[0], parts[1]
	case 3:
		r.resource, r.name = parts[0]+"/"+parts[2], parts[1]
	default:
		return apiRequest{}, false
	}
	return r, true
}

// bindingWrites are the resources of the Bindings, for faultProxy.
var bindingWrites = []string{"pods/binding"}

// faultProxy is a reverse proxy on loopback between yardmaster and the API
// server with the faults of a bad week, on the writes (POST, PUT, PATCH)
// of the resources it is given: answered 500, 503 or 429 (never
// forwarded), a 404 made by the proxy, connections reset before the
// request went on or after the API server committed it, 5 s of latency;
// and every watch cut after 2 to 5 s. Each resource has its own turn of
// faults, so that each meets every one. It records when the API server
// committed each pod's Binding.
type faultProxy struct {
	t        *testing.T
	srv      *httptest.Server
	upstream *url.URL
	rt       http.RoundTripper
	rp       *httputil.ReverseProxy

	// writes are the proxy's counts of the writes it fails, by resource.
	writes map[string]*writeCounts
	cuts   atomic.Int64

	mu sync.Mutex
	// committed holds the times the proxy saw the API server accept a
	// Binding, by "namespace/pod".
	committed map[string][]time.Time
}

// writeCounts are the writes of a resource the proxy saw, and the faults
// it injected into them.
type writeCounts struct {
	seen     atomic.Int64
	injected [numFaults]atomic.Int64
}

// newFaultProxy starts a proxy in front of plane that fails the writes of
// resources ("pods/binding", "persistentvolumes", "resourceclaims/status").
func newFaultProxy(t *testing.T, plane *controlplane.ControlPlane, resources []string) *faultProxy {
	t.Helper()
	upstream, err := url.Parse(plane.APIServerURL)
	if err != nil {
		t.Fatal(err)
	}
	// The API server's TLS, without credentials: the proxy forwards the
	// scheduler's own bearer token.
	cfg := plane.RESTConfig("")
	rt, err := rest.TransportFor(&rest.Config{Host: cfg.Host, TLSClientConfig: cfg.TLSClientConfig})
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, upstream: upstream, rt: rt, writes: map[string]*writeCounts{}, committed: map[string][]time.Time{}}
	for _, r := range resources {
		p.writes[r] = &writeCounts{}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		Transport:     rt,
		FlushInterval: -1, // watches stream
		ModifyResponse: func(resp *http.Response) error {
			p.noteBinding(resp.Request, resp.StatusCode)
			return nil
		},
		ErrorLog: nil,
	}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// restConfig is a client configuration of token through the proxy.
func (p *faultProxy) restConfig(token string) *rest.Config {
	return &rest.Config{Host: p.srv.URL, BearerToken: token, QPS: 500, Burst: 1000}
}

// report logs what the proxy did and fails the test for each fault no
// write met, and (when each is set) for each resource whose writes met
// no fault: a test through faults that met none proves nothing.
func (p *faultProxy) report(each bool) {
	t := p.t
	t.Helper()
	resources := sortedKeys(p.writes)
	var total [numFaults]int64
	for _, r := range resources {
		w := p.writes[r]
		var line []string
		met := int64(0)
		for f := range numFaults {
			n := w.injected[f].Load()
			total[f] += n
			met += n
			line = append(line, fmt.Sprintf("%s %d", faultNames[f], n))
		}
		t.Logf("%-24s %4d writes: %s", r, w.seen.Load(), strings.Join(line, ", "))
		if each && met == 0 {
			t.Errorf("no write of %s met a fault", r)
		}
	}
	t.Logf("%d watches cut", p.cuts.Load())
	for f := range numFaults {
		if total[f] == 0 {
			t.Errorf("no write met the fault %q", faultNames[f])
		}
	}
}

// faulted returns the counts of r's resource when r is a write the
// proxy fails.
func (p *faultProxy) faulted(r *http.Request) (apiRequest, *writeCounts) {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return apiRequest{}, nil
	}
	req, ok := parseAPIPath(r.URL.Path)
	if !ok {
		return apiRequest{}, nil
	}
	return req, p.writes[req.resource]
}

// bindingPod returns "namespace/pod" of a Binding request, or "".
func bindingPod(r *http.Request) string {
	if r.Method != http.MethodPost {
		return ""
	}
	if req, ok := parseAPIPath(r.URL.Path); ok && req.resource == "pods/binding" {
		return req.namespace + "/" + req.name
	}
	return ""
}

// noteBinding records a Binding the API server accepted.
func (p *faultProxy) noteBinding(r *http.Request, code int) {
	if pod := bindingPod(r); pod != "" && code >= 200 && code < 300 {
		p.mu.Lock()
		p.committed[pod] = append(p.committed[pod], time.Now())
		p.mu.Unlock()
	}
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if req, counts := p.faulted(r); counts != nil {
		if n := counts.seen.Add(1); n%2 == 0 {
			f := writeFault((n / 2) % int64(numFaults))
			counts.injected[f].Add(1)
			p.writeFault(f, req, w, r)
			return
		}
	}
	if q := r.URL.Query().Get("watch"); q == "true" || q == "1" {
		// Cut the watch after 2 to 5 s: the client sees its stream end
		// and watches again from where it was.
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second+rand.N(3*time.Second))
		defer cancel()
		defer func() {
			if ctx.Err() == context.DeadlineExceeded {
				p.cuts.Add(1)
			}
		}()
		r = r.WithContext(ctx)
	}
	p.rp.ServeHTTP(w, r)
}

func (p *faultProxy) writeFault(f writeFault, req apiRequest, w http.ResponseWriter, r *http.Request) {
	switch f {
	case fault500:
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("etcdserver: request timed out")))
	case fault503:
		writeStatus(w, apierrors.NewServiceUnavailable("the proxy has no healthy upstream"))
	case fault429:
		writeStatus(w, apierrors.NewTooManyRequests("too many requests in flight", 0))
	case fault404:
		// As an API server behind a misrouting proxy would answer; a
		// plain-text 404 would be retried as an unexpected answer.
		resource, _, _ := strings.Cut(req.resource, "/")
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, req.name))
	case faultResetBefore:
		hijackAndClose(w)
	case faultResetAfter:
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = p.upstream.Scheme, p.upstream.Host, "", ""
		resp, err := p.rt.RoundTrip(out)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			p.noteBinding(r, resp.StatusCode)
		}
		hijackAndClose(w)
	case faultLatency:
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
			return
		}
		p.rp.ServeHTTP(w, r)
	}
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(&st)
}

// hijackAndClose drops the client's connection without an answer.
func hijackAndClose(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// Through a proxy that fails Bindings in every way a network and an
// overloaded API server can (and cuts every watch every few seconds), a
// backlog that fills its nodes exactly is bound: every pod once, no node
// overcommitted, one Scheduled event per pod, and no FailedScheduling
// event written after its pod's Binding was committed.
func TestBindingsThroughFaults(t *testing.T) {
	e := newEnv(t)
	const nodes, perNode = 12, 20
	for i := range nodes {
		e.addNode(e.node(fmt.Sprintf("n%02d", i)).Capacity("2", "4Gi", 110))
	}
	proxy := newFaultProxy(t, e.plane, bindingWrites)
	_, stop := e.runScheduler(func(o *app.Options) { o.RESTConfig = proxy.restConfig(e.plane.AdminToken) })
	defer func() { _ = stop() }()
	for i := range nodes * perNode {
		e.createPod(e.pod(fmt.Sprintf("p-%03d", i)).Req("100m", "64Mi"))
	}
	e.waitAllBound(3*time.Minute, nodes*perNode)
	if err := stop(); err != nil {
		t.Errorf("scheduler exited: %v", err)
	}
	proxy.report(true)

	e.assertNoOvercommit()
	pods, err := e.client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	for _, p := range pods.Items {
		if got := len(proxy.committed[e.ns+"/"+p.Name]); got != 1 {
			t.Errorf("pod %s: %d Bindings committed, want 1", p.Name, got)
		}
	}
	evs, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := map[string]int{}
	failed := 0
	for _, ev := range evs.Items {
		pod := ev.InvolvedObject.Name
		switch ev.Reason {
		case "Scheduled":
			scheduled[pod]++
		case "FailedScheduling":
			failed++
			at := ev.EventTime.Time
			if ev.Series != nil && ev.Series.LastObservedTime.After(at) {
				at = ev.Series.LastObservedTime.Time
			}
			if c := proxy.committed[e.ns+"/"+pod]; len(c) > 0 && at.After(c[0]) {
				t.Errorf("FailedScheduling event for %s at %v, after its Binding was committed at %v: %q",
					pod, at.Format(time.StampMicro), c[0].Format(time.StampMicro), ev.Message)
			}
		}
	}
	t.Logf("%d FailedScheduling events (for Bindings that really failed)", failed)
	for _, p := range pods.Items {
		if n := scheduled[p.Name]; n != 1 {
			t.Errorf("pod %s: %d Scheduled events, want 1", p.Name, n)
		}
	}
}

// A pod refused by 40 nodes with distinct long taints gets its
// FailedScheduling event: a message naming every taint would pass the
// API's 1,024 bytes for a note, and the API server would refuse the event.
func TestFailedSchedulingEventWithManyTaints(t *testing.T) {
	e := newEnv(t)
	for i := range 40 {
		key := fmt.Sprintf("example.com/reserved-for-the-team-that-runs-the-batch-workload-%02d", i)
		value := fmt.Sprintf("a-value-long-enough-to-make-the-message-overflow-the-limit-%02d", i)
		e.addNode(e.node(fmt.Sprintf("t%02d", i)).Capacity("2", "4Gi", 110).Taint(key, value, "NoSchedule"))
	}
	e.startScheduler()
	e.createPod(e.pod("p").Req("100m", "64Mi"))
	e.waitFailedScheduling("p", "0/40 nodes are available: 40 node(s) had untolerated taint(s).")
	if msg := e.waitUnschedulableCondition("p"); !strings.HasPrefix(msg, "0/40 nodes are available: 40 node(s) had untolerated taint(s).") {
		t.Errorf("PodScheduled message %q", msg)
	}
}
