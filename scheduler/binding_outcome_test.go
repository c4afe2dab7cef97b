package scheduler

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/queue"
)

var podsResource = schema.GroupResource{Resource: "pods"}

// connReset is how a Binding whose connection was cut fails.
var connReset = &url.Error{Op: "Post", URL: "https://apiserver/api/v1/namespaces/ns/pods/p/binding", Err: syscall.ECONNRESET}

// commitTo makes the fake API server bind the test's pod to node, as a
// committed Binding (or another scheduler's) would.
func (bt *bindingTest) commitTo(node string) {
	bt.t.Helper()
	p := bt.pod.DeepCopy()
	p.Spec.NodeName = node
	p.ResourceVersion = "2"
	if err := bt.client.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), p, p.Namespace); err != nil {
		bt.t.Fatal(err)
	}
}

// boundTo is the test's pod as the informer shows it once bound to node.
func (bt *bindingTest) boundTo(node string) *v1.Pod {
	p := bt.pod.DeepCopy()
	p.Spec.NodeName = node
	p.ResourceVersion = "2"
	return p
}

// waitForOutcomeWaiter waits until the binding cycle waits for its pod's
// outcome.
func (bt *bindingTest) waitForOutcomeWaiter() {
	bt.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for bt.s.outcomes.waiting.Load() == 0 {
		if time.Now().After(deadline) {
			bt.t.Fatal("the binding cycle does not wait for its outcome")
		}
		time.Sleep(time.Millisecond)
	}
}

// stepPastOutcomeWait lets the waiting binding cycle ask the API server.
func (bt *bindingTest) stepPastOutcomeWait() {
	bt.t.Helper()
	bt.waitForOutcomeWaiter()
	for !bt.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	bt.clock.Step(bindOutcomeWait)
}

// events returns the events written, "Type Reason note".
func (bt *bindingTest) written() []string {
	var out []string
	for {
		select {
		case e := <-bt.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A Binding that failed in a way that may hide a success is settled by
// what the pod shows: bound to our node is success, bound elsewhere or
// gone is dropped, still pending is a failure. No capacity a committed
// Binding holds is given back, and no FailedScheduling event is written
// for a pod that is bound.
func TestBindingOutcomeUnknown(t *testing.T) {
	bindAndPost := []string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind", "B.PreBind"}
	tests := []struct {
		name string
		// onBind answers the Binding; bt is the test.
		onBind func(bt *bindingTest) func(*v1.Binding) error
		// after runs while the binding cycle waits for its outcome.
		after     func(bt *bindingTest)
		calls     []string
		scheduled int64
		// loc is where the pod is in the queue afterwards.
		loc queue.Location
		// wantEvent is the start of the one event the pod gets, if any.
		wantEvent string
		// wantOnNode is the node the cache holds the pod on, if any.
		wantOnNode string
	}{{
		name: "committed, answer lost, the retry gets 409; the informer shows it bound",
		onBind: func(bt *bindingTest) func(*v1.Binding) error {
			calls := 0
			return func(b *v1.Binding) error {
				if calls++; calls == 1 {
					bt.commitTo(b.Target.Name)
					return connReset
				}
				return apierrors.NewConflict(podsResource, "p", errors.New(`pod p is already assigned to node "n1"`))
			}
		},
		after: func(bt *bindingTest) {
			bt.waitForOutcomeWaiter()
			bt.s.updatePod(bt.pod, bt.boundTo("n1"))
		},
		calls:      append(bindAndPost, "A.PostBind", "B.PostBind"),
		scheduled:  1,
		wantEvent:  "Normal Scheduled Successfully assigned ns/p to n1",
		wantOnNode: "n1",
	}, {
		name: "committed, answer lost; the informer is silent, the API server tells",
		onBind: func(bt *bindingTest) func(*v1.Binding) error {
			calls := 0
			return func(b *v1.Binding) error {
				if calls++; calls == 1 {
					bt.commitTo(b.Target.Name)
					return apierrors.NewTimeoutError("the server was unable to return a response in the time allotted", 1)
				}
				return apierrors.NewConflict(podsResource, "p", errors.New(`pod p is already assigned to node "n1"`))
			}
		},
		after:      (*bindingTest).stepPastOutcomeWait,
		calls:      append(bindAndPost, "A.PostBind", "B.PostBind"),
		scheduled:  1,
		wantEvent:  "Normal Scheduled Successfully assigned ns/p to n1",
		wantOnNode: "n1",
	}, {
		name: "a proxy's 404: the pod is still there and pending",
		onBind: func(bt *bindingTest) func(*v1.Binding) error {
			return func(*v1.Binding) error { return apierrors.NewNotFound(podsResource, "p") }
		},
		after:     (*bindingTest).stepPastOutcomeWait,
		calls:     append(bindAndPost, unreserveBoth...),
		loc:       queue.BackoffQ,
		wantEvent: `Warning FailedScheduling running Bind plugin "DefaultBinder"`,
	}, {
		name: "404: the pod was deleted",
		onBind: func(bt *bindingTest) func(*v1.Binding) error {
			return func(*v1.Binding) error {
				if err := bt.client.Tracker().Delete(v1.SchemeGroupVersion.WithResource("pods"), "ns", "p"); err != nil {
					bt.t.Error(err)
				}
				return apierrors.NewNotFound(podsResource, "p")
			}
		},
		after: func(bt *bindingTest) {
			bt.waitForOutcomeWaiter()
			bt.s.deletePod(bt.pod)
		},
		calls: append(bindAndPost, unreserveBoth...),
	}, {
		name: "409: another scheduler bound it elsewhere",
		onBind: func(bt *bindingTest) func(*v1.Binding) error {
			return func(*v1.Binding) error {
				bt.commitTo("n2")
				return apierrors.NewConflict(podsResource, "p", errors.New(`pod p is already assigned to node "n2"`))
			}
		},
		after: func(bt *bindingTest) {
			bt.waitForOutcomeWaiter()
			bt.s.updatePod(bt.pod, bt.boundTo("n2"))
		},
		calls:      append(bindAndPost, unreserveBoth...),
		wantOnNode: "n2",
	}, {
		name: "recreated under its name meanwhile",
		onBind: func(bt *bindingTest) func(*v1.Binding) error {
			return func(*v1.Binding) error {
				return apierrors.NewConflict(podsResource, "p", errors.New("Precondition failed: UID in precondition: p-uid, UID in object meta: p-uid-2"))
			}
		},
		after: func(bt *bindingTest) {
			bt.waitForOutcomeWaiter()
			again := bt.pod.DeepCopy()
			again.UID, again.ResourceVersion = "p-uid-2", "3"
			bt.s.updatePod(bt.pod, again)
		},
		calls: append(bindAndPost, unreserveBoth...),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bt := newBindingTest(t, nil)
			bt.onBind = tc.onBind(bt)
			bt.run(func() { tc.after(bt) })
			bt.check(tc.calls)
			if got := bt.s.Scheduled(); got != tc.scheduled {
				t.Errorf("%d pods counted bound, want %d", got, tc.scheduled)
			}
			if loc := bt.s.Queue.Locate(bt.pod.UID); loc != tc.loc {
				t.Errorf("pod in %v, want %v", loc, tc.loc)
			}
			var got []string
			for _, e := range bt.written() {
				if strings.Contains(e, " Scheduled ") || strings.Contains(e, " FailedScheduling ") {
					got = append(got, e)
				}
			}
			switch {
			case tc.wantEvent == "" && len(got) > 0:
				t.Errorf("events %q, want none", got)
			case tc.wantEvent != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.wantEvent)):
				t.Errorf("events %q, want one starting with %q", got, tc.wantEvent)
			}
			_, pods, assumed := bt.s.Cache.Counts()
			wantPods := 0
			if tc.wantOnNode != "" {
				wantPods = 1
			}
			if pods != wantPods {
				t.Errorf("the cache holds %d pods, want %d", pods, wantPods)
			}
			if tc.wantOnNode != "" {
				ni, _ := bt.s.Cache.NodeInfo(tc.wantOnNode)
				if ni == nil || len(ni.Pods) != 1 {
					t.Errorf("the pod is not on %s in the cache", tc.wantOnNode)
				}
			}
			if tc.wantOnNode == "n2" && assumed != 0 {
				t.Errorf("%d assumed pods, want none", assumed)
			}
			if bt.s.outcomes.waiting.Load() != 0 {
				t.Errorf("a binding cycle still waits for its outcome")
			}
		})
	}
}

// informerShows gives the scheduler a pod informer's lister that holds
// pods.
func informerShows(t *testing.T, s *Scheduler, pods ...*v1.Pod) {
	t.Helper()
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	s.podLister = corelisters.NewPodLister(idx)
}

// A failure of a pod that the informer shows bound elsewhere, or gone,
// writes no FailedScheduling event and requeues nothing.
func TestNoFailedSchedulingForABoundPod(t *testing.T) {
	t.Run("binding cycle", func(t *testing.T) {
		bt := newBindingTest(t, func(a, b *stepPlugin) { b.preBind = framework.AsStatus(errors.New("disk on fire")) })
		informerShows(t, bt.s, bt.boundTo("n2"))
		bt.run(nil)
		bt.check(append([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind", "B.PreBind"}, unreserveBoth...))
		if ev := bt.written(); len(ev) != 0 {
			t.Errorf("events %q, want none", ev)
		}
		if loc := bt.s.Queue.Locate(bt.pod.UID); loc != queue.Nowhere {
			t.Errorf("pod in %v, want it dropped", loc)
		}
	})
	t.Run("scheduling cycle", func(t *testing.T) {
		bt := newBindingTest(t, nil)
		big := bt.pod.DeepCopy()
		big.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("64")}
		bound := big.DeepCopy()
		bound.Spec.NodeName = "n2"
		informerShows(t, bt.s, bound)
		bt.s.Queue.Add(big)
		bt.s.scheduleOne(context.Background())
		bt.s.binder.Wait()
		if ev := bt.written(); len(ev) != 0 {
			t.Errorf("events %q, want none", ev)
		}
	})
}

// A Binding the API server committed but a proxy in front of it answered
// with 429, on every attempt, is refused as far as the binder can tell;
// the informer shows the pod bound to our node, which makes it a success
// like any other: PostBind, the Scheduled event, counted scheduled, the
// room kept, and not a "bound elsewhere".
func TestBindingCommittedButAnswered429(t *testing.T) {
	bt := newBindingTest(t, nil)
	core, logs := observer.New(zapcore.DebugLevel)
	bt.s.logger = zap.New(core)
	lister := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	if err := lister.Add(bt.pod); err != nil {
		t.Fatal(err)
	}
	bt.s.podLister = corelisters.NewPodLister(lister)
	attempts := 0
	bt.onBind = func(b *v1.Binding) error {
		if attempts++; attempts == 1 {
			// The API server commits it and the informer tells.
			bt.commitTo(b.Target.Name)
			bound := bt.boundTo(b.Target.Name)
			if err := lister.Update(bound); err != nil {
				t.Error(err)
			}
			bt.s.updatePod(bt.pod, bound)
		}
		return apierrors.NewTooManyRequests("too many requests in flight", 0)
	}
	bt.run(nil)

	if attempts != binder.DefaultMaxAttempts {
		t.Errorf("%d Bindings posted, want %d (every one answered 429)", attempts, binder.DefaultMaxAttempts)
	}
	bt.check([]string{"A.Reserve", "B.Reserve", "A.Permit", "B.Permit", "A.PreBind", "B.PreBind", "A.PostBind", "B.PostBind"})
	if got := bt.s.Scheduled(); got != 1 {
		t.Errorf("%d pods counted bound, want 1", got)
	}
	result := family(t, bt.s.registerer.(prometheus.Gatherer), "scheduler_schedule_attempts_total")
	for res, want := range map[string]float64{"scheduled": 1, "error": 0} {
		if got := result["profile=yardmaster,result="+res].GetCounter().GetValue(); got != want {
			t.Errorf("scheduler_schedule_attempts_total{result=%q} = %v, want %v", res, got, want)
		}
	}
	var got []string
	for _, e := range bt.written() {
		if strings.Contains(e, " Scheduled ") || strings.Contains(e, " FailedScheduling ") {
			got = append(got, e)
		}
	}
	if want := "Normal Scheduled Successfully assigned ns/p to n1"; len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("events %q, want one starting with %q", got, want)
	}
	if loc := bt.s.Queue.Locate(bt.pod.UID); loc != queue.Nowhere {
		t.Errorf("pod in %v, want it out of the queue", loc)
	}
	if ni, _ := bt.s.Cache.NodeInfo("n1"); ni == nil || len(ni.Pods) != 1 {
		t.Errorf("the pod is not on n1 in the cache")
	}
	for _, e := range logs.All() {
		if strings.Contains(e.Message, "bound elsewhere") {
			t.Errorf("logged %q %v for a pod bound to our node", e.Message, e.ContextMap())
		}
	}
	if logs.FilterMessage("pod bound").Len() != 1 {
		t.Errorf("no \"pod bound\" log line")
	}
}
