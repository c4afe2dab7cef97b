package scheduler

import (
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/yardmaster-io/yardmaster/framework"
)

// waitingPods are the pods whose Permit returned Wait, by UID. A pod is
// added in its scheduling cycle, right after Permit, so that a later
// cycle's Permit (the last member of a group, say) can already allow it,
// and removed when its binding cycle has its verdict.
type waitingPods struct {
	mu   sync.RWMutex
	pods map[types.UID]*waitingPod
}

func newWaitingPods() *waitingPods {
	return &waitingPods{pods: map[types.UID]*waitingPod{}}
}

func (m *waitingPods) add(wp *waitingPod) {
	m.mu.Lock()
	m.pods[wp.pod.UID] = wp
	m.mu.Unlock()
}

func (m *waitingPods) remove(uid types.UID) {
	m.mu.Lock()
	delete(m.pods, uid)
	m.mu.Unlock()
}

// get returns the waiting pod with uid, or nil.
func (m *waitingPods) get(uid types.UID) *waitingPod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.pods[uid]
}

// iterate calls f for each waiting pod, under the read lock: f must not
// add or remove waiting pods (Allow and Reject do neither).
func (m *waitingPods) iterate(f func(framework.WaitingPod)) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, wp := range m.pods {
		f(wp)
	}
}

// permitVerdict is how a pod's wait on Permit ended: nil status when every
// plugin allowed it, else the rejection and the plugin that made it.
type permitVerdict struct {
	status *framework.Status
	plugin string
}

// waitingPod is a pod waiting on the plugins whose Permit returned Wait,
// each with its own timeout, as in kube-scheduler: every one must allow
// it; one rejection, or one timeout, ends the wait.
type waitingPod struct {
	pod *v1.Pod
	// verdict receives the one verdict; buffered, so that neither Allow
	// nor Reject blocks on the binding cycle.
	verdict chan permitVerdict

	mu      sync.Mutex
	pending map[string]clock.Timer
	ended   bool
}

var _ framework.WaitingPod = &waitingPod{}

// newWaitingPod starts the pod's wait on the plugins in timeouts, each of
// which rejects it when its time runs out on clk (the real clock when clk
// cannot run a function later).
func newWaitingPod(clk clock.PassiveClock, pod *v1.Pod, timeouts map[string]time.Duration) *waitingPod {
	later, ok := clk.(clock.WithDelayedExecution)
	if !ok {
		later = clock.RealClock{}
	}
	wp := &waitingPod{pod: pod, verdict: make(chan permitVerdict, 1), pending: make(map[string]clock.Timer, len(timeouts))}
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for plugin, d := range timeouts {
		wp.pending[plugin] = later.AfterFunc(d, func() {
			// On a goroutine of its own: Reject stops the other timers,
			// and a clock may run this function while it holds the lock
			// that Stop takes (the fake clock of the tests does).
			// kube-scheduler's message.
			go wp.Reject(plugin, fmt.Sprintf("rejected due to timeout after waiting %v at plugin %v", d, plugin))
		})
	}
	return wp
}

// GetPod returns the assumed pod.
func (w *waitingPod) GetPod() *v1.Pod { return w.pod }

// GetPendingPlugins names the plugins the pod still waits for.
func (w *waitingPod) GetPendingPlugins() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pending))
	for p := range w.pending {
		out = append(out, p)
	}
	return out
}

// Allow records plugin's approval; the last one ends the wait.
func (w *waitingPod) Allow(plugin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.pending[plugin]; ok {
		t.Stop()
		delete(w.pending, plugin)
	}
	if len(w.pending) > 0 || w.ended {
		return
	}
	w.ended = true
	w.verdict <- permitVerdict{}
}

// Reject ends the wait with plugin's rejection. It reports false when the
// wait had already ended.
func (w *waitingPod) Reject(plugin, msg string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return false
	}
	w.ended = true
	for _, t := range w.pending {
		t.Stop()
	}
	w.verdict <- permitVerdict{status: framework.NewStatus(framework.Unschedulable, msg), plugin: plugin}
	return true
}
