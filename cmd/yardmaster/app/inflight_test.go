package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestLimitInFlight: no more than n requests are in flight at once, every
// request is answered, and watches, which stay open, hold no slot.
func TestLimitInFlight(t *testing.T) {
	const n = 4
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if now <= p || peak.CompareAndSwap(p, now) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}})
	}))
	defer srv.Close()
	defer close(release)

	client, err := kubernetes.NewForConfig(limitInFlight(&rest.Config{Host: srv.URL, QPS: -1}, n))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// More watches than slots: each holds its connection open.
	for range n + 2 {
		w, err := client.CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Go(func() {
			if _, err := client.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("get: %v", err)
	}
	if p := peak.Load(); p > n || p < 2 {
		t.Errorf("peak requests in flight = %d, want 2..%d", p, n)
	}

	// A request whose context ends while it waits for a slot fails with
	// the context's error.
	blocked := limitInFlight(&rest.Config{Host: srv.URL, QPS: -1}, 1)
	bc, err := kubernetes.NewForConfig(blocked)
	if err != nil {
		t.Fatal(err)
	}
	hold, err := bc.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/ns/pods/p").Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if _, err := bc.CoreV1().Pods("ns").Get(short, "p", metav1.GetOptions{}); err == nil {
		t.Error("a request got a slot another held")
	}
	_ = hold.Close()
	if _, err := bc.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Errorf("after the slot was freed: %v", err)
	}
}
