package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"

	"github.com/yardmaster-io/yardmaster/binder"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/tainttoleration"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// longTaint is the i-th of many distinct taints with a long key and value
// (a 63-character name part, the longest a label key may have).
func longTaint(i int) (key, value string) {
	return fmt.Sprintf("example.com/dedicated-to-the-team-that-runs-the-workload-%05d", i),
		fmt.Sprintf("reserved-for-batch-jobs-of-the-team-that-runs-the-workloa-%05d", i)
}

// A FailedScheduling message must fit in an event note: the API server
// refuses a longer one and the pod gets no event at all.
func TestFitErrorFitsAnEventNote(t *testing.T) {
	taints := func(n int) map[string]int {
		return map[string]int{tainttoleration.ReasonUntoleratedTaint: n}
	}
	withCounts := func(m map[string]int, kv ...any) map[string]int {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].(int)
		}
		return m
	}
	manyReasons := map[string]int{}
	for i := range 60 {
		// Reason i rejects i+1 nodes, so the ones kept are the last.
		manyReasons[fmt.Sprintf("node(s) did not satisfy the rather long condition number %02d", i)] = i + 1
	}
	tests := []struct {
		name string
		fe   *FitError
		// want is the message, or, when empty, wantPrefix and wantSuffix.
		want, wantPrefix, wantSuffix string
	}{{
		// Nodes with distinct taints share kube-scheduler's one reason,
		// which names no taint.
		name: "40 distinct taints are counted under one reason",
		fe:   &FitError{NumAllNodes: 40, ReasonCounts: taints(40)},
		want: "0/40 nodes are available: 40 node(s) had untolerated taint(s).",
	}, {
		name: "tainted nodes beside other reasons",
		fe:   &FitError{NumAllNodes: 50, ReasonCounts: withCounts(taints(40), "Insufficient cpu", 10)},
		want: "0/50 nodes are available: 10 Insufficient cpu, 40 node(s) had untolerated taint(s).",
	}, {
		name:       "many reasons: those of the most nodes, and a count of the rest",
		fe:         &FitError{NumAllNodes: 1830, ReasonCounts: manyReasons},
		wantPrefix: "0/1830 nodes are available: 60 node(s) did not satisfy the rather long condition number 59, 59 node(s) did not satisfy the rather long condition number 58, ",
		wantSuffix: " other reasons.",
	}, {
		name: "a long preemption message after the reasons",
		fe: &FitError{NumAllNodes: 40, ReasonCounts: taints(40),
			PostFilterMessage: "preemption: " + strings.Repeat("x", 2000)},
		wantPrefix: "0/40 nodes are available: 40 node(s) had untolerated taint(s). preemption: xxx",
		wantSuffix: "x ...",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.fe.Error()
			if len(got) > binder.NoteLengthLimit {
				t.Errorf("message of %d bytes, the API takes at most %d", len(got), binder.NoteLengthLimit)
			}
			if !utf8.ValidString(got) {
				t.Errorf("message is not valid UTF-8")
			}
			if tc.want != "" {
				if got != tc.want {
					t.Errorf("got  %q\nwant %q", got, tc.want)
				}
				return
			}
			if !strings.HasPrefix(got, tc.wantPrefix) || !strings.HasSuffix(got, tc.wantSuffix) {
				t.Errorf("got %q\nwant it to start with %q and end with %q", got, tc.wantPrefix, tc.wantSuffix)
			}
		})
	}
}

// A pod refused by 40 nodes with distinct long taints gets a
// FailedScheduling event and a PodScheduled condition the API accepts.
func TestFailedSchedulingEventFitsWithManyTaints(t *testing.T) {
	pod := frameworktest.MakePod().Namespace("ns").Name("p").SchedulerName("yardmaster").Req("100m", "").Obj()
	client := fake.NewClientset(pod)
	rec := events.NewFakeRecorder(10)
	s, err := New(Options{
		Client:   client,
		Binder:   binder.New(client, rec, nil),
		Registry: registry.NewInTree(),
		Profiles: []framework.Profile{registry.DefaultProfile("yardmaster")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		k, v := longTaint(i)
		s.Cache.AddNode(frameworktest.MakeNode().Name(fmt.Sprintf("n%02d", i)).Capacity("4", "8Gi", 110).Taint(k, v, v1.TaintEffectNoSchedule).Obj())
	}
	s.Queue.Add(pod)
	s.scheduleOne(context.Background())
	s.binder.Wait()

	const want = "Warning FailedScheduling 0/40 nodes are available: 40 node(s) had untolerated taint(s)."
	select {
	case ev := <-rec.Events:
		if !strings.HasPrefix(ev, want) {
			t.Errorf("event %q, want %q", ev, want)
		}
		if note := strings.TrimPrefix(ev, "Warning FailedScheduling "); len(note) > binder.NoteLengthLimit {
			t.Errorf("note of %d bytes, the API takes at most %d", len(note), binder.NoteLengthLimit)
		}
	default:
		t.Fatal("no FailedScheduling event")
	}
	got, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == v1.PodScheduled {
			if len(c.Message) > binder.NoteLengthLimit {
				t.Errorf("condition message of %d bytes, want at most %d", len(c.Message), binder.NoteLengthLimit)
			}
			return
		}
	}
	t.Error("no PodScheduled condition")
}
