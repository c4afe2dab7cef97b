package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// A proxy that forwards every Binding to the API server and answers 429
// all the same (a throttle that counts the request after it passed it
// on): each attempt looks refused to yardmaster, yet the first was
// committed on the node yardmaster chose. That is a success like any
// other: the pod bound once, a Scheduled event, counted scheduled, and no
// FailedScheduling event.
func TestBindingCommittedButAnswered429(t *testing.T) {
	e := newEnv(t)
	e.addNode(e.node("only").Capacity("2", "4Gi", 110))
	// The fault proxy's TLS transport and passthrough, without its faults
	// (no resource to fail, watches not cut): this handler makes its own.
	p := newFaultProxy(t, e.plane, nil)
	var bindings atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bindingPod(r) == "" {
			p.rp.ServeHTTP(w, r)
			return
		}
		bindings.Add(1)
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = p.upstream.Scheme, p.upstream.Host, "", ""
		resp, err := p.rt.RoundTrip(out)
		if err != nil {
			hijackAndClose(w)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		p.noteBinding(r, resp.StatusCode)
		writeStatus(w, apierrors.NewTooManyRequests("too many requests in flight", 0))
	}))
	t.Cleanup(srv.Close)
	d := e.startScheduler(func(o *app.Options) {
		o.RESTConfig = &rest.Config{Host: srv.URL, BearerToken: e.plane.AdminToken, QPS: 500, Burst: 1000}
		o.HTTPBindAddress = "127.0.0.1:0"
	})

	e.createPod(e.pod("p").Req("100m", "64Mi"))
	if got := e.waitBound(30*time.Second, "p")["p"]; got != e.ns+"-only" {
		t.Errorf("p bound to %q, want %q", got, e.ns+"-only")
	}
	e.waitEvent("p", "Scheduled", "Successfully assigned "+e.ns+"/p to "+e.ns+"-only")
	s := e.waitMetrics(endpoint(d.HTTPAddr()), 10*time.Second, "the pod counted scheduled", func(s scraped) bool {
		return s.value("scheduler_schedule_attempts_total", "result=scheduled", "profile="+e.scheduler) == 1
	})
	if got := s.value("scheduler_schedule_attempts_total", "result=error", "profile="+e.scheduler); got != 0 {
		t.Errorf("%v error attempts, want 0", got)
	}
	if n := d.Scheduler.Scheduled(); n != 1 {
		t.Errorf("%d pods scheduled, want 1", n)
	}
	// Every attempt was answered 429 and only the first committed.
	if got := bindings.Load(); got != binder.DefaultMaxAttempts {
		t.Errorf("%d Bindings posted, want %d", got, binder.DefaultMaxAttempts)
	}
	p.mu.Lock()
	committed := len(p.committed[e.ns+"/p"])
	p.mu.Unlock()
	if committed != 1 {
		t.Errorf("%d Bindings committed, want 1", committed)
	}
	evs, err := e.client.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=p,reason=FailedScheduling"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		t.Errorf("FailedScheduling event for a pod that was bound: %q", ev.Message)
	}
}
