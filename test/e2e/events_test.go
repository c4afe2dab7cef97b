package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/binder"
)

// Every pod of a backlog gets exactly one Scheduled event, as
// kube-scheduler writes it, including the pods bound just before the
// daemon stops: their events are written before Run returns. Bindings go
// before events, so here the events are still being written when the last
// pod is bound.
func TestScheduledEventForEveryPod(t *testing.T) {
	e := newEnv(t)
	for i := range 4 {
		e.addNode(e.node(fmt.Sprintf("n%d", i)).Capacity("32", "64Gi", 110))
	}
	const n = 120
	created := time.Now()
	uids := map[string]string{}
	for i := range n {
		p := e.createPod(e.pod(fmt.Sprintf("p%03d", i)).Req("10m", "16Mi"))
		uids[p.Name] = string(p.UID)
	}

	d, stop := e.runScheduler()
	placed := e.waitAllBound(time.Minute, n)
	if err := stop(); err != nil {
		t.Fatalf("scheduler exited: %v", err)
	}
	stopped := time.Now()

	evs, err := e.client.EventsV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ev := range evs.Items {
		if ev.Reason != "Scheduled" {
			continue
		}
		pod := ev.Regarding.Name
		seen[pod]++
		want := fmt.Sprintf("Successfully assigned %s/%s to %s", e.ns, pod, placed[pod])
		switch {
		case ev.Note != want:
			t.Errorf("%s: note %q, want %q", pod, ev.Note, want)
		case ev.Type != v1.EventTypeNormal || ev.Action != "Binding" || ev.ReportingController != "yardmaster":
			t.Errorf("%s: type %q action %q reportingController %q, want Normal, Binding, yardmaster", pod, ev.Type, ev.Action, ev.ReportingController)
		case ev.Regarding.Kind != "Pod" || ev.Regarding.APIVersion != "v1" || string(ev.Regarding.UID) != uids[pod]:
			t.Errorf("%s: regarding %+v, want the pod (uid %s)", pod, ev.Regarding, uids[pod])
		case ev.EventTime.Before(&metav1.MicroTime{Time: created.Truncate(time.Second)}) || ev.EventTime.After(stopped):
			t.Errorf("%s: eventTime %v outside the run", pod, ev.EventTime)
		}
	}
	for pod := range placed {
		if seen[pod] != 1 {
			t.Errorf("%s: %d Scheduled events, want 1", pod, seen[pod])
		}
	}
	if w, dr := d.Binder.ScheduledEvents.Written(), d.Binder.ScheduledEvents.Dropped(); w != n || dr != 0 {
		t.Errorf("writer: %d written, %d dropped; want %d and 0", w, dr, n)
	}
	mfs, err := d.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, mf := range mfs {
		switch mf.GetName() {
		case "yardmaster_scheduled_events_queued", "yardmaster_scheduled_events_dropped_total":
			found++
			if m := mf.GetMetric()[0]; m.GetGauge().GetValue()+m.GetCounter().GetValue() != 0 {
				t.Errorf("%s = %v after the flush, want 0", mf.GetName(), m)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d of the 2 event metrics served", found)
	}
}

// A pod's FailedScheduling failures make one event per resourceVersion,
// whose series the API server accepts as client-go's recorder writes it:
// created at the first failure, then patched with count and
// lastObservedTime, the note staying the first one's.
func TestFailedSchedulingEventSeries(t *testing.T) {
	e := newEnv(t)
	p := e.createPod(e.pod("lonely").Req("10m", "16Mi"))
	w := binder.NewFailureEvents(e.client.EventsV1(), "yardmaster", "yardmaster-e2e", nil)
	w.Start()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		w.Stop(ctx)
	}()
	waitWritten := func(n int64) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(e.ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return w.Written()+w.Dropped() >= n, nil
		}); err != nil || w.Dropped() != 0 {
			t.Fatalf("writer: %d written, %d dropped, want %d written: %v", w.Written(), w.Dropped(), n, err)
		}
	}
	failures := func() []eventsv1.Event {
		t.Helper()
		evs, err := e.client.EventsV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "reason=FailedScheduling"})
		if err != nil {
			t.Fatal(err)
		}
		return evs.Items
	}

	w.Record(p, "0/3 nodes are available: 3 Insufficient cpu.")
	waitWritten(1)
	w.Record(p, "0/4 nodes are available: 4 Insufficient cpu.")
	w.Record(p, "0/4 nodes are available: 4 Insufficient cpu.")
	waitWritten(2)
	evs := failures()
	if len(evs) != 1 {
		t.Fatalf("%d FailedScheduling events, want 1: %+v", len(evs), evs)
	}
	ev := evs[0]
	switch {
	case ev.Series == nil || ev.Series.Count != 3:
		t.Errorf("series %+v, want count 3", ev.Series)
	case ev.Note != "0/3 nodes are available: 3 Insufficient cpu.":
		t.Errorf("note %q, want the first failure's", ev.Note)
	case ev.Type != v1.EventTypeWarning || ev.Action != "Scheduling" || ev.ReportingController != "yardmaster" ||
		ev.Regarding.UID != p.UID || ev.Regarding.ResourceVersion != p.ResourceVersion:
		t.Errorf("event %+v, want a Warning about the pod at its resourceVersion", ev)
	}

	// The pod changes (its condition written, here a label): a new event.
	p.Labels = map[string]string{"touched": "yes"}
	p, err := e.client.CoreV1().Pods(e.ns).Update(e.ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Record(p, "0/4 nodes are available: 4 node(s) had untolerated taint(s).")
	waitWritten(3)
	if evs := failures(); len(evs) != 2 {
		t.Errorf("%d FailedScheduling events after the pod changed, want 2", len(evs))
	}
}
