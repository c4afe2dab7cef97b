package scheduler

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// The parts of a shutdown, each bounded, fit in the termination grace
// period the Deployment gives (TerminationGracePeriod's comment).
func TestShutdownFitsTheGracePeriod(t *testing.T) {
	// cmd/yardmaster's and internal/server's, after Run.
	const eventFlush, httpShutdown = 5 * time.Second, 5 * time.Second
	total := DefaultBindGracePeriod + binder.StatusDrainTimeout + config.DefaultRenewDeadline + eventFlush + httpShutdown
	if total >= TerminationGracePeriod {
		t.Errorf("a shutdown may take %v, not within the %v grace period", total, TerminationGracePeriod)
	}
}

// Run returns within the bind grace period (and a little) after its
// context ends, even when the API server answers no Binding and more
// pods were placed than the bind workers' queue holds: the scheduling
// loop must not wait on a full queue.
func TestShutdownIsBoundedWhenTheAPIHangs(t *testing.T) {
	var bindings atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/binding") {
			bindings.Add(1)
		}
		// Read the body, or the server would not notice the client
		// giving up.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done() // hung
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: 1e6, Burst: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	defer client.CoreV1().RESTClient().(*rest.RESTClient).Client.CloseIdleConnections()
	const grace = 500 * time.Millisecond
	s, err := New(Options{
		Client:          client,
		Binder:          binder.New(client, nil, nil),
		Registry:        registry.NewInTree(),
		Profiles:        []framework.Profile{registry.DefaultProfile("yardmaster")},
		BindGracePeriod: grace,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Cache.AddNode(frameworktest.MakeNode().Name("n1").Capacity("1000", "1000Gi", 5000).Obj())
	pods := bindWorkers + bindQueueSize + 100
	for i := range pods {
		s.Queue.Add(frameworktest.MakePod().Name(fmt.Sprintf("p%d", i)).Req("10m", "").Obj())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	poll(t, "a full bind queue", func() bool { return len(s.bindJobs) == bindQueueSize })
	began := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(grace + 20*time.Second):
		s.Abort()
		<-done
		t.Fatalf("Run did not return within %v of its context's end", grace+20*time.Second)
	}
	if took := time.Since(began); took > grace+3*time.Second {
		t.Errorf("Run returned %v after its context ended, want about %v", took, grace)
	}
	s.binder.Wait()
	if _, _, assumed := s.Cache.Counts(); assumed != 0 {
		t.Errorf("%d pods still assumed after the aborted Bindings", assumed)
	}
}

// A pod that leaves our hands behind the scheduler's back (bound by
// another scheduler, handed to one, deleted while bound) leaves nothing
// in the scheduler's or the binder's per-pod memory.
func TestPerPodStateForgotten(t *testing.T) {
	nominated := func(uid string) *v1.Pod {
		p := frameworktest.MakePod().Name("p-"+uid).UID(uid).Req("100m", "").Obj()
		p.ResourceVersion = "1"
		p.Status.NominatedNodeName = "n1"
		return p
	}
	tests := []struct {
		name  string
		leave func(s *Scheduler, p *v1.Pod)
	}{{
		name: "bound by another scheduler",
		leave: func(s *Scheduler, p *v1.Pod) {
			b := p.DeepCopy()
			b.ResourceVersion, b.Spec.NodeName, b.Status.NominatedNodeName = "2", "n1", ""
			s.updatePod(p, b)
		},
	}, {
		name: "handed to another scheduler",
		leave: func(s *Scheduler, p *v1.Pod) {
			o := p.DeepCopy()
			o.ResourceVersion, o.Spec.SchedulerName = "2", "other"
			s.updatePod(p, o)
		},
	}, {
		name: "seen bound only when deleted (a relist)",
		leave: func(s *Scheduler, p *v1.Pod) {
			b := p.DeepCopy()
			b.Spec.NodeName = "n1"
			s.deletePod(b)
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Options{
				Binder:   binder.New(fake.NewClientset(), nil, nil),
				Registry: registry.NewInTree(),
				Profiles: []framework.Profile{registry.DefaultProfile("yardmaster")},
			})
			if err != nil {
				t.Fatal(err)
			}
			s.Cache.AddNode(frameworktest.MakeNode().Name("n1").Capacity("4", "8Gi", 110).Obj())
			p := nominated("a")
			s.addPod(p)
			// What a failed attempt leaves: the message written.
			s.binder.RecordFailure(context.Background(), p, v1.PodReasonUnschedulable, "0/1 nodes are available", true)
			s.binder.Wait()
			tc.leave(s, p)
			if n := s.binder.Tracked(); n != 0 {
				t.Errorf("the binder remembers %d pods, want none", n)
			}
			left := s.nominations.len()
			if left != 0 {
				t.Errorf("%d nominations kept, want none", left)
			}
		})
	}
}
