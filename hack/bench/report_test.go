package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentileMs(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	tests := []struct {
		name string
		d    []time.Duration
		q    float64
		want float64
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7},
		// Nearest rank: ceil(0.5·4) = 2nd of 1,2,3,4.
		{"median of four", ms(4, 1, 3, 2), 0.5, 2},
		// ceil(0.99·100) = 99th of 1..100.
		{"p99 of 100", ms(seq(100)...), 0.99, 99},
		{"max", ms(5, 9, 1), 1, 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentileMs(tc.d, tc.q); got != tc.want {
				t.Errorf("percentileMs(%v, %v) = %v, want %v", tc.d, tc.q, got, tc.want)
			}
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250 and stime 50
	// ticks are fields 14 and 15.
	line := "1234 (kube sched) er) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0\n"
	got, err := parseStatCPU([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("parseStatCPU() = %v, want %v", got, want)
	}
}

func TestParseMachineCPU(t *testing.T) {
	// user 100 + nice 1 + system 50 + irq 2 + softirq 3 + steal 4 = 160
	// ticks busy; idle 1000 and iowait 7 are not.
	b := []byte("cpu  100 1 50 1000 7 2 3 4 0 0\ncpu0 50 0 25 500 3 1 1 2 0 0\n")
	got, err := parseMachineCPU(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1600 * time.Millisecond; got != want {
		t.Errorf("parseMachineCPU() = %v, want %v", got, want)
	}
}

func TestParseStatusKiB(t *testing.T) {
	b := []byte("Name:\tkube-scheduler\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n")
	if got := parseStatusKiB(b, "VmHWM:"); got != 204800 {
		t.Errorf("VmHWM = %d, want 204800", got)
	}
	if got := parseStatusKiB(b, "VmSwap:"); got != 0 {
		t.Errorf("VmSwap = %d, want 0 (absent)", got)
	}
}

func TestBindCurve(t *testing.T) {
	start := time.Unix(1000, 0)
	var times []time.Time
	for i := range 1000 {
		times = append(times, start.Add(time.Duration(1000-i)*time.Millisecond)) // unsorted
	}
	got := bindCurve(times, start)
	if len(got) > maxCurvePoints+1 {
		t.Errorf("%d points, want at most %d", len(got), maxCurvePoints+1)
	}
	if first, last := got[0], got[len(got)-1]; first != (Point{T: 0.001, N: 1}) || last != (Point{T: 1, N: 1000}) {
		t.Errorf("curve runs from %+v to %+v, want {0.001 1} to {1 1000}", first, last)
	}
	for i := 1; i < len(got); i++ {
		if got[i].T < got[i-1].T || got[i].N <= got[i-1].N {
			t.Fatalf("curve not increasing at %d: %+v then %+v", i, got[i-1], got[i])
		}
	}
}

func TestParallel(t *testing.T) {
	var calls atomic.Int64
	if err := parallel(context.Background(), 4, 100, func(context.Context, int) error { calls.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 100 {
		t.Errorf("%d calls, want 100", calls.Load())
	}
	boom := errors.New("boom")
	err := parallel(context.Background(), 4, 100, func(_ context.Context, i int) error {
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("parallel() = %v, want %v", err, boom)
	}
}

func TestWriteMarkdown(t *testing.T) {
	drain := func(pps, cpu, rss float64) *DrainResult {
		return &DrainResult{Pods: 100, Bound: 100, Complete: true, PodsPerSecond: pps, CPUMsPerPod: cpu, PeakRSSMiB: rss}
	}
	stream := func(p99 float64) *StreamResult {
		return &StreamResult{Pods: 100, Bound: 100, Complete: true, P50Ms: p99 / 2, P99Ms: p99}
	}
	r := &Report{Settings: Settings{Runs: 1}, Runs: []*Run{
		{Nodes: 10, Workload: "basic", Contender: yardmasterName, Run: 1, Drain: drain(1500, 0.4, 50), Stream: stream(10)},
		{Nodes: 10, Workload: "basic", Contender: kubeSchedulerName, Run: 1, Drain: drain(600, 1.5, 200), Stream: stream(20)},
		{Nodes: 10, Workload: "basic", Contender: ceilingName, Run: 1, Drain: drain(2000, 0, 0)},
		{Nodes: 10, Workload: "basic", Contender: ceilingEventsName, Run: 1, Drain: drain(1600, 0, 0)},
	}}
	var b bytes.Buffer
	writeMarkdown(&b, r)
	for _, want := range []string{
		// 1500 of the ceiling's 2000 and of ceiling-events' 1600.
		"| 10 | basic | yardmaster | 100/100 | 1500 | 2.50× | 75% | 94% | 0.40 | 0.00 | 50 | 5 / 10 | 0 |",
		// Targets: 2.5× ≥ 2×, 75% < 90%, 0.4/1.5 = 0.27 ≤ 1/3, 50/200, 10/20.
		"| 10 | basic | 2.50× ✓ | 75% ✗ | 0.27× ✓ | 0.25× ✓ | 0.50× ✓ | 0 ✓ |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "Notes:") {
		t.Errorf("notes for runs that went well:\n%s", b.String())
	}
}

// TestWriteMarkdownGangs: the gangs table from the median runs, the rate
// from the scheduler's start, and a run that split a gang shown failed,
// with the group it split.
func TestWriteMarkdownGangs(t *testing.T) {
	drain := func(placed, partial int) *DrainResult {
		return &DrainResult{Pods: 9, Bound: 9, Complete: true, PodsPerSecond: 100, StartToFirstBindS: 1, FirstToLastBindS: 2,
			Placement: Placement{Groups: 3, GroupsPlaced: placed, PartialGroups: partial}}
	}
	split := drain(2, 1)
	split.Placement.Examples = []string{"PodGroup ns/gang-2 partially bound: 2 members bound, minCount 3"}
	r := &Report{Settings: Settings{Runs: 1, PodGroups: true}, Runs: []*Run{
		{Nodes: 10, Workload: "smallgangs", Contender: yardmasterName, Run: 1, Drain: drain(3, 0)},
		{Nodes: 10, Workload: "smallgangs", Contender: kubeSchedulerName, Run: 1, Drain: split, Error: "kube-scheduler left 1 of 3 PodGroups partially bound"},
	}}
	var b bytes.Buffer
	writeMarkdown(&b, r)
	for _, want := range []string{
		"kube-scheduler ran with --feature-gates=GenericWorkload=true",
		// 9 pods in 1 + 2 s.
		"| 10 | smallgangs | yardmaster | 3 | 3 | 0 | 1.0 | 3 |",
		"| 10 | smallgangs | kube-scheduler | failed (see results.json) |",
		"- 10 nodes, smallgangs, kube-scheduler run 1 failed: kube-scheduler left 1 of 3 PodGroups partially bound",
		"- 10 nodes, smallgangs, kube-scheduler run 1 (drain): PodGroup ns/gang-2 partially bound",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}
