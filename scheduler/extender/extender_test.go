package extender

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

func nodes(names ...string) []*v1.Node {
	out := make([]*v1.Node, len(names))
	for i, n := range names {
		out[i] = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	return out
}

func podWith(init bool, res v1.ResourceName, limitOnly bool) *v1.Pod {
	c := v1.Container{Name: "c"}
	q := v1.ResourceList{res: resource.MustParse("1")}
	if limitOnly {
		c.Resources.Limits = q
	} else {
		c.Resources.Requests = q
	}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	if init {
		p.Spec.InitContainers = []v1.Container{c}
	} else {
		p.Spec.Containers = []v1.Container{c}
	}
	return p
}

func TestIsInterested(t *testing.T) {
	all, err := New(Config{URLPrefix: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := New(Config{URLPrefix: "http://127.0.0.1:1", ManagedResources: []ManagedResource{{Name: "example.com/gpu"}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		all, gpu bool
	}{
		{"requests it", podWith(false, "example.com/gpu", false), true, true},
		{"limits it only", podWith(false, "example.com/gpu", true), true, true},
		{"an init container requests it", podWith(true, "example.com/gpu", false), true, true},
		{"requests something else", podWith(false, v1.ResourceCPU, false), true, false},
	}
	for _, tc := range tests {
		if got := all.IsInterested(tc.pod); got != tc.all {
			t.Errorf("%s: an extender managing nothing: interested %v, want %v", tc.name, got, tc.all)
		}
		if got := gpu.IsInterested(tc.pod); got != tc.gpu {
			t.Errorf("%s: an extender managing example.com/gpu: interested %v, want %v", tc.name, got, tc.gpu)
		}
	}
}

// Scores are score × weight × 10, a host listed twice counting twice, over
// HTTPS checked against the CA given in tlsConfig.
func TestPrioritizeOverHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/x/prioritize" || r.Header.Get("Content-Type") != "application/json" {
			http.NotFound(w, r)
			return
		}
		var args extenderv1.ExtenderArgs
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil || args.Nodes == nil || len(args.Nodes.Items) != 2 {
			http.Error(w, "want two nodes", http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(extenderv1.HostPriorityList{{Host: "a", Score: 3}, {Host: "b", Score: 10}, {Host: "a", Score: 1}})
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	e, err := New(Config{URLPrefix: srv.URL + "/x/", PrioritizeVerb: "prioritize", Weight: 2, EnableHTTPS: true, TLS: &TLSConfig{CAData: ca, ServerName: "example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Prioritize(context.Background(), podWith(false, v1.ResourceCPU, false), nodes("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if got["a"] != 80 || got["b"] != 200 || len(got) != 2 {
		t.Errorf("scores %v, want a 80, b 200", got)
	}

	// Without the CA the server is not trusted.
	strict, err := New(Config{URLPrefix: srv.URL + "/x", PrioritizeVerb: "prioritize", Weight: 1, TLS: &TLSConfig{ServerName: "example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.Prioritize(context.Background(), nil, nodes("a", "b")); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
}

// A call that outlasts httpTimeout fails; so does an answer other than
// 200.
func TestSendFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow/filter" {
			select {
			case <-time.After(time.Second):
			case <-r.Context().Done():
			}
			return
		}
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	slow, err := New(Config{URLPrefix: srv.URL + "/slow", FilterVerb: "filter", HTTPTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slow.Filter(context.Background(), podWith(false, v1.ResourceCPU, false), nodes("a")); err == nil {
		t.Error("a call past httpTimeout succeeded")
	}
	down, err := New(Config{URLPrefix: srv.URL + "/down", BindVerb: "bind"})
	if err != nil {
		t.Fatal(err)
	}
	if err := down.Bind(context.Background(), podWith(false, v1.ResourceCPU, false), "a"); err == nil || !strings.Contains(err.Error(), "code 503") {
		t.Errorf("bind answered 503: %v, want an error naming the code", err)
	}
}
